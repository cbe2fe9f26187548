#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "operators/window/window_function.h"
#include "runtime/core/row.h"

namespace tidemark {

/// The built-in incremental aggregates of a `type: window` operator.
enum class AggregateKind { kCount, kSum, kMin, kMax, kAvg, kFirst, kLast };

/// An `AggregateSpec` resolved against the input schema at job-compile time.
struct ResolvedAggregate {
  AggregateKind kind = AggregateKind::kCount;
  int slot = -1;  ///< input field; -1 for `count` without a field (counts records)
  FieldType input_type = FieldType::kInt64;  ///< the input field's type (kInt64 without a field)
  FieldType output_type = FieldType::kInt64;
  std::string name;  ///< output column
};

/// Resolves one aggregate: known function, existing field (required except for `count`),
/// numeric field for sum/avg. Default names: `count`, `<function>_<field>`.
/// Throws `InvalidArgument` with a message naming the function and field.
ResolvedAggregate ResolveAggregate(const AggregateSpec& spec, const Schema& input);

/// The running value of one aggregate over a set of elements (a window, or a slice of one).
/// Value type. `count` is the number of non-NULL values seen (records, for a field-less
/// `count`); `value` holds min / max / first / last, and `seq` the arrival number of a first /
/// last value so that merged accumulators keep arrival order.
struct AggregateAccumulator {
  int64_t count = 0;
  int64_t int_sum = 0;
  double double_sum = 0;
  Value value;
  uint64_t seq = 0;
};

/// Snapshot form of an accumulator: `I64` count, `I64` int_sum, `F64` double_sum, the value
/// (`WriteValue`), `I64` seq.
void WriteAccumulator(StateWriter& writer, const AggregateAccumulator& acc);
AggregateAccumulator ReadAccumulator(StateReader& reader);

/// The window function of `type: window` operators: incremental accumulators (Flink's
/// AggregateFunction) for count / sum / min / max / avg / first / last, NULLs ignored
/// (`count` without a field counts records). Result row per firing, of `output_layout`:
/// `key fields..., window_start, window_end, aggregates...[, watermark]` and, when the layout has
/// one more field (the operator's `firing` column), that field left NULL for the operator to
/// set; a window whose aggregates saw no non-NULL value yields NULL for them (count yields 0).
/// Cost: O(#aggregates) per element, no buffering.
class AggregatingWindowFunction : public WindowFunction {
 public:
  /// `output_layout` must hold the key fields (of the key's types), two timestamps, the
  /// aggregates' output types, the watermark when `emit_watermark`, and optionally one int64
  /// (`OutputLayout` makes it).
  AggregatingWindowFunction(std::vector<ResolvedAggregate> aggregates, bool emit_watermark,
                            const RowLayout* output_layout);
  /// The result layout for keys of `key_types`: see the class comment; `emit_firing` adds the
  /// operator's int64 `firing` field.
  static const RowLayout* OutputLayout(const std::vector<FieldType>& key_types,
                                       const std::vector<ResolvedAggregate>& aggregates,
                                       bool emit_watermark, bool emit_firing);

  std::unique_ptr<WindowState> CreateState() const override;
  void Process(const Context& ctx, const WindowState& state, std::vector<Row>& out) const override;

  const std::vector<ResolvedAggregate>& aggregates() const { return aggregates_; }
  /// Whether result rows end with a field this function leaves NULL (the operator's `firing`).
  bool has_firing_slot(size_t key_fields) const {
    return output_layout_->size() == key_fields + 2 + aggregates_.size() + (emit_watermark_ ? 1 : 0) + 1;
  }

  // ---- Accumulator-level access for the window operator's slices (panes) ----
  // `accs` always points at `aggregates().size()` accumulators.

  /// True when folding the elements of several disjoint groups separately and then merging the
  /// groups' accumulators (in any order) gives exactly the result of folding all elements in
  /// arrival order: count, an int64 `sum`, min / max of a non-double field and first / last.
  /// False for `avg` and a double `sum` (floating-point addition is not associative) and for
  /// min / max of doubles (NaN and -0.0 / 0.0 make the kept value depend on the order).
  bool CanPreAggregate() const;
  size_t num_aggregates() const { return aggregates_.size(); }
  /// Adds one element (the same as `WindowState::Add` on a state of this function).
  void Accumulate(AggregateAccumulator* accs, const StreamRecord& record) const;
  /// Folds `from` into `into` (the same as `WindowState::MergeFrom`).
  void MergeAccumulators(AggregateAccumulator* into, const AggregateAccumulator* from) const;
  /// `Process` over accumulators instead of a state.
  void ProcessAccumulators(const Context& ctx, const AggregateAccumulator* accs,
                           std::vector<Row>& out) const;
  /// The one result row of `ProcessAccumulators`, written into `row` (its previous contents
  /// dropped, its capacity reused: a caller recycling one row allocates no row per firing).
  void FillResultRow(const Context& ctx, const AggregateAccumulator* accs, Row& row) const;
  /// The accumulators of `state`, a state of this function (valid while it lives).
  const AggregateAccumulator* AccumulatorsOf(const WindowState& state) const;
  /// A state of this function holding a copy of `accs`.
  std::unique_ptr<WindowState> CreateStateFrom(const AggregateAccumulator* accs) const;

  /// The arrival counter (`I64`): restored, first / last keep ordering across the restore.
  void WriteFunctionState(StateWriter& writer) const override;
  void ReadFunctionState(StateReader& reader) override;

 private:
  std::vector<ResolvedAggregate> aggregates_;
  bool emit_watermark_;
  const RowLayout* output_layout_;
  mutable uint64_t arrivals_ = 0;  // elements added so far (orders first / last)
};

}  // namespace tidemark
