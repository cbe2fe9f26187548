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
  FieldType output_type = FieldType::kInt64;
  std::string name;  ///< output column
};

/// Resolves one aggregate: known function, existing field (required except for `count`),
/// numeric field for sum/avg. Default names: `count`, `<function>_<field>`.
/// Throws `InvalidArgument` with a message naming the function and field.
ResolvedAggregate ResolveAggregate(const AggregateSpec& spec, const Schema& input);

/// The window function of `type: window` operators: incremental accumulators (Flink's
/// AggregateFunction) for count / sum / min / max / avg / first / last, NULLs ignored
/// (`count` without a field counts records). Result row per firing:
/// `key fields..., window_start, window_end, aggregates...[, watermark]`; a window whose
/// aggregates saw no non-NULL value yields NULL for them (count yields 0).
/// Cost: O(#aggregates) per element, no buffering.
class AggregatingWindowFunction : public WindowFunction {
 public:
  AggregatingWindowFunction(std::vector<ResolvedAggregate> aggregates, bool emit_watermark);

  std::unique_ptr<WindowState> CreateState() const override;
  void Process(const Context& ctx, const WindowState& state, std::vector<Row>& out) const override;

  const std::vector<ResolvedAggregate>& aggregates() const { return aggregates_; }

 private:
  std::vector<ResolvedAggregate> aggregates_;
  bool emit_watermark_;
  mutable uint64_t arrivals_ = 0;  // elements added so far (orders first / last)
};

}  // namespace tidemark
