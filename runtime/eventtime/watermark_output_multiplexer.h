#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "runtime/eventtime/combined_watermark_status.h"
#include "runtime/eventtime/watermark_output.h"

namespace tidemark {

/// Merges the watermarks of several per-split outputs into one underlying output: the watermark
/// is the minimum over active splits, and the output is idle when all splits are idle. Mirrors
/// Flink's `WatermarkOutputMultiplexer` (SEMANTICS.md §3-4), built on `CombinedWatermarkStatus`.
///
/// Each registered output id has two handles that share one per-output state:
/// - the *immediate* handle recomputes at once: on `EmitWatermark` only if the output's watermark
///   advanced *and* is above the current combined watermark; on `MarkIdle` / `MarkActive` always;
/// - the *deferred* handle only updates the per-output state; `OnPeriodicEmit()` recomputes.
/// A source uses the immediate handle for on-event watermarks and the deferred one for periodic
/// watermarks (`ProgressiveTimestampsAndWatermarks`).
///
/// A recomputation emits the combined watermark if it advanced; then it calls `MarkIdle()` on the
/// underlying output if all outputs are idle (or all were unregistered), else `MarkActive()` only
/// if some output has reported activity (a watermark or mark-active). So registered outputs that
/// never reported anything cause no calls at all, and with no outputs nothing is ever emitted
/// (never MAX). The underlying output is expected to de-duplicate statuses and non-advancing
/// watermarks (`WatermarkToDataOutput` does).
///
/// `UnregisterOutput` does not recompute; the next recomputation may advance the watermark.
/// Emitted watermarks are never retracted.
///
/// Ownership: borrows `underlying` (must outlive this object); owns the per-output handles, whose
/// references stay valid until that id is unregistered. Threading: mailbox thread only.
class WatermarkOutputMultiplexer {
 public:
  explicit WatermarkOutputMultiplexer(WatermarkOutput& underlying);
  ~WatermarkOutputMultiplexer();
  WatermarkOutputMultiplexer(const WatermarkOutputMultiplexer&) = delete;
  WatermarkOutputMultiplexer& operator=(const WatermarkOutputMultiplexer&) = delete;

  /// Registers a new output id (state unknown, watermark MIN). Throws `InvalidArgument` if the id
  /// is already registered.
  void RegisterNewOutput(const std::string& output_id);
  /// Removes an output; returns false if the id was not registered. Does not recompute.
  bool UnregisterOutput(const std::string& output_id);
  bool IsRegistered(const std::string& output_id) const { return outputs_.count(output_id) > 0; }

  /// The handles of a registered id. Throws `InvalidArgument` for an unknown id.
  WatermarkOutput& GetImmediateOutput(const std::string& output_id);
  WatermarkOutput& GetDeferredOutput(const std::string& output_id);

  /// Recomputes from the per-output states (the deferred updates take effect here).
  void OnPeriodicEmit() { UpdateCombinedWatermark(); }

  Timestamp combined_watermark() const { return combined_.combined_watermark(); }
  bool IsIdle() const { return combined_.IsIdle(); }
  size_t num_outputs() const { return outputs_.size(); }
  /// The watermark and idleness of one registered output (for metrics); nullopt if unknown.
  struct OutputView {
    Timestamp watermark = kMinTimestamp;
    bool idle = false;
  };
  std::optional<OutputView> ViewOutput(const std::string& output_id) const;

 private:
  class ImmediateOutput;
  class DeferredOutput;
  struct OutputState;

  OutputState& Find(const std::string& output_id);
  void UpdateCombinedWatermark();

  WatermarkOutput& underlying_;
  CombinedWatermarkStatus combined_;
  std::map<std::string, std::unique_ptr<OutputState>> outputs_;
};

}  // namespace tidemark
