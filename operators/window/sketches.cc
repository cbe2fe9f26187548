#include "operators/window/sketches.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>
#include <xxhash.h>

#include "runtime/core/errors.h"

namespace tidemark {

// ---- HyperLogLog ----

uint64_t HyperLogLog::HashBytes(std::string_view bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

void HyperLogLog::AddHash(uint64_t hash) {
  if (registers_.empty()) {
    registers_.assign(kRegisters, 0);
  }
  const size_t index = hash >> (64 - kPrecision);
  // The rank of the first 1 bit in the remaining 52 bits (a sentinel bit bounds it at 53).
  const uint64_t rest = (hash << kPrecision) | (uint64_t{1} << (kPrecision - 1));
  const auto rank = static_cast<uint8_t>(std::countl_zero(rest) + 1);
  registers_[index] = std::max(registers_[index], rank);
}

void HyperLogLog::Merge(const HyperLogLog& other) {
  if (other.registers_.empty()) {
    return;
  }
  if (registers_.empty()) {
    registers_ = other.registers_;
    return;
  }
  for (size_t i = 0; i < kRegisters; ++i) {
    registers_[i] = std::max(registers_[i], other.registers_[i]);
  }
}

int64_t HyperLogLog::Estimate() const {
  if (registers_.empty()) {
    return 0;
  }
  const double m = static_cast<double>(kRegisters);
  const double alpha = 0.7213 / (1 + 1.079 / m);
  double sum = 0;
  size_t zeros = 0;
  for (uint8_t r : registers_) {
    sum += std::ldexp(1.0, -static_cast<int>(r));
    zeros += r == 0 ? 1 : 0;
  }
  double estimate = alpha * m * m / sum;
  if (estimate <= 2.5 * m && zeros > 0) {
    estimate = m * std::log(m / static_cast<double>(zeros));  // linear counting
  }
  return std::llround(estimate);
}

void HyperLogLog::Write(StateWriter& writer) const {
  writer.WriteString(
      std::string_view(reinterpret_cast<const char*>(registers_.data()), registers_.size()));
}

void HyperLogLog::Read(StateReader& reader) {
  const std::string bytes = reader.ReadString();
  if (!bytes.empty() && bytes.size() != kRegisters) {
    throw StateCorrupt("window snapshot: a HyperLogLog of another size");
  }
  registers_.assign(bytes.begin(), bytes.end());
}

// ---- TDigest ----

namespace {

constexpr size_t kBufferSize = 5 * static_cast<size_t>(TDigest::kCompression);

// The k1 scale function and its inverse: a centroid spans at most 1 in k.
double K(double q) {
  return TDigest::kCompression / (2 * std::numbers::pi) * std::asin(2 * q - 1);
}
double KInverse(double k) {
  return (std::sin(k * 2 * std::numbers::pi / TDigest::kCompression) + 1) / 2;
}

}  // namespace

void TDigest::Add(double x, int64_t w) {
  if (std::isnan(x)) {
    return;
  }
  if (count_ == 0) {
    min_ = x;
    max_ = x;
  } else {
    min_ = std::min(min_, x);
    max_ = std::max(max_, x);
  }
  count_ += w;
  buffer_.push_back({x, w});
  if (buffer_.size() >= kBufferSize) {
    Compress();
  }
}

void TDigest::Merge(const TDigest& other) {
  if (other.count_ == 0) {
    return;
  }
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  buffer_.insert(buffer_.end(), other.centroids_.begin(), other.centroids_.end());
  buffer_.insert(buffer_.end(), other.buffer_.begin(), other.buffer_.end());
  if (buffer_.size() >= kBufferSize) {
    Compress();
  }
}

void TDigest::Compress() {
  if (buffer_.empty()) {
    return;
  }
  buffer_.insert(buffer_.end(), centroids_.begin(), centroids_.end());
  // Stable: equal means keep their order, so the digest depends only on the input order.
  std::stable_sort(buffer_.begin(), buffer_.end(),
                   [](const Centroid& a, const Centroid& b) { return a.mean < b.mean; });
  centroids_.clear();
  const auto total = static_cast<double>(count_);
  Centroid cur = buffer_.front();
  double before = 0;  // weight of the centroids already emitted
  double limit = KInverse(K(0) + 1) * total;
  for (size_t i = 1; i < buffer_.size(); ++i) {
    const Centroid& next = buffer_[i];
    if (before + static_cast<double>(cur.weight + next.weight) <= limit) {
      const int64_t w = cur.weight + next.weight;
      cur.mean +=
          (next.mean - cur.mean) * static_cast<double>(next.weight) / static_cast<double>(w);
      cur.weight = w;
    } else {
      centroids_.push_back(cur);
      before += static_cast<double>(cur.weight);
      limit = KInverse(K(before / total) + 1) * total;
      cur = next;
    }
  }
  centroids_.push_back(cur);
  buffer_.clear();
}

double TDigest::Quantile(double p) {
  if (count_ == 0) {
    return std::nan("");
  }
  Compress();
  // 1-based ranks, as Flink's PERCENTILE: centroid i stands at rank before_i + (w_i - 1) / 2 + 1
  // (a single value at its own rank), the min at 1 and the max at n; the target p * (n - 1) + 1
  // is interpolated between its neighbours with Flink's weights (higher - position) and
  // (position - lower), so single values give exactly Flink's PERCENTILE.
  const double target = p * static_cast<double>(count_ - 1) + 1;
  double prev_rank = 1;
  double prev_mean = min_;
  double before = 0;
  auto between = [&](double rank, double mean) {
    if (rank <= prev_rank || prev_mean == mean) {
      return mean;
    }
    return ((rank - target) * prev_mean + (target - prev_rank) * mean) / (rank - prev_rank);
  };
  for (const Centroid& c : centroids_) {
    const double rank = before + static_cast<double>(c.weight - 1) / 2 + 1;
    if (target <= rank) {
      return target == rank ? c.mean : between(rank, c.mean);
    }
    prev_rank = rank;
    prev_mean = c.mean;
    before += static_cast<double>(c.weight);
  }
  return between(static_cast<double>(count_), max_);
}

void TDigest::Write(StateWriter& writer) const {
  writer.WriteI64(count_);
  writer.WriteF64(min_);
  writer.WriteF64(max_);
  for (const std::vector<Centroid>* list : {&centroids_, &buffer_}) {
    writer.WriteU32(static_cast<uint32_t>(list->size()));
    for (const Centroid& c : *list) {
      writer.WriteF64(c.mean);
      writer.WriteI64(c.weight);
    }
  }
}

void TDigest::Read(StateReader& reader) {
  count_ = reader.ReadI64();
  min_ = reader.ReadF64();
  max_ = reader.ReadF64();
  int64_t total = 0;
  for (std::vector<Centroid>* list : {&centroids_, &buffer_}) {
    const uint32_t n = reader.ReadU32();
    if (n > reader.remaining() / 16) {
      throw StateCorrupt("window snapshot: a t-digest with a bad number of centroids");
    }
    list->clear();
    for (uint32_t i = 0; i < n; ++i) {
      Centroid c{reader.ReadF64(), reader.ReadI64()};
      if (c.weight <= 0) {
        throw StateCorrupt("window snapshot: a t-digest centroid without weight");
      }
      total += c.weight;
      list->push_back(c);
    }
  }
  if (total != count_) {
    throw StateCorrupt("window snapshot: a t-digest whose centroids do not add up to its count");
  }
}

}  // namespace tidemark
