#include "operators/expression_operators.h"

namespace tidemark {

void ExpressionFilterOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  if (condition_.Test(record.row)) {
    output().Collect(record);
  }
}

void ExpressionProjectOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  // Evaluate every column against the unchanged input first: `set: {a: b, b: a}` swaps.
  scratch_.clear();
  for (const Column& c : columns_) {
    scratch_.push_back(c.expression.Evaluate(record.row));
  }
  if (keep_input_) {
    record.row.resize(output_width_);
  } else {
    record.row.assign(output_width_, Value{});
  }
  for (size_t i = 0; i < columns_.size(); ++i) {
    record.row[static_cast<size_t>(columns_[i].output_slot)] = std::move(scratch_[i]);
  }
  output().Collect(record);
}

}  // namespace tidemark
