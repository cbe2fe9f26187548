#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "runtime/core/row.h"
#include "runtime/graph/operator_registry.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// Calls `emit` with every row of a lookup table file, in file order, with its 1-based line
/// number. Throws IoError naming `path:line` for a line it cannot read (every load error is a
/// file:line error). `file.path` is already resolved. operators/ does not parse files: sources/
/// provides this (`ReadLookupTableFile`, sources/lookup_table_file.h) and the engine passes it to
/// `RegisterLookupJoin`. Called on the operator's task thread (Open and reloads).
using LookupRowCallback = std::function<void(const Row& row, int64_t line_number)>;
using LookupTableReader = std::function<void(const FileSourceSpec& file, const Schema& schema,
                                             const LookupRowCallback& emit)>;

/// `type: lookup-join`: enriches each record of its one input with the rows of a table read from
/// a file whose key columns equal the record's, Flink's lookup join
/// (`JOIN dim FOR SYSTEM_TIME AS OF s.proc_time AS d ON s.k = d.k`, Flink's LookupJoinRunner with
/// a FULL lookup cache). Output rows are the input's fields, then the table's.
///
/// - A hit emits one row per matching table row, in file order (Flink's lookup function returns
///   every row of the key; duplicates are not collapsed).
/// - A miss, or a NULL in a key field of the record: `left` emits the record with NULLs for the
///   table's fields; `inner` drops it. Table rows with a NULL key never match (SQL `=`).
/// - The timestamp of each output record is the input record's.
///
/// The table is held whole in an absl::flat_hash_map from an encoded key (8 bytes per
/// int64/timestamp/double key field, 1 per bool, 4 + n per string) to the table rows of that key.
/// Per record: the key is encoded into a reused buffer and looked up without allocating; output
/// rows are built in reused rows. Loaded in `Open` (each subtask holds its own copy, as each
/// Flink lookup function does). With `reload_interval_ms` > 0 the file's modification time and
/// size are checked on a processing-time timer at that interval and the table is read again when
/// they changed (Flink's `lookup.full-cache.periodic-reload.interval`); the reload runs on the
/// task thread, and a reload that fails fails the job, as Flink's full cache fails the next
/// lookup. Checkpoints: no state (the table is the file's, not the job's); a restored job reads
/// the file again in `Open`, as Flink re-reads its lookup cache after a restore.
/// Threading: mailbox thread only.
class LookupJoinOperator : public StreamOperator {
 public:
  struct Options {
    FileSourceSpec file;  ///< the table's file; `path` resolved
    Schema table_schema;
    LookupTableReader reader;
    std::vector<int> left_key_slots;           ///< in the input schema
    std::vector<int> table_key_slots;          ///< in the table schema, parallel to left_key_slots
    bool inner = false;                        ///< true: a miss drops the record; false: NULLs
    const RowLayout* output_layout = nullptr;  ///< input fields, then the table's
    int64_t reload_interval_ms = 0;            ///< 0: read once
  };

  explicit LookupJoinOperator(Options options);
  void Open(const OperatorContext& context) override;
  void ProcessElement(StreamRecord& record, int input) override;
  void Close() override;
  void CollectMetrics(MetricsWriter& out) const override;

  /// Rows held and the number of loads so far (1 after Open), for tests and metrics.
  size_t table_rows() const { return rows_.size(); }
  int64_t loads() const { return loads_; }

 private:
  void Load();
  void ScheduleReload(Timestamp now);
  void OnReloadTimer(Timestamp time);
  void EmitJoined(StreamRecord& record, const Row* table_row, bool last);

  Options options_;
  std::vector<Row> rows_;
  absl::flat_hash_map<std::string, absl::InlinedVector<uint32_t, 1>> index_;
  std::string key_scratch_;  // the probed key, reused
  Row joined_;               // the output row being built, reused
  StreamRecord copy_;        // a record emitted before the last match, reused
  int64_t loads_ = 0;
  int64_t misses_ = 0;
  int64_t file_mtime_ = 0;  // file clock ticks
  int64_t file_size_ = -1;
  ProcessingTimeService::TimerId reload_timer_ = 0;
  bool reload_pending_ = false;
};

/// Registers `lookup-join` (YAML keys in docs/job-reference.md) reading tables with `reader`.
void RegisterLookupJoin(OperatorRegistry& registry, LookupTableReader reader);

}  // namespace tidemark
