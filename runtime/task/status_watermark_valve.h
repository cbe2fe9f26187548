#pragma once

#include <cstddef>
#include <vector>

#include "runtime/core/watermark.h"

namespace tidemark {

/// Receives what a `StatusWatermarkValve` emits. Implemented by the task's input processing (it
/// hands watermarks to the operator chain) and by tests. Threading: the valve's thread.
class ValveOutput {
 public:
  virtual ~ValveOutput() = default;
  virtual void EmitWatermark(Watermark watermark) = 0;
  virtual void EmitWatermarkStatus(WatermarkStatus status) = 0;
};

/// Merges the watermarks and watermark statuses of the N input channels of one task input into
/// one watermark / status stream. Mirrors Flink's `StatusWatermarkValve` (SEMANTICS.md §5).
///
/// Flink's rules (the default behaviour):
/// - Every channel starts ACTIVE with watermark MIN and *aligned*; the output starts ACTIVE with
///   last output watermark MIN.
/// - A watermark on a channel is ignored (not even recorded) if the channel or the output is
///   IDLE; otherwise it is taken only if larger than the channel's watermark. An unaligned channel
///   becomes aligned once its watermark is >= the last output watermark. Then the minimum over the
///   aligned channels is emitted if it is larger than the last output watermark (nothing is emitted
///   while no channel is aligned).
/// - ACTIVE -> IDLE makes the channel unaligned. If it was the last active channel: if its
/// watermark
///   equals the last output watermark, the maximum watermark over all channels is emitted (if
///   larger), then IDLE. Otherwise, if its watermark equals the last output watermark, the minimum
///   over the remaining aligned channels is recomputed.
/// - IDLE -> ACTIVE: the channel is aligned only if its watermark >= the last output watermark (a
///   channel that is behind does not hold the output back until it catches up); if the output was
///   IDLE, ACTIVE is emitted.
/// - A status that is already in force changes nothing; a watermark never re-activates a channel.
///
/// Extensions decided in design.md ("Decided"), all off unless used:
/// - `MarkChannelFinished(c)`: end of input on a channel. A finished channel leaves the minimum
///   instead of counting as MAX; later input on it is ignored. When every channel has finished the
///   output emits MAX (preceded by ACTIVE if the output was IDLE). When the channels that are left
///   (unfinished and not excluded) are all IDLE, the output goes IDLE, after the same
///   "last active channel" max-flush as above.
///   With `Options::end_of_input_on_max_watermark`, a MAX watermark on a channel is handled as
///   `MarkChannelFinished` (so a task may forward the upstream's final MAX as is).
/// - `SetChannelExcludedFromMin(c, true)`: a broadcast input that must not hold event time back.
///   Its watermarks and statuses are recorded but affect neither the minimum, nor the max-flush,
///   nor the output status; it still has to finish before the output emits MAX.
///
/// Threading: the owning task's mailbox thread only. Cost: watermarks are O(N) per emitted change
/// (a linear scan over channels; N is the upstream parallelism, small).
class StatusWatermarkValve {
 public:
  struct Options {
    /// Treat a MAX watermark on a channel as end of input of that channel (design.md).
    bool end_of_input_on_max_watermark = false;
  };

  /// `num_channels` >= 1 (TM_CHECK).
  explicit StatusWatermarkValve(size_t num_channels)
      : StatusWatermarkValve(num_channels, Options{}) {}
  StatusWatermarkValve(size_t num_channels, Options options);

  /// A watermark arrived on `channel` (0-based; TM_CHECKed). May emit one watermark to `output`.
  void InputWatermark(Watermark watermark, size_t channel, ValveOutput& output);
  /// A watermark status arrived on `channel`. May emit a watermark and/or a status to `output`.
  void InputWatermarkStatus(WatermarkStatus status, size_t channel, ValveOutput& output);

  /// End of input on `channel` (design.md); idempotent. See the class comment.
  void MarkChannelFinished(size_t channel, ValveOutput& output);
  /// Leaves `channel` out of the minimum and the output status (broadcast input, design.md).
  /// Intended to be called once before any input; changing it later does not emit anything.
  void SetChannelExcludedFromMin(size_t channel, bool excluded);

  size_t num_channels() const { return channels_.size(); }
  Timestamp last_output_watermark() const { return last_output_watermark_; }
  WatermarkStatus output_status() const { return output_status_; }
  /// Per-channel state, for tests and metrics.
  Timestamp channel_watermark(size_t channel) const { return channels_.at(channel).watermark; }
  WatermarkStatus channel_status(size_t channel) const { return channels_.at(channel).status; }
  bool channel_aligned(size_t channel) const { return channels_.at(channel).aligned; }
  bool channel_finished(size_t channel) const { return channels_.at(channel).finished; }

 private:
  struct Channel {
    Timestamp watermark = kMinTimestamp;
    WatermarkStatus status = WatermarkStatus::kActive;
    bool aligned = true;
    bool finished = false;
    bool excluded = false;
  };

  // Whether a channel takes part in the minimum and in the output status.
  static bool Participates(const Channel& c) { return !c.finished && !c.excluded; }
  bool HasActiveParticipatingChannel() const;
  bool AllFinished() const;
  void EmitWatermark(Timestamp watermark, ValveOutput& output);
  void EmitStatus(WatermarkStatus status, ValveOutput& output);
  void FindAndOutputNewMinAcrossAlignedChannels(ValveOutput& output);
  void FindAndOutputMaxAcrossAllChannels(ValveOutput& output);
  // The rules of a participating channel that stopped being active (went IDLE or finished).
  void OnChannelLeftActiveSet(const Channel& channel, ValveOutput& output);

  Options options_;
  std::vector<Channel> channels_;
  Timestamp last_output_watermark_ = kMinTimestamp;
  WatermarkStatus output_status_ = WatermarkStatus::kActive;
};

}  // namespace tidemark
