#include "operators/checksum_sink_operator.h"

#include <bit>
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
      const FieldType t = schema.field(i).type;
      const size_t position = slots_.size();
      slots_.push_back(i);
      fields_.push_back(Field{i,
                              t == FieldType::kDouble   ? Kind::kDouble
                              : t == FieldType::kString ? Kind::kString
                                                        : Kind::kBits,
                              FieldSalt(position)});
      (fields_.back().kind == Kind::kString ? string_fields_ : fixed_fields_)
          .push_back(fields_.back());
    }
  }
  for (size_t f = 0; f < fixed_fields_.size() && f < kMaxUnrolledFields; ++f) {
    unrolled_slot_[f] = fixed_fields_[f].slot;
    unrolled_salt_[f] = fixed_fields_[f].salt;
    unrolled_zero_sign_[f] = fixed_fields_[f].kind == Kind::kDouble ? uint64_t{1} << 63 : 0;
  }
  static constexpr HashFixedBatchFn kUnrolled[kMaxUnrolledFields + 1] = {
      nullptr,
      &ChecksumSinkOperator::HashFixedBatch<1>,
      &ChecksumSinkOperator::HashFixedBatch<2>,
      &ChecksumSinkOperator::HashFixedBatch<3>,
      &ChecksumSinkOperator::HashFixedBatch<4>,
      &ChecksumSinkOperator::HashFixedBatch<5>,
      &ChecksumSinkOperator::HashFixedBatch<6>,
      &ChecksumSinkOperator::HashFixedBatch<7>,
      &ChecksumSinkOperator::HashFixedBatch<8>};
  for (size_t f = 0; f < string_fields_.size() && f < kMaxUnrolledFields; ++f) {
    string_slot_[f] = string_fields_[f].slot;
    string_salt_[f] = string_fields_[f].salt;
  }
  if (fixed_fields_.size() <= kMaxUnrolledFields) {
    if (string_fields_.empty()) {
      hash_fixed_batch_ = kUnrolled[fixed_fields_.size()];
    } else if (string_fields_.size() <= kMaxUnrolledFields) {
      // Unrolled for up to 4 fixed-width and 3 string fields (the events schema has 2 and 2).
      static constexpr HashFixedBatchFn kMixed[5][3] = {
          {&ChecksumSinkOperator::HashMixedBatch<0, 1>, &ChecksumSinkOperator::HashMixedBatch<0, 2>,
           &ChecksumSinkOperator::HashMixedBatch<0, 3>},
          {&ChecksumSinkOperator::HashMixedBatch<1, 1>, &ChecksumSinkOperator::HashMixedBatch<1, 2>,
           &ChecksumSinkOperator::HashMixedBatch<1, 3>},
          {&ChecksumSinkOperator::HashMixedBatch<2, 1>, &ChecksumSinkOperator::HashMixedBatch<2, 2>,
           &ChecksumSinkOperator::HashMixedBatch<2, 3>},
          {&ChecksumSinkOperator::HashMixedBatch<3, 1>, &ChecksumSinkOperator::HashMixedBatch<3, 2>,
           &ChecksumSinkOperator::HashMixedBatch<3, 3>},
          {&ChecksumSinkOperator::HashMixedBatch<4, 1>, &ChecksumSinkOperator::HashMixedBatch<4, 2>,
           &ChecksumSinkOperator::HashMixedBatch<4, 3>}};
      hash_fixed_batch_ = fixed_fields_.size() <= 4 && string_fields_.size() <= 3
                              ? kMixed[fixed_fields_.size()][string_fields_.size() - 1]
                              : &ChecksumSinkOperator::HashMixedBatch<kAnyCount, kAnyCount>;
    }
  }
}

