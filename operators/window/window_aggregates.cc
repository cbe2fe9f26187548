#include "operators/window/window_aggregates.h"

#include <algorithm>

#include <fmt/format.h>

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

class AggregateState : public WindowState {
 public:
  // `arrivals` is the owning function's element counter: arrival order across all panes, so
  // first / last stay exact when sessions merge.
  AggregateState(const std::vector<ResolvedAggregate>& aggregates, uint64_t& arrivals)
      : aggregates_(aggregates), arrivals_(arrivals) {
    accumulators_.resize(aggregates.size());
  }

  void Add(const StreamRecord& record) override {
    AddTo(aggregates_, accumulators_.data(), record, ++arrivals_);
  }

  void MergeFrom(const WindowState& other_state) override {
    const auto& other = static_cast<const AggregateState&>(other_state);
    MergeInto(aggregates_, accumulators_.data(), other.accumulators_.data());
  }

  void WriteTo(StateWriter& writer) const override {
    writer.WriteU32(static_cast<uint32_t>(accumulators_.size()));
    for (const Accumulator& a : accumulators_) {
      WriteAccumulator(writer, a);
    }
  }
  void ReadFrom(StateReader& reader, const RowLayout* /*element_layout*/) override {
    if (reader.ReadU32() != accumulators_.size()) {
      throw StateCorrupt("window state: the snapshot has another number of aggregates");
    }
    for (Accumulator& a : accumulators_) {
      a = ReadAccumulator(reader);
    }
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
      if (agg.kind == AggregateKind::kCount) {
        ++acc.count;
      } else if (agg.kind == AggregateKind::kSum || agg.kind == AggregateKind::kAvg) {
        // Typed: int64 / timestamp add to both sums (the int one wraps, as Java's long), a
        // double or a bool (0 / 1) to the double one.
        ++acc.count;
        switch (agg.input_type) {
          case FieldType::kInt64:
          case FieldType::kTimestamp: {
            const int64_t x = row.GetInt64(slot);
            acc.int_sum = static_cast<int64_t>(static_cast<uint64_t>(acc.int_sum) +
                                               static_cast<uint64_t>(x));
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
      if (kind == AggregateKind::kCount) {
        acc.count += o.count;
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
    }
  }

  const std::vector<ResolvedAggregate>& aggregates_;
  uint64_t& arrivals_;
  std::vector<Accumulator> accumulators_;
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
  }
  return "?";
}

}  // namespace

ResolvedAggregate ResolveAggregate(const AggregateSpec& spec, const Schema& input) {
  ResolvedAggregate out;
  static const std::pair<const char*, AggregateKind> kKinds[] = {
      {"count", AggregateKind::kCount}, {"sum", AggregateKind::kSum},
      {"min", AggregateKind::kMin},     {"max", AggregateKind::kMax},
      {"avg", AggregateKind::kAvg},     {"first", AggregateKind::kFirst},
      {"last", AggregateKind::kLast}};
  bool known = false;
  for (const auto& [name, kind] : kKinds) {
    if (spec.function == name) {
      out.kind = kind;
      known = true;
    }
  }
  if (!known) {
    throw InvalidArgument(fmt::format(
        "unknown aggregate function '{}' (expected count, sum, min, max, avg, first or last)",
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
    default:
      out.output_type = in_type;
      break;
  }
  if (!spec.as.empty()) {
    out.name = spec.as;
  } else if (out.slot < 0) {
    out.name = "count";
  } else {
    out.name = fmt::format("{}_{}", KindName(out.kind), spec.field);
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

bool AggregatingWindowFunction::CanPreAggregate() const {
  for (const ResolvedAggregate& agg : aggregates_) {
    switch (agg.kind) {
      case AggregateKind::kCount:
      case AggregateKind::kFirst:
      case AggregateKind::kLast:
        break;
      case AggregateKind::kSum:
        if (agg.output_type != FieldType::kInt64) {
          return false;
        }
        break;
      case AggregateKind::kMin:
      case AggregateKind::kMax:
        if (agg.output_type == FieldType::kDouble) {
          return false;
        }
        break;
      case AggregateKind::kAvg:
        return false;
    }
  }
  return true;
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
  ProcessAccumulators(ctx, static_cast<const AggregateState&>(state).accumulators().data(), out);
}

void AggregatingWindowFunction::ProcessAccumulators(const Context& ctx,
                                                    const AggregateAccumulator* accs,
                                                    std::vector<Row>& out) const {
  Row row;
  FillResultRow(ctx, accs, row);
  out.push_back(std::move(row));
}

void AggregatingWindowFunction::FillResultRow(const Context& ctx, const AggregateAccumulator* accs,
                                              Row& row) const {
  row.Reset(output_layout_);
  size_t at = 0;
  for (const Value& k : ctx.key) {
    if (const int64_t* i = std::get_if<int64_t>(&k)) {
      row.SetBits(at++, static_cast<uint64_t>(*i));  // the common int64 key without a conversion
    } else {
      row.Set(at++, k);
    }
  }
  row.SetInt64(at++, ctx.window.start());
  row.SetInt64(at++, ctx.window.end());
  for (size_t i = 0; i < aggregates_.size(); ++i, ++at) {
    const ResolvedAggregate& agg = aggregates_[i];
    const Accumulator& acc = accs[i];
    if (agg.kind == AggregateKind::kCount) {
      row.SetInt64(at, acc.count);
    } else if (acc.count == 0) {
      // NULL: Reset left it so.
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
  if (emit_watermark_) {
    row.SetInt64(at, ctx.current_watermark);
  }
}

}  // namespace tidemark
