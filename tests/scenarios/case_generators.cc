#include "tests/scenarios/case_generators.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "runtime/eventtime/bounded_out_of_orderness_watermarks.h"
#include "runtime/eventtime/no_watermarks_generator.h"
#include "runtime/eventtime/punctuated_watermarks.h"
#include "runtime/eventtime/watermarks_with_idleness.h"

namespace tidemark::testing {
namespace {

// On a periodic emit: the last (not the largest) event timestamp - 1, MIN before any event.
class PeriodicLastMinusOne final : public WatermarkGenerator {
 public:
  void OnEvent(const StreamRecord&, Timestamp ts, WatermarkOutput&) override { last_ = ts; }
  void OnPeriodicEmit(WatermarkOutput& output) override {
    output.EmitWatermark(Watermark{last_ ? SaturatingAdd(*last_, -1) : kMinTimestamp});
  }
  bool InspectsRecordOnEvent() const override { return false; }

 private:
  std::optional<Timestamp> last_;
};

// On a periodic emit: the last event timestamp, if there was one.
class PeriodicLastTimestamp final : public WatermarkGenerator {
 public:
  void OnEvent(const StreamRecord&, Timestamp ts, WatermarkOutput&) override { last_ = ts; }
  void OnPeriodicEmit(WatermarkOutput& output) override {
    if (last_) {
      output.EmitWatermark(Watermark{*last_});
    }
  }
  bool InspectsRecordOnEvent() const override { return false; }

 private:
  std::optional<Timestamp> last_;
};

// On event: emits a new maximum at once; on a periodic emit: the maximum so far, if any.
class EmitOnNewMaxAndPeriodicMax final : public WatermarkGenerator {
 public:
  void OnEvent(const StreamRecord&, Timestamp ts, WatermarkOutput& output) override {
    if (!max_ || ts > *max_) {
      max_ = ts;
      output.EmitWatermark(Watermark{ts});
    }
  }
  void OnPeriodicEmit(WatermarkOutput& output) override {
    if (max_) {
      output.EmitWatermark(Watermark{*max_});
    }
  }
  bool InspectsRecordOnEvent() const override { return false; }

 private:
  std::optional<Timestamp> max_;
};

std::chrono::milliseconds Millis(const Json& config, const char* key) {
  if (!config.contains(key)) {
    throw CaseFormatError(fmt::format("config needs '{}'", key));
  }
  return std::chrono::milliseconds(ParseInt64(config.at(key)));
}

}  // namespace

std::unique_ptr<WatermarkGenerator> MakeCaseGenerator(const std::string& name, const Json& config,
                                                      const RelativeClock* idleness_clock) {
  const std::string kIdle = "with_idleness(";
  if (name.rfind(kIdle, 0) == 0 && name.back() == ')') {
    const std::string inner_name = name.substr(kIdle.size(), name.size() - kIdle.size() - 1);
    if (idleness_clock == nullptr) {
      throw CaseFormatError("with_idleness needs a clock");
    }
    const std::chrono::milliseconds timeout = Millis(config, "idle_timeout");
    return std::make_unique<WatermarksWithIdleness>(
        MakeCaseGenerator(inner_name, config, idleness_clock), timeout, *idleness_clock);
  }
  if (name == "bounded_out_of_orderness") {
    return std::make_unique<BoundedOutOfOrdernessWatermarks>(
        Millis(config, "max_out_of_orderness"));
  }
  if (name == "ascending_timestamps") {
    return std::make_unique<AscendingTimestampsWatermarks>();
  }
  if (name == "no_watermarks" || name == "never") {
    return std::make_unique<NoWatermarksGenerator>();
  }
  if (name == "periodic_last_minus_one") {
    return std::make_unique<PeriodicLastMinusOne>();
  }
  if (name == "periodic_last_timestamp") {
    return std::make_unique<PeriodicLastTimestamp>();
  }
  if (name == "emit_on_new_max_and_periodic_max") {
    return std::make_unique<EmitOnNewMaxAndPeriodicMax>();
  }
  if (name == "on_event" || name == "punctuated_every_event") {
    return std::make_unique<PunctuatedWatermarks>(
        [](const StreamRecord&, Timestamp ts) -> std::optional<Timestamp> { return ts; });
  }
  if (name == "punctuated_odd_timestamps_only") {
    return std::make_unique<PunctuatedWatermarks>(
        [](const StreamRecord&, Timestamp ts) -> std::optional<Timestamp> {
          if (ts % 2 != 0) {
            return ts;
          }
          return std::nullopt;
        });
  }
  if (name == "punctuated_on_flag") {
    return std::make_unique<PunctuatedWatermarks>(
        [](const StreamRecord& record, Timestamp ts) -> std::optional<Timestamp> {
          if (!record.row.empty()) {
            if (const Value flag = record.row.Get(0);
                std::get_if<bool>(&flag) != nullptr && std::get<bool>(flag)) {
              return ts;
            }
          }
          return std::nullopt;
        });
  }
  throw CaseFormatError("unknown generator " + name);
}

TimestampAssigner MakeCaseTimestampAssigner(const std::string& name) {
  if (name == "value" || name == "record_value") {
    return [](const StreamRecord& record) -> std::optional<Timestamp> {
      if (record.row.size() != 1) {
        return std::nullopt;
      }
      if (const Value v = record.row.Get(0); std::holds_alternative<int64_t>(v)) {
        return std::get<int64_t>(v);
      }
      return std::nullopt;
    };
  }
  if (name == "tuple_field1") {
    return [](const StreamRecord& record) -> std::optional<Timestamp> {
      if (record.row.size() < 2) {
        return std::nullopt;
      }
      if (const Value v = record.row.Get(1); std::holds_alternative<int64_t>(v)) {
        return std::get<int64_t>(v);
      }
      return std::nullopt;
    };
  }
  if (name == "record_timestamp") {
    return RecordTimestampAssigner();
  }
  throw CaseFormatError("unknown timestamp_assigner " + name);
}

void TestingWatermarkOutput::EmitWatermark(Watermark watermark) {
  ++watermark_calls_;
  last_watermark_ = watermark.timestamp;
  idle_ = false;
}

void TestingWatermarkOutput::MarkIdle() {
  ++idle_calls_;
  idle_ = true;
}

void TestingWatermarkOutput::MarkActive() {
  ++active_calls_;
  idle_ = false;
}

std::optional<std::string> TestingWatermarkOutput::Check(Checkpoint& checkpoint) const {
  if (checkpoint.Has("last_watermark")) {
    const std::optional<int64_t> expected = ParseOptionalInt64(checkpoint.Take("last_watermark"));
    if (expected != last_watermark_) {
      return fmt::format("last_watermark: expected {}, got {}",
                         expected ? FormatInt64(*expected) : "null",
                         last_watermark_ ? FormatInt64(*last_watermark_) : "null");
    }
  }
  if (checkpoint.Has("idle")) {
    const bool expected = checkpoint.Take("idle").get<bool>();
    if (expected != idle_) {
      return fmt::format("idle: expected {}, got {}", expected, idle_);
    }
  }
  const std::pair<const char*, int64_t> counters[] = {{"watermark_calls", watermark_calls_},
                                                      {"idle_calls", idle_calls_},
                                                      {"active_calls", active_calls_}};
  for (const auto& [key, actual] : counters) {
    if (checkpoint.Has(key)) {
      const int64_t expected = ParseInt64(checkpoint.Take(key));
      if (expected != actual) {
        return fmt::format("{}: expected {}, got {}", key, expected, actual);
      }
    }
  }
  return std::nullopt;
}

}  // namespace tidemark::testing
