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
    }
  }
}

void ChecksumSinkOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  uint64_t sum = 0;
  for (size_t p = 0; p < slots_.size(); ++p) {
    sum += FieldHash(p, record.row[slots_[p]]);
  }
  checksum_ += RecordHash(sum);
  ++count_;
  if (latency_slot_ >= 0) {
    if (const auto* emitted = std::get_if<int64_t>(&record.row[static_cast<size_t>(latency_slot_)]);
        emitted != nullptr && *emitted != 0) {
      const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now().time_since_epoch())
                              .count();
      latency_ns_.push_back(now - *emitted);
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
