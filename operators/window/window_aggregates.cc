#include "operators/window/window_aggregates.h"

#include <absl/container/flat_hash_set.h>
#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "operators/window/sketches.h"
#include "runtime/core/errors.h"

namespace tidemark {

namespace {

bool IsNumeric(FieldType t) {
  return t == FieldType::kInt64 || t == FieldType::kDouble || t == FieldType::kTimestamp ||
         t == FieldType::kBool;
}

// Orders two non-NULL values: numbers numerically, strings and bools by value.
int CompareValues(const Value& a, const Value& b) {
  if (std::holds_alternative<int64_t>(a) && std::holds_alternative<int64_t>(b)) {
    const int64_t x = std::get<int64_t>(a);
    const int64_t y = std::get<int64_t>(b);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (std::holds_alternative<std::string>(a) && std::holds_alternative<std::string>(b)) {
    return std::get<std::string>(a).compare(std::get<std::string>(b));
  }
  const double x = AsDouble(a).value_or(0);
  const double y = AsDouble(b).value_or(0);
  return x < y ? -1 : (x > y ? 1 : 0);
}

using Accumulator = AggregateAccumulator;

// ---- Rich accumulators: the state of the kinds `IsRichAggregate` names, one per (window,
// aggregate), beside its AggregateAccumulator (whose `count` still counts the non-NULL values).

// The 8 bytes a distinct fixed-width value is compared and hashed by: doubles by their bits with
// every NaN as one (Java's Double.equals), so 0.0 and -0.0 are two values as in Flink's
// distinct keys; bools 0 / 1.
uint64_t DistinctBits(const Row& row, size_t slot, FieldType t) {
  if (t == FieldType::kBool) {
    return row.GetBool(slot) ? 1 : 0;
  }
  if (t == FieldType::kDouble && std::isnan(row.GetDouble(slot))) {
    return 0x7ff8000000000000ULL;
  }
  return row.GetBits(slot);
}

class RichAccumulator {
 public:
  virtual ~RichAccumulator() = default;
  // A non-NULL value at `slot` of `row`, the `seq`-th element to arrive.
  virtual void Add(const Row& row, size_t slot, uint64_t seq) = 0;
  // `other` is of the same aggregate.
  virtual void MergeFrom(const RichAccumulator& other) = 0;
  virtual void Write(StateWriter& writer) const = 0;
  virtual void Read(StateReader& reader) = 0;
  // The result into `row` at `at`; left NULL when nothing was added (count-distinct: 0).
  virtual void Result(Row& row, size_t at) const = 0;
  virtual int64_t Bytes() const = 0;
};

// COUNT(DISTINCT x): the distinct values themselves (exact).
class CountDistinctAccumulator : public RichAccumulator {
 public:
  explicit CountDistinctAccumulator(FieldType type) : type_(type) {}
  void Add(const Row& row, size_t slot, uint64_t /*seq*/) override {
    if (type_ == FieldType::kString) {
      strings_.emplace(row.GetString(slot));
    } else {
      bits_.insert(DistinctBits(row, slot, type_));
    }
  }
  void MergeFrom(const RichAccumulator& other) override {
    const auto& o = static_cast<const CountDistinctAccumulator&>(other);
    bits_.insert(o.bits_.begin(), o.bits_.end());
    strings_.insert(o.strings_.begin(), o.strings_.end());
  }
  // Sorted, so a snapshot's bytes do not depend on the hash table's order.
  void Write(StateWriter& writer) const override {
    if (type_ == FieldType::kString) {
      std::vector<std::string_view> sorted(strings_.begin(), strings_.end());
      std::sort(sorted.begin(), sorted.end());
      writer.WriteU32(static_cast<uint32_t>(sorted.size()));
      for (std::string_view v : sorted) {
        writer.WriteString(v);
      }
    } else {
      std::vector<uint64_t> sorted(bits_.begin(), bits_.end());
      std::sort(sorted.begin(), sorted.end());
      writer.WriteU32(static_cast<uint32_t>(sorted.size()));
      for (uint64_t v : sorted) {
        writer.WriteI64(static_cast<int64_t>(v));
      }
    }
  }
  void Read(StateReader& reader) override {
    const uint32_t n = reader.ReadU32();
    if (n > reader.remaining() / 4) {
      throw StateCorrupt("window snapshot: a distinct set with a bad number of values");
    }
    bits_.clear();
    strings_.clear();
    for (uint32_t i = 0; i < n; ++i) {
      if (type_ == FieldType::kString) {
        strings_.insert(reader.ReadString());
      } else {
        bits_.insert(static_cast<uint64_t>(reader.ReadI64()));
      }
    }
  }
  void Result(Row& row, size_t at) const override {
    row.SetInt64(at, static_cast<int64_t>(bits_.size() + strings_.size()));
  }
  int64_t Bytes() const override {
    int64_t bytes = static_cast<int64_t>(bits_.size() * sizeof(uint64_t));
    for (const std::string& v : strings_) {
      bytes += static_cast<int64_t>(sizeof(std::string) + v.size());
    }
    return bytes;
  }

 private:
  FieldType type_;
  absl::flat_hash_set<uint64_t> bits_;
  absl::flat_hash_set<std::string> strings_;
};

// APPROX_COUNT_DISTINCT(x): a HyperLogLog of the values' canonical bytes.
class ApproxCountDistinctAccumulator : public RichAccumulator {
 public:
  explicit ApproxCountDistinctAccumulator(FieldType type) : type_(type) {}
  void Add(const Row& row, size_t slot, uint64_t /*seq*/) override {
    if (type_ == FieldType::kString) {
      hll_.AddHash(HyperLogLog::HashBytes(row.GetString(slot)));
    } else {
      const uint64_t bits = DistinctBits(row, slot, type_);
      hll_.AddHash(HyperLogLog::HashBytes(
          std::string_view(reinterpret_cast<const char*>(&bits), sizeof bits)));
    }
  }
  void MergeFrom(const RichAccumulator& other) override {
    hll_.Merge(static_cast<const ApproxCountDistinctAccumulator&>(other).hll_);
  }
  void Write(StateWriter& writer) const override { hll_.Write(writer); }
  void Read(StateReader& reader) override { hll_.Read(reader); }
  void Result(Row& row, size_t at) const override { row.SetInt64(at, hll_.Estimate()); }
  int64_t Bytes() const override { return static_cast<int64_t>(hll_.bytes()); }

 private:
  FieldType type_;
  HyperLogLog hll_;
};

double NumericAsDouble(const Row& row, size_t slot, FieldType t) {
  return t == FieldType::kDouble ? row.GetDouble(slot) : static_cast<double>(row.GetInt64(slot));
}

// PERCENTILE(x, p): every value; the result interpolates linearly at rank p * (n - 1) of the
// sorted values with Flink's PercentileAggFunction's arithmetic (as Hive and Spark). NaN values
// are left out (Flink sorts NaN above every number).
class PercentileAccumulator : public RichAccumulator {
 public:
  PercentileAccumulator(FieldType type, double percentage) : type_(type), p_(percentage) {}
  void Add(const Row& row, size_t slot, uint64_t /*seq*/) override {
    const double x = NumericAsDouble(row, slot, type_);
    if (!std::isnan(x)) {
      values_.push_back(x);
      sorted_ = false;
    }
  }
  void MergeFrom(const RichAccumulator& other) override {
    const auto& o = static_cast<const PercentileAccumulator&>(other);
    values_.insert(values_.end(), o.values_.begin(), o.values_.end());
    sorted_ = false;
  }
  void Write(StateWriter& writer) const override {
    writer.WriteU32(static_cast<uint32_t>(values_.size()));
    for (double v : values_) {
      writer.WriteF64(v);
    }
  }
  void Read(StateReader& reader) override {
    const uint32_t n = reader.ReadU32();
    if (n > reader.remaining() / 8) {
      throw StateCorrupt("window snapshot: a percentile with a bad number of values");
    }
    values_.clear();
    for (uint32_t i = 0; i < n; ++i) {
      values_.push_back(reader.ReadF64());
    }
    sorted_ = false;
  }
  void Result(Row& row, size_t at) const override {
    if (values_.empty()) {
      return;
    }
    if (!sorted_) {
      std::sort(values_.begin(), values_.end());
      sorted_ = true;
    }
    // Flink's arithmetic, bit for bit: the 1-based position p * (n - 1) + 1 between the values
    // at floor and ceil, weighted (ceil - position) and (position - floor).
    const double position = p_ * static_cast<double>(values_.size() - 1) + 1;
    const double lower = std::floor(position);
    const double higher = std::ceil(position);
    const double a = values_[static_cast<size_t>(lower) - 1];
    const double b = values_[static_cast<size_t>(higher) - 1];
    row.SetDouble(at, a == b ? a : (higher - position) * a + (position - lower) * b);
  }
  int64_t Bytes() const override { return static_cast<int64_t>(values_.size() * sizeof(double)); }

 private:
  FieldType type_;
  double p_;
  mutable std::vector<double> values_;  // sorted at a firing (the order does not matter)
  mutable bool sorted_ = true;
};

// APPROX_PERCENTILE(x, p): a t-digest.
class ApproxPercentileAccumulator : public RichAccumulator {
 public:
  ApproxPercentileAccumulator(FieldType type, double percentage) : type_(type), p_(percentage) {}
  void Add(const Row& row, size_t slot, uint64_t /*seq*/) override {
    digest_.Add(NumericAsDouble(row, slot, type_));
  }
  void MergeFrom(const RichAccumulator& other) override {
    digest_.Merge(static_cast<const ApproxPercentileAccumulator&>(other).digest_);
  }
  void Write(StateWriter& writer) const override { digest_.Write(writer); }
  void Read(StateReader& reader) override { digest_.Read(reader); }
  void Result(Row& row, size_t at) const override {
    if (digest_.count() > 0) {
      row.SetDouble(at, digest_.Quantile(p_));
    }
  }
  int64_t Bytes() const override { return static_cast<int64_t>(digest_.bytes()); }

 private:
  FieldType type_;
  double p_;
  mutable TDigest digest_;  // compressed at a firing (the same values, the same quantiles)
};

// LISTAGG(x, sep): the strings with their arrival numbers, joined in arrival order (merged
// sessions too).
class ListAggAccumulator : public RichAccumulator {
 public:
  explicit ListAggAccumulator(std::string separator) : separator_(std::move(separator)) {}
  void Add(const Row& row, size_t slot, uint64_t seq) override {
    items_.emplace_back(seq, std::string(row.GetString(slot)));
  }
  void MergeFrom(const RichAccumulator& other) override {
    const auto& o = static_cast<const ListAggAccumulator&>(other);
    items_.insert(items_.end(), o.items_.begin(), o.items_.end());
  }
  void Write(StateWriter& writer) const override {
    writer.WriteU32(static_cast<uint32_t>(items_.size()));
    for (const auto& [seq, v] : items_) {
      writer.WriteI64(static_cast<int64_t>(seq));
      writer.WriteString(v);
    }
  }
  void Read(StateReader& reader) override {
    const uint32_t n = reader.ReadU32();
    if (n > reader.remaining() / 12) {
      throw StateCorrupt("window snapshot: a listagg with a bad number of values");
    }
    items_.clear();
    for (uint32_t i = 0; i < n; ++i) {
      const auto seq = static_cast<uint64_t>(reader.ReadI64());
      items_.emplace_back(seq, reader.ReadString());
    }
  }
  void Result(Row& row, size_t at) const override {
    if (items_.empty()) {
      return;
    }
    std::stable_sort(items_.begin(), items_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string joined;
    for (size_t i = 0; i < items_.size(); ++i) {
      if (i > 0) {
        joined += separator_;
      }
      joined += items_[i].second;
    }
    row.SetString(at, joined);
  }
  int64_t Bytes() const override {
    int64_t bytes = 0;
    for (const auto& item : items_) {
      bytes += static_cast<int64_t>(sizeof(item) + item.second.size());
    }
    return bytes;
  }

 private:
  std::string separator_;
  mutable std::vector<std::pair<uint64_t, std::string>> items_;  // sorted at a firing
};

std::unique_ptr<RichAccumulator> MakeRichAccumulator(const ResolvedAggregate& agg) {
  switch (agg.kind) {
    case AggregateKind::kCountDistinct:
      return std::make_unique<CountDistinctAccumulator>(agg.input_type);
    case AggregateKind::kApproxCountDistinct:
      return std::make_unique<ApproxCountDistinctAccumulator>(agg.input_type);
    case AggregateKind::kPercentile:
      return std::make_unique<PercentileAccumulator>(agg.input_type, agg.percentage);
    case AggregateKind::kApproxPercentile:
      return std::make_unique<ApproxPercentileAccumulator>(agg.input_type, agg.percentage);
    case AggregateKind::kListAgg:
      return std::make_unique<ListAggAccumulator>(agg.separator);
    default:
      return nullptr;
  }
}

using RichAccumulators = std::vector<std::unique_ptr<RichAccumulator>>;

class AggregateState : public WindowState {
 public:
  // `arrivals` is the owning function's element counter: arrival order across all panes, so
  // first / last stay exact when sessions merge.
  AggregateState(const std::vector<ResolvedAggregate>& aggregates, uint64_t& arrivals)
      : aggregates_(aggregates), arrivals_(arrivals) {
    accumulators_.resize(aggregates.size());
    for (size_t i = 0; i < aggregates.size(); ++i) {
      if (IsRichAggregate(aggregates[i].kind)) {
        if (rich_.empty()) {
          rich_.resize(aggregates.size());
        }
        rich_[i] = MakeRichAccumulator(aggregates[i]);
      }
    }
  }

  void Add(const StreamRecord& record) override {
    const uint64_t seq = ++arrivals_;
    AddTo(aggregates_, accumulators_.data(), record, seq);
    for (size_t i = 0; i < rich_.size(); ++i) {
      if (rich_[i] != nullptr) {
        const auto slot = static_cast<size_t>(aggregates_[i].slot);
        if (!record.row.IsNull(slot)) {
          rich_[i]->Add(record.row, slot, seq);
        }
      }
    }
  }

  void MergeFrom(const WindowState& other_state) override {
    const auto& other = static_cast<const AggregateState&>(other_state);
    MergeInto(aggregates_, accumulators_.data(), other.accumulators_.data());
    for (size_t i = 0; i < rich_.size(); ++i) {
      if (rich_[i] != nullptr) {
        rich_[i]->MergeFrom(*other.rich_[i]);
      }
    }
  }

  // The rich accumulators follow the plain ones, so a window without them writes the bytes it
  // always did.
  void WriteTo(StateWriter& writer) const override {
    writer.WriteU32(static_cast<uint32_t>(accumulators_.size()));
    for (const Accumulator& a : accumulators_) {
      WriteAccumulator(writer, a);
    }
    for (const auto& r : rich_) {
      if (r != nullptr) {
        r->Write(writer);
      }
    }
  }
  void ReadFrom(StateReader& reader, const RowLayout* /*element_layout*/) override {
    if (reader.ReadU32() != accumulators_.size()) {
      throw StateCorrupt("window state: the snapshot has another number of aggregates");
    }
    for (Accumulator& a : accumulators_) {
      a = ReadAccumulator(reader);
    }
    for (const auto& r : rich_) {
      if (r != nullptr) {
        r->Read(reader);
      }
    }
  }

  // Null, or one per aggregate (null for the plain kinds).
  const RichAccumulator* rich(size_t i) const { return rich_.empty() ? nullptr : rich_[i].get(); }
  int64_t RichBytes() const {
    int64_t bytes = 0;
    for (const auto& r : rich_) {
      bytes += r != nullptr ? r->Bytes() : 0;
    }
    return bytes;
  }

  const std::vector<Accumulator>& accumulators() const { return accumulators_; }
  std::vector<Accumulator>& mutable_accumulators() { return accumulators_; }

  static void AddTo(const std::vector<ResolvedAggregate>& aggregates, Accumulator* accs,
                    const StreamRecord& record, uint64_t seq) {
    const Row& row = record.row;
    for (size_t i = 0; i < aggregates.size(); ++i) {
      const ResolvedAggregate& agg = aggregates[i];
      Accumulator& acc = accs[i];
      if (agg.slot < 0) {
        ++acc.count;
        continue;
      }
      const auto slot = static_cast<size_t>(agg.slot);
      if (row.IsNull(slot)) {
        continue;
      }
      if (agg.kind == AggregateKind::kCount || IsRichAggregate(agg.kind)) {
        ++acc.count;
      } else if (agg.kind == AggregateKind::kFirstValue || agg.kind == AggregateKind::kLastValue) {
        FoldByTime(agg.kind, acc, row.Get(slot),
                   record.has_timestamp ? record.timestamp : kMinTimestamp, seq, 1);
      } else if (agg.kind == AggregateKind::kSum || agg.kind == AggregateKind::kAvg) {
        // Typed: int64 / timestamp add to both sums (the int one wraps, as Java's long), a
        // double or a bool (0 / 1) to the double one.
        ++acc.count;
        switch (agg.input_type) {
          case FieldType::kInt64:
          case FieldType::kTimestamp: {
            const int64_t x = row.GetInt64(slot);
            acc.int_sum =
                static_cast<int64_t>(static_cast<uint64_t>(acc.int_sum) + static_cast<uint64_t>(x));
            acc.double_sum += static_cast<double>(x);
            break;
          }
          case FieldType::kDouble:
            acc.double_sum += row.GetDouble(slot);
            break;
          case FieldType::kBool:
            acc.double_sum += row.GetBool(slot) ? 1.0 : 0.0;
            break;
          case FieldType::kString:
            break;
        }
      } else {
        Fold(agg.kind, acc, row.Get(slot), seq, 1);
      }
    }
  }

  static void MergeInto(const std::vector<ResolvedAggregate>& aggregates, Accumulator* into,
                        const Accumulator* from) {
    for (size_t i = 0; i < aggregates.size(); ++i) {
      const Accumulator& o = from[i];
      Accumulator& acc = into[i];
      const AggregateKind kind = aggregates[i].kind;
      if (kind == AggregateKind::kCount || IsRichAggregate(kind)) {
        acc.count += o.count;
      } else if (kind == AggregateKind::kFirstValue || kind == AggregateKind::kLastValue) {
        if (o.count > 0) {
          FoldByTime(kind, acc, o.value, o.int_sum, o.seq, o.count);
        }
      } else if (kind == AggregateKind::kSum || kind == AggregateKind::kAvg) {
        acc.count += o.count;
        acc.int_sum = static_cast<int64_t>(static_cast<uint64_t>(acc.int_sum) +
                                           static_cast<uint64_t>(o.int_sum));
        acc.double_sum += o.double_sum;
      } else if (o.count > 0) {
        Fold(kind, acc, o.value, o.seq, o.count);
      }
    }
  }

 private:
  // first-value / last-value: the value of the earliest / latest event time `ts` (kept in
  // `int_sum`); equal times go by arrival (`seq`), the earlier first / the later last.
  static void FoldByTime(AggregateKind kind, Accumulator& acc, const Value& v, int64_t ts,
                         uint64_t seq, int64_t n) {
    const bool first_value = acc.count == 0;
    acc.count += n;
    const bool take =
        first_value || (kind == AggregateKind::kFirstValue
                            ? (ts < acc.int_sum || (ts == acc.int_sum && seq < acc.seq))
                            : (ts > acc.int_sum || (ts == acc.int_sum && seq >= acc.seq)));
    if (take) {
      acc.value = v;
      acc.int_sum = ts;
      acc.seq = seq;
    }
  }

  static void Fold(AggregateKind kind, Accumulator& acc, const Value& v, uint64_t seq, int64_t n) {
    const bool first_value = acc.count == 0;
    acc.count += n;
    switch (kind) {
      case AggregateKind::kCount:
        break;
      case AggregateKind::kSum:
      case AggregateKind::kAvg:
        if (std::holds_alternative<int64_t>(v)) {
          acc.int_sum = static_cast<int64_t>(static_cast<uint64_t>(acc.int_sum) +
                                             static_cast<uint64_t>(std::get<int64_t>(v)));
        }
        acc.double_sum += AsDouble(v).value_or(0);
        break;
      case AggregateKind::kMin:
        if (first_value || CompareValues(v, acc.value) < 0) {
          acc.value = v;
        }
        break;
      case AggregateKind::kMax:
        if (first_value || CompareValues(v, acc.value) > 0) {
          acc.value = v;
        }
        break;
      case AggregateKind::kFirst:
        if (first_value || seq < acc.seq) {
          acc.value = v;
          acc.seq = seq;
        }
        break;
      case AggregateKind::kLast:
        if (first_value || seq >= acc.seq) {
          acc.value = v;
          acc.seq = seq;
        }
        break;
      default:  // by event time (FoldByTime) or rich: not folded here
        break;
    }
  }

  const std::vector<ResolvedAggregate>& aggregates_;
  uint64_t& arrivals_;
  std::vector<Accumulator> accumulators_;
  RichAccumulators rich_;
};

const char* KindName(AggregateKind k) {
  switch (k) {
    case AggregateKind::kCount:
      return "count";
    case AggregateKind::kSum:
      return "sum";
    case AggregateKind::kMin:
      return "min";
    case AggregateKind::kMax:
      return "max";
    case AggregateKind::kAvg:
      return "avg";
    case AggregateKind::kFirst:
      return "first";
    case AggregateKind::kLast:
      return "last";
    case AggregateKind::kFirstValue:
      return "first-value";
    case AggregateKind::kLastValue:
      return "last-value";
    case AggregateKind::kCountDistinct:
      return "count-distinct";
    case AggregateKind::kApproxCountDistinct:
      return "approx-count-distinct";
    case AggregateKind::kPercentile:
      return "percentile";
    case AggregateKind::kApproxPercentile:
      return "approx-percentile";
    case AggregateKind::kListAgg:
      return "listagg";
  }
  return "?";
}

}  // namespace

ResolvedAggregate ResolveAggregate(const AggregateSpec& spec, const Schema& input) {
  ResolvedAggregate out;
  static const std::pair<const char*, AggregateKind> kKinds[] = {
      {"count", AggregateKind::kCount},
      {"sum", AggregateKind::kSum},
      {"min", AggregateKind::kMin},
      {"max", AggregateKind::kMax},
      {"avg", AggregateKind::kAvg},
      {"first", AggregateKind::kFirst},
      {"last", AggregateKind::kLast},
      {"first-value", AggregateKind::kFirstValue},
      {"last-value", AggregateKind::kLastValue},
      {"count-distinct", AggregateKind::kCountDistinct},
      {"approx-count-distinct", AggregateKind::kApproxCountDistinct},
      {"percentile", AggregateKind::kPercentile},
      {"approx-percentile", AggregateKind::kApproxPercentile},
      {"listagg", AggregateKind::kListAgg}};
  bool known = false;
  for (const auto& [name, kind] : kKinds) {
    if (spec.function == name) {
      out.kind = kind;
      known = true;
    }
  }
  if (!known) {
    throw InvalidArgument(fmt::format(
        "unknown aggregate function '{}' (expected count, sum, min, max, avg, first, last, "
        "first-value, last-value, count-distinct, approx-count-distinct, percentile, "
        "approx-percentile or listagg)",
        spec.function));
  }
  if (spec.field.empty()) {
    if (out.kind != AggregateKind::kCount) {
      throw InvalidArgument(fmt::format("aggregate '{}' needs a field", spec.function));
    }
  } else {
    out.slot = input.IndexOf(spec.field);
    if (out.slot < 0) {
      throw InvalidArgument(
          fmt::format("aggregate '{}': the input has no field '{}'", spec.function, spec.field));
    }
  }
  const FieldType in_type =
      out.slot >= 0 ? input.field(static_cast<size_t>(out.slot)).type : FieldType::kInt64;
  out.input_type = in_type;
  switch (out.kind) {
    case AggregateKind::kCount:
      out.output_type = FieldType::kInt64;
      break;
    case AggregateKind::kSum:
    case AggregateKind::kAvg:
      if (!IsNumeric(in_type)) {
        throw InvalidArgument(fmt::format("aggregate '{}': field '{}' is {}, not numeric",
                                          spec.function, spec.field, ToString(in_type)));
      }
      out.output_type = (out.kind == AggregateKind::kSum &&
                         (in_type == FieldType::kInt64 || in_type == FieldType::kTimestamp))
                            ? FieldType::kInt64
                            : FieldType::kDouble;
      break;
    case AggregateKind::kCountDistinct:
    case AggregateKind::kApproxCountDistinct:
      out.output_type = FieldType::kInt64;
      break;
    case AggregateKind::kPercentile:
    case AggregateKind::kApproxPercentile:
      // Flink's PERCENTILE takes a NUMERIC expression and returns DOUBLE.
      if (in_type != FieldType::kInt64 && in_type != FieldType::kDouble) {
        throw InvalidArgument(
            fmt::format("aggregate '{}': field '{}' is {}; {} takes an int64 or "
                        "double field",
                        spec.function, spec.field, ToString(in_type), spec.function));
      }
      if (!(spec.percentage >= 0 && spec.percentage <= 1)) {
        throw InvalidArgument(
            fmt::format("aggregate '{}': percentage must be between 0 and 1", spec.function));
      }
      out.percentage = spec.percentage;
      out.output_type = FieldType::kDouble;
      break;
    case AggregateKind::kListAgg:
      // Flink's LISTAGG takes a string expression.
      if (in_type != FieldType::kString) {
        throw InvalidArgument(fmt::format(
            "aggregate 'listagg': field '{}' is {}; listagg joins strings (convert it with a map "
            "first, e.g. set: {{{}_text: \"CAST({} AS STRING)\"}})",
            spec.field, ToString(in_type), spec.field, spec.field));
      }
      out.separator = spec.separator;
      out.output_type = FieldType::kString;
      break;
    default:
      out.output_type = in_type;
      break;
  }
  if (!spec.as.empty()) {
    out.name = spec.as;
  } else if (out.slot < 0) {
    out.name = "count";
  } else {
    std::string function = KindName(out.kind);
    std::replace(function.begin(), function.end(), '-', '_');
    out.name = fmt::format("{}_{}", function, spec.field);
  }
  return out;
}

AggregatingWindowFunction::AggregatingWindowFunction(std::vector<ResolvedAggregate> aggregates,
                                                     bool emit_watermark,
                                                     const RowLayout* output_layout)
    : aggregates_(std::move(aggregates)),
      emit_watermark_(emit_watermark),
      output_layout_(output_layout) {}

const RowLayout* AggregatingWindowFunction::OutputLayout(
    const std::vector<FieldType>& key_types, const std::vector<ResolvedAggregate>& aggregates,
    bool emit_watermark, bool emit_firing) {
  std::vector<FieldType> types = key_types;
  types.push_back(FieldType::kTimestamp);
  types.push_back(FieldType::kTimestamp);
  for (const ResolvedAggregate& a : aggregates) {
    types.push_back(a.output_type);
  }
  if (emit_watermark) {
    types.push_back(FieldType::kTimestamp);
  }
  if (emit_firing) {
    types.push_back(FieldType::kInt64);
  }
  return RowLayout::Of(types);
}

std::unique_ptr<WindowState> AggregatingWindowFunction::CreateState() const {
  return std::make_unique<AggregateState>(aggregates_, arrivals_);
}

bool AggregatingWindowFunction::CanPreAggregate(const ResolvedAggregate& agg) {
  switch (agg.kind) {
    case AggregateKind::kCount:
    case AggregateKind::kFirst:
    case AggregateKind::kLast:
      return true;
    case AggregateKind::kSum:
      return agg.output_type == FieldType::kInt64;
    case AggregateKind::kMin:
    case AggregateKind::kMax:
      return agg.output_type != FieldType::kDouble;
    default:  // avg, first-value / last-value and the rich kinds: no narrow form
      return false;
  }
}

bool AggregatingWindowFunction::CanPreAggregate() const {
  return std::all_of(aggregates_.begin(), aggregates_.end(),
                     [](const ResolvedAggregate& a) { return CanPreAggregate(a); });
}

bool AggregatingWindowFunction::HasNarrowForm() const {
  return std::none_of(aggregates_.begin(), aggregates_.end(), [](const ResolvedAggregate& a) {
    return IsRichAggregate(a.kind) || a.kind == AggregateKind::kFirstValue ||
           a.kind == AggregateKind::kLastValue;
  });
}

int64_t AggregatingWindowFunction::RichStateBytes(const WindowState& state) const {
  return static_cast<const AggregateState&>(state).RichBytes();
}

void AggregatingWindowFunction::Accumulate(AggregateAccumulator* accs,
                                           const StreamRecord& record) const {
  AggregateState::AddTo(aggregates_, accs, record, ++arrivals_);
}

void AggregatingWindowFunction::MergeAccumulators(AggregateAccumulator* into,
                                                  const AggregateAccumulator* from) const {
  AggregateState::MergeInto(aggregates_, into, from);
}

void WriteAccumulator(StateWriter& writer, const AggregateAccumulator& acc) {
  writer.WriteI64(acc.count);
  writer.WriteI64(acc.int_sum);
  writer.WriteF64(acc.double_sum);
  writer.WriteValue(acc.value);
  writer.WriteI64(static_cast<int64_t>(acc.seq));
}

AggregateAccumulator ReadAccumulator(StateReader& reader) {
  AggregateAccumulator acc;
  acc.count = reader.ReadI64();
  acc.int_sum = reader.ReadI64();
  acc.double_sum = reader.ReadF64();
  acc.value = reader.ReadValue();
  acc.seq = static_cast<uint64_t>(reader.ReadI64());
  return acc;
}

void AggregatingWindowFunction::WriteFunctionState(StateWriter& writer) const {
  writer.WriteI64(static_cast<int64_t>(arrivals_));
}

void AggregatingWindowFunction::ReadFunctionState(StateReader& reader) {
  arrivals_ = static_cast<uint64_t>(reader.ReadI64());
}

std::unique_ptr<WindowState> AggregatingWindowFunction::CreateStateFrom(
    const AggregateAccumulator* accs) const {
  auto state = std::make_unique<AggregateState>(aggregates_, arrivals_);
  std::copy(accs, accs + aggregates_.size(), state->mutable_accumulators().begin());
  return state;
}

const AggregateAccumulator* AggregatingWindowFunction::AccumulatorsOf(
    const WindowState& state) const {
  return static_cast<const AggregateState&>(state).accumulators().data();
}

void AggregatingWindowFunction::Process(const Context& ctx, const WindowState& state,
                                        std::vector<Row>& out) const {
  const auto& s = static_cast<const AggregateState&>(state);
  Row row;
  FillResultRow(ctx, s.accumulators().data(), row);
  for (size_t i = 0; i < aggregates_.size(); ++i) {
    if (const RichAccumulator* r = s.rich(i); r != nullptr && s.accumulators()[i].count > 0) {
      r->Result(row, ctx.key.size() + 2 + i);
    }
  }
  out.push_back(std::move(row));
}

void AggregatingWindowFunction::ProcessAccumulators(const Context& ctx,
                                                    const AggregateAccumulator* accs,
                                                    std::vector<Row>& out) const {
  Row row;
  FillResultRow(ctx, accs, row);
  out.push_back(std::move(row));
}

size_t AggregatingWindowFunction::FillResultKeyAndWindow(const Context& ctx, Row& row) const {
  row.Reset(output_layout_);
  size_t at = 0;
  for (const Value& k : ctx.key) {
    if (const int64_t* i = std::get_if<int64_t>(&k)) {
      row.SetBits(at++, static_cast<uint64_t>(*i));  // the common int64 key without a conversion
    } else if (const std::string* s = std::get_if<std::string>(&k);
               s != nullptr && row.type(at) == FieldType::kString) {
      row.SetString(at++, *s);  // a string key into its string slot: no conversion either
    } else {
      row.Set(at++, k);
    }
  }
  row.SetInt64(at++, ctx.window.start());
  row.SetInt64(at++, ctx.window.end());
  if (emit_watermark_) {
    row.SetInt64(at + aggregates_.size(), ctx.current_watermark);
  }
  return at;
}

size_t AggregatingWindowFunction::FillResultKeyAndWindow(const Context& ctx,
                                                         std::string_view key_string,
                                                         Row& row) const {
  row.Reset(output_layout_);
  if (row.type(0) != FieldType::kString) {
    return FillResultKeyAndWindow(ctx, row);
  }
  row.SetString(0, key_string);
  row.SetInt64(1, ctx.window.start());
  row.SetInt64(2, ctx.window.end());
  if (emit_watermark_) {
    row.SetInt64(3 + aggregates_.size(), ctx.current_watermark);
  }
  return 3;
}

void AggregatingWindowFunction::FillResultRow(const Context& ctx, const AggregateAccumulator* accs,
                                              Row& row) const {
  size_t at = FillResultKeyAndWindow(ctx, row);
  for (size_t i = 0; i < aggregates_.size(); ++i, ++at) {
    const ResolvedAggregate& agg = aggregates_[i];
    const Accumulator& acc = accs[i];
    if (agg.kind == AggregateKind::kCount) {
      row.SetInt64(at, acc.count);
    } else if (agg.kind == AggregateKind::kCountDistinct ||
               agg.kind == AggregateKind::kApproxCountDistinct) {
      row.SetInt64(at, 0);  // no non-NULL value; `Process` sets the count otherwise
    } else if (acc.count == 0 || IsRichAggregate(agg.kind)) {
      // No value: NULL, as Reset left it; a rich kind: set by `Process` from the window's rich
      // accumulator.
    } else if (agg.kind == AggregateKind::kSum) {
      if (agg.output_type == FieldType::kInt64) {
        row.SetInt64(at, acc.int_sum);
      } else {
        row.SetDouble(at, acc.double_sum);
      }
    } else if (agg.kind == AggregateKind::kAvg) {
      row.SetDouble(at, acc.double_sum / static_cast<double>(acc.count));
    } else {
      row.Set(at, acc.value);
    }
  }
}

// ---- SliceAggregates ----

namespace {

// The 8 bytes a fixed-width value of type `t` is kept in (bool: 0 / 1).
uint64_t ScalarBits(const Row& row, size_t slot, FieldType t) {
  return t == FieldType::kBool ? uint64_t{row.GetBool(slot)} : row.GetBits(slot);
}

Value ScalarValue(uint64_t bits, FieldType t) {
  switch (t) {
    case FieldType::kInt64:
    case FieldType::kTimestamp:
      return Value(static_cast<int64_t>(bits));
    case FieldType::kDouble:
      return Value(std::bit_cast<double>(bits));
    case FieldType::kBool:
      return Value(bits != 0);
    case FieldType::kString:
      break;
  }
  return Value{};
}

// The words of a non-NULL value of type `t`; false when `v` has another type.
bool ValueBits(const Value& v, FieldType t, uint64_t* bits) {
  switch (t) {
    case FieldType::kInt64:
    case FieldType::kTimestamp:
      if (const int64_t* i = std::get_if<int64_t>(&v)) {
        *bits = static_cast<uint64_t>(*i);
        return true;
      }
      return false;
    case FieldType::kDouble:
      if (const double* d = std::get_if<double>(&v)) {
        *bits = std::bit_cast<uint64_t>(*d);
        return true;
      }
      return false;
    case FieldType::kBool:
      if (const bool* b = std::get_if<bool>(&v)) {
        *bits = *b ? 1 : 0;
        return true;
      }
      return false;
    case FieldType::kString:
      break;
  }
  return false;
}

}  // namespace

bool SliceAggregates::Better(const Cell& c, uint64_t v, uint64_t cur) {
  // CompareValues on the values: int64s and bools (0 / 1) as integers, doubles as doubles
  // (NaN and -0.0 / 0.0 compare equal to everything / each other: the kept value stays).
  if (c.type == FieldType::kDouble) {
    const double x = std::bit_cast<double>(v);
    const double y = std::bit_cast<double>(cur);
    return c.form == Form::kMin ? x < y : x > y;
  }
  const auto x = static_cast<int64_t>(v);
  const auto y = static_cast<int64_t>(cur);
  return c.form == Form::kMin ? x < y : x > y;
}

SliceAggregates::SliceAggregates(const std::vector<ResolvedAggregate>& aggregates) {
  uint32_t at = 0;
  for (const ResolvedAggregate& agg : aggregates) {
    Cell c{Form::kCount, agg.input_type, agg.slot, at};
    switch (agg.kind) {
      case AggregateKind::kCount:
        c.form = Form::kCount;
        at += 1;
        break;
      case AggregateKind::kSum:
      case AggregateKind::kAvg:
        c.form = Form::kSum;
        at += 3;
        break;
      case AggregateKind::kMin:
      case AggregateKind::kMax:
        c.form = agg.kind == AggregateKind::kMin ? Form::kMin : Form::kMax;
        at += 2;
        break;
      case AggregateKind::kFirst:
      case AggregateKind::kLast:
        c.form = agg.kind == AggregateKind::kFirst ? Form::kFirst : Form::kLast;
        at += 3;
        break;
      default:
        // No narrow form (`HasNarrowForm`): the operator keeps per-window states for these.
        throw InvalidArgument(fmt::format("aggregate '{}' has no slice form", agg.name));
    }
    if (c.form != Form::kCount && c.form != Form::kSum && c.type == FieldType::kString) {
      has_strings_ = true;
    }
    cells_.push_back(c);
  }
  words_ = at;
  only_record_counts_ =
      !cells_.empty() && std::all_of(cells_.begin(), cells_.end(), [](const Cell& c) {
        return c.form == Form::kCount && c.slot < 0;
      });
}

void SliceAggregates::AddFields(uint64_t* w, const Row& row, uint64_t seq,
                                AccumulatorStrings& strings) const {
  for (const Cell& c : cells_) {
    uint64_t* a = w + c.at;
    if (c.slot < 0) {
      ++a[0];
      continue;
    }
    const auto slot = static_cast<size_t>(c.slot);
    if (row.IsNull(slot)) {
      continue;
    }
    const bool first_value = a[0] == 0;
    ++a[0];
    switch (c.form) {
      case Form::kCount:
        break;
      case Form::kSum:
        // As AddTo: int64 / timestamp add to both sums (the int one wraps, as Java's long), a
        // double or a bool (0 / 1) to the double one.
        switch (c.type) {
          case FieldType::kInt64:
          case FieldType::kTimestamp: {
            const int64_t x = row.GetInt64(slot);
            a[1] += static_cast<uint64_t>(x);
            a[2] = std::bit_cast<uint64_t>(std::bit_cast<double>(a[2]) + static_cast<double>(x));
            break;
          }
          case FieldType::kDouble:
            a[2] = std::bit_cast<uint64_t>(std::bit_cast<double>(a[2]) + row.GetDouble(slot));
            break;
          case FieldType::kBool:
            a[2] = std::bit_cast<uint64_t>(std::bit_cast<double>(a[2]) +
                                           (row.GetBool(slot) ? 1.0 : 0.0));
            break;
          case FieldType::kString:
            break;
        }
        break;
      case Form::kMin:
      case Form::kMax:
        if (c.type == FieldType::kString) {
          const std::string_view v = row.GetString(slot);
          if (first_value) {
            a[1] = strings.Acquire();
            strings.at(a[1]).assign(v);
          } else {
            std::string& cur = strings.at(a[1]);
            const int cmp = v.compare(cur);
            if (c.form == Form::kMin ? cmp < 0 : cmp > 0) {
              cur.assign(v);
            }
          }
        } else {
          const uint64_t v = ScalarBits(row, slot, c.type);
          if (first_value || Better(c, v, a[1])) {
            a[1] = v;
          }
        }
        break;
      case Form::kFirst:
      case Form::kLast:
        if (first_value || (c.form == Form::kFirst ? seq < a[2] : seq >= a[2])) {
          if (c.type == FieldType::kString) {
            if (first_value) {
              a[1] = strings.Acquire();
            }
            strings.at(a[1]).assign(row.GetString(slot));
          } else {
            a[1] = ScalarBits(row, slot, c.type);
          }
          a[2] = seq;
        }
        break;
    }
  }
}

void SliceAggregates::Merge(uint64_t* into, const uint64_t* from,
                            AccumulatorStrings& strings) const {
  for (const Cell& c : cells_) {
    uint64_t* a = into + c.at;
    const uint64_t* o = from + c.at;
    switch (c.form) {
      case Form::kCount:
        a[0] += o[0];
        break;
      case Form::kSum:
        a[0] += o[0];
        a[1] += o[1];
        a[2] = std::bit_cast<uint64_t>(std::bit_cast<double>(a[2]) + std::bit_cast<double>(o[2]));
        break;
      case Form::kMin:
      case Form::kMax:
      case Form::kFirst:
      case Form::kLast: {
        if (o[0] == 0) {
          break;
        }
        const bool first_value = a[0] == 0;
        a[0] += o[0];
        bool take = first_value;
        if (!take) {
          if (c.form == Form::kFirst) {
            take = o[2] < a[2];
          } else if (c.form == Form::kLast) {
            take = o[2] >= a[2];
          } else if (c.type == FieldType::kString) {
            const int cmp = strings.at(o[1]).compare(strings.at(a[1]));
            take = c.form == Form::kMin ? cmp < 0 : cmp > 0;
          } else {
            take = Better(c, o[1], a[1]);
          }
        }
        if (take) {
          if (c.type == FieldType::kString) {
            if (first_value) {
              a[1] = strings.Acquire();
            }
            if (a[1] != o[1]) {
              strings.at(a[1]) = strings.at(o[1]);
            }
          } else {
            a[1] = o[1];
          }
          if (c.form == Form::kFirst || c.form == Form::kLast) {
            a[2] = o[2];
          }
        }
        break;
      }
    }
  }
}

void SliceAggregates::Expand(const uint64_t* w, AggregateAccumulator* out,
                             const AccumulatorStrings& strings) const {
  for (size_t i = 0; i < cells_.size(); ++i) {
    const Cell& c = cells_[i];
    const uint64_t* a = w + c.at;
    AggregateAccumulator& acc = out[i];
    acc = AggregateAccumulator{};
    acc.count = static_cast<int64_t>(a[0]);
    switch (c.form) {
      case Form::kCount:
        break;
      case Form::kSum:
        acc.int_sum = static_cast<int64_t>(a[1]);
        acc.double_sum = std::bit_cast<double>(a[2]);
        break;
      case Form::kMin:
      case Form::kMax:
      case Form::kFirst:
      case Form::kLast:
        if (a[0] != 0) {
          if (c.type == FieldType::kString) {
            acc.value = strings.at(a[1]);
          } else {
            acc.value = ScalarValue(a[1], c.type);
          }
        }
        if (c.form == Form::kFirst || c.form == Form::kLast) {
          acc.seq = a[2];
        }
        break;
    }
  }
}

void SliceAggregates::Compress(const AggregateAccumulator* in, uint64_t* w,
                               AccumulatorStrings& strings) const {
  std::fill(w, w + words_, uint64_t{0});
  for (size_t i = 0; i < cells_.size(); ++i) {
    const Cell& c = cells_[i];
    uint64_t* a = w + c.at;
    const AggregateAccumulator& acc = in[i];
    if (acc.count < 0) {
      throw StateCorrupt("window snapshot: a negative count");
    }
    a[0] = static_cast<uint64_t>(acc.count);
    switch (c.form) {
      case Form::kCount:
        break;
      case Form::kSum:
        a[1] = static_cast<uint64_t>(acc.int_sum);
        a[2] = std::bit_cast<uint64_t>(acc.double_sum);
        break;
      case Form::kMin:
      case Form::kMax:
      case Form::kFirst:
      case Form::kLast:
        if (acc.count > 0) {
          if (c.type == FieldType::kString) {
            const std::string* s = std::get_if<std::string>(&acc.value);
            if (s == nullptr) {
              throw StateCorrupt("window snapshot: an accumulator value of another type");
            }
            a[1] = strings.Acquire();
            strings.at(a[1]) = *s;
          } else if (!ValueBits(acc.value, c.type, &a[1])) {
            throw StateCorrupt("window snapshot: an accumulator value of another type");
          }
        }
        if (c.form == Form::kFirst || c.form == Form::kLast) {
          a[2] = acc.seq;
        }
        break;
    }
  }
}

void SliceAggregates::Release(const uint64_t* w, AccumulatorStrings& strings) const {
  if (!has_strings_) {
    return;
  }
  for (const Cell& c : cells_) {
    if (c.form != Form::kCount && c.form != Form::kSum && c.type == FieldType::kString &&
        w[c.at] != 0) {
      strings.Release(w[c.at + 1]);
    }
  }
}

}  // namespace tidemark
