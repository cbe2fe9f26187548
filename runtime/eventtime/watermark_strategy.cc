#include "runtime/eventtime/watermark_strategy.h"

#include <utility>

#include "runtime/core/errors.h"
#include "runtime/eventtime/bounded_out_of_orderness_watermarks.h"
#include "runtime/eventtime/no_watermarks_generator.h"
#include "runtime/eventtime/watermarks_with_idleness.h"

namespace tidemark {

TimestampAssigner RecordTimestampAssigner() {
  return [](const StreamRecord& record) -> std::optional<Timestamp> {
    if (!record.has_timestamp) {
      return std::nullopt;
    }
    return record.timestamp;
  };
}

WatermarkStrategy::WatermarkStrategy(TimestampAssigner assigner,
                                     WatermarkGeneratorFactory generator_factory)
    : assigner_(std::move(assigner)), generator_factory_(std::move(generator_factory)) {
  TM_CHECK(static_cast<bool>(assigner_), "WatermarkStrategy needs a timestamp assigner");
  TM_CHECK(static_cast<bool>(generator_factory_), "WatermarkStrategy needs a generator factory");
}

WatermarkStrategy WatermarkStrategy::ForBoundedOutOfOrderness(
    std::chrono::milliseconds max_out_of_orderness, TimestampAssigner assigner) {
  // Validate now so that a bad bound fails when the job is compiled, not in the first subtask.
  BoundedOutOfOrdernessWatermarks probe(max_out_of_orderness);
  (void)probe;
  return WatermarkStrategy(std::move(assigner), [max_out_of_orderness] {
    return std::make_unique<BoundedOutOfOrdernessWatermarks>(max_out_of_orderness);
  });
}

WatermarkStrategy WatermarkStrategy::ForMonotonousTimestamps(TimestampAssigner assigner) {
  return WatermarkStrategy(std::move(assigner),
                           [] { return std::make_unique<AscendingTimestampsWatermarks>(); });
}

WatermarkStrategy WatermarkStrategy::NoWatermarks(TimestampAssigner assigner) {
  return WatermarkStrategy(std::move(assigner),
                           [] { return std::make_unique<NoWatermarksGenerator>(); });
}

bool WatermarkStrategy::AssignTimestamp(const StreamRecord& record, Timestamp* ts) const {
  const std::optional<Timestamp> assigned = assigner_(record);
  if (!assigned) {
    return false;
  }
  *ts = *assigned;
  return true;
}

WatermarkStrategy WatermarkStrategy::WithIdleness(std::chrono::milliseconds timeout) const {
  if (timeout.count() <= 0) {
    throw InvalidArgument(
        fmt::format("idleness timeout must be greater than 0 ms, got {} ms", timeout.count()));
  }
  WatermarkStrategy copy = *this;
  copy.idle_timeout_ = timeout;
  return copy;
}

WatermarkStrategy WatermarkStrategy::WithIdleAdvance(IdleAdvanceParams params) const {
  if (params.after_ms <= 0 || params.lag_ms < 0) {
    throw InvalidArgument(fmt::format(
        "idle-advance must be greater than 0 ms with a non-negative lag, got {} ms and {} ms",
        params.after_ms, params.lag_ms));
  }
  WatermarkStrategy copy = *this;
  copy.idle_advance_ = params;
  return copy;
}

WatermarkStrategy WatermarkStrategy::WithAlignment(WatermarkAlignmentParams params) const {
  if (params.group.empty()) {
    throw InvalidArgument("watermark alignment needs a group name");
  }
  if (params.max_drift_ms < 0) {
    throw InvalidArgument(fmt::format(
        "watermark alignment max drift must not be negative, got {} ms", params.max_drift_ms));
  }
  if (params.update_interval_ms <= 0) {
    throw InvalidArgument(
        fmt::format("watermark alignment update interval must be greater than 0 ms, got {} ms",
                    params.update_interval_ms));
  }
  WatermarkStrategy copy = *this;
  copy.alignment_ = std::move(params);
  return copy;
}

std::unique_ptr<WatermarkGenerator> WatermarkStrategy::CreateWatermarkGenerator(
    const RelativeClock* idleness_clock) const {
  std::unique_ptr<WatermarkGenerator> generator = generator_factory_();
  TM_CHECK(generator != nullptr, "generator factory returned null");
  if (idle_timeout_) {
    TM_CHECK(idleness_clock != nullptr, "a strategy with idleness needs an idleness clock");
    generator = std::make_unique<WatermarksWithIdleness>(std::move(generator), *idle_timeout_,
                                                         *idleness_clock);
  }
  return generator;
}

}  // namespace tidemark
