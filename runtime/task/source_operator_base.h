#pragma once

#include "runtime/task/stream_operator.h"

namespace tidemark {

/// Result of one source poll (Flink's `InputStatus`).
enum class InputStatus { kMoreAvailable, kNothingAvailable, kEndOfInput };

/// How a source is stopped (Flink's `StopMode`): DRAIN for stop-with-savepoint --drain (the
/// task then ends its input: MAX_WATERMARK and end of input go downstream, every window and
/// event-time timer fires), NO_DRAIN for a plain stop.
enum class SourceStopMode { kDrain, kNoDrain };

/// The head operator of a source task. The StreamTask's default action calls `EmitNext` instead of
/// reading channels. Mirrors the role of Flink's `SourceOperator#emitNext`.
/// Threading: mailbox thread only.
class SourceOperatorBase : public StreamOperator {
 public:
  /// Emits at most a small bounded amount of work (one record in the simplest case) into
  /// `output()`. `kNothingAvailable`: the source arranged to be woken (a mail, a timer or a clock
  /// advance) and the task may sleep. `kEndOfInput`: every split is done; the task then sends
  /// MAX and end of input downstream.
  [[nodiscard]] virtual InputStatus EmitNext() = 0;
  /// The task's default action: up to `max_polls` polls as by `EmitNext`, stopping early at any
  /// status but `kMoreAvailable`, which is returned; `*polls` gets the number of polls that
  /// returned `kMoreAvailable`. The records may reach `output()` as batches
  /// (`Output::CollectBatch`), but every one of them has reached it, in order and before any
  /// watermark, status or side-output record emitted after it, when this returns: mails
  /// (timers, checkpoint barriers) run only between calls, so they never split a batch.
  /// Default: calls `EmitNext`.
  [[nodiscard]] virtual InputStatus EmitBatch(int64_t max_polls, int64_t* polls) {
    InputStatus status = InputStatus::kMoreAvailable;
    *polls = 0;
    while (*polls < max_polls) {
      status = EmitNext();
      if (status != InputStatus::kMoreAvailable) {
        break;
      }
      ++*polls;
    }
    return status;
  }
  /// Flink's `SourceOperator#stop(StopMode)`: the source reads no more (releasing any wait, e.g.
  /// for alignment). After it the task no longer calls `EmitNext` and ends its input. Mailbox
  /// thread.
  virtual void Stop(SourceStopMode /*mode*/) {}

  /// Sources have no inputs.
  void ProcessElement(StreamRecord& /*record*/, int /*input*/) override {}
  int NumInputs() const override { return 0; }
};

}  // namespace tidemark