template <size_t F, size_t S>
uint64_t ChecksumSinkOperator::HashMixedBatch(const RecordBatch& batch) const {
  // Copies in registers: the loop stores nothing, but the compiler cannot know the rows do not
  // alias the members.
  const std::array<size_t, kMaxUnrolledFields> slot = unrolled_slot_;
  const std::array<uint64_t, kMaxUnrolledFields> salt = unrolled_salt_;
  const std::array<uint64_t, kMaxUnrolledFields> zero_sign = unrolled_zero_sign_;
  const std::array<size_t, kMaxUnrolledFields> string_slot = string_slot_;
  const std::array<uint64_t, kMaxUnrolledFields> string_salt = string_salt_;
  const size_t fixed = F == kAnyCount ? fixed_fields_.size() : F;
  const size_t strings = S == kAnyCount ? string_fields_.size() : S;
  uint64_t total = 0;
  for (size_t i = 0; i < batch.size; ++i) {
    const Row& row = batch.records[i]->row;
    if (row.AnyNull()) [[unlikely]] {
      total += Hash(row);
      continue;
    }
    uint64_t sum = 0;
    for (size_t f = 0; f < fixed; ++f) {
      uint64_t bits = row.GetBits(slot[f]);
      // A double's -0.0 (only the sign bit set) hashes as 0.0; an int64's INT64_MIN does not.
      bits &= ~((bits << 1) == 0 ? zero_sign[f] : uint64_t{0});
      sum += Mix64(bits ^ salt[f]);
    }
    for (size_t f = 0; f < strings; ++f) {
      sum += Mix64(StringHash(row.GetString(string_slot[f])) ^ string_salt[f]);
    }
    total += RecordHash(sum);
  }
  return total;
}

template <size_t N>
uint64_t ChecksumSinkOperator::HashFixedBatch(const RecordBatch& batch) const {
  return HashMixedBatch<N, 0>(batch);
}

uint64_t ChecksumSinkOperator::Hash(const Row& row) const {
  if (!row.AnyNull()) {
    uint64_t sum = 0;
    for (const Field& f : fixed_fields_) {
      uint64_t bits = row.GetBits(f.slot);
      if (f.kind == Kind::kDouble) {
        const double d = std::bit_cast<double>(bits);
        bits = std::bit_cast<uint64_t>(d == 0.0 ? 0.0 : d);  // -0.0 == 0.0
      }
      sum += Mix64(bits ^ f.salt);
    }
    for (const Field& f : string_fields_) {
      sum += Mix64(StringHash(row.GetString(f.slot)) ^ f.salt);
    }
    return RecordHash(sum);
  }
  uint64_t sum = 0;
  const size_t n = fields_.size();
  for (size_t p = 0; p < n; ++p) {
    const Field& f = fields_[p];
    uint64_t bits;
    if (row.IsNull(f.slot)) [[unlikely]] {
      bits = kNullFieldBits;
    } else if (f.kind == Kind::kBits) {
      bits = row.GetBits(f.slot);
    } else if (f.kind == Kind::kDouble) {
      const double d = row.GetDouble(f.slot);
      bits = std::bit_cast<uint64_t>(d == 0.0 ? 0.0 : d);  // -0.0 == 0.0
    } else {
      bits = static_cast<uint64_t>(std::hash<std::string_view>{}(row.GetString(f.slot)));
    }
    sum += Mix64(bits ^ f.salt);
  }
  return RecordHash(sum);
}

void ChecksumSinkOperator::SampleLatency(const Row& row) {
  const auto slot = static_cast<size_t>(latency_slot_);
  if (!row.IsNull(slot) && row.GetInt64(slot) != 0) {
    const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
    latency_ns_.push_back(now - row.GetInt64(slot));
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
  if (hash_fixed_batch_ != nullptr) {
    checksum += (this->*hash_fixed_batch_)(batch);
  } else {
    for (size_t i = 0; i < batch.size; ++i) {
      checksum += Hash(batch.records[i]->row);
    }
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
    result_->AddChecksumPart(count_, checksum_, {latency_ns_.begin(), latency_ns_.end()});
  }
}

}  // namespace tidemark
