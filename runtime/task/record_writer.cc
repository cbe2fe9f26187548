#include "runtime/task/record_writer.h"

#include <algorithm>

#include "runtime/core/errors.h"
#include "runtime/core/key.h"
#include "runtime/state/key_groups.h"

namespace tidemark {

RecordWriter::RecordWriter(Partitioning partitioning, std::vector<Channel*> channels,
                           std::vector<int> key_slots, int subtask_index, size_t batch_size,
                           int max_parallelism)
    : partitioning_(partitioning),
      channels_(std::move(channels)),
      key_slots_(std::move(key_slots)),
      batch_size_(batch_size == 0 ? 1 : batch_size),
      max_parallelism_(max_parallelism),
      // Rebalance starts at a subtask-dependent channel so parallel producers spread out.
      next_channel_(channels_.empty() ? 0 : static_cast<size_t>(subtask_index) % channels_.size()),
      batches_(channels_.size()),
      overflow_(channels_.size()) {
  TM_CHECK(!channels_.empty(), "a RecordWriter needs at least one channel");
  TM_CHECK(partitioning_ != Partitioning::kHash ||
               (max_parallelism_ >= static_cast<int>(channels_.size()) && max_parallelism_ > 0),
           "hash partitioning over {} channels needs max parallelism >= {}, got {}",
           channels_.size(), channels_.size(), max_parallelism_);
}

void RecordWriter::SetFieldsRead(const std::vector<int>& slots, size_t width) {
  uint64_t drop = 0;
  for (size_t f = 0; f < std::min<size_t>(width, 64); ++f) {
    drop |= uint64_t{1} << f;
  }
  for (const int slot : slots) {
    if (slot >= 0 && slot < 64) {
      drop &= ~(uint64_t{1} << slot);
    }
  }
  drop_mask_ = drop;
  drop_width_ = static_cast<uint32_t>(width);
}

size_t RecordWriter::SelectChannel(const StreamRecord& record) {
  const size_t n = channels_.size();
  if (n == 1) {
    return 0;
  }
  switch (partitioning_) {
    case Partitioning::kHash: {
      // The subtask owning the key's group, as the receiving operator's keyed state expects.
      const int key_group = KeyGroupForHash(KeyHash64(record.row, key_slots_), max_parallelism_);
      return static_cast<size_t>(
          OperatorIndexForKeyGroup(max_parallelism_, static_cast<int>(n), key_group));
    }
    case Partitioning::kRebalance:
    case Partitioning::kDefault:
    case Partitioning::kBroadcast:  // handled by the caller
    case Partitioning::kForward: {
      size_t c = next_channel_;
      next_channel_ = (next_channel_ + 1) % n;
      return c;
    }
  }
  return 0;
}

StreamElement& RecordWriter::OpenBatch(size_t c) {
  auto& batch = batches_[c];
  if (!batch) {
    batch = channels_[c]->TakeRecycled();
    if (!batch) {
      batch = std::make_unique<StreamElement>();
    }
    batch->kind = StreamElement::Kind::kRecords;
    batch->records.clear();
    batch->wire.Clear();
    batch->wire.SetDroppedFields(drop_mask_, drop_width_);
  }
  return *batch;
}

void RecordWriter::Append(size_t c, const StreamRecord& record) {
  StreamElement* batch = batches_[c].get();
  if (batch == nullptr || !batch->wire.Accepts(record.row)) [[unlikely]] {
    if (batch != nullptr) {
      // A record of another layout (rows built by hand): the batch so far goes first, in order.
      Enqueue(c, std::move(batches_[c]));
    }
    batch = &OpenBatch(c);
  }
  batch->wire.Append(record);
  if (batch->wire.size() >= batch_size_) {
    Enqueue(c, std::move(batches_[c]));
  }
}

void RecordWriter::Emit(StreamRecord& record) {
  ++records_out_;
  if (partitioning_ == Partitioning::kBroadcast && channels_.size() > 1) {
    for (size_t c = 0; c < channels_.size(); ++c) {
      Append(c, record);
    }
    return;
  }
  Append(SelectChannel(record), record);
}

void RecordWriter::EmitBatch(RecordBatch& batch) {
  if (channels_.size() != 1) {
    for (size_t i = 0; i < batch.size; ++i) {
      Emit(*batch.records[i]);
    }
    return;
  }
  // One channel (a forward edge, or any edge into parallelism 1): no channel to select. The
  // records are copied into the wire batch and stay the caller's, so the rows a source or a
  // chain refills are never ones the consumer's core touched.
  records_out_ += static_cast<int64_t>(batch.size);
  size_t i = 0;
  while (i < batch.size) {
    StreamElement& out = OpenBatch(0);
    if (!out.wire.Accepts(batch.records[i]->row)) {
      Enqueue(0, std::move(batches_[0]));  // a record of another layout: a new batch
      continue;
    }
    i += out.wire.AppendSome(batch.records + i, batch.size - i, batch_size_);
    if (out.wire.size() >= batch_size_) {
      Enqueue(0, std::move(batches_[0]));
    }
  }
}

void RecordWriter::FlushBatches() {
  for (size_t c = 0; c < batches_.size(); ++c) {
    if (batches_[c] && !batches_[c]->wire.empty()) {
      Enqueue(c, std::move(batches_[c]));
    }
  }
}

void RecordWriter::Broadcast(const StreamElement& element) {
  FlushBatches();
  for (size_t c = 0; c < channels_.size(); ++c) {
    auto copy = std::make_unique<StreamElement>();
    copy->kind = element.kind;
    copy->watermark = element.watermark;
    copy->status = element.status;
    copy->barrier = element.barrier;
    Enqueue(c, std::move(copy));
  }
}

void RecordWriter::Enqueue(size_t channel, std::unique_ptr<StreamElement> element) {
  auto& q = overflow_[channel];
  if (q.empty() && channels_[channel]->TryPush(element)) {
    ++elements_pushed_;
    return;
  }
  q.push_back(std::move(element));
  ++queued_;
}

bool RecordWriter::TryDrain() {
  if (queued_ == 0) {
    return true;
  }
  for (size_t c = 0; c < overflow_.size(); ++c) {
    auto& q = overflow_[c];
    while (!q.empty()) {
      if (!channels_[c]->TryPush(q.front())) {
        // Announce, then retry once: a pop between the failed push and the announcement
        // would otherwise be a lost wake-up.
        channels_[c]->SetProducerWaiting();
        if (!channels_[c]->TryPush(q.front())) {
          break;
        }
      }
      q.pop_front();
      --queued_;
      ++elements_pushed_;
    }
  }
  return queued_ == 0;
}

}  // namespace tidemark
