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
  /// Flink's `SourceOperator#stop(StopMode)`: the source reads no more (releasing any wait, e.g.
  /// for alignment). After it the task no longer calls `EmitNext` and ends its input. Mailbox
  /// thread.
  virtual void Stop(SourceStopMode /*mode*/) {}

  /// Sources have no inputs.
  void ProcessElement(StreamRecord& /*record*/, int /*input*/) override {}
  int NumInputs() const override { return 0; }
};

}  // namespace tidemark
