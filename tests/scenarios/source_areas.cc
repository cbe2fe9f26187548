// Handlers for the source areas: source_event_time and alignment. They drive the real
// SourceOperator (per-split generators, multiplexer, idleness sides, WatermarkToDataOutput,
// alignment), the SourceCoordinator and the WatermarkAggregator with a scripted case reader.
//
// The case reader mirrors Flink's test readers:
// - `collect` / `reader_action` / `reader_emit`: one poll in which the reader does exactly these
//   actions (a record's value and its source timestamp are both `ts`);
// - `poll` without a script: the reader emits the next record of the first unpaused split that
//   has one (Flink's MockSourceReader). In the alignment area those records go through the main
//   output, as the MockSourceReader of Flink's SourceOperatorAlignmentTest does; in
//   source_event_time through their split's output (SourceOperatorWatermarksTest). With nothing
//   to read it returns NOTHING_AVAILABLE, after marking the main output idle when the case sets
//   `reader_marks_idle_when_empty`. It ends input only after an `end_of_input` step.

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "runtime/eventtime/source_coordinator.h"
#include "runtime/eventtime/watermark_to_data_output.h"
#include "runtime/time/manual_processing_time_service.h"
#include "sources/source_operator.h"
#include "tests/scenarios/case_generators.h"
#include "tests/scenarios/scenario_runner.h"

namespace tidemark::testing {
namespace {

std::string Op(const Json& step) {
  return step.at("op").get<std::string>();
}

[[noreturn]] void UnsupportedOp(const Json& step) {
  throw CaseFormatError("unsupported op " + step.dump());
}

const char* StatusName(InputStatus s) {
  switch (s) {
    case InputStatus::kMoreAvailable:
      return "MORE_AVAILABLE";
    case InputStatus::kNothingAvailable:
      return "NOTHING_AVAILABLE";
    case InputStatus::kEndOfInput:
      return "END_OF_INPUT";
  }
  return "?";
}

const Schema& CaseSchema() {
  static const Schema schema({{"value", FieldType::kInt64}});
  return schema;
}

struct SplitSpec {
  std::string id;
  std::vector<Timestamp> records;
};

/// `"id"` or `{"split": id, "records": [...]}`.
SplitSpec ParseSplit(const Json& j) {
  if (j.is_string()) {
    return SplitSpec{j.get<std::string>(), {}};
  }
  SplitSpec s{j.at("split").get<std::string>(), {}};
  if (j.contains("records")) {
    for (const Json& r : j.at("records")) {
      s.records.push_back(ParseInt64(r));
    }
  }
  return s;
}

class CaseSplit : public SourceSplit {
 public:
  explicit CaseSplit(SplitSpec spec) : spec_(std::move(spec)) {}
  std::string SplitId() const override { return spec_.id; }
  const SplitSpec& spec() const { return spec_; }

 private:
  SplitSpec spec_;
};

/// One reader action of a scripted poll.
struct ReaderAction {
  enum class Kind { kCollect, kCreateSplitOutput, kReleaseSplitOutput };
  Kind kind = Kind::kCollect;
  std::optional<std::string> split;  ///< nullopt: the main output
  Timestamp ts = 0;
};

/// What the handler and the reader share (the reader is created inside SourceOperator::Open).
struct ReaderScript {
  bool records_via_split_outputs = true;
  bool marks_idle_when_empty = false;
  bool end_of_input = false;
  std::vector<ReaderAction> next_poll;  ///< executed by the next poll instead of reading splits
  std::vector<std::string> split_order;
  std::map<std::string, std::deque<Timestamp>> records;
  std::set<std::string> paused;
};

class CaseReader : public SourceReader {
 public:
  explicit CaseReader(ReaderScript& script) : script_(script) {}

