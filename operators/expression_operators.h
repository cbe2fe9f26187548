#pragma once

#include <string>
#include <utility>
#include <vector>

#include "operators/expression.h"
#include "runtime/core/row.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// `type: filter` with an expression: keeps the records whose condition is true (NULL is
/// false). Mirrors Flink's StreamFilter. Stateless; mailbox thread only.
class ExpressionFilterOperator : public StreamOperator {
 public:
  /// `condition` must be of type bool (checked by the compiler).
  explicit ExpressionFilterOperator(Expression condition) : condition_(std::move(condition)) {}
  void ProcessElement(StreamRecord& record, int input) override;
  /// Compacts the batch to the records whose condition is true (order kept), one `CollectBatch`.
  void ProcessBatch(RecordBatch& batch, int input) override;

 private:
  Expression condition_;
};

/// `type: map` with `set:` and `type: project`: computes output columns from expressions over
/// the input row. Mirrors Flink's StreamMap with a row-producing function.
/// `map` (`set:`): the output is the input row with the assigned columns replaced or appended;
/// `project`: the output is exactly the listed columns. The timestamp is kept.
/// Stateless; mailbox thread only. Cost: one expression evaluation per output column.
class ExpressionProjectOperator : public StreamOperator {
 public:
  /// One output column: where it goes in the output row and how it is computed.
  struct Column {
    int output_slot = 0;
    Expression expression;
  };

  /// Output rows have `output_layout`. `keep_input`: the first `input_width` output cells start
  /// as the input row's (map `set:`), except those a column assigns; otherwise every cell not
  /// assigned is NULL (project). Columns are evaluated against the unchanged input, so
  /// `set: {a: b, b: a}` swaps.
  ExpressionProjectOperator(std::vector<Column> columns, const RowLayout* output_layout,
                            size_t input_width, bool keep_input);
  void ProcessElement(StreamRecord& record, int input) override;
  /// Rewrites every record in place, then one `CollectBatch`.
  void ProcessBatch(RecordBatch& batch, int input) override;

 private:
  void Project(StreamRecord& record);

  std::vector<Column> columns_;
  const RowLayout* output_layout_;
  std::vector<size_t> kept_slots_;  // input cells copied to the same output slot
  Row scratch_;                     // the output row being built; swapped with the record's
};

}  // namespace tidemark
