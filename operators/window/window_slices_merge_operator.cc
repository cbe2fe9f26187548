#include "operators/window/window_slices_merge_operator.h"

#include <algorithm>
#include <rocksdb/merge_operator.h>
#include <string>
#include <vector>

#include "runtime/core/errors.h"
#include "runtime/state/state_serializer.h"

namespace tidemark {
namespace {

// One value decoded: its slices' accumulators in the narrow form, strings in `strings`.
struct DecodedSlices {
  Timestamp drop = kMinTimestamp;
  std::vector<Timestamp> starts;
  Timestamp next_fire = kMinTimestamp;
  Timestamp timer = kMinTimestamp;
  std::vector<uint64_t> words;
};

Timestamp EarlierSet(Timestamp a, Timestamp b) {
  if (a == kMinTimestamp) {
    return b;
  }
  return b == kMinTimestamp ? a : std::min(a, b);
}

class WindowSlicesMergeOperator final : public rocksdb::MergeOperator {
 public:
  WindowSlicesMergeOperator(const SliceAggregates& aggregates, size_t num_accs)
      : aggs_(aggregates), num_accs_(num_accs), words_(aggregates.words()) {}

  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    std::vector<rocksdb::Slice> values;
    values.reserve(in.operand_list.size() + 1);
    if (in.existing_value != nullptr) {
      values.push_back(*in.existing_value);
    }
    values.insert(values.end(), in.operand_list.begin(), in.operand_list.end());
    return MergeAll(values, &out->new_value);
  }

  bool PartialMergeMulti(const rocksdb::Slice& /*key*/, const std::deque<rocksdb::Slice>& operands,
                         std::string* new_value, rocksdb::Logger* /*logger*/) const override {
    const std::vector<rocksdb::Slice> values(operands.begin(), operands.end());
    return MergeAll(values, new_value);
  }

  const char* Name() const override { return "tidemark.WindowSlicesMergeOperator"; }

 private:
  bool MergeAll(const std::vector<rocksdb::Slice>& values, std::string* out) const {
    try {
      AccumulatorStrings strings;
      DecodedSlices acc;
      DecodedSlices next;
      DecodedSlices merged;
      std::vector<AggregateAccumulator> accs(num_accs_);  // scratch of Decode, Encode
      bool first = true;
      for (const rocksdb::Slice& v : values) {
        Decode(std::string_view(v.data(), v.size()), strings, accs, first ? acc : next);
        if (first) {
          first = false;
          continue;
        }
        Union(acc, next, strings, merged);
        std::swap(acc, merged);
      }
      Encode(acc, strings, accs, out);
      return true;
    } catch (const Error&) {
      return false;  // RocksDB fails the read or compaction with a corruption status
    }
  }

  void Decode(std::string_view bytes, AccumulatorStrings& strings,
              std::vector<AggregateAccumulator>& accs, DecodedSlices& d) const {
    StateReader r(bytes);
    d.drop = r.ReadI64();
    const uint32_t n = r.ReadU32();
    if (n == 0 || n > r.remaining() / 8) {
      throw StateCorrupt("rocksdb window state: a key with a bad number of slices");
    }
    d.starts.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      d.starts[i] = r.ReadI64();
    }
    d.next_fire = r.ReadI64();
    d.timer = r.ReadI64();
    d.words.assign(n * words_, uint64_t{0});
    for (uint32_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < num_accs_; ++j) {
        accs[j] = ReadAccumulator(r);
      }
      aggs_.Compress(accs.data(), d.words.data() + i * words_, strings);
    }
  }

  // `out` := a ∪ b by slice start; a slice in both gets b's accumulators merged into a's.
  void Union(DecodedSlices& a, DecodedSlices& b, AccumulatorStrings& strings,
             DecodedSlices& out) const {
    out.drop = std::max(a.drop, b.drop);
    out.next_fire = EarlierSet(a.next_fire, b.next_fire);
    out.timer = EarlierSet(a.timer, b.timer);
    out.starts.clear();
    out.words.clear();
    size_t i = 0;
    size_t j = 0;
    auto take = [&](DecodedSlices& from, size_t k) {
      out.starts.push_back(from.starts[k]);
      out.words.insert(out.words.end(),
                       from.words.begin() + static_cast<std::ptrdiff_t>(k * words_),
                       from.words.begin() + static_cast<std::ptrdiff_t>((k + 1) * words_));
    };
    while (i < a.starts.size() || j < b.starts.size()) {
      if (j == b.starts.size() || (i < a.starts.size() && a.starts[i] < b.starts[j])) {
        take(a, i++);
      } else if (i == a.starts.size() || b.starts[j] < a.starts[i]) {
        take(b, j++);
      } else {
        take(a, i++);
        uint64_t* into = out.words.data() + (out.starts.size() - 1) * words_;
        aggs_.Merge(into, b.words.data() + j * words_, strings);
        aggs_.Release(b.words.data() + j * words_, strings);
        ++j;
      }
    }
  }

  void Encode(const DecodedSlices& d, const AccumulatorStrings& strings,
              std::vector<AggregateAccumulator>& accs, std::string* out) const {
    StateWriter w;
    w.WriteI64(d.drop);
    w.WriteU32(static_cast<uint32_t>(d.starts.size()));
    for (Timestamp s : d.starts) {
      w.WriteI64(s);
    }
    w.WriteI64(d.next_fire);
    w.WriteI64(d.timer);
    for (size_t i = 0; i < d.starts.size(); ++i) {
      aggs_.Expand(d.words.data() + i * words_, accs.data(), strings);
      for (const AggregateAccumulator& a : accs) {
        WriteAccumulator(w, a);
      }
    }
    *out = w.Release();
  }

  SliceAggregates aggs_;
  size_t num_accs_;
  size_t words_;
};

