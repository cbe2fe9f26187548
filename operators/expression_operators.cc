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

ExpressionProjectOperator::ExpressionProjectOperator(std::vector<Column> columns,
                                                     const RowLayout* output_layout,
                                                     size_t input_width, bool keep_input)
    : columns_(std::move(columns)), output_layout_(output_layout) {
  if (keep_input) {
    std::vector<bool> assigned(output_layout->size(), false);
    for (const Column& c : columns_) {
      assigned[static_cast<size_t>(c.output_slot)] = true;
    }
    for (size_t i = 0; i < input_width && i < output_layout->size(); ++i) {
      if (!assigned[i]) {
        kept_slots_.push_back(i);
      }
    }
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
  // Built beside the input (every column sees the unchanged input), then swapped in: the
  // record's old buffer is the next record's scratch, so nothing is allocated per record.
  scratch_.Reset(output_layout_);
  for (size_t slot : kept_slots_) {
    scratch_.CopyCell(slot, record.row, slot);
  }
  for (const Column& c : columns_) {
    c.expression.EvaluateInto(record.row, scratch_, static_cast<size_t>(c.output_slot));
  }
  record.row.swap(scratch_);
}

}  // namespace tidemark
