#include "operators/checksum_sink_operator.h"

#include <chrono>

#include "runtime/core/checksum.h"

namespace tidemark {

ChecksumSinkOperator::ChecksumSinkOperator(const Schema& schema, std::shared_ptr<SinkResult> result)
    : result_(std::move(result)) {
  for (size_t i = 0; i < schema.size(); ++i) {
    const std::string& name = schema.field(i).name;
    if (name == "emit_ns") {
      latency_slot_ = static_cast<int>(i);
    } else if (name != "wm") {
      slots_.push_back(i);
      const FieldType t = schema.field(i).type;
      kinds_.push_back(t == FieldType::kDouble                                  ? 2
                       : t == FieldType::kInt64 || t == FieldType::kTimestamp ? 1
                                                                               : 0);
    }
  }
}

uint64_t ChecksumSinkOperator::Hash(const Row& row) const {
  uint64_t sum = 0;
  const size_t n = slots_.size();
  for (size_t p = 0; p < n; ++p) {
    const Value& cell = row[slots_[p]];
    const size_t kind = kinds_[p];
    if (kind == 1 && cell.index() == 1) {
      sum += FieldHash(p, *std::get_if<int64_t>(&cell));
    } else if (kind == 2 && cell.index() == 2) {
      sum += FieldHash(p, *std::get_if<double>(&cell));
    } else {
      sum += FieldHash(p, cell);
    }
  }
  return RecordHash(sum);
}

void ChecksumSinkOperator::SampleLatency(const Row& row) {
  if (const auto* emitted = std::get_if<int64_t>(&row[static_cast<size_t>(latency_slot_)]);
      emitted != nullptr && *emitted != 0) {
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    latency_ns_.push_back(now - *emitted);
  }
}

void ChecksumSinkOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  checksum_ += Hash(record.row);
  ++count_;
  if (latency_slot_ >= 0) {
    SampleLatency(record.row);
  }
}

void ChecksumSinkOperator::ProcessBatch(RecordBatch& batch, int /*input*/) {
  uint64_t checksum = checksum_;
  for (size_t i = 0; i < batch.size; ++i) {
    checksum += Hash(batch.records[i]->row);
  }
  checksum_ = checksum;
  count_ += static_cast<int64_t>(batch.size);
  if (latency_slot_ >= 0) {
    for (size_t i = 0; i < batch.size; ++i) {
      SampleLatency(batch.records[i]->row);
    }
  }
}

void ChecksumSinkOperator::Finish() {
  if (!published_) {
    published_ = true;
    result_->AddChecksumPart(count_, checksum_, latency_ns_);
  }
}

}  // namespace tidemark
