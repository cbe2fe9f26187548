#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/core/key.h"
#include "runtime/core/row.h"
#include "runtime/graph/operator_registry.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// Window Top-N after a window aggregate: Flink SQL's
/// `ROW_NUMBER() OVER (PARTITION BY window_start, window_end[, cols] ORDER BY x DESC) <= N`
/// (Flink's `WindowRankOperator` with a `TopNBuffer`). Input rows carry `window_start` and
/// `window_end` (timestamps; a `type: window` operator's output). Per (window, partition) it keeps
/// the N best rows seen, in `order-by` order, equal sort keys in arrival order; when the
/// watermark reaches `window_end - 1` (the window's max timestamp, the watermark that fired it
/// upstream) it emits them, each with its `rownum` (1..N, an int64 column appended to the input's),
/// stamped `window_end - 1`, windows in (window_end, window_start, partition key) order, and
/// forgets the window. A row whose window was already emitted (`window_end - 1 <= watermark` on
/// arrival: an update firing of an upstream window with allowed lateness) is dropped and
/// counted (`numLateRecordsDropped`), as Flink's window rank drops late rows.
/// NULLs sort lowest: first for ASC, last for DESC (Flink's default null ordering).
///
/// State: at most N rows per open (window, partition), bounded whatever the input; snapshotted
/// per key group of the partition key (section "window-top-n", version 1), so it restores at
/// another parallelism. Threading: mailbox thread only.
/// Cost per row: O(log N) comparisons plus an O(N) insert into the window's buffer.
class WindowTopNOperator : public StreamOperator {
 public:
  struct OrderKey {
    int slot = 0;
    bool descending = false;
  };
  struct Options {
    int window_start_slot = -1;
    int window_end_slot = -1;
    std::vector<int> partition_slots;  ///< beyond the window; empty: one partition per window
    std::vector<OrderKey> order_by;    ///< non-empty
    int64_t n = 1;                     ///< >= 1
    const RowLayout* input_layout = nullptr;
    const RowLayout* output_layout = nullptr;  ///< input fields + rownum (int64)
  };

  explicit WindowTopNOperator(Options options) : options_(std::move(options)) {}

  void ProcessElement(StreamRecord& record, int input) override;
  void ProcessWatermark(Watermark watermark, int input) override;
  void SnapshotState(StateSnapshotContext& context) override;
  /// Errors: `StateCorrupt` for bytes it cannot read.
  void InitializeState(StateInitializationContext& context) override;
  /// numLateRecordsDropped, currentWatermark.
  void CollectMetrics(MetricsWriter& out) const override;

  int64_t num_late_records_dropped() const { return num_late_records_dropped_; }
  /// Rows held now (at most N per open window and partition).
  size_t rows_held() const;

 private:
  struct Entry {
    Row row;
    uint64_t seq = 0;  // arrival number: equal sort keys keep arrival order
  };
  // (window_end, window_start, partition key): the order windows are emitted in.
  using WindowKey = std::tuple<Timestamp, Timestamp, Key>;
  // Whether `a` sorts before `b` by `order_by`.
  bool Before(const Row& a, const Row& b) const;
  void Insert(std::vector<Entry>& buffer, Entry entry) const;

  Options options_;
  std::map<WindowKey, std::vector<Entry>> windows_;
  Timestamp watermark_ = kMinTimestamp;
  uint64_t arrivals_ = 0;
  int64_t num_late_records_dropped_ = 0;
};

/// Registers `type: window-top-n` (block `window-top-n:` with `n`, `order-by`, `partition-by`).
void RegisterWindowTopN(OperatorRegistry& registry);

}  // namespace tidemark
