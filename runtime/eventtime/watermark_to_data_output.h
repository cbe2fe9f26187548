#pragma once

#include <functional>
#include <utility>

#include "runtime/eventtime/watermark_output.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// Adapts a generator-facing `WatermarkOutput` to the stream (`tidemark::Output`), with Flink's
/// de-duplication (SEMANTICS.md §2). Mirrors Flink's `WatermarkToDataOutput` (sources) and the
/// `WatermarkEmitter` of `TimestampsAndWatermarksOperator`.
///
/// - `EmitWatermark` forwards only watermarks strictly greater than the largest forwarded so far
///   (initially MIN, so a first watermark of 0 is forwarded, and MIN itself never is). If the
///   output is idle, the forwarded watermark is preceded by an ACTIVE status. A watermark that is
///   not forwarded emits nothing, not even ACTIVE.
/// - `MarkIdle` emits IDLE once (repeats while idle emit nothing).
/// - `MarkActive` emits ACTIVE if the output is idle, without a watermark.
/// The output starts ACTIVE (nothing is emitted for that).
///
/// `on_forwarded`, if set, is called after each forwarded watermark with its value (a source uses
/// it as its `latestWatermark` for alignment reporting).
/// Ownership: borrows `output`, which must outlive this object. Threading: mailbox thread only.
class WatermarkToDataOutput final : public WatermarkOutput {
 public:
  using ForwardedCallback = std::function<void(Timestamp watermark)>;

  explicit WatermarkToDataOutput(Output& output, ForwardedCallback on_forwarded = {})
      : output_(output), on_forwarded_(std::move(on_forwarded)) {}

  void EmitWatermark(Watermark watermark) override;
  void MarkIdle() override;
  void MarkActive() override;

  /// The largest watermark forwarded so far (MIN if none).
  Timestamp max_watermark_so_far() const { return max_watermark_so_far_; }
  bool IsIdle() const { return idle_; }

 private:
  Output& output_;
  ForwardedCallback on_forwarded_;
  Timestamp max_watermark_so_far_ = kMinTimestamp;
  bool idle_ = false;
};

}  // namespace tidemark
