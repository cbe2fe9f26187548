#include "operators/expression_operators.h"

namespace tidemark {

void ExpressionFilterOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  if (condition_.Test(record.row)) {
    output().Collect(record);
  }
}

void ExpressionFilterOperator::ProcessBatch(RecordBatch& batch, int /*input*/) {
  size_t kept = 0;
  for (size_t i = 0; i < batch.size; ++i) {
    StreamRecord* r = batch.records[i];
    if (condition_.Test(r->row)) {
      batch.records[kept++] = r;
    }
  }
  batch.size = kept;
  if (kept > 0) {
    output().CollectBatch(batch);
  }
}

void ExpressionProjectOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  Project(record);
  output().Collect(record);
}

void ExpressionProjectOperator::ProcessBatch(RecordBatch& batch, int /*input*/) {
  for (size_t i = 0; i < batch.size; ++i) {
    Project(*batch.records[i]);
  }
  output().CollectBatch(batch);
}

void ExpressionProjectOperator::Project(StreamRecord& record) {
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
}

}  // namespace tidemark
