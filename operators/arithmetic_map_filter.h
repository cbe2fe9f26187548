#pragma once

#include "config/job_spec.h"
#include "runtime/core/row.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// `type: map` with a `map: {field, multiply, add}` block: sets one numeric field to
/// `field * multiply + add`, in place, and forwards the record (Flink's `StreamMap` with a fixed
/// function). An int64 / timestamp field keeps its type (the result is truncated toward zero); a
/// NULL stays NULL. The field's slot is resolved when the job is compiled. A deliberately small
/// set of numeric operations for benchmarks and simple jobs; general expressions are a later
/// operator. Mailbox thread only; no allocation per record.
class ArithmeticMapOperator : public StreamOperator {
 public:
  /// `slot` is the field's index in the input schema; `is_double` its type.
  ArithmeticMapOperator(int slot, bool is_double, double multiply, double add)
      : slot_(static_cast<size_t>(slot)), is_double_(is_double), multiply_(multiply), add_(add) {}

  void ProcessElement(StreamRecord& record, int input) override;
  /// Updates every record in place, then emits the batch with one `CollectBatch`.
  void ProcessBatch(RecordBatch& batch, int input) override;

  /// Compile-time checks and slot resolution; throws InvalidArgument (unknown or non-numeric
  /// field).
  static int ResolveSlot(const Schema& input, const std::string& field, bool* is_double);

 private:
  void Apply(Row& row) const {
    if (row.IsNull(slot_)) {
      return;
    }
    if (is_double_) {
      row.SetDouble(slot_, row.GetDouble(slot_) * multiply_ + add_);
    } else {
      row.SetBits(slot_, static_cast<uint64_t>(static_cast<int64_t>(
                             static_cast<double>(row.GetInt64(slot_)) * multiply_ + add_)));
    }
  }

  size_t slot_;
  bool is_double_;
  double multiply_;
  double add_;
};

/// `type: filter` with a `filter: {field, op, value}` block: forwards the records whose numeric
/// field compares true (`gt ge lt le eq ne`) with the constant, drops the others (Flink's
/// `StreamFilter` with a fixed predicate). A NULL or non-numeric value never passes.
/// Mailbox thread only; no allocation per record.
class ComparisonFilterOperator : public StreamOperator {
 public:
  enum class Op { kGt, kGe, kLt, kLe, kEq, kNe };

  /// `slot` is the field's index in the input schema; `is_double` its type (else int64 or
  /// timestamp).
  ComparisonFilterOperator(int slot, bool is_double, Op op, double value)
      : slot_(static_cast<size_t>(slot)), is_double_(is_double), op_(op), value_(value) {}

  void ProcessElement(StreamRecord& record, int input) override;
  /// Compacts the batch to the passing records (order kept) and emits them with one `CollectBatch`.
  void ProcessBatch(RecordBatch& batch, int input) override;

  /// Parses `gt` ... `ne`; throws InvalidArgument otherwise.
  static Op ParseOp(const std::string& op);
  /// The predicate itself (also used by the benchmark baselines).
  static bool Passes(Op op, double x, double value) {
    switch (op) {
      case Op::kGt:
        return x > value;
      case Op::kGe:
        return x >= value;
      case Op::kLt:
        return x < value;
      case Op::kLe:
        return x <= value;
      case Op::kEq:
        return x == value;
      case Op::kNe:
        return x != value;
    }
    return false;
  }

 private:
  /// Whether the record's cell passes (NULL never does).
  bool Test(const Row& row) const {
    if (row.IsNull(slot_)) {
      return false;
    }
    return Passes(op_, is_double_ ? row.GetDouble(slot_) : static_cast<double>(row.GetInt64(slot_)),
                  value_);
  }

  size_t slot_;
  bool is_double_;
  Op op_;
  double value_;
};

}  // namespace tidemark
