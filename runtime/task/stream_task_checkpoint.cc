// StreamTask's part in checkpoints (Flink's SubtaskCheckpointCoordinator): alignment of barriers
// over the input channels, the snapshot of the chain in order, forwarding the barrier, the
// acknowledgement, and the notifications. Kept apart from the mailbox loop in stream_task.cc.
#include <fmt/format.h>

#include "runtime/checkpoint/checkpoint_coordinator.h"
#include "runtime/core/logging.h"
#include "runtime/task/stream_task.h"

namespace tidemark {

void StreamTask::EnableCheckpoints(CheckpointBarrierHandler::Mode mode, CheckpointStorage* storage,
                                   CheckpointCoordinator* coordinator,
                                   const CompletedCheckpoint* restored) {
  checkpoints_enabled_ = true;
  checkpoint_mode_ = mode;
  checkpoint_storage_ = storage;
  coordinator_ = coordinator;
  restored_ = restored;
  size_t total = 0;
  input_channel_offsets_.clear();
  for (const TaskInput& in : inputs_) {
    input_channel_offsets_.push_back(total);
    total += in.channels.size();
  }
  if (total > 0) {
    barrier_handler_ = std::make_unique<CheckpointBarrierHandler>(
        mode, total,
        CheckpointBarrierHandler::Callbacks{
            [this](const CheckpointBarrier& b) { PerformCheckpoint(b); },
            [this](int64_t id) {
              // Tell downstream to stop aligning this checkpoint (Flink's CancelCheckpointMarker).
              const auto marker = StreamElement::OfCancelCheckpoint(id);
              for (auto& w : writers_) {
                w->Broadcast(*marker);
              }
            }});
  }
}

size_t StreamTask::GlobalChannel(const TaskInput& in, size_t channel) const {
  const size_t index = static_cast<size_t>(&in - inputs_.data());
  return input_channel_offsets_[index] + channel;
}

void StreamTask::HandleCheckpointElement(TaskInput& in, size_t channel,
                                         const StreamElement& element) {
  if (barrier_handler_ == nullptr) {
    // Not checkpointing: a barrier cannot come, but never let one stop the stream.
    return;
  }
  const size_t global = GlobalChannel(in, channel);
  CallOperator(name_, [&] {
    switch (element.kind) {
      case StreamElement::Kind::kCheckpointBarrier:
        if (element.barrier.id > aligning_id_) {
          // Its first barrier: alignment starts (Flink's alignmentDurationNanos, first to last).
          aligning_id_ = element.barrier.id;
          alignment_start_ms_ = pts_->GetCurrentProcessingTime();
          alignment_start_ = std::chrono::steady_clock::now();
        }
        barrier_handler_->ProcessBarrier(element.barrier, global);
        break;
      case StreamElement::Kind::kCancelCheckpointMarker:
        barrier_handler_->Abort(element.barrier.id);
        break;
      case StreamElement::Kind::kEndOfInput:
        barrier_handler_->ProcessEndOfInput(global);
        break;
      default:
        break;
    }
  });
}

void StreamTask::InitializeOperatorState() {
  for (auto& c : ops_) {
    const std::string* bytes =
        restored_ != nullptr ? restored_->Find(c.name, subtask_index_) : nullptr;
    std::optional<StateReader> reader;
    StateInitializationContext ctx;
    if (restored_ != nullptr) {
      // Set for every operator of a restored job, stateless ones too (Flink's isRestored()).
      ctx.restored_checkpoint_id = restored_->id;
      ctx.restore_watermarks = restore_watermarks_;
      ctx.restored_directory = restored_->directory;
    }
    if (bytes != nullptr) {
      reader.emplace(*bytes);
      ctx.reader = &*reader;
    }
    CallOperator(c.name, [&] {
      if (bytes == nullptr) {
        c.op->InitializeState(ctx);
        return;
      }
      // Restored bytes the operator cannot read (another operator type's state under this id,
      // corrupt, for other key groups: StateCorrupt) fail the same way on every attempt, so a
      // restart cannot help and the job fails once (Flink fails a restore of incompatible
      // state). Anything else (a user function's failure, a full disk) stays recoverable.
      try {
        c.op->InitializeState(ctx);
      } catch (const StateCorrupt& e) {
        throw NonRecoverableError(fmt::format(
            "cannot restore its state from {}: {}; every restart would fail the same way, so the "
            "job fails. Restore it into the job the checkpoint was taken of, or give this "
            "operator a new id and pass --allow-non-restored-state to start it empty",
            restored_->directory.string(), e.what()));
      }
    });
  }
}

std::vector<StreamTask::OperatorSnapshot> StreamTask::SnapshotChain(
    int64_t id, int64_t timestamp_ms, const std::filesystem::path* incremental) {
  std::vector<OperatorSnapshot> states;
  // Chain order: the head first, as the barrier would pass through the chain.
  for (auto& c : ops_) {
    StateWriter writer;
    StateSnapshotContext ctx{id, timestamp_ms, writer};
    IncrementalSnapshotTarget target;
    if (incremental != nullptr) {
      target.root = *incremental;
      ctx.incremental = &target;
    }
    CallOperator(c.name, [&] { c.op->SnapshotState(ctx); });
    if (!writer.bytes().empty()) {
      states.push_back(OperatorSnapshot{c.name, writer.Release(), writer.ReleaseBlocks(),
                                        std::move(target.referenced)});
    }
  }
  return states;
}

void StreamTask::PerformCheckpoint(const CheckpointBarrier& barrier) {
  if (input_finished_) {
    // End of input went out before this barrier could: the coordinator holds the final state
    // (ReportFinished), and a barrier after end of input would never be read downstream.
    return;
  }
  int64_t alignment_ms = 0;
  int64_t alignment_ns = 0;
  if (barrier_handler_ != nullptr && barrier.id == aligning_id_) {
    alignment_ms = pts_->GetCurrentProcessingTime() - alignment_start_ms_;
    alignment_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now() - alignment_start_)
                       .count();
  }
  // The synchronous part: every operator of the chain snapshots its state. One that throws fails
  // the task with its own cause, as in Flink (StreamTask's "Could not perform checkpoint"): the
  // checkpoint is aborted without counting toward tolerable-failed-checkpoints, and the job
  // restarts or fails for the operator's reason, never for a checkpoint-count threshold that races
  // with it.
  std::vector<OperatorSnapshot> states;
  try {
    // Incremental checkpoints (checkpointing.incremental) never for savepoints: those stay
    // canonical and backend-independent.
    const bool incremental = checkpoint_storage_ != nullptr && checkpoint_storage_->incremental() &&
                             !checkpoint_storage_->IsSavepoint(barrier.id);
    states = SnapshotChain(barrier.id, barrier.timestamp_ms,
                           incremental ? &checkpoint_storage_->dir() : nullptr);
  } catch (const Cancelled&) {
    throw;
  } catch (const CheckpointUploadError& e) {
    // The snapshot's files could not be written to the checkpoint storage (an incremental
    // checkpoint's SST files): as a failed state write below, the checkpoint is declined and
    // counted, and the task runs on with its state untouched.
    GetLogger("checkpoint")
        ->warn("task {} declines checkpoint {}: {}", checkpoint_task_name(), barrier.id, e.what());
    if (coordinator_ != nullptr) {
      coordinator_->Decline(barrier.id, checkpoint_task_name(), e.what());
    }
    return;
  } catch (const std::exception& e) {
    if (coordinator_ != nullptr) {
      coordinator_->Decline(barrier.id, checkpoint_task_name(), e.what(), /*task_failed=*/true);
    }
    throw;
  }
  // Writing the state to the checkpoint storage (Flink's asynchronous part): a failure declines
  // the checkpoint and the task goes on; the job fails only when tolerable-failed-checkpoints is
  // exceeded.
  std::vector<StateFileHandle> handles;
  try {
    for (OperatorSnapshot& s : states) {
      if (checkpoint_storage_ != nullptr) {
        handles.push_back(checkpoint_storage_->WriteState(barrier.id, s.operator_id, subtask_index_,
                                                          s.bytes, std::move(s.blocks),
                                                          std::move(s.shared)));
      }
    }
  } catch (const Cancelled&) {
    throw;
  } catch (const std::exception& e) {
    GetLogger("checkpoint")
        ->warn("task {} declines checkpoint {}: {}", checkpoint_task_name(), barrier.id, e.what());
    if (coordinator_ != nullptr) {
      coordinator_->Decline(barrier.id, checkpoint_task_name(), e.what());
    }
    return;  // downstream alignment unblocks when the abort reaches every task
  }
  // The barrier goes out on every output before any record emitted after the snapshot.
  const auto element = StreamElement::OfBarrier(barrier);
  for (auto& w : writers_) {
    w->Broadcast(*element);
  }
  if (coordinator_ != nullptr) {
    coordinator_->Acknowledge(barrier.id, checkpoint_task_name(), std::move(handles), alignment_ms,
                              alignment_ns);
  }
}