  void Start(SourceReaderContext& /*context*/) override {}
  void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) override {
    for (auto& s : splits) {
      const auto& spec = dynamic_cast<CaseSplit&>(*s).spec();
      script_.split_order.push_back(spec.id);
      auto& q = script_.records[spec.id];
      q.insert(q.end(), spec.records.begin(), spec.records.end());
    }
  }
  void NotifyNoMoreSplits() override {}  // like a reader waiting for more splits
  void PauseOrResumeSplits(const std::vector<std::string>& pause,
                           const std::vector<std::string>& resume) override {
    script_.paused.insert(pause.begin(), pause.end());
    for (const auto& id : resume) {
      script_.paused.erase(id);
    }
  }

  InputStatus PollNext(ReaderOutput& output) override {
    if (!script_.next_poll.empty()) {
      std::vector<ReaderAction> actions;
      actions.swap(script_.next_poll);
      for (const ReaderAction& a : actions) {
        Run(output, a);
      }
      return InputStatus::kMoreAvailable;
    }
    for (const std::string& id : script_.split_order) {
      auto& q = script_.records[id];
      if (script_.paused.count(id) > 0 || q.empty()) {
        continue;
      }
      const Timestamp ts = q.front();
      q.pop_front();
      Run(output, ReaderAction{ReaderAction::Kind::kCollect,
                               script_.records_via_split_outputs ? std::optional<std::string>(id)
                                                                 : std::nullopt,
                               ts});
      return InputStatus::kMoreAvailable;
    }
    if (script_.end_of_input) {
      return InputStatus::kEndOfInput;
    }
    if (script_.marks_idle_when_empty) {
      output.MarkIdle();
    }
    return InputStatus::kNothingAvailable;
  }

 private:
  void Run(ReaderOutput& output, const ReaderAction& a) {
    switch (a.kind) {
      case ReaderAction::Kind::kCollect: {
        SourceOutput& out = a.split ? output.CreateOutputForSplit(*a.split) : output;
        out.Collect(Row{Value{a.ts}}, a.ts);
        break;
      }
      case ReaderAction::Kind::kCreateSplitOutput:
        output.CreateOutputForSplit(*a.split);
        break;
      case ReaderAction::Kind::kReleaseSplitOutput:
        output.ReleaseOutputForSplit(*a.split);
        break;
    }
  }

  ReaderScript& script_;
};

class CaseSource : public Source {
 public:
  CaseSource(ReaderScript& script, std::vector<SplitSpec> restored)
      : script_(script), restored_(std::move(restored)) {}
  const Schema& schema() const override { return CaseSchema(); }
  std::vector<std::unique_ptr<SourceSplit>> CreateSplits() const override {
    std::vector<std::unique_ptr<SourceSplit>> out;
    for (const SplitSpec& s : restored_) {
      out.push_back(std::make_unique<CaseSplit>(s));
    }
    return out;
  }
  std::unique_ptr<SourceReader> CreateReader(int /*subtask_index*/) const override {
    return std::make_unique<CaseReader>(script_);
  }

