// Handlers for the window areas: window_assignment, event_time_trigger, window_operator and
// timer_service (interval_join lives in window_join_areas.cc). See scenario_runner.h for the API.

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "operators/window/trigger.h"
#include "operators/window/window.h"
#include "operators/window/window_assigner.h"
#include "operators/window/window_function.h"
#include "operators/window/window_operator.h"
#include "runtime/core/errors.h"
#include "runtime/time/internal_timer_service.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/scenarios/scenario_runner.h"

namespace tidemark::testing {

void RegisterIntervalJoinArea(ScenarioRegistry& registry);  // window_join_areas.cc

namespace {

// ---------------------------------------------------------------------------------------------
// Shared helpers

TimeWindow ParseWindow(const Json& j) {
  if (!j.is_array() || j.size() != 2) {
    throw CaseFormatError("a window is [start, end], got " + j.dump());
  }
  return TimeWindow(ParseInt64(j[0]), ParseInt64(j[1]));
}

Json WindowJson(const Window& w) {
  return Json::array({w.start(), w.end()});
}

std::string WindowKey(const Window& w) {
  return fmt::format("[{},{})", w.start(), w.end());
}

// Compares two JSON lists in order or, with `any_order`, as multisets.
bool ListsEqual(const Json& expected, const Json& actual, bool any_order) {
  if (!expected.is_array() || !actual.is_array() || expected.size() != actual.size()) {
    return false;
  }
  if (!any_order) {
    return CaseJsonEquals(expected, actual);
  }
  std::vector<bool> used(actual.size(), false);
  for (const Json& e : expected) {
    bool found = false;
    for (size_t i = 0; i < actual.size(); ++i) {
      if (!used[i] && CaseJsonEquals(e, actual[i])) {
        used[i] = true;
        found = true;
        break;
      }
    }
    if (!found) {
      return false;
    }
  }
  return true;
}

bool TakeAnyOrder(Checkpoint& cp) {
  if (!cp.Has("order")) {
    return false;
  }
  const std::string order = cp.Take("order").get<std::string>();
  if (order != "any" && order != "exact") {
    throw CaseFormatError("unknown order " + order);
  }
  return order == "any";
}

class FixedProcessingTime : public WindowAssigner::Context {
 public:
  Timestamp GetCurrentProcessingTime() override { return now; }
  Timestamp now = 0;
};

// Timer-count state keys shared by the trigger harness and the window operator:
// `event_timers`, `processing_timers` (totals), `num_timers` {domain: n},
// `event_timers_per_window` / `processing_timers_per_window` {"[s,e)": n}. Returns nullopt if
// `name` is not one of them, "" if it holds, else the difference.
std::optional<std::string> CheckTimerCounts(const std::string& name, const Json& expected,
                                            const InternalTimerService<Window>& timers) {
  auto total = [&](const std::string& domain) -> int64_t {
    if (domain == "event") {
      return static_cast<int64_t>(timers.NumEventTimeTimers());
    }
    if (domain == "processing") {
      return static_cast<int64_t>(timers.NumProcessingTimeTimers());
    }
    throw CaseFormatError("unknown timer domain " + domain);
  };
  auto per_window = [&](const std::string& domain) -> std::optional<std::string> {
    const auto& set = domain == "event" ? timers.EventTimeTimers() : timers.ProcessingTimeTimers();
    for (const auto& [window_key, n] : expected.items()) {
      int64_t count = 0;
      for (const auto& t : set) {
        count += WindowKey(t.ns) == window_key ? 1 : 0;
      }
      if (count != ParseInt64(n)) {
        return fmt::format("{} timers of {}: expected {}, got {}", domain, window_key, n.dump(),
                           count);
      }
    }
    return std::string();
  };
  if (name == "event_timers" || name == "processing_timers") {
    const std::string domain = name == "event_timers" ? "event" : "processing";
    const int64_t actual = total(domain);
    if (actual != ParseInt64(expected)) {
      return fmt::format("state {}: expected {}, got {}", name, expected.dump(), actual);
    }
    return std::string();
  }
  if (name == "num_timers") {
    for (const auto& [domain, n] : expected.items()) {
      if (total(domain) != ParseInt64(n)) {
        return fmt::format("num_timers {}: expected {}, got {}", domain, n.dump(), total(domain));
      }
    }
    return std::string();
  }
  if (name == "event_timers_per_window") {
    return per_window("event");
  }
  if (name == "processing_timers_per_window") {
    return per_window("processing");
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// window_assignment

std::unique_ptr<WindowAssigner> MakeCaseAssigner(const Json& a);  // window_operator section

std::unique_ptr<WindowAssigner> MakeAssignmentAssigner(const std::string& type, const Json& p) {
  if (type == "tumbling_event_time") {
    WindowStagger stagger = WindowStagger::kAligned;
    const std::string s = p.value("stagger", std::string("aligned"));
    if (s == "natural") {
      stagger = WindowStagger::kNatural;
    } else if (s == "random") {
      stagger = WindowStagger::kRandom;
    }
    return std::make_unique<TumblingWindows>(true, Int64Or(p, "size", 0), Int64Or(p, "offset", 0),
                                             stagger);
  }
  if (type == "sliding_event_time") {
    return std::make_unique<SlidingWindows>(true, Int64Or(p, "size", 0), Int64Or(p, "slide", 0),
                                            Int64Or(p, "offset", 0));
  }
  if (type == "event_time_session") {
    return std::make_unique<SessionWindows>(true, Int64Or(p, "gap", 0));
  }
  // Processing-time, dynamic-session and global assigners: as the window operator builds them.
  Json a = p;
  a["type"] = type;
  return MakeCaseAssigner(a);
}

CaseResult RunWindowAssignment(const Json& c) {
  const Json& config = c.at("config");
  const std::string function = config.value("function", std::string());
  std::unique_ptr<WindowAssigner> assigner;
  FixedProcessingTime clock;
  clock.now = Int64Or(config, "processing_time_at_assignment", 0);
  Json last_windows;
  Json last_merges;
  int64_t last_merge_calls = 0;

  auto step_fn = [&](const Json& step, size_t) -> StepOutcome {
    const std::string op = step.at("op");
    if (op == "window_start") {
      return {Json(TimeWindow::GetWindowStartWithOffset(
          ParseInt64(step.at("ts")), Int64Or(config, "offset", 0), ParseInt64(config.at("size"))))};
    }
    if (op == "intersects") {
      return {Json(ParseWindow(step.at("a")).Intersects(ParseWindow(step.at("b"))))};
    }
    if (op == "construct") {
      Json params = config;
      for (const auto& [k, v] : step.items()) {
        params[k] = v;
      }
      assigner = MakeAssignmentAssigner(config.at("assigner"), params);
      return {};
    }
    if (!assigner) {
      assigner = MakeAssignmentAssigner(config.at("assigner"), config);
    }
    if (op == "assign") {
      if (step.contains("processing_time")) {
        clock.now = ParseInt64(step.at("processing_time"));
      }
      last_windows = Json::array();
      // No `ts` (or null): a record without a timestamp.
      const std::optional<int64_t> ts = RecordTimestamp(step);
      for (const Window& w :
           assigner->AssignWindows(ts ? StreamRecord(Row{}, *ts) : StreamRecord(Row{}), clock)) {
        last_windows.push_back(WindowJson(w));
      }
      return {last_windows};
    }
    if (op == "merge_windows") {
      std::vector<Window> windows;
      for (const Json& w : step.at("windows")) {
        windows.emplace_back(ParseWindow(w));
      }
      last_merges = Json::array();
      last_merge_calls = 0;
      assigner->MergeWindows(windows, [&](const std::vector<Window>& merged, const Window& result) {
        ++last_merge_calls;
        Json m = Json::array();
        std::vector<Window> sorted = merged;
        std::sort(sorted.begin(), sorted.end());
        for (const Window& w : sorted) {
          m.push_back(WindowJson(w));
        }
        last_merges.push_back(Json{{"merged", m}, {"result", WindowJson(result)}});
      });
      return {};
    }
    throw CaseFormatError("unsupported window_assignment op " + op);
  };

  auto check_fn = [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {
    const bool any_order = TakeAnyOrder(cp);
    if (cp.Has("windows")) {
      const Json& expected = cp.Take("windows");
      if (!ListsEqual(expected, last_windows, any_order)) {
        return fmt::format("windows: expected {}, got {}", expected.dump(), last_windows.dump());
      }
    }
    if (cp.Has("merge_calls")) {
      if (ParseInt64(cp.Take("merge_calls")) != last_merge_calls) {
        return fmt::format("merge_calls: got {}", last_merge_calls);
      }
    }
    if (cp.Has("merges")) {
      Json expected = cp.Take("merges");
      // `merged` lists are sets: normalise both sides by sorting.
      for (Json& m : expected) {
        std::vector<TimeWindow> ws;
        for (const Json& w : m.at("merged")) {
          ws.push_back(ParseWindow(w));
        }
        std::sort(ws.begin(), ws.end());
        m["merged"] = Json::array();
        for (const TimeWindow& w : ws) {
          m["merged"].push_back(WindowJson(w));
        }
      }
      if (!ListsEqual(expected, last_merges, /*any_order=*/true)) {
        return fmt::format("merges: expected {}, got {}", expected.dump(), last_merges.dump());
      }
    }
    return std::nullopt;
  };
  (void)function;
  return RunSteps(c, step_fn, check_fn);
}

// ---------------------------------------------------------------------------------------------
// event_time_trigger: a trigger on its own, over a timer service (Flink's TriggerTestHarness).

class TriggerHarness : public Triggerable<Window> {
 public:
  explicit TriggerHarness(std::unique_ptr<Trigger> trigger) : trigger_(std::move(trigger)) {
    keys_.SetCurrentKey(Key{Value{int64_t{1}}});
  }

  // `ts`: the element's timestamp; Flink's trigger harness passes Long.MIN_VALUE for an element
  // without one.
  TriggerResult Element(const Window& w, Timestamp ts) {
    ctx_.set_window(w);
    StreamRecord record(Row{int64_t{1}});
    if (ts != kMinTimestamp) {
      record.SetTimestamp(ts);
    }
    return trigger_->OnElement(record, ts, w, ctx_);
  }
  std::vector<std::pair<Window, TriggerResult>> AdvanceProcessingTime(const Json& step) {
    fired_.clear();
    if (step.contains("to")) {
      clock_.AdvanceTo(ParseInt64(step.at("to")));
    } else {
      clock_.AdvanceBy(ParseInt64(step.at("by")));
    }
    return fired_;
  }
  std::vector<std::pair<Window, TriggerResult>> AdvanceWatermark(Timestamp t) {
    fired_.clear();
    timers_.AdvanceWatermark(t);
    return fired_;
  }
  void Clear(const Window& w) {
    ctx_.set_window(w);
    trigger_->Clear(w, ctx_);
  }
  void Merge(const Window& into, const std::vector<Window>& merged) {
    ctx_.set_window(into);
    ctx_.set_merged_windows(merged);
    trigger_->OnMerge(into, ctx_);
    ctx_.set_merged_windows({});
    for (const Window& m : merged) {
      Clear(m);
    }
  }
  bool CanMerge() const { return trigger_->CanMerge(); }

  void OnEventTime(const InternalTimer<Window>& timer) override {
    ctx_.set_window(timer.ns);
    fired_.emplace_back(timer.ns, trigger_->OnEventTime(timer.timestamp, timer.ns, ctx_));
  }
  void OnProcessingTime(const InternalTimer<Window>& timer) override {
    ctx_.set_window(timer.ns);
    fired_.emplace_back(timer.ns, trigger_->OnProcessingTime(timer.timestamp, timer.ns, ctx_));
  }

  const InternalTimerService<Window>& timers() const { return timers_; }
  const TriggerStateStore& state() const { return state_; }

 private:
  std::unique_ptr<Trigger> trigger_;
  ManualProcessingTimeService clock_;
  SimpleKeyContext keys_;
  InternalTimerService<Window> timers_{clock_, keys_, *this};
  TriggerStateStore state_;
  TriggerContext ctx_{timers_, keys_, state_};
  std::vector<std::pair<Window, TriggerResult>> fired_;
};

std::unique_ptr<Trigger> MakeCaseTrigger(const std::string& spec);  // below, with the custom ones

CaseResult RunEventTimeTrigger(const Json& c) {
  TriggerHarness harness(MakeCaseTrigger(c.at("config").at("trigger")));
  auto step_fn = [&](const Json& step, size_t) -> StepOutcome {
    const std::string op = step.at("op");
    if (op == "trigger_element") {
      const Timestamp ts = step.contains("ts")
                               ? ParseOptionalInt64(step.at("ts")).value_or(kMinTimestamp)
                               : kMinTimestamp;
      return {Json(ToString(harness.Element(ParseWindow(step.at("window")), ts)))};
    }
    if (op == "advance_watermark" || op == "advance_processing_time") {
      const auto fired = op == "advance_watermark"
                             ? harness.AdvanceWatermark(ParseInt64(step.at("to")))
                             : harness.AdvanceProcessingTime(step);
      if (!step.contains("window")) {
        return {};
      }
      const Window w = ParseWindow(step.at("window"));
      std::optional<TriggerResult> result;
      for (const auto& [fw, r] : fired) {
        if (fw == w && (!result || IsFire(r))) {
          result = r;
        }
      }
      return {result ? std::optional<Json>(Json(ToString(*result))) : std::nullopt};
    }
    if (op == "clear") {
      harness.Clear(ParseWindow(step.at("window")));
      return {};
    }
    if (op == "merge") {
      std::vector<Window> merged;
      for (const Json& w : step.at("merged")) {
        merged.emplace_back(ParseWindow(w));
      }
      harness.Merge(ParseWindow(step.at("into")), merged);
      return {};
    }
    if (op == "can_merge") {
      return {Json(harness.CanMerge())};
    }
    throw CaseFormatError("unsupported event_time_trigger op " + op);
  };
  auto check_fn = [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {
    if (!cp.Has("state")) {
      return std::nullopt;
    }
    const Json& state = cp.Take("state");
    for (const auto& [name, expected] : state.items()) {
      if (auto diff = CheckTimerCounts(name, expected, harness.timers())) {
        if (diff->empty()) {
          continue;
        }
        return diff;
      }
      if (name != "state_entries") {
        throw CaseFormatError("unknown trigger state " + name);
      }
      const auto actual = static_cast<int64_t>(harness.state().size());
      if (actual != ParseInt64(expected)) {
        return fmt::format("state {}: expected {}, got {}", name, expected.dump(), actual);
      }
    }
    return std::nullopt;
  };
  return RunSteps(c, step_fn, check_fn);
}

// ---------------------------------------------------------------------------------------------
// timer_service: the InternalTimerService itself, and small keyed process operators on it.

class TimerServiceHarness : public Triggerable<std::string> {
 public:
  struct Action {
    std::string domain;  // domain whose firing triggers it
    std::string reg_domain;
    std::string ns;
    Timestamp ts = 0;
  };

  void OnEventTime(const InternalTimer<std::string>& t) override { Fire("event", t); }
  void OnProcessingTime(const InternalTimer<std::string>& t) override { Fire("processing", t); }

  void Register(const std::string& domain, const std::string& ns, Timestamp ts) {
    if (domain == "event") {
      timers.RegisterEventTimeTimer(ns, ts);
    } else {
      timers.RegisterProcessingTimeTimer(ns, ts);
    }
  }

  ManualProcessingTimeService clock;
  SimpleKeyContext keys;
  InternalTimerService<std::string> timers{clock, keys, *this};
  Json fired = Json::array();
  std::vector<Action> actions;

 private:
  void Fire(const std::string& domain, const InternalTimer<std::string>& t) {
    fired.push_back(Json{{"domain", domain},
                         {"key", std::get<std::string>(t.key.at(0))},
                         {"namespace", t.ns},
                         {"ts", t.timestamp}});
    for (const Action& a : actions) {
      if (a.domain == domain) {
        Register(a.reg_domain, a.ns, a.ts);
      }
    }
  }
};

Json TimerList(const std::string& domain, const std::vector<InternalTimer<std::string>>& timers) {
  Json out = Json::array();
  for (const auto& t : timers) {
    out.push_back(Json{{"domain", domain},
                       {"key", std::get<std::string>(t.key.at(0))},
                       {"namespace", t.ns},
                       {"ts", t.timestamp}});
  }
  return out;
}

void AdvanceProcessingTime(ManualProcessingTimeService& clock, const Json& step) {
  if (step.contains("to")) {
    clock.AdvanceTo(ParseInt64(step.at("to")));
  } else {
    clock.AdvanceBy(ParseInt64(step.at("by")));
  }
}

CaseResult RunTimerServiceComponent(const Json& c) {
  TimerServiceHarness h;
  auto step_fn = [&](const Json& step, size_t) -> StepOutcome {
    const std::string op = step.at("op");
    h.fired = Json::array();
    if (op == "set_key") {
      h.keys.SetCurrentKey(Key{Value{step.at("key").get<std::string>()}});
    } else if (op == "register_timer") {
      h.Register(step.at("domain"), step.at("namespace"), ParseInt64(step.at("ts")));
    } else if (op == "delete_timer") {
      if (step.at("domain") == "event") {
        h.timers.DeleteEventTimeTimer(step.at("namespace"), ParseInt64(step.at("ts")));
      } else {
        h.timers.DeleteProcessingTimeTimer(step.at("namespace"), ParseInt64(step.at("ts")));
      }
    } else if (op == "advance_watermark") {
      h.timers.AdvanceWatermark(ParseInt64(step.at("to")));
    } else if (op == "advance_processing_time") {
      AdvanceProcessingTime(h.clock, step);
    } else if (op == "list_timers") {
      const std::string domain = step.at("domain");
      return {TimerList(domain, domain == "event" ? h.timers.EventTimeTimers()
                                                  : h.timers.ProcessingTimeTimers())};
    } else if (op == "set_on_timer_action") {
      const Json& reg = step.at("action").at("register_timer");
      h.actions.clear();
      h.actions.push_back(TimerServiceHarness::Action{
          step.at("domain"), reg.at("domain"), reg.at("namespace"), ParseInt64(reg.at("ts"))});
    } else if (op == "snapshot_restore") {
      // No checkpointing yet: state and timers stay as they are.
    } else {
      throw CaseFormatError("unsupported timer_service op " + op);
    }
    return {};
  };
  auto check_fn = [&](Checkpoint& cp, const StepOutcome& outcome) -> std::optional<std::string> {
    const bool any_order = TakeAnyOrder(cp);
    if (cp.Has("fired")) {
      const Json& expected = cp.Take("fired");
      if (!ListsEqual(expected, h.fired, any_order)) {
        return fmt::format("fired: expected {}, got {}", expected.dump(), h.fired.dump());
      }
    }
    if (cp.Has("returns") && outcome.returns) {
      const Json& expected = cp.Take("returns");
      if (!ListsEqual(expected, *outcome.returns, any_order)) {
        return fmt::format("returns: expected {}, got {}", expected.dump(),
                           outcome.returns->dump());
      }
    }
    if (!cp.Has("state")) {
      return std::nullopt;
    }
    for (const auto& [name, expected] : cp.Take("state").items()) {
      Json actual;
      if (name == "num_timers") {
        actual = Json::object();
        for (const auto& [domain, n] : expected.items()) {
          (void)n;
          actual[domain] = domain == "event" ? h.timers.NumEventTimeTimers()
                                             : h.timers.NumProcessingTimeTimers();
        }
      } else if (name == "num_timers_by_namespace") {
        actual = Json::object();
        for (const auto& [domain, by_ns] : expected.items()) {
          actual[domain] = Json::object();
          for (const auto& [ns, n] : by_ns.items()) {
            (void)n;
            actual[domain][ns] = domain == "event" ? h.timers.NumEventTimeTimers(ns)
                                                   : h.timers.NumProcessingTimeTimers(ns);
          }
        }
      } else if (name == "current_watermark") {
        actual = h.timers.CurrentWatermark();
      } else if (name == "current_processing_time") {
        actual = h.timers.CurrentProcessingTime();
      } else if (name == "scheduled_wakeups" || name == "scheduled_wakeups_count") {
        // The clock serves only this timer service, so its pending timers are the wake-ups.
        Json wakeups = Json::array();
        if (h.clock.NumPendingTimers() > 0) {
          wakeups.push_back(h.clock.NextTimerTime());
        }
        for (size_t i = 1; i < h.clock.NumPendingTimers(); ++i) {
          wakeups.push_back("more");
        }
        actual = name == "scheduled_wakeups" ? wakeups : Json(h.clock.NumPendingTimers());
      } else {
        throw CaseFormatError("unknown timer state " + name);
      }
      if (!CaseJsonEquals(expected, actual)) {
        return fmt::format("state {}: expected {}, got {}", name, expected.dump(), actual.dump());
      }
    }
    return std::nullopt;
  };
  return RunSteps(c, step_fn, check_fn);
}

// A keyed process operator with the functions the timer_service cases describe (Flink's
// KeyedProcessOperator over an InternalTimerService<VoidNamespace>).
class KeyedProcessHarness : public StreamOperator,
                            public Triggerable<VoidNamespace>,
                            public KeyContext {
 public:
  enum class Function {
    kQueryTime,        // emit '<v>TIME:<processing time> TS:<ts|null>'
    kQueryWatermark,   // emit '<v>WM:<current watermark> TS:<ts|null>'
    kEventTimer,       // emit v; event timer at watermark + 5; on timer emit 1777
    kProcessingTimer,  // emit v; processing timer at now + 5; on timer emit 1777
    kEventTimerWithState,
    kProcessingTimerWithState
  };

  explicit KeyedProcessHarness(Function f) : function_(f) {}

  void Open(const OperatorContext& ctx) override {
    StreamOperator::Open(ctx);
    timers_ =
        std::make_unique<InternalTimerService<VoidNamespace>>(processing_time(), *this, *this);
  }
  void SetCurrentKey(const Key& key) override { key_ = key; }
  const Key& GetCurrentKey() const override { return key_; }

  void ProcessElement(StreamRecord& record, int) override {
    SetCurrentKey(Key{record.row.Get(0)});
    const Value v = record.row.Get(0);
    const std::string text = v.index() == 1 ? std::to_string(std::get<int64_t>(v)) : ValueToJson(v);
    switch (function_) {
      case Function::kQueryTime: {
        Emit(Value{fmt::format("{}TIME:{} TS:{}", text, timers_->CurrentProcessingTime(),
                               record.has_timestamp ? std::to_string(record.timestamp) : "null")},
             record);
        break;
      }
      case Function::kQueryWatermark: {
        Emit(Value{fmt::format("{}WM:{} TS:{}", text, timers_->CurrentWatermark(),
                               record.has_timestamp ? std::to_string(record.timestamp) : "null")},
             record);
        break;
      }
      case Function::kEventTimer:
        Emit(v, record);
        timers_->RegisterEventTimeTimer(VoidNamespace{}, timers_->CurrentWatermark() + 5);
        break;
      case Function::kProcessingTimer:
        Emit(v, record);
        timers_->RegisterProcessingTimeTimer(VoidNamespace{}, timers_->CurrentProcessingTime() + 5);
        break;
      case Function::kEventTimerWithState:
      case Function::kProcessingTimerWithState: {
        const bool event = function_ == Function::kEventTimerWithState;
        const Timestamp base =
            event ? timers_->CurrentWatermark() : timers_->CurrentProcessingTime();
        auto it = state_.find(key_);
        if (it == state_.end()) {
          Emit(Value{"INPUT:" + text}, record);
          state_[key_] = text;
          if (event) {
            timers_->RegisterEventTimeTimer(VoidNamespace{}, base + 5);
          } else {
            timers_->RegisterProcessingTimeTimer(VoidNamespace{}, base + 5);
          }
        } else {
          state_.erase(it);
          if (event) {
            timers_->DeleteEventTimeTimer(VoidNamespace{}, base + 4);
          } else {
            timers_->DeleteProcessingTimeTimer(VoidNamespace{}, base + 4);
          }
        }
        break;
      }
    }
  }
  void ProcessWatermark(Watermark wm, int) override {
    timers_->AdvanceWatermark(wm.timestamp);
    output().EmitWatermark(wm);
  }
  void OnEventTime(const InternalTimer<VoidNamespace>& t) override { OnTimer(t, true); }
  void OnProcessingTime(const InternalTimer<VoidNamespace>& t) override { OnTimer(t, false); }

 private:
  void OnTimer(const InternalTimer<VoidNamespace>& t, bool event) {
    // Output of an event-time timer carries the timer's time; a processing-time one has none.
    StreamRecord out;
    if (event) {
      out.SetTimestamp(t.timestamp);
    }
    if (function_ == Function::kEventTimer || function_ == Function::kProcessingTimer) {
      out.row = Row{int64_t{1777}};
    } else {
      out.row = Row{Value{"STATE:" + state_[key_]}};
    }
    output().Collect(out);
  }
  void Emit(Value v, const StreamRecord& in) {
    StreamRecord out(Row{std::move(v)});
    if (in.has_timestamp) {
      out.SetTimestamp(in.timestamp);
    }
    output().Collect(out);
  }

  Function function_;
  Key key_;
  std::unique_ptr<InternalTimerService<VoidNamespace>> timers_;
  std::map<Key, std::string> state_;
};

// Drives a one-input operator through the common record / watermark / processing-time steps.
struct OperatorDriver {
  ManualProcessingTimeService clock;
  RecordingOutput out;
  std::unique_ptr<StreamOperator> op;

  void Open(std::unique_ptr<StreamOperator> o) {
    op = std::move(o);
    OperatorContext ctx;
    ctx.name = "op";
    ctx.output = &out;
    ctx.processing_time = &clock;
    op->Open(ctx);
  }
};

CaseResult RunKeyedProcess(const Json& c) {
  const std::string f = c.at("config").at("function");
  KeyedProcessHarness::Function function;
  if (f.find("TIME:") != std::string::npos) {
    function = KeyedProcessHarness::Function::kQueryTime;
  } else if (f.find("WM:") != std::string::npos) {
    function = KeyedProcessHarness::Function::kQueryWatermark;
  } else if (f.find("1777") != std::string::npos) {
    function = f.find("processing") != std::string::npos
                   ? KeyedProcessHarness::Function::kProcessingTimer
                   : KeyedProcessHarness::Function::kEventTimer;
  } else if (f.find("event timer") != std::string::npos) {
    function = KeyedProcessHarness::Function::kEventTimerWithState;
  } else if (f.find("processing timer") != std::string::npos) {
    function = KeyedProcessHarness::Function::kProcessingTimerWithState;
  } else {
    return CaseResult::Skipped("unknown keyed process function: " + f);
  }
  OperatorDriver d;
  d.Open(std::make_unique<KeyedProcessHarness>(function));
  OutputsChecker outputs(ParseExpectMode(c));
  auto step_fn = [&](const Json& step, size_t) -> StepOutcome {
    const std::string op = step.at("op");
    if (op == "record") {
      StreamRecord r(ParseCaseRow(step.at("value")));
      if (std::optional<int64_t> ts = RecordTimestamp(step)) {
        r.SetTimestamp(*ts);
      }
      d.op->ProcessElement(r, 0);
    } else if (op == "watermark") {
      d.op->ProcessWatermark(Watermark{ParseInt64(step.at("ts"))}, 0);
    } else if (op == "advance_processing_time") {
      AdvanceProcessingTime(d.clock, step);
    } else {
      throw CaseFormatError("unsupported keyed_process op " + op);
    }
    return {};
  };
  auto check_fn = [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {
    if (auto diff = outputs.Check(cp, d.out)) {
      return diff;
    }
    if (auto diff = CheckNoLateRecords(cp, d.out.elements())) {
      return diff;
    }
    return CheckWatermarkKeys(cp, d.out.Watermarks());
  };
  return RunSteps(c, step_fn, check_fn);
}

CaseResult RunTimerService(const Json& c) {
  const Json& config = c.at("config");
  if (config.value("component", std::string()) == "internal_timer_service") {
    return RunTimerServiceComponent(c);
  }
  if (config.value("operator", std::string()) == "keyed_process") {
    return RunKeyedProcess(c);
  }
  return CaseResult::Skipped("unknown timer_service config " + config.dump());
}

// ---------------------------------------------------------------------------------------------
// window_operator

// Flink test's PointSessionWindows: elements with value `point_value` get [ts, ts).
class PointSessionWindows : public SessionWindows {
 public:
  PointSessionWindows(int64_t gap, Value point_value)
      : SessionWindows(true, gap), point_value_(std::move(point_value)) {}
  std::vector<Window> AssignWindows(const StreamRecord& record, Context& ctx) override {
    if (record.row.Get(1) == point_value_) {
      return {Window(TimeWindow(record.timestamp, record.timestamp))};
    }
    return SessionWindows::AssignWindows(record, ctx);
  }

 private:
  Value point_value_;
};

// accum_gc(L): like the event-time trigger, but FIRE_AND_PURGE at maxTimestamp and at
// maxTimestamp + L (see the case notes).
class AccumGcTrigger : public EventTimeTrigger {
 public:
  explicit AccumGcTrigger(int64_t lateness) : lateness_(lateness) {}
  TriggerResult OnEventTime(Timestamp time, const Window& window, TriggerContext&) override {
    if (time == window.MaxTimestamp() || time == window.MaxTimestamp() + lateness_) {
      return TriggerResult::kFireAndPurge;
    }
    return TriggerResult::kContinue;
  }
  void OnMerge(const Window& window, TriggerContext& ctx) override {
    ctx.RegisterEventTimeTimer(window.MaxTimestamp());
  }
  std::string ToString() const override { return "AccumGcTrigger"; }

 private:
  int64_t lateness_;
};

// fire_every_time: FIRE on everything, no timers.
class FireEveryTimeTrigger : public Trigger {
 public:
  TriggerResult OnElement(const StreamRecord&, Timestamp, const Window&, TriggerContext&) override {
    return TriggerResult::kFire;
  }
  TriggerResult OnEventTime(Timestamp, const Window&, TriggerContext&) override {
    return TriggerResult::kFire;
  }
  TriggerResult OnProcessingTime(Timestamp, const Window&, TriggerContext&) override {
    return TriggerResult::kFire;
  }
  void Clear(const Window&, TriggerContext&) override {}
  std::string ToString() const override { return "FireEveryTimeTrigger"; }
};

std::unique_ptr<Trigger> MakeCaseTrigger(const std::string& spec) {
  if (spec.rfind("custom:accum_gc(", 0) == 0) {
    const std::string arg = spec.substr(16, spec.size() - 17);
    return std::make_unique<AccumGcTrigger>(std::stoll(arg));
  }
  if (spec == "custom:fire_every_time") {
    return std::make_unique<FireEveryTimeTrigger>();
  }
  if (spec.rfind("custom:", 0) == 0) {
    throw CaseFormatError("unknown custom trigger " + spec);
  }
  // The cases write Flink's ContinuousEventTimeTrigger.of(Time.milliseconds(N)) as
  // continuous_event_time(N); a job needs the unit.
  static constexpr std::string_view kContinuous = "continuous_event_time(";
  if (spec.rfind(kContinuous, 0) == 0 && spec.size() > kContinuous.size() + 1 &&
      std::isdigit(static_cast<unsigned char>(spec[spec.size() - 2])) != 0) {
    return MakeTrigger(spec.substr(0, spec.size() - 1) + "ms)");
  }
  return MakeTrigger(spec);
}

SessionWindows::GapExtractor GapRules(const Json& assigner) {
  struct Rule {
    Value key;
    std::optional<Value> value;
    int64_t gap;
  };
  std::vector<Rule> rules;
  for (const Json& r : assigner.at("gap_rules")) {
    Rule rule{ParseCaseValue(r.at("key")), std::nullopt, ParseInt64(r.at("gap"))};
    if (r.contains("value")) {
      rule.value = ParseCaseValue(r.at("value"));
    }
    rules.push_back(rule);
  }
  const int64_t default_gap = Int64Or(assigner, "default_gap", 0);
  return [rules, default_gap](const StreamRecord& record) -> int64_t {
    for (const Rule& r : rules) {
      if (record.row.Get(0) == r.key && (!r.value || record.row.Get(1) == *r.value)) {
        return r.gap;
      }
    }
    return default_gap;
  };
}

std::unique_ptr<WindowAssigner> MakeCaseAssigner(const Json& a) {
  const std::string type = a.at("type");
  if (type == "tumbling_event_time" || type == "tumbling_processing_time") {
    return std::make_unique<TumblingWindows>(type == "tumbling_event_time",
                                             ParseInt64(a.at("size")), Int64Or(a, "offset", 0));
  }
  if (type == "sliding_event_time" || type == "sliding_processing_time") {
    return std::make_unique<SlidingWindows>(type == "sliding_event_time", ParseInt64(a.at("size")),
                                            ParseInt64(a.at("slide")), Int64Or(a, "offset", 0));
  }
  if (type == "event_time_session" || type == "processing_time_session") {
    if (a.contains("point_window_if_value")) {
      return std::make_unique<PointSessionWindows>(ParseInt64(a.at("gap")),
                                                   ParseCaseValue(a.at("point_window_if_value")));
    }
    return std::make_unique<SessionWindows>(type == "event_time_session", ParseInt64(a.at("gap")));
  }
  if (type == "dynamic_event_time_session" || type == "dynamic_processing_time_session") {
    return std::make_unique<SessionWindows>(type == "dynamic_event_time_session", GapRules(a));
  }
  if (type == "global") {
    return std::make_unique<GlobalWindows>(a.value("end_of_stream_trigger", false));
  }
  throw CaseFormatError("unknown assigner " + type);
}

std::string CellText(const Value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    return *s;
  }
  return ValueToJson(v);
}

std::unique_ptr<WindowFunction> MakeCaseWindowFunction(const std::string& name) {
  using Elements = std::vector<StreamRecord>;
  using Ctx = WindowFunction::Context;
  auto sum_of = [](const Elements& elements) {
    int64_t sum = 0;
    for (const StreamRecord& r : elements) {
      sum += AsInt64(r.row.Get(1)).value_or(0);
    }
    return sum;
  };
  if (name == "sum") {
    return std::make_unique<BufferingWindowFunction>(
        [sum_of](const Ctx& ctx, const Elements& elements, std::vector<Row>& out) {
          out.push_back(Row{ctx.key.at(0), sum_of(elements)});
        });
  }
  if (name == "session_summary") {
    return std::make_unique<BufferingWindowFunction>(
        [sum_of](const Ctx& ctx, const Elements& elements, std::vector<Row>& out) {
          out.push_back(Row{CellText(ctx.key.at(0)) + "-" + std::to_string(sum_of(elements)),
                            ctx.window.start(), ctx.window.end()});
        });
  }
  if (name == "pass_through") {
    return std::make_unique<BufferingWindowFunction>(
        [](const Ctx&, const Elements& elements, std::vector<Row>& out) {
          for (const StreamRecord& r : elements) {
            out.push_back(r.row);
          }
        });
  }
  if (name == "got_string") {
    return std::make_unique<BufferingWindowFunction>(
        [](const Ctx&, const Elements& elements, std::vector<Row>& out) {
          std::string s = "GOT: ";
          for (size_t i = 0; i < elements.size(); ++i) {
            s += fmt::format("{}({},{})", i == 0 ? "" : ",", CellText(elements[i].row.Get(0)),
                             CellText(elements[i].row.Get(1)));
          }
          out.push_back(Row{s});
        });
  }
  if (name == "empty") {
    return std::make_unique<BufferingWindowFunction>(
        [](const Ctx&, const Elements&, std::vector<Row>&) {});
  }
  throw CaseFormatError("unknown window function " + name);
}

CaseResult RunWindowOperator(const Json& c) {
  const Json& config = c.at("config");
  if (config.value("key", std::string("field0")) != "field0") {
    throw CaseFormatError("unsupported key " + config.at("key").dump());
  }
  WindowOperator::Options options;
  options.key_slots = {0};
  options.allowed_lateness_ms = Int64Or(config, "allowed_lateness", 0);
  if (config.value("late_output", false)) {
    options.late_output_tag = "late";
  }
  OperatorDriver d;
  d.Open(std::make_unique<WindowOperator>(
      MakeCaseAssigner(config.at("assigner")), MakeCaseTrigger(config.at("trigger")),
      MakeCaseWindowFunction(config.at("window_function")), options));
  auto& op = static_cast<WindowOperator&>(*d.op);
  OutputsChecker outputs(ParseExpectMode(c));
  const bool keep_output = c.value("restore_keeps_output", false);

  auto step_fn = [&](const Json& step, size_t) -> StepOutcome {
    const std::string o = step.at("op");
    if (o == "record") {
      StreamRecord r(Row{ParseCaseValue(step.at("key")), ParseCaseValue(step.at("value"))});
      if (std::optional<int64_t> ts = RecordTimestamp(step)) {
        r.SetTimestamp(*ts);
      }
      d.op->ProcessElement(r, 0);
    } else if (o == "watermark") {
      d.op->ProcessWatermark(Watermark{ParseInt64(step.at("ts"))}, 0);
    } else if (o == "advance_processing_time") {
      AdvanceProcessingTime(d.clock, step);
    } else if (o == "snapshot_restore") {
      // No checkpointing yet: state and timers stay; the captured output is reset.
      if (!keep_output) {
        d.out.Clear();
        outputs.Reset();
      }
    } else {
      throw CaseFormatError("unsupported window_operator op " + o);
    }
    return {};
  };
  auto check_fn = [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {
    if (auto diff = outputs.Check(cp, d.out)) {
      return diff;
    }
    if (auto diff = CheckNoLateRecords(cp, d.out.elements())) {
      return diff;
    }
    if (auto diff = CheckWatermarkKeys(cp, d.out.Watermarks())) {
      return diff;
    }
    if (cp.Has("state")) {
      for (const auto& [name, expected] : cp.Take("state").items()) {
        if (auto diff = CheckTimerCounts(name, expected, op.timer_service())) {
          if (diff->empty()) {
            continue;
          }
          return diff;
        }
        if (name == "state_entries") {
          const auto actual = static_cast<int64_t>(op.trigger_state().size());
          if (actual != ParseInt64(expected)) {
            return fmt::format("state_entries: expected {}, got {}", expected.dump(), actual);
          }
          continue;
        }
        if (name != "window_contents") {
          throw CaseFormatError("unknown window state " + name);
        }
        // The case's window_contents: window [0,2000) of key test_key (see its notes).
        Json actual = Json::array();
        if (const auto* state = dynamic_cast<const ListWindowState*>(
                op.GetWindowState(Key{Value{"test_key"}}, Window(TimeWindow(0, 2000))))) {
          for (const StreamRecord& r : state->elements()) {
            Json row = Json::array();
            for (const Value& v : r.row.ToValues()) {
              row.push_back(Json::parse(ValueToJson(v)));
            }
            actual.push_back(row);
          }
        }
        if (!CaseJsonEquals(expected, actual)) {
          return fmt::format("window_contents: expected {}, got {}", expected.dump(),
                             actual.dump());
        }
      }
    }
    return std::nullopt;
  };
  return RunSteps(c, step_fn, check_fn);
}

}  // namespace

void RegisterWindowAreas(ScenarioRegistry& registry) {
  registry.Register("window_assignment", RunWindowAssignment);
  registry.Register("event_time_trigger", RunEventTimeTrigger);
  registry.Register("timer_service", RunTimerService);
  registry.Register("window_operator", RunWindowOperator);
  RegisterIntervalJoinArea(registry);
}

}  // namespace tidemark::testing
