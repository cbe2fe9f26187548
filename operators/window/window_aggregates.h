#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "operators/window/window_function.h"
#include "runtime/core/row.h"

namespace tidemark {

/// The built-in incremental aggregates of a `type: window` operator. `first` / `last` take the
/// first / last value in arrival order (Flink's FIRST_VALUE / LAST_VALUE); `first-value` /
/// `last-value` the value of the earliest / latest event time (ties: arrival order).
/// The kinds from kCountDistinct on keep more than a fixed accumulator (`IsRichAggregate`):
/// the exact distinct set, a HyperLogLog, the values, a t-digest, the strings.
enum class AggregateKind {
  kCount,
  kSum,
  kMin,
  kMax,
  kAvg,
  kFirst,
  kLast,
  kFirstValue,           ///< by event time
  kLastValue,            ///< by event time
  kCountDistinct,        ///< COUNT(DISTINCT x), exact
  kApproxCountDistinct,  ///< HyperLogLog (sketches.h)
  kPercentile,           ///< PERCENTILE(x, p), exact
  kApproxPercentile,     ///< t-digest (sketches.h)
  kListAgg,              ///< LISTAGG(x, sep)
};

/// Whether `kind` keeps a variable-size (or sketch) accumulator beside its `AggregateAccumulator`.
inline bool IsRichAggregate(AggregateKind kind) {
  return kind >= AggregateKind::kCountDistinct;
}

/// An `AggregateSpec` resolved against the input schema at job-compile time.
struct ResolvedAggregate {
  AggregateKind kind = AggregateKind::kCount;
  int slot = -1;  ///< input field; -1 for `count` without a field (counts records)
  FieldType input_type = FieldType::kInt64;  ///< the input field's type (kInt64 without a field)
  FieldType output_type = FieldType::kInt64;
  std::string name;       ///< output column
  double percentage = 0;  ///< percentile / approx-percentile, in [0, 1]
  std::string separator;  ///< listagg
};

/// Resolves one aggregate: known function, existing field (required except for `count`),
/// numeric field for sum / avg / percentile / approx-percentile, a string field for listagg.
/// Default names: `count`, `<function>_<field>` (`-` as `_`).
/// Throws `InvalidArgument` with a message naming the function and field.
ResolvedAggregate ResolveAggregate(const AggregateSpec& spec, const Schema& input);

/// The running value of one aggregate over a set of elements (a window, or a slice of one).
/// Value type. `count` is the number of non-NULL values seen (records, for a field-less
/// `count`); `value` holds min / max / first / last, and `seq` the arrival number of a first /
/// last value so that merged accumulators keep arrival order; first-value / last-value keep the
/// value's event time in `int_sum`. The rich kinds (`IsRichAggregate`) keep their state beside it,
/// in the window's `WindowState`.
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

/// Strings of the narrow accumulators (`SliceAggregates`) of string-valued min / max / first /
/// last: a handle per non-empty accumulator. Released strings keep their buffers for the next
/// `Acquire`, so a steady stream of windows allocates no string per window. Not thread-safe.
class AccumulatorStrings {
 public:
  uint64_t Acquire() {
    if (!free_.empty()) {
      const uint64_t h = free_.back();
      free_.pop_back();
      return h;
    }
    strings_.emplace_back();
    return strings_.size() - 1;
  }
  void Release(uint64_t handle) { free_.push_back(handle); }
  std::string& at(uint64_t handle) { return strings_[handle]; }
  const std::string& at(uint64_t handle) const { return strings_[handle]; }
  /// Handles held (acquired and not released).
  size_t live() const { return strings_.size() - free_.size(); }
  void Clear() {
    strings_.clear();
    free_.clear();
  }

 private:
  std::vector<std::string> strings_;
  std::vector<uint64_t> free_;
};

/// The accumulators of an aggregate list in a narrow, typed form of 8-byte words, for the window
/// operator's slices and flat sessions: `count` is one word (the count), `sum` and `avg` three
/// (count, the wrapping int sum and the double sum, as `AggregateAccumulator`), min / max two
/// (count, value), first / last three (count, value, arrival number); a string value is a handle
/// into an `AccumulatorStrings`. All-zero words are empty accumulators. Adds and merges do the
/// general accumulators' arithmetic in the same order, so the results are the same bit for bit.
/// `Expand` gives the `AggregateAccumulator`s of the same elements bit for bit, `Compress` the
/// inverse, so firing, merging and snapshots reuse the general accumulator code.
class SliceAggregates {
 public:
  SliceAggregates() = default;
  explicit SliceAggregates(const std::vector<ResolvedAggregate>& aggregates);

