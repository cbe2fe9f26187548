// Handler for the interval_join area (IntervalJoinOperator). See scenario_runner.h.

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "operators/interval_join_operator.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/scenarios/scenario_runner.h"

namespace tidemark::testing {

namespace {

// A tuple row rendered as the JSON text ParseCaseValue gives a nested array.
std::string TupleText(const Row& row) {
  Json j = Json::array();
  for (const Value& v : row.ToValues()) {
    j.push_back(Json::parse(ValueToJson(v)));
  }
  return j.dump();
}

CaseResult RunIntervalJoin(const Json& c) {
  const Json& config = c.at("config");
  if (config.value("operator", std::string()) != "interval_join") {
    return CaseResult::Skipped("unknown interval_join config");
  }
  IntervalJoinOperator::Options options;
  options.lower_bound_ms = ParseInt64(config.at("lower_bound"));
  options.upper_bound_ms = ParseInt64(config.at("upper_bound"));
  options.lower_inclusive = config.value("lower_inclusive", true);
  options.upper_inclusive = config.value("upper_inclusive", true);
  if (config.value("left_late_output", false)) {
    options.left_late_output_tag = "left_late";
  }
  if (config.value("right_late_output", false)) {
    options.right_late_output_tag = "right_late";
  }
  // "key": "constant 'key'": every element has the same key (empty key slots).
  auto join = [](const Row& l, const Row& r, Timestamp, Timestamp, std::vector<Row>& out) {
    out.push_back(Row{TupleText(l), TupleText(r)});
  };

  ManualProcessingTimeService clock;
  RecordingOutput out;
  auto op = std::make_unique<IntervalJoinOperator>(options, join);
  OperatorContext ctx;
  ctx.name = "interval-join";
  ctx.output = &out;
  ctx.processing_time = &clock;
  op->Open(ctx);
  OutputsChecker outputs(ParseExpectMode(c));
  const bool keep_output = c.value("restore_keeps_output", false);

  auto step_fn = [&](const Json& step, size_t) -> StepOutcome {
    const std::string o = step.at("op");
    const int input = static_cast<int>(Int64Or(step, "input", 1)) - 1;
    if (o == "record") {
      StreamRecord r(ParseCaseRow(step.at("value")));
      if (std::optional<int64_t> ts = RecordTimestamp(step)) {
        r.SetTimestamp(*ts);
      }
      op->ProcessElement(r, input);
    } else if (o == "watermark") {
      op->ProcessWatermark(Watermark{ParseInt64(step.at("ts"))}, input);
    } else if (o == "snapshot_restore") {
      if (!keep_output) {
        out.Clear();
        outputs.Reset();
      }
    } else {
      throw CaseFormatError("unsupported interval_join op " + o);
    }
    return {};
  };
  auto check_fn = [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {
    if (auto diff = outputs.Check(cp, out)) {
      return diff;
    }
    if (auto diff = CheckNoLateRecords(cp, out.elements())) {
      return diff;
    }
    if (auto diff = CheckWatermarkKeys(cp, out.Watermarks())) {
      return diff;
    }
    if (cp.Has("state")) {
      for (const auto& [name, expected] : cp.Take("state").items()) {
        int side = 0;
        if (name == "left_buffer") {
          side = 0;
        } else if (name == "right_buffer") {
          side = 1;
        } else {
          throw CaseFormatError("unknown interval_join state " + name);
        }
        Json actual = Json::array();
        for (Timestamp ts : op->BufferedTimestamps(Key{}, side)) {
          actual.push_back(ts);
        }
        if (!CaseJsonEquals(expected, actual)) {
          return fmt::format("{}: expected {}, got {}", name, expected.dump(), actual.dump());
        }
      }
    }
    return std::nullopt;
  };
  return RunSteps(c, step_fn, check_fn);
}

}  // namespace

void RegisterIntervalJoinArea(ScenarioRegistry& registry) {
  registry.Register("interval_join", RunIntervalJoin);
}

}  // namespace tidemark::testing
