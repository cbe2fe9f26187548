#include "operators/arithmetic_map_filter.h"

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {

int ArithmeticMapOperator::ResolveSlot(const Schema& input, const std::string& field,
                                       bool* is_double) {
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
  Apply(record.row);
  output().Collect(record);
}

void ArithmeticMapOperator::ProcessBatch(RecordBatch& batch, int /*input*/) {
  for (size_t i = 0; i < batch.size; ++i) {
    Apply(batch.records[i]->row);
  }
  output().CollectBatch(batch);
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
  throw InvalidArgument(
      fmt::format("op: unknown comparison '{}' (known: gt, ge, lt, le, eq, ne)", op));
}

void ComparisonFilterOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  if (Test(record.row)) {
    output().Collect(record);
  }
}

void ComparisonFilterOperator::ProcessBatch(RecordBatch& batch, int /*input*/) {
  size_t kept = 0;
  for (size_t i = 0; i < batch.size; ++i) {
    StreamRecord* r = batch.records[i];
    batch.records[kept] = r;  // branch-free compaction: the pointer is kept iff it passes
    kept += Test(r->row) ? 1 : 0;
  }
  batch.size = kept;
  if (kept > 0) {
    output().CollectBatch(batch);
  }
}

}  // namespace tidemark
