#pragma once

// The watermark-generator, timestamp-assigner and watermark-output vocabulary of the acceptance
// cases (README.md "Config vocabulary"), shared by the event-time, source and alignment handlers.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runtime/eventtime/relative_clock.h"
#include "runtime/eventtime/watermark_generator.h"
#include "runtime/eventtime/watermark_output.h"
#include "runtime/eventtime/watermark_strategy.h"
#include "tests/scenarios/scenario_runner.h"

namespace tidemark::testing {

/// Builds the generator named `name` (a `generator` value of a case config):
/// `bounded_out_of_orderness` (config `max_out_of_orderness`), `ascending_timestamps`,
/// `no_watermarks`, `never`, `periodic_last_minus_one`, `periodic_last_timestamp`, `on_event`,
/// `punctuated_every_event`, `punctuated_odd_timestamps_only`, `punctuated_on_flag` (record
/// `[flag, ts]`), `emit_on_new_max_and_periodic_max`, and `with_idleness(<inner>)` (config
/// `idle_timeout`, driven by `idleness_clock`, which must then be non-null and outlive the
/// generator). Throws CaseFormatError for an unknown name; tidemark::InvalidArgument for bad
/// parameters (as the real constructors do).
std::unique_ptr<WatermarkGenerator> MakeCaseGenerator(const std::string& name, const Json& config,
                                                      const RelativeClock* idleness_clock);

/// The `timestamp_assigner` vocabulary: `value` / `record_value` (timestamp = the value, which must
/// be one int64 cell), `tuple_field1` (timestamp = value[1]), `record_timestamp` (keep the
/// record's own). A value that is not an int64 yields no timestamp. Throws CaseFormatError for an
/// unknown name.
TimestampAssigner MakeCaseTimestampAssigner(const std::string& name);

/// The `testing_output` / `recording_output` of generator and multiplexer cases: tracks the last
/// watermark, the idle flag (set by MarkIdle, cleared by a watermark or MarkActive) and counts
/// every call. Checks the keys `last_watermark`, `idle`, `watermark_calls`, `idle_calls`,
/// `active_calls` of a checkpoint.
class TestingWatermarkOutput : public WatermarkOutput {
 public:
  void EmitWatermark(Watermark watermark) override;
  void MarkIdle() override;
  void MarkActive() override;

  std::optional<Timestamp> last_watermark() const { return last_watermark_; }
  bool idle() const { return idle_; }

  /// Takes and checks the keys above that `checkpoint` has.
  std::optional<std::string> Check(Checkpoint& checkpoint) const;

 private:
  std::optional<Timestamp> last_watermark_;
  bool idle_ = false;
  int64_t watermark_calls_ = 0;
  int64_t idle_calls_ = 0;
  int64_t active_calls_ = 0;
};

}  // namespace tidemark::testing
