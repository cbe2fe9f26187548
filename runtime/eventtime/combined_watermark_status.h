#pragma once

#include <cstdint>
#include <list>

#include "runtime/core/timestamp.h"

namespace tidemark {

/// The watermark and idleness of one input of a `CombinedWatermarkStatus` (one split, or one input
/// of a two-input operator). Mirrors Flink's `CombinedWatermarkStatus.PartialWatermark` in its
/// newest, tri-state form: an input that never reported anything is *unknown*: it holds the
/// combined watermark back (counts as non-idle with watermark MIN) but does not make the combined
/// stream active.
///
/// The watermark only moves forward. Setting a watermark makes the input active.
/// Threading: mailbox thread only.
class PartialWatermark {
 public:
  enum class State { kUnknown, kActive, kIdle };

  /// Takes `watermark` if larger than the current one and marks the input active.
  /// Returns whether the watermark advanced.
  bool SetWatermark(Timestamp watermark);
  void SetIdle(bool idle) { state_ = idle ? State::kIdle : State::kActive; }

  Timestamp watermark() const { return watermark_; }
  State state() const { return state_; }
  bool IsIdle() const { return state_ == State::kIdle; }
  bool IsActive() const { return state_ == State::kActive; }

 private:
  Timestamp watermark_ = kMinTimestamp;
  State state_ = State::kUnknown;
};

/// Combines the watermarks of several inputs. Mirrors Flink's `CombinedWatermarkStatus`
/// (newest version; SEMANTICS.md §3):
/// - the combined value is the minimum over non-idle inputs (unknown ones count, at MIN);
/// - if every input is idle, it is the maximum over all inputs (so the result does not depend on
///   the order in which inputs went idle);
/// - it is only taken if strictly larger than the previous combined value (never regresses);
/// - the combined status is idle iff all inputs are idle;
/// - with no inputs nothing is computed (MAX is never produced); if inputs existed before and all
///   were removed, the status becomes idle; an initially empty set stays non-idle.
///
/// Ownership: inputs are owned here and handed out by pointer; a pointer stays valid until
/// `Remove` of that input (std::list nodes do not move). Threading: mailbox thread only.
/// Cost: `UpdateCombinedWatermark` is O(number of inputs).
class CombinedWatermarkStatus {
 public:
  /// Adds an input (state unknown, watermark MIN). The pointer is owned by this object.
  PartialWatermark* Add();
  /// Removes an input; returns false if it was not part of this status. Does not recompute.
  bool Remove(PartialWatermark* partial);

  /// Recomputes the combined watermark and status. Returns true iff the combined watermark
  /// advanced (the caller then emits `combined_watermark()`).
  bool UpdateCombinedWatermark();

  Timestamp combined_watermark() const { return combined_watermark_; }
  bool IsIdle() const { return idle_; }
  /// Whether some input is in state active (has reported a watermark or mark-active and is not
  /// idle).
  bool HasActiveInput() const;
  size_t size() const { return partials_.size(); }

 private:
  std::list<PartialWatermark> partials_;
  Timestamp combined_watermark_ = kMinTimestamp;
  bool idle_ = false;
  bool had_inputs_ = false;
};

}  // namespace tidemark
