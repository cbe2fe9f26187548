#pragma once

#include <deque>
#include <memory>
#include <vector>

#include "config/job_spec.h"
#include "runtime/io/channel.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// Writes one task's output for one outgoing edge into the channels of the downstream subtasks,
/// choosing a channel per record by the edge's partitioning (forward | rebalance | hash(key) |
/// broadcast; hash sends a key to the subtask owning its key group, runtime/state/key_groups.h,
/// with `max_parallelism` key groups). Records are batched per channel (`batch_size`); watermarks,
/// statuses and end of input flush every batch first and then go to every channel, so order per
/// channel is kept. Mirrors Flink's `RecordWriter` + `StreamPartitioner`.
///
/// Backpressure without blocking inside operator code: when a channel is full the element waits
/// in a per-channel overflow queue; the StreamTask stops pulling input until `TryDrain` empties
/// it, and keeps running its mails (timers) meanwhile, as Flink's mailbox does.
/// Threading: the producing task's mailbox thread only.
class RecordWriter {
 public:
  RecordWriter(Partitioning partitioning, std::vector<Channel*> channels,
               std::vector<int> key_slots, int subtask_index, size_t batch_size,
               int max_parallelism = 128);

  /// Projection pushdown: the consumer reads only fields `slots` of rows of `width` fields (its
  /// input schema); the batches of this writer leave the others out where that is cheap (see
  /// WireBatch::SetDroppedFields). Call before the first record.
  void SetFieldsRead(const std::vector<int>& slots, size_t width);

  void Emit(StreamRecord& record);
  /// `Emit` for every record of `batch`, in order. The records are copied (into the channel
  /// batch's wire form, see WireBatch); the caller keeps them.
  void EmitBatch(RecordBatch& batch);
  /// Flushes all batches, then queues a copy of `element` on every channel.
  void Broadcast(const StreamElement& element);
  /// Moves partial batches into the channels' queues.
  void FlushBatches();
  /// Pushes queued elements; true when nothing is left queued. When a channel stays full the
  /// consumer is asked to wake this task on its next pop.
  [[nodiscard]] bool TryDrain();
  bool HasQueued() const { return queued_ > 0; }

  int64_t records_out() const { return records_out_; }
  /// Elements (batches, watermarks, statuses, end of input) handed to the channels so far; the
  /// virtual-clock driver reads it to tell whether a turn changed anything another task can see.
  int64_t elements_pushed() const { return elements_pushed_; }

 private:
  size_t SelectChannel(const StreamRecord& record);
  void Enqueue(size_t channel, std::unique_ptr<StreamElement> element);
  /// The batch being filled for channel `c`: a recycled one (its buffers reused) or a new one.
  StreamElement& OpenBatch(size_t c);
  /// Copies `record` into channel `c`'s batch, pushing the batch when it is full.
  void Append(size_t c, const StreamRecord& record);

  Partitioning partitioning_;
  std::vector<Channel*> channels_;
  std::vector<int> key_slots_;
  size_t batch_size_;
  int max_parallelism_;
  size_t next_channel_;
  std::vector<std::unique_ptr<StreamElement>> batches_;
  std::vector<std::deque<std::unique_ptr<StreamElement>>> overflow_;
  uint64_t drop_mask_ = 0;   ///< SetFieldsRead: fields left out
  uint32_t drop_width_ = 0;  ///< SetFieldsRead: the width they apply to
  size_t queued_ = 0;
  int64_t records_out_ = 0;
  int64_t elements_pushed_ = 0;
};

}  // namespace tidemark