void StreamTask::ReportFinished() {
  input_finished_ = true;
  if (coordinator_ == nullptr) {
    return;
  }
  std::vector<CheckpointCoordinator::FinishedState> states;
  for (OperatorSnapshot& s :
       SnapshotChain(coordinator_->NextCheckpointIdFor(checkpoint_task_name()),
                     pts_->GetCurrentProcessingTime())) {
    states.push_back(CheckpointCoordinator::FinishedState{s.operator_id, subtask_index_,
                                                          std::move(s.bytes), std::move(s.blocks)});
  }
  final_checkpoint_id_ = coordinator_->TaskFinished(checkpoint_task_name(), std::move(states));
  awaiting_final_checkpoint_ = true;
}

void StreamTask::TriggerCheckpoint(const CheckpointBarrier& barrier) {
  mailbox_.Put(Mail{[this, barrier] { PerformCheckpoint(barrier); },
                    fmt::format("trigger checkpoint {}", barrier.id)});
}

void StreamTask::NotifyCheckpointComplete(int64_t id) {
  mailbox_.Put(Mail{[this, id] {
                      for (auto& c : ops_) {
                        CallOperator(c.name, [&] { c.op->NotifyCheckpointComplete(id); });
                      }
                      if (awaiting_final_checkpoint_ && id >= final_checkpoint_id_) {
                        awaiting_final_checkpoint_ = false;  // the last output is committed
                      }
                    },
                    fmt::format("checkpoint {} complete", id)});
}

void StreamTask::Drain() {
  mailbox_.Put(Mail{[this] {
                      auto* source = dynamic_cast<SourceOperatorBase*>(ops_.front().op.get());
                      if (source == nullptr || drain_requested_) {
                        return;
                      }
                      drain_requested_ = true;
                      CallOperator(ops_.front().name,
                                   [&] { source->Stop(SourceStopMode::kDrain); });
                    },
                    "drain"});
}

void StreamTask::NotifyCheckpointAborted(int64_t id) {
  mailbox_.Put(Mail{[this, id] {
                      if (barrier_handler_ != nullptr) {
                        barrier_handler_->Abort(id);
                      }
                      for (auto& c : ops_) {
                        CallOperator(c.name, [&] { c.op->NotifyCheckpointAborted(id); });
                      }
                    },
                    fmt::format("checkpoint {} aborted", id)});
}

}  // namespace tidemark