void AppendVarint(uint64_t v, std::string* out) {
  char buf[10];
  size_t n = 0;
  while (v >= 0x80) {
    buf[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  buf[n++] = static_cast<char>(v);
  out->append(buf, n);
}

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}

int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// A time beside the first start: 0 for none, else 1 + the zigzag of the distance.
uint64_t RelativeTime(Timestamp t, Timestamp first) {
  return t == kMinTimestamp ? 0 : 1 + ZigZag(t - first);
}

// The compact merge: every operand's slices gathered, stably ordered by start (operand order
// within a start), equal starts' words merged into the first's.
class CompactWindowSlicesMergeOperator final : public rocksdb::MergeOperator {
 public:
  explicit CompactWindowSlicesMergeOperator(const SliceAggregates& aggregates)
      : aggs_(aggregates), words_(aggregates.words()) {}

  bool FullMergeV2(const MergeOperationInput& in, MergeOperationOutput* out) const override {
    Scratch& s = scratch();
    s.Reset();
    if (in.existing_value != nullptr && !Gather(*in.existing_value, s)) {
      return false;
    }
    for (const rocksdb::Slice& v : in.operand_list) {
      if (!Gather(v, s)) {
        return false;
      }
    }
    Emit(s, &out->new_value);
    return true;
  }

  bool PartialMergeMulti(const rocksdb::Slice& /*key*/, const std::deque<rocksdb::Slice>& operands,
                         std::string* new_value, rocksdb::Logger* /*logger*/) const override {
    Scratch& s = scratch();
    s.Reset();
    for (const rocksdb::Slice& v : operands) {
      if (!Gather(v, s)) {
        return false;
      }
    }
    Emit(s, new_value);
    return true;
  }

  const char* Name() const override { return "tidemark.CompactWindowSlicesMergeOperator"; }

 private:
  struct Scratch {
    std::vector<std::pair<Timestamp, size_t>> slices;  // (start, gathered slice number)
    std::vector<uint64_t> words;
    std::vector<Timestamp> starts;
    std::vector<uint64_t> merged;
    Timestamp next_fire = kMinTimestamp;
    Timestamp timer = kMinTimestamp;
    void Reset() {
      slices.clear();
      words.clear();
      next_fire = kMinTimestamp;
      timer = kMinTimestamp;
    }
  };
  static Scratch& scratch() {
    thread_local Scratch s;  // RocksDB's flush, compaction and reading threads each have one
    return s;
  }

  bool Gather(const rocksdb::Slice& v, Scratch& s) const {
    CompactSlicesReader r(std::string_view(v.data(), v.size()), words_);
    s.next_fire = EarlierSet(s.next_fire, r.next_fire());
    s.timer = EarlierSet(s.timer, r.timer());
    Timestamp start = 0;
    for (size_t i = 0; i < r.slices(); ++i) {
      const size_t at = s.words.size();
      s.words.resize(at + words_);
      if (!r.Next(&start, s.words.data() + at)) {
        return false;
      }
      s.slices.emplace_back(start, s.slices.size());
    }
    return r.AtEnd();
  }

  void Emit(Scratch& s, std::string* out) const {
    // Indices grow with operand order, so a sort by (start, index) is the stable one.
    std::sort(s.slices.begin(), s.slices.end());
    s.starts.clear();
    s.merged.clear();
    AccumulatorStrings none;  // (no strings: Merge reads and writes words only)
    for (const auto& [start, index] : s.slices) {
      const uint64_t* from = s.words.data() + index * words_;
      if (!s.starts.empty() && s.starts.back() == start) {
        aggs_.Merge(s.merged.data() + (s.starts.size() - 1) * words_, from, none);
        continue;
      }
      s.starts.push_back(start);
      s.merged.insert(s.merged.end(), from, from + words_);
    }
    out->clear();
    AppendCompactSlices(s.starts.data(), s.starts.size(), s.next_fire, s.timer, s.merged.data(),
                        words_, out);
  }

  SliceAggregates aggs_;
  size_t words_;
};

}  // namespace

