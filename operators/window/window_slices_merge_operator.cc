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

}  // namespace

std::shared_ptr<rocksdb::MergeOperator> NewWindowSlicesMergeOperator(
    const SliceAggregates& aggregates, size_t num_accs) {
  return std::make_shared<WindowSlicesMergeOperator>(aggregates, num_accs);
}

}  // namespace tidemark