  /// Words of one set of accumulators.
  size_t words() const { return words_; }
  /// Whether some accumulator holds a string (`Release` must be called before dropping words).
  bool has_strings() const { return has_strings_; }
  /// Adds the row of an element with arrival number `seq` (as
  /// `AggregatingWindowFunction::Accumulate`).
  void Add(uint64_t* w, const Row& row, uint64_t seq, AccumulatorStrings& strings) const {
    if (only_record_counts_) {
      // count(*) only (the commonest window): one word per count, nothing read from the row.
      for (size_t i = 0; i < words_; ++i) {
        ++w[i];
      }
      return;
    }
    AddFields(w, row, seq, strings);
  }
  /// Folds `from` into `into` (as `AggregatingWindowFunction::MergeAccumulators`).
  void Merge(uint64_t* into, const uint64_t* from, AccumulatorStrings& strings) const;
  /// The accumulators `w` stands for, into `out` (`aggregates.size()` of them).
  void Expand(const uint64_t* w, AggregateAccumulator* out,
              const AccumulatorStrings& strings) const;
  /// The words of `in` into `w` (whose strings were released). Throws `StateCorrupt` when a
  /// value does not have the aggregate's type.
  void Compress(const AggregateAccumulator* in, uint64_t* w, AccumulatorStrings& strings) const;
  /// Gives back the strings of `w`.
  void Release(const uint64_t* w, AccumulatorStrings& strings) const;
  /// The result cells of `w` into `row` from slot `at` on, for aggregates that are all counts
  /// and sums with int64 output (the caller knows): what `Expand` then
  /// `AggregatingWindowFunction::FillResultRow` write (a count as int64; a sum as its int64
  /// total, or NULL, left as `row` has it, when it saw no value), without the accumulators.
  void WriteCountsAndInt64Sums(const uint64_t* w, Row& row, size_t at) const {
    for (size_t i = 0; i < cells_.size(); ++i) {
      const uint64_t* a = w + cells_[i].at;
      if (cells_[i].form == Form::kCount) {
        row.SetInt64(at + i, static_cast<int64_t>(a[0]));
      } else if (a[0] != 0) {
        row.SetInt64(at + i, static_cast<int64_t>(a[1]));
      }
    }
  }

 private:
  enum class Form : uint8_t { kCount, kSum, kMin, kMax, kFirst, kLast };
  struct Cell {
    Form form;
    FieldType type;  // the value's type (min / max / first / last)
    int slot;        // input slot; -1: counts records
    uint32_t at;     // first word
  };
  // Whether `v` replaces `cur` in a min / max of a fixed-width type.
  static bool Better(const Cell& c, uint64_t v, uint64_t cur);
  std::vector<Cell> cells_;
  size_t words_ = 0;
  bool has_strings_ = false;
  bool only_record_counts_ = false;  // every cell is a count of records (slot -1), word i each
  void AddFields(uint64_t* w, const Row& row, uint64_t seq, AccumulatorStrings& strings) const;
};

/// The window function of `type: window` operators: incremental accumulators (Flink's
/// AggregateFunction) for count / sum / min / max / avg / first / last / first-value / last-value
/// and, kept per window beside them, count-distinct (an exact set), approx-count-distinct (a
/// HyperLogLog), percentile (the values), approx-percentile (a t-digest) and listagg (the
/// strings with their arrival numbers), NULLs ignored (`count` without a field counts records).
/// Every one merges exactly (session windows), except that a merged t-digest is a t-digest of
/// the same values compressed in another order. Result row per firing, of `output_layout`:
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
    return output_layout_->size() ==
           key_fields + 2 + aggregates_.size() + (emit_watermark_ ? 1 : 0) + 1;
  }

  // ---- Accumulator-level access for the window operator's slices (panes) ----
  // `accs` always points at `aggregates().size()` accumulators.

  /// True when folding the elements of several disjoint groups separately and then merging the
  /// groups' accumulators (in any order) gives exactly the result of folding all elements in
  /// arrival order: count, an int64 `sum`, min / max of a non-double field and first / last.
  /// False for `avg` and a double `sum` (floating-point addition is not associative) and for
  /// min / max of doubles (NaN and -0.0 / 0.0 make the kept value depend on the order).
  /// False with first-value / last-value and the rich kinds (their accumulators have no narrow
  /// `SliceAggregates` form yet: those windows keep per-window states).
  bool CanPreAggregate() const;
  /// The same judgement for one aggregate.
  static bool CanPreAggregate(const ResolvedAggregate& agg);
  /// Whether every accumulator has a narrow `SliceAggregates` form (the flat session path).
  bool HasNarrowForm() const;
  /// Bytes held by the rich accumulators of `state`, a state of this function (0 without them).
  int64_t RichStateBytes(const WindowState& state) const;
  size_t num_aggregates() const { return aggregates_.size(); }
  /// The arrival number of the next element (what `Accumulate` numbers it with).
  uint64_t NextArrival() const { return ++arrivals_; }
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
  /// `FillResultRow`'s key fields, window bounds and watermark column, the aggregates' cells
  /// left NULL: for a caller that writes those itself (the window operator's sliced path,
  /// `SliceAggregates::WriteCountsAndInt64Sums`). Returns the first aggregate's slot.
  size_t FillResultKeyAndWindow(const Context& ctx, Row& row) const;
  /// `FillResultKeyAndWindow` for a key that is one string, `key_string` (`ctx.key`'s value,
  /// given by a caller that holds its bytes nearer than `ctx.key`'s: `KeyRef::ShortString`).
  size_t FillResultKeyAndWindow(const Context& ctx, std::string_view key_string, Row& row) const;
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
