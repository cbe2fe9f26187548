#include "runtime/task/record_writer.h"

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
      fill_(channels_.size(), 0),
      overflow_(channels_.size()) {
  TM_CHECK(!channels_.empty(), "a RecordWriter needs at least one channel");
  TM_CHECK(partitioning_ != Partitioning::kHash ||
               (max_parallelism_ >= static_cast<int>(channels_.size()) && max_parallelism_ > 0),
           "hash partitioning over {} channels needs max parallelism >= {}, got {}",
           channels_.size(), channels_.size(), max_parallelism_);
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
      batch->records.reserve(batch_size_);
    }
    batch->kind = StreamElement::Kind::kRecords;
    fill_[c] = 0;
  }
  return *batch;
}

bool RecordWriter::AppendSpareSlot(std::vector<StreamRecord>& records) {
  if (spare_.empty()) {
    return false;
  }
  records.push_back(std::move(spare_.back()));
  spare_.pop_back();
  return true;
}

void RecordWriter::Emit(StreamRecord& record) {
  ++records_out_;
  if (partitioning_ == Partitioning::kBroadcast && channels_.size() > 1) {
    for (size_t c = 0; c < channels_.size(); ++c) {
      auto& batch = batches_[c];
      if (!batch) {
        batch = std::make_unique<StreamElement>();
        batch->records.reserve(batch_size_);
      }
      batch->records.push_back(record);
      fill_[c] = batch->records.size();
      if (batch->records.size() >= batch_size_) {
        Enqueue(c, std::move(batch));
      }
    }
    return;
  }
  const size_t c = SelectChannel(record);
  auto& batch = batches_[c];
  size_t& fill = fill_[c];
  auto& records = OpenBatch(c).records;
  if (fill < records.size() || AppendSpareSlot(records)) {
    // A recycled slot: copy into its row's buffer instead of taking the caller's row, so neither
    // side allocates per record (and the caller keeps its buffer, e.g. a generator's row).
    StreamRecord& slot = records[fill];
    slot.row =
        record.row;  // into the slot's buffer: a memcpy, no allocation once it is large enough
    slot.timestamp = record.timestamp;
    slot.has_timestamp = record.has_timestamp;
  } else {
    records.push_back(std::move(record));
  }
  if (++fill >= batch_size_) {
    Enqueue(c, std::move(batch));
  }
}

bool RecordWriter::TakesWholeStorage(const RecordBatch& batch) {
  if (batch.storage == nullptr || batch.storage->size() != batch.size) {
    return false;
  }
  const StreamRecord* const base = batch.storage->data();
  bool in_order = true;
  for (size_t i = 0; i < batch.size; ++i) {
    in_order &= batch.records[i] == base + i;  // no early exit: a vectorised compare
  }
  return in_order;
}

void RecordWriter::EmitBatch(RecordBatch& batch) {
  if (channels_.size() != 1) {
    for (size_t i = 0; i < batch.size; ++i) {
      Emit(*batch.records[i]);
    }
    return;
  }
  // One channel (a forward edge, or any edge into parallelism 1): no channel to select, and the
  // caller's rows are given up (RecordBatch allows it), so a recycled slot takes the record by a
  // swap of the two rows' buffers instead of a copy; the caller's record gets the slot's old
  // buffer (a row of the same edge, so of the same layout) to overwrite next time.
  records_out_ += static_cast<int64_t>(batch.size);
  auto& out = batches_[0];
  size_t& fill = fill_[0];
  if ((!out || fill == 0) && batch.size == batch_size_ && TakesWholeStorage(batch)) {
    // A whole batch of the caller's own vector (a source's slots, a channel batch passed on):
    // hand the vector over as it is and give the caller the recycled batch's records in exchange,
    // so no record is touched here. The recycled records were last written by the consumer's
    // core; per-record swaps into them cost a cache miss each on this side.
    std::vector<StreamRecord>& records = OpenBatch(0).records;
    while (records.size() < batch.size && AppendSpareSlot(records)) {
    }
    records.resize(batch.size);  // a recycled partial batch, or a new one: as many records
    records.swap(*batch.storage);
    fill = batch.size;
    Enqueue(0, std::move(out));
    return;
  }
  for (size_t i = 0; i < batch.size; ++i) {
    StreamRecord& record = *batch.records[i];
    auto& records = OpenBatch(0).records;
    if (fill < records.size() || AppendSpareSlot(records)) {
      StreamRecord& slot = records[fill];
      slot.row.swap(record.row);
      slot.timestamp = record.timestamp;
      slot.has_timestamp = record.has_timestamp;
    } else {
      records.push_back(std::move(record));
    }
    if (++fill >= batch_size_) {
      Enqueue(0, std::move(out));
    }
  }
}

void RecordWriter::FlushBatches() {
  for (size_t c = 0; c < batches_.size(); ++c) {
    if (batches_[c] && fill_[c] > 0) {
      // The recycled slots not overwritten leave the batch; their rows' buffers are kept.
      auto& records = batches_[c]->records;
      for (size_t i = fill_[c]; i < records.size() && spare_.size() < batch_size_; ++i) {
        spare_.push_back(std::move(records[i]));
      }
      records.resize(fill_[c]);
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
