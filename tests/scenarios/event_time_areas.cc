// Handlers for the event-time core areas: bounded_out_of_orderness, watermarks_with_idleness,
// output_multiplexer, status_watermark_valve, timestamps_operator.

#include <chrono>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "operators/timestamps_and_watermarks_operator.h"
#include "runtime/eventtime/relative_clock.h"
#include "runtime/eventtime/watermark_output_multiplexer.h"
#include "runtime/eventtime/watermarks_with_idleness.h"
#include "runtime/task/status_watermark_valve.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/scenarios/case_generators.h"
#include "tests/scenarios/scenario_runner.h"

namespace tidemark::testing {
namespace {

// The idleness timer treats relative time 0 as "no countdown running", so case clocks start
// elsewhere unless the case says otherwise (`clock_start_nanos`).
constexpr int64_t kDefaultClockStartNanos = 1'000'000'000;

std::string Op(const Json& step) {
  return step.at("op").get<std::string>();
}

[[noreturn]] void UnsupportedOp(const Json& step) {
  throw CaseFormatError("unsupported op " + step.dump());
}

WatermarkStatus ParseStatus(const Json& j) {
  const std::string s = j.get<std::string>();
  if (s == "idle") {
    return WatermarkStatus::kIdle;
  }
  if (s == "active") {
    return WatermarkStatus::kActive;
  }
  throw CaseFormatError("unknown status " + s);
}

bool HasOp(const Json& test_case, const std::string& op) {
  for (const Json& step : test_case.at("steps")) {
    if (step.value("op", std::string()) == op) {
      return true;
    }
  }
  return false;
}

// bounded_out_of_orderness, watermarks_with_idleness: a generator (or a bare IdlenessTimer)
// writing into a TestingWatermarkOutput, with a manual relative clock.
CaseResult RunGeneratorCase(const Json& c) {
  const Json& config = c.at("config");
  ManualRelativeClock clock(Int64Or(config, "clock_start_nanos", kDefaultClockStartNanos));
  TestingWatermarkOutput output;
  std::unique_ptr<WatermarkGenerator> generator;
  std::unique_ptr<IdlenessTimer> timer;
  const bool is_timer = config.value("component", std::string()) == "idleness_timer";

  auto construct = [&] {
    if (is_timer) {
      timer = std::make_unique<IdlenessTimer>(
          clock, std::chrono::milliseconds(ParseInt64(config.at("idle_timeout"))));
    } else {
      generator = MakeCaseGenerator(config.at("generator").get<std::string>(), config, &clock);
    }
  };
  if (!HasOp(c, "construct")) {
    construct();
  }
  auto need_generator = [&]() -> WatermarkGenerator& {
    if (!generator) {
      throw CaseFormatError("the step needs a generator");
    }
    return *generator;
  };
  auto need_timer = [&]() -> IdlenessTimer& {
    if (!timer) {
      throw CaseFormatError("the step needs an idleness timer");
    }
    return *timer;
  };

  return RunSteps(
      c,
      [&](const Json& step, size_t) -> StepOutcome {
        const std::string op = Op(step);
        if (op == "construct") {
          construct();
        } else if (op == "event") {
          StreamRecord record(step.contains("value") ? ParseCaseRow(step.at("value")) : Row{});
          const Timestamp ts = ParseInt64(step.at("ts"));
          record.SetTimestamp(ts);
          need_generator().OnEvent(record, ts, output);
        } else if (op == "periodic_emit") {
          need_generator().OnPeriodicEmit(output);
        } else if (op == "advance_clock") {
          clock.AdvanceMillis(ParseInt64(step.at("by")));
        } else if (op == "timer_check_idle") {
          return StepOutcome{Json(need_timer().CheckIfIdle())};
        } else if (op == "timer_activity") {
          need_timer().Activity();
        } else {
          UnsupportedOp(step);
        }
        return {};
      },
      [&](Checkpoint& cp, const StepOutcome&) { return output.Check(cp); });
}

// output_multiplexer: a WatermarkOutputMultiplexer over a TestingWatermarkOutput.
CaseResult RunMultiplexerCase(const Json& c) {
  const std::string underlying = c.at("config").value("underlying", std::string("testing_output"));
  if (underlying != "testing_output" && underlying != "recording_output") {
    throw CaseFormatError("unknown underlying output " + underlying);
  }
  TestingWatermarkOutput output;  // tracks both the state and the call counts
  WatermarkOutputMultiplexer mux(output);

  auto handle = [&](const Json& step) -> WatermarkOutput& {
    const std::string id = step.at("output").get<std::string>();
    const std::string mode = step.value("mode", std::string("immediate"));
    if (mode == "immediate") {
      return mux.GetImmediateOutput(id);
    }
    if (mode == "deferred") {
      return mux.GetDeferredOutput(id);
    }
    throw CaseFormatError("unknown mode " + mode);
  };

  return RunSteps(
      c,
      [&](const Json& step, size_t) -> StepOutcome {
        const std::string op = Op(step);
        if (op == "register") {
          mux.RegisterNewOutput(step.at("output").get<std::string>());
        } else if (op == "unregister") {
          return StepOutcome{Json(mux.UnregisterOutput(step.at("output").get<std::string>()))};
        } else if (op == "emit") {
          handle(step).EmitWatermark(Watermark{ParseInt64(step.at("ts"))});
        } else if (op == "mark_idle") {
          handle(step).MarkIdle();
        } else if (op == "mark_active") {
          handle(step).MarkActive();
        } else if (op == "periodic_emit") {
          mux.OnPeriodicEmit();
        } else {
          UnsupportedOp(step);
        }
        return {};
      },
      [&](Checkpoint& cp, const StepOutcome&) { return output.Check(cp); });
}

class RecordingValveOutput final : public ValveOutput {
 public:
  void EmitWatermark(Watermark watermark) override {
    elements.push_back(OutputElement::OfWatermark(watermark.timestamp));
  }
  void EmitWatermarkStatus(WatermarkStatus status) override {
    elements.push_back(OutputElement::OfStatus(status));
  }
  std::vector<OutputElement> elements;
};

// status_watermark_valve: a StatusWatermarkValve with Flink's default behaviour.
CaseResult RunValveCase(const Json& c) {
  const Json& config = c.at("config");
  const int64_t n = ParseInt64(config.at("num_channels"));
  if (n < 1) {
    throw CaseFormatError("num_channels must be >= 1");
  }
  StatusWatermarkValve valve(static_cast<size_t>(n));
  RecordingValveOutput output;
  OutputsChecker outputs(ParseExpectMode(c));

  auto channel_of = [&](const Json& j) -> size_t {
    const int64_t ch = ParseInt64(j.at("channel"));
    if (ch < 0 || ch >= n) {
      throw CaseFormatError(fmt::format("channel {} out of range", ch));
    }
    return static_cast<size_t>(ch);
  };

  return RunSteps(
      c,
      [&](const Json& step, size_t) -> StepOutcome {
        const std::string op = Op(step);
        if (op == "watermark") {
          valve.InputWatermark(Watermark{ParseInt64(step.at("ts"))}, channel_of(step), output);
        } else if (op == "status") {
          valve.InputWatermarkStatus(ParseStatus(step.at("status")), channel_of(step), output);
        } else if (op == "end_of_input") {  // tidemark extension (design.md), not in Flink's cases
          valve.MarkChannelFinished(channel_of(step), output);
        } else {
          UnsupportedOp(step);
        }
        return {};
      },
      [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {
        if (auto diff = outputs.CheckElements(cp, output.elements)) {
          return diff;
        }
        std::vector<Timestamp> watermarks;
        for (const OutputElement& e : output.elements) {
          if (e.kind == OutputElement::Kind::kWatermark) {
            watermarks.push_back(e.watermark);
          }
        }
        if (auto diff = CheckWatermarkKeys(cp, watermarks)) {
          return diff;
        }
        if (cp.Has("state")) {
          const Json& state = cp.Take("state");
          const size_t ch = channel_of(state);
          if (state.contains("watermark") &&
              ParseInt64(state.at("watermark")) != valve.channel_watermark(ch)) {
            return fmt::format("channel {} watermark: expected {}, got {}", ch,
                               FormatInt64(ParseInt64(state.at("watermark"))),
                               FormatInt64(valve.channel_watermark(ch)));
          }
          if (state.contains("aligned") &&
              state.at("aligned").get<bool>() != valve.channel_aligned(ch)) {
            return fmt::format("channel {} aligned: expected {}, got {}", ch,
                               state.at("aligned").get<bool>(), valve.channel_aligned(ch));
          }
          if (state.contains("status") &&
              ParseStatus(state.at("status")) != valve.channel_status(ch)) {
            return fmt::format("channel {} status: expected {}, got {}", ch,
                               state.at("status").get<std::string>(),
                               ToString(valve.channel_status(ch)));
          }
          for (const auto& [key, value] : state.items()) {
            if (key != "channel" && key != "watermark" && key != "aligned" && key != "status") {
              throw CaseFormatError("unsupported valve state key " + key);
            }
          }
        }
        return std::nullopt;
      });
}

bool ExpectsError(const Json& test_case, const std::string& kind) {
  for (const Json& cp : test_case.at("expect")) {
    if (cp.value("error", std::string()) == kind) {
      return true;
    }
  }
  return false;
}

// timestamps_operator: a TimestampsAndWatermarksOperator on a manual processing-time service.
CaseResult RunTimestampsOperatorCase(const Json& c) {
  const Json& config = c.at("config");
  std::string generator_name = config.at("generator").get<std::string>();
  std::optional<std::chrono::milliseconds> idle_timeout;
  const std::string kIdle = "with_idleness(";
  if (generator_name.rfind(kIdle, 0) == 0 && generator_name.back() == ')') {
    // Idleness is the operator's job here (on processing time), as WithIdleness in a job.
    generator_name = generator_name.substr(kIdle.size(), generator_name.size() - kIdle.size() - 1);
    idle_timeout = std::chrono::milliseconds(ParseInt64(config.at("idle_timeout")));
  }
  WatermarkStrategy strategy(
      MakeCaseTimestampAssigner(
          config.value("timestamp_assigner", std::string("record_timestamp"))),
      [generator_name, config] { return MakeCaseGenerator(generator_name, config, nullptr); });
  if (idle_timeout) {
    strategy = strategy.WithIdleness(*idle_timeout);
  }

  TimestampsAndWatermarksOptions options;
  const std::string mode = config.value("mode", std::string("streaming"));
  if (mode != "streaming" && mode != "batch") {
    throw CaseFormatError("unknown mode " + mode);
  }
  options.emit_progressive_watermarks = mode == "streaming";
  const std::string missing = config.value("on_missing_timestamp", std::string());
  options.on_missing_timestamp = missing == "fail" || ExpectsError(c, "no_timestamp")
                                     ? MissingTimestampPolicy::kFail
                                     : MissingTimestampPolicy::kSideOutput;

  ManualProcessingTimeService processing_time(Int64Or(config, "start_processing_time", 0));
  RecordingOutput output;
  TimestampsAndWatermarksOperator op(std::move(strategy), options);
  OperatorContext context;
  context.name = "timestamps";
  context.output = &output;
  context.processing_time = &processing_time;
  context.auto_watermark_interval_ms = Int64Or(config, "auto_watermark_interval", 200);
  op.Open(context);
  OutputsChecker outputs(ParseExpectMode(c));

  CaseResult result = RunSteps(
      c,
      [&](const Json& step, size_t) -> StepOutcome {
        const std::string op_name = Op(step);
        if (op_name == "record") {
          StreamRecord record(ParseCaseRow(step.at("value")));
          if (step.contains("ts")) {
            if (std::optional<int64_t> ts = ParseOptionalInt64(step.at("ts"))) {
              record.SetTimestamp(*ts);
            }
          }
          op.ProcessElement(record, 0);
        } else if (op_name == "watermark") {
          op.ProcessWatermark(Watermark{ParseInt64(step.at("ts"))}, 0);
        } else if (op_name == "status") {
          op.ProcessWatermarkStatus(ParseStatus(step.at("status")), 0);
        } else if (op_name == "advance_processing_time") {
          if (step.contains("to")) {
            processing_time.AdvanceTo(ParseInt64(step.at("to")));
          } else {
            processing_time.AdvanceBy(ParseInt64(step.at("by")));
          }
        } else if (op_name == "end_of_input" || op_name == "finish") {
          op.Finish();
        } else {
          UnsupportedOp(step);
        }
        return {};
      },
      [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {
        if (auto diff = outputs.Check(cp, output)) {
          return diff;
        }
        return CheckWatermarkKeys(cp, output.Watermarks());
      });
  op.Close();
  return result;
}

}  // namespace

void RegisterEventTimeAreas(ScenarioRegistry& registry) {
  registry.Register("bounded_out_of_orderness", RunGeneratorCase);
  registry.Register("watermarks_with_idleness", RunGeneratorCase);
  registry.Register("output_multiplexer", RunMultiplexerCase);
  registry.Register("status_watermark_valve", RunValveCase);
  registry.Register("timestamps_operator", RunTimestampsOperatorCase);
}

}  // namespace tidemark::testing