std::shared_ptr<rocksdb::MergeOperator> NewWindowSlicesMergeOperator(
    const SliceAggregates& aggregates, size_t num_accs) {
  return std::make_shared<WindowSlicesMergeOperator>(aggregates, num_accs);
}

void AppendCompactSlices(const Timestamp* starts, size_t n, Timestamp next_fire, Timestamp timer,
                         const uint64_t* words, size_t words_per_slice, std::string* out) {
  out->push_back(static_cast<char>(kCompactSlicesFormat));
  AppendVarint(n, out);
  AppendVarint(ZigZag(starts[0]), out);
  AppendVarint(RelativeTime(next_fire, starts[0]), out);
  AppendVarint(RelativeTime(timer, starts[0]), out);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) {
      AppendVarint(static_cast<uint64_t>(starts[i] - starts[i - 1]), out);
    }
    for (size_t j = 0; j < words_per_slice; ++j) {
      AppendVarint(words[i * words_per_slice + j], out);
    }
  }
}

CompactSlicesReader::CompactSlicesReader(std::string_view bytes, size_t words_per_slice)
    : bytes_(bytes), words_(words_per_slice) {
  uint64_t n = 0;
  uint64_t first = 0;
  uint64_t next = 0;
  uint64_t timer = 0;
  if (bytes_.empty() || static_cast<uint8_t>(bytes_[0]) != kCompactSlicesFormat) {
    ok_ = false;
    return;
  }
  at_ = 1;
  if (!ReadVarint(&n) || !ReadVarint(&first) || !ReadVarint(&next) || !ReadVarint(&timer) ||
      n == 0 || n > bytes_.size()) {
    ok_ = false;
    return;
  }
  slices_ = static_cast<size_t>(n);
  start_ = UnZigZag(first);
  next_fire_ = next == 0 ? kMinTimestamp : start_ + UnZigZag(next - 1);
  timer_ = timer == 0 ? kMinTimestamp : start_ + UnZigZag(timer - 1);
}

bool CompactSlicesReader::ReadVarint(uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && at_ < bytes_.size(); shift += 7) {
    const auto byte = static_cast<uint8_t>(bytes_[at_++]);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

bool CompactSlicesReader::Next(Timestamp* start, uint64_t* words) {
  if (!ok_ || read_ == slices_) {
    return false;
  }
  if (read_ > 0) {
    uint64_t delta = 0;
    if (!ReadVarint(&delta)) {
      ok_ = false;
      return false;
    }
    start_ += static_cast<Timestamp>(delta);
  }
  uint64_t skipped = 0;
  for (size_t j = 0; j < words_; ++j) {
    if (!ReadVarint(words != nullptr ? words + j : &skipped)) {
      ok_ = false;
      return false;
    }
  }
  *start = start_;
  ++read_;
  return true;
}

std::shared_ptr<rocksdb::MergeOperator> NewCompactWindowSlicesMergeOperator(
    const SliceAggregates& aggregates) {
  return std::make_shared<CompactWindowSlicesMergeOperator>(aggregates);
}

}  // namespace tidemark
