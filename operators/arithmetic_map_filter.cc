#include "operators/arithmetic_map_filter.h"

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {

int ArithmeticMapOperator::ResolveSlot(const Schema& input, const std::string& field, bool* is_double) {
  const int slot = input.IndexOf(field);
  if (slot < 0) {
    throw InvalidArgument(fmt::format("field: unknown field '{}'", field));
  }
  const FieldType t = input.field(static_cast<size_t>(slot)).type;
  if (t != FieldType::kInt64 && t != FieldType::kDouble && t != FieldType::kTimestamp) {
    throw InvalidArgument(fmt::format("field: '{}' is {}, not a number", field, ToString(t)));
  }
  *is_double = t == FieldType::kDouble;
  return slot;
}

void ArithmeticMapOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  Value& v = record.row[slot_];
  if (is_double_) {
    if (auto* d = std::get_if<double>(&v)) {
      *d = *d * multiply_ + add_;
    }
  } else if (auto* i = std::get_if<int64_t>(&v)) {
    *i = static_cast<int64_t>(static_cast<double>(*i) * multiply_ + add_);
  }
  output().Collect(record);
}

ComparisonFilterOperator::Op ComparisonFilterOperator::ParseOp(const std::string& op) {
  if (op == "gt") {
    return Op::kGt;
  }
  if (op == "ge") {
    return Op::kGe;
  }
  if (op == "lt") {
    return Op::kLt;
  }
  if (op == "le") {
    return Op::kLe;
  }
  if (op == "eq") {
    return Op::kEq;
  }
  if (op == "ne") {
    return Op::kNe;
  }
  throw InvalidArgument(fmt::format("op: unknown comparison '{}' (known: gt, ge, lt, le, eq, ne)", op));
}

void ComparisonFilterOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  const Value& v = record.row[slot_];
  double x = 0;
  if (const auto* d = std::get_if<double>(&v)) {
    x = *d;
  } else if (const auto* i = std::get_if<int64_t>(&v)) {
    x = static_cast<double>(*i);
  } else {
    return;
  }
  if (Passes(op_, x, value_)) {
    output().Collect(record);
  }
}

}  // namespace tidemark
