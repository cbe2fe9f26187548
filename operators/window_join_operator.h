#pragma once

#include <memory>
#include <vector>

#include "operators/window/window_assigner.h"
#include "operators/window/window_operator.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// Joins two keyed streams in windows: when a window fires, every left element of a key is
/// paired with every right element of the same key in that window (left in arrival order,
/// then right in arrival order). Mirrors Flink's `stream.join(other).where(..).equalTo(..)
/// .window(..)`, which Flink builds as a coGroup: a union of the two tagged inputs into one
/// WindowOperator whose function does the nested loop. This operator does the same: it tags
/// each input record as `[key..., side, left fields..., right fields...]` (the other side's
/// fields NULL, so both inputs share one row layout) and feeds an inner `WindowOperator`
/// (assigner's default trigger, allowed lateness 0; late elements are dropped and counted).
///
/// Result rows: left fields, right fields, `window_start`, `window_end`; timestamp
/// `window.MaxTimestamp()`. Event time: the minimum of the two inputs' watermarks (only
/// increases are forwarded); IDLE when both inputs are idle.
/// Threading: mailbox thread only. Ownership: owns the inner window operator.
class WindowJoinOperator : public StreamOperator {
 public:
  struct Options {
    std::vector<int> left_key_slots;
    std::vector<int> right_key_slots;         ///< same length as left_key_slots
    const RowLayout* left_layout = nullptr;   ///< the left rows' layout (required)
    const RowLayout* right_layout = nullptr;  ///< the right rows' layout (required)
  };

  WindowJoinOperator(std::unique_ptr<WindowAssigner> assigner, Options options);
  ~WindowJoinOperator() override;

  void Open(const OperatorContext& context) override;
  void ProcessElement(StreamRecord& record, int input) override;
  void ProcessWatermark(Watermark watermark, int input) override;
  void ProcessWatermarkStatus(WatermarkStatus status, int input) override;
  void Close() override;
  int NumInputs() const override { return 2; }
  /// Section "window-join" (version 1): the inputs' and the combined watermark, idleness and
  /// status, then the inner window operator's snapshot (its panes hold both sides' rows).
  void SnapshotState(StateSnapshotContext& context) override;
  void InitializeState(StateInitializationContext& context) override;

  int64_t num_late_records_dropped() const { return inner_->num_late_records_dropped(); }
  /// The inner window operator's numLateRecordsDropped and its note firstLateRecordDropped.
  void CollectMetrics(MetricsWriter& out) const override;

 private:
  Options options_;
  const RowLayout* tagged_layout_ = nullptr;
  Row tagged_;  // the record being tagged; swapped with the record's row
  std::unique_ptr<WindowOperator> inner_;
  Timestamp input_watermarks_[2] = {kMinTimestamp, kMinTimestamp};
  Timestamp combined_ = kMinTimestamp;
  bool idle_[2] = {false, false};
  WatermarkStatus status_ = WatermarkStatus::kActive;
};

}  // namespace tidemark