 private:
  ReaderScript& script_;
  std::vector<SplitSpec> restored_;
};

WatermarkAlignmentParams ParseAlignment(const Json& j) {
  WatermarkAlignmentParams p;
  p.group = j.at("group").get<std::string>();
  p.max_drift_ms = ParseInt64(j.at("max_allowed_drift"));
  p.update_interval_ms = Int64Or(j, "update_interval", 1000);
  return p;
}

// watermark_to_data_output: the adapter over a recording output.
CaseResult RunWatermarkToDataOutputCase(const Json& c) {
  RecordingOutput output;
  WatermarkToDataOutput adapter(output);
  OutputsChecker outputs(ParseExpectMode(c));
  return RunSteps(
      c,
      [&](const Json& step, size_t) -> StepOutcome {
        const std::string op = Op(step);
        if (op == "emit_watermark") {
          adapter.EmitWatermark(Watermark{ParseInt64(step.at("ts"))});
        } else if (op == "mark_idle") {
          adapter.MarkIdle();
        } else if (op == "mark_active") {
          adapter.MarkActive();
        } else {
          UnsupportedOp(step);
        }
        return {};
      },
      [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {
        if (auto d = outputs.Check(cp, output)) {
          return d;
        }
        return CheckWatermarkKeys(cp, output.Watermarks());
      });
}

// source_coordinator: SourceCoordinator with one registration per (coordinator, subtask),
// made at the subtask's first report (a subtask that never reports takes no part).
CaseResult RunCoordinatorCase(const Json& c) {
  const Json& config = c.at("config");
  std::map<std::string, WatermarkAlignmentParams> coordinators;
  if (config.contains("coordinators")) {
    for (const auto& [name, j] : config.at("coordinators").items()) {
      coordinators[name] = ParseAlignment(j);
    }
  } else {
    coordinators[""] = ParseAlignment(config.at("alignment"));
  }
  SourceCoordinator coordinator;
  std::map<std::pair<std::string, int>, int> ids;
  std::map<int, Timestamp> latest_event;  // subtask index -> last announced max watermark
  return RunSteps(
      c,
      [&](const Json& step, size_t) -> StepOutcome {
        if (Op(step) != "report_watermark") {
          UnsupportedOp(step);
        }
        const std::string name = step.value("coordinator", std::string());
        auto params = coordinators.find(name);
        if (params == coordinators.end()) {
          throw CaseFormatError("unknown coordinator " + name);
        }
        const int subtask = static_cast<int>(ParseInt64(step.at("subtask")));
        auto [it, inserted] = ids.emplace(std::make_pair(name, subtask), -1);
        if (inserted) {
          it->second = coordinator.RegisterSubtask(
              params->second,
              [&latest_event, subtask](Timestamp max) { latest_event[subtask] = max; });
        }
        coordinator.ReportWatermark(it->second, ParseInt64(step.at("ts")));
        return {};
      },
      [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {
        if (cp.Has("latest_alignment_event")) {
          for (const auto& [subtask, value] : cp.Take("latest_alignment_event").items()) {
            const int s = std::stoi(subtask);
            const Timestamp expected = ParseInt64(value);
            auto it = latest_event.find(s);
            if (it == latest_event.end()) {
              return fmt::format("subtask {} received no alignment event, expected {}", s,
                                 FormatInt64(expected));
            }
            if (it->second != expected) {
              return fmt::format("subtask {}: latest alignment event {}, expected {}", s,
                                 FormatInt64(it->second), FormatInt64(expected));
            }
          }
        }
        return std::nullopt;
      });
}

// watermark_aggregator: the coordinator's WatermarkAggregator.
CaseResult RunAggregatorCase(const Json& c) {
  WatermarkAggregator aggregator;
  return RunSteps(
      c,
      [&](const Json& step, size_t) -> StepOutcome {
        if (Op(step) != "aggregate") {
          UnsupportedOp(step);
        }
        const Timestamp v = aggregator.Aggregate(static_cast<int>(ParseInt64(step.at("key"))),
                                                 ParseInt64(step.at("ts")));
        return StepOutcome{Json(v)};
      },
      [&](Checkpoint&, const StepOutcome&) -> std::optional<std::string> { return std::nullopt; });
}

// A SourceOperator over the case reader, on a manual processing-time service.
CaseResult RunSourceOperatorCase(const Json& c) {
  const Json& config = c.at("config");
  std::string generator_name = config.at("generator").get<std::string>();
  std::optional<std::chrono::milliseconds> idle_timeout;
  const std::string kIdle = "with_idleness(";
  if (generator_name.rfind(kIdle, 0) == 0 && generator_name.back() == ')') {
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
  if (config.contains("alignment")) {
    strategy = strategy.WithAlignment(ParseAlignment(config.at("alignment")));
  }

  ReaderScript script;
  script.records_via_split_outputs = c.at("area").get<std::string>() != "alignment";
  script.marks_idle_when_empty = config.value("reader_marks_idle_when_empty", false);
  std::vector<SplitSpec> restored;
  if (config.contains("restored_splits")) {
    for (const Json& s : config.at("restored_splits")) {
      restored.push_back(ParseSplit(s));
    }
  }
  SourceOperatorOptions options;
  options.emit_progressive_watermarks = config.value("emit_progressive_watermarks", true);
  SourceOperator op(std::make_shared<CaseSource>(script, std::move(restored)), std::move(strategy),
                    options);
  ManualProcessingTimeService processing_time(Int64Or(config, "start_processing_time", 0));
  RecordingOutput output;
  OperatorContext context;
  context.name = "source";
  context.output = &output;
  context.processing_time = &processing_time;
  context.auto_watermark_interval_ms = Int64Or(config, "auto_watermark_interval", 200);
  std::vector<Timestamp> reports;
  op.SetWatermarkReporter([&reports](Timestamp w) { reports.push_back(w); });
  op.Open(context);
  OutputsChecker outputs(ParseExpectMode(c));
  bool wait_released = false;

  auto poll_with = [&](std::vector<ReaderAction> actions) -> StepOutcome {
    script.next_poll = std::move(actions);
    const InputStatus s = op.EmitNext();
    script.next_poll.clear();  // a waiting source did not poll its reader
    return StepOutcome{Json(StatusName(s))};
  };
  auto parse_action = [](const Json& a) {
    ReaderAction action;
    const std::string op_name = Op(a);
    if (op_name == "collect" || op_name == "reader_emit") {
      action.kind = ReaderAction::Kind::kCollect;
      if (a.contains("split") && !a.at("split").is_null()) {
        action.split = a.at("split").get<std::string>();
      }
      action.ts = ParseInt64(a.at("ts"));
    } else if (op_name == "create_split_output") {
      action.kind = ReaderAction::Kind::kCreateSplitOutput;
      action.split = a.at("split").get<std::string>();
    } else if (op_name == "release_split_output") {
      action.kind = ReaderAction::Kind::kReleaseSplitOutput;
      action.split = a.at("split").get<std::string>();
    } else {
      throw CaseFormatError("unsupported reader action " + a.dump());
    }
    return action;
  };

  CaseResult result = RunSteps(
      c,
      [&](const Json& step, size_t) -> StepOutcome {
        const std::string name = Op(step);
        if (name == "collect" || name == "create_split_output" || name == "release_split_output") {
          return poll_with({parse_action(step)});
        }
        if (name == "reader_emit") {
          const ReaderAction a = parse_action(step);
          if (a.split) {  // the scripted record is no longer pending in its split
            auto& q = script.records[*a.split];
            if (auto it = std::find(q.begin(), q.end(), a.ts); it != q.end()) {
              q.erase(it);
            }
          }
          return poll_with({a});
        }
        if (name == "reader_action") {
          std::vector<ReaderAction> actions;
          for (const Json& a : step.at("actions")) {
            actions.push_back(parse_action(a));
          }
          return poll_with(std::move(actions));
        }
        if (name == "poll") {
          return poll_with({});
        }
        if (name == "add_split" || name == "add_splits") {
          std::vector<std::unique_ptr<SourceSplit>> splits;
          if (name == "add_split") {
            splits.push_back(std::make_unique<CaseSplit>(ParseSplit(step)));
          } else {
            for (const Json& s : step.at("splits")) {
              splits.push_back(std::make_unique<CaseSplit>(ParseSplit(s)));
            }
          }
          op.AddSplits(std::move(splits));
          return {};
        }
        if (name == "advance_processing_time") {
          if (step.contains("to")) {
            processing_time.AdvanceTo(ParseInt64(step.at("to")));
          } else {
            processing_time.AdvanceBy(ParseInt64(step.at("by")));
          }
          return {};
        }
        if (name == "alignment_event") {
          op.HandleAlignmentEvent(ParseInt64(step.at("max_watermark")));
          return {};
        }
        if (name == "stop") {
          const std::string mode = step.value("mode", std::string("no_drain"));
          if (mode != "no_drain" && mode != "drain") {
            throw CaseFormatError("unknown stop mode " + mode);
          }
          const bool was_waiting = !op.IsAvailable();
          op.Stop(mode == "drain" ? SourceStopMode::kDrain : SourceStopMode::kNoDrain);
          wait_released = was_waiting && op.IsAvailable();
          return {};
        }
        if (name == "end_of_input") {
          script.end_of_input = true;
          for (int i = 0; i < 10000; ++i) {
            if (op.EmitNext() == InputStatus::kEndOfInput) {
              return StepOutcome{Json(StatusName(InputStatus::kEndOfInput))};
            }
          }
          throw CaseFormatError("the source did not finish after end_of_input");
        }
        UnsupportedOp(step);
      },
      [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {
        if (auto d = outputs.Check(cp, output)) {
          return d;
        }
        if (auto d = CheckWatermarkKeys(cp, output.Watermarks())) {
          return d;
        }
        if (cp.Has("available")) {
          const bool expected = cp.Take("available").get<bool>();
          if (expected != op.IsAvailable()) {
            return fmt::format("available: expected {}, got {}", expected, op.IsAvailable());
          }
        }
        if (cp.Has("wait_released")) {
          const bool expected = cp.Take("wait_released").get<bool>();
          if (expected != wait_released) {
            return fmt::format("wait_released: expected {}, got {}", expected, wait_released);
          }
        }
        if (cp.Has("no_reported_watermark")) {
          const bool expected = cp.Take("no_reported_watermark").get<bool>();
          if (expected != reports.empty()) {
            return fmt::format("no_reported_watermark: expected {}, but {} report(s) were sent",
                               expected, reports.size());
          }
        }
        if (cp.Has("last_reported_watermark")) {
          const Timestamp expected = ParseInt64(cp.Take("last_reported_watermark"));
          if (reports.empty()) {
            return fmt::format("last_reported_watermark: expected {}, none was reported",
                               FormatInt64(expected));
          }
          if (reports.back() != expected) {
            return fmt::format("last_reported_watermark: expected {}, got {}",
                               FormatInt64(expected), FormatInt64(reports.back()));
          }
        }
        if (cp.Has("emitted_records")) {
          std::vector<std::string> expected;
          for (const Json& v : cp.Take("emitted_records")) {
            expected.push_back(RowToCaseString(ParseCaseRow(v)));
          }
          std::vector<std::string> actual;
          for (const OutputElement& e : output.elements()) {
            if (e.kind == OutputElement::Kind::kRecord) {
              actual.push_back(RowToCaseString(e.value));
            }
          }
          if (expected != actual) {
            return fmt::format("emitted_records: expected [{}], got [{}]",
                               fmt::join(expected, ", "), fmt::join(actual, ", "));
          }
        }
        if (cp.Has("paused_splits")) {
          std::set<std::string> expected;
          for (const Json& s : cp.Take("paused_splits")) {
            expected.insert(s.get<std::string>());
          }
          if (expected != op.paused_splits() || expected != script.paused) {
            return fmt::format(
                "paused_splits: expected {{{}}}, operator has {{{}}}, reader has {{{}}}",
                fmt::join(expected, ", "), fmt::join(op.paused_splits(), ", "),
                fmt::join(script.paused, ", "));
          }
        }
        return std::nullopt;
      });
  op.Close();
  return result;
}

CaseResult RunSourceArea(const Json& c) {
  const std::string component = c.at("config").value("component", std::string());
  if (component == "watermark_to_data_output") {
    return RunWatermarkToDataOutputCase(c);
  }
  if (component == "source_coordinator") {
    return RunCoordinatorCase(c);
  }
  if (component == "watermark_aggregator") {
    return RunAggregatorCase(c);
  }
  if (!component.empty() && component != "source_operator") {
    throw CaseFormatError("unknown component " + component);
  }
  return RunSourceOperatorCase(c);
}

}  // namespace

void RegisterSourceAreas(ScenarioRegistry& registry) {
  registry.Register("source_event_time", RunSourceArea);
  registry.Register("alignment", RunSourceArea);
}

}  // namespace tidemark::testing
