#include "operators/window/trigger.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <fmt/format.h>

#include "config/job_loader.h"
#include "runtime/core/errors.h"

namespace tidemark {

const char* ToString(TriggerResult r) {
  switch (r) {
    case TriggerResult::kContinue:
      return "CONTINUE";
    case TriggerResult::kFire:
      return "FIRE";
    case TriggerResult::kPurge:
      return "PURGE";
    case TriggerResult::kFireAndPurge:
      return "FIRE_AND_PURGE";
  }
  return "?";
}

// ---- TriggerStateStore / TriggerContext ----

std::optional<int64_t> TriggerStateStore::Get(const Key& key, const Window& w,
                                              const std::string& name) const {
  auto it = values_.find(StateKey{key, w, name});
  if (it == values_.end()) {
    return std::nullopt;
  }
  return it->second;
}

void TriggerStateStore::Set(const Key& key, const Window& w, const std::string& name,
                            int64_t value) {
  values_[StateKey{key, w, name}] = value;
}

void TriggerStateStore::Clear(const Key& key, const Window& w, const std::string& name) {
  values_.erase(StateKey{key, w, name});
}

std::optional<int64_t> TriggerContext::GetState(const std::string& name) const {
  return state_.Get(key(), window_, name);
}

void TriggerContext::SetState(const std::string& name, int64_t value) {
  state_.Set(key(), window_, name, value);
}

void TriggerContext::ClearState(const std::string& name) {
  state_.Clear(key(), window_, name);
}

void TriggerContext::MergeState(const std::string& name, int64_t (*combine)(int64_t, int64_t)) {
  std::optional<int64_t> acc = GetState(name);
  for (const Window& m : merged_windows_) {
    if (m == window_) {
      continue;  // the target's own value is already in `acc`
    }
    std::optional<int64_t> v = state_.Get(key(), m, name);
    if (v) {
      acc = acc ? combine(*acc, *v) : *v;
    }
  }
  if (acc) {
    SetState(name, *acc);
  }
}

void Trigger::OnMerge(const Window& /*window*/, TriggerContext& /*ctx*/) {
  throw InvalidArgument(fmt::format("{} does not support merging windows", ToString()));
}

// ---- EventTimeTrigger ----

TriggerResult EventTimeTrigger::OnElement(const StreamRecord& /*record*/, Timestamp /*timestamp*/,
                                          const Window& window, TriggerContext& ctx) {
  if (window.MaxTimestamp() <= ctx.GetCurrentWatermark()) {
    // The window is already complete: a late-but-allowed element fires it at once.
    return TriggerResult::kFire;
  }
  ctx.RegisterEventTimeTimer(window.MaxTimestamp());
  return TriggerResult::kContinue;
}

TriggerResult EventTimeTrigger::OnEventTime(Timestamp time, const Window& window,
                                            TriggerContext& /*ctx*/) {
  return time == window.MaxTimestamp() ? TriggerResult::kFire : TriggerResult::kContinue;
}

TriggerResult EventTimeTrigger::OnProcessingTime(Timestamp /*time*/, const Window& /*window*/,
                                                 TriggerContext& /*ctx*/) {
  return TriggerResult::kContinue;
}

void EventTimeTrigger::OnMerge(const Window& window, TriggerContext& ctx) {
  // Only a merged window that is not complete yet gets a timer; otherwise it would fire twice.
  if (window.MaxTimestamp() > ctx.GetCurrentWatermark()) {
    ctx.RegisterEventTimeTimer(window.MaxTimestamp());
  }
}

void EventTimeTrigger::Clear(const Window& window, TriggerContext& ctx) {
  ctx.DeleteEventTimeTimer(window.MaxTimestamp());
}

// ---- ProcessingTimeTrigger ----

TriggerResult ProcessingTimeTrigger::OnElement(const StreamRecord& /*record*/,
                                               Timestamp /*timestamp*/, const Window& window,
                                               TriggerContext& ctx) {
  ctx.RegisterProcessingTimeTimer(window.MaxTimestamp());
  return TriggerResult::kContinue;
}

TriggerResult ProcessingTimeTrigger::OnEventTime(Timestamp /*time*/, const Window& /*window*/,
                                                 TriggerContext& /*ctx*/) {
  return TriggerResult::kContinue;
}

TriggerResult ProcessingTimeTrigger::OnProcessingTime(Timestamp /*time*/, const Window& /*window*/,
                                                      TriggerContext& /*ctx*/) {
  return TriggerResult::kFire;
}

void ProcessingTimeTrigger::OnMerge(const Window& window, TriggerContext& ctx) {
  if (window.MaxTimestamp() > ctx.GetCurrentProcessingTime()) {
    ctx.RegisterProcessingTimeTimer(window.MaxTimestamp());
  }
}

void ProcessingTimeTrigger::Clear(const Window& window, TriggerContext& ctx) {
  ctx.DeleteProcessingTimeTimer(window.MaxTimestamp());
}

// ---- CountTrigger ----

namespace {
constexpr const char* kCountState = "count";
constexpr const char* kFireTimeState = "fire-time";
int64_t Sum(int64_t a, int64_t b) {
  return a + b;
}
int64_t Min(int64_t a, int64_t b) {
  return std::min(a, b);
}
}  // namespace

CountTrigger::CountTrigger(int64_t max_count) : max_count_(max_count) {
  if (max_count <= 0) {
    throw InvalidArgument(fmt::format("count trigger needs a count > 0, got {}", max_count));
  }
}

TriggerResult CountTrigger::OnElement(const StreamRecord& /*record*/, Timestamp /*timestamp*/,
                                      const Window& /*window*/, TriggerContext& ctx) {
  const int64_t count = ctx.GetState(kCountState).value_or(0) + 1;
  if (count >= max_count_) {
    ctx.ClearState(kCountState);
    return TriggerResult::kFire;
  }
  ctx.SetState(kCountState, count);
  return TriggerResult::kContinue;
}

TriggerResult CountTrigger::OnEventTime(Timestamp /*time*/, const Window& /*window*/,
                                        TriggerContext& /*ctx*/) {
  return TriggerResult::kContinue;
}

TriggerResult CountTrigger::OnProcessingTime(Timestamp /*time*/, const Window& /*window*/,
                                             TriggerContext& /*ctx*/) {
  return TriggerResult::kContinue;
}

void CountTrigger::OnMerge(const Window& /*window*/, TriggerContext& ctx) {
  ctx.MergeState(kCountState, &Sum);
}

void CountTrigger::Clear(const Window& /*window*/, TriggerContext& ctx) {
  ctx.ClearState(kCountState);
}

std::string CountTrigger::ToString() const {
  return fmt::format("CountTrigger({})", max_count_);
}

// ---- ContinuousEventTimeTrigger ----

ContinuousEventTimeTrigger::ContinuousEventTimeTrigger(int64_t interval_ms)
    : interval_ms_(interval_ms) {
  if (interval_ms <= 0) {
    throw InvalidArgument(
        fmt::format("continuous event-time trigger needs an interval > 0, got {}", interval_ms));
  }
}

TriggerResult ContinuousEventTimeTrigger::OnElement(const StreamRecord& /*record*/,
                                                    Timestamp timestamp, const Window& window,
                                                    TriggerContext& ctx) {
  if (window.MaxTimestamp() <= ctx.GetCurrentWatermark()) {
    return TriggerResult::kFire;
  }
  ctx.RegisterEventTimeTimer(window.MaxTimestamp());
  if (!ctx.GetState(kFireTimeState)) {
    // Align the first fire time to a multiple of the interval (Java remainder semantics).
    RegisterNextFireTimestamp(timestamp - (timestamp % interval_ms_), window, ctx);
  }
  return TriggerResult::kContinue;
}

TriggerResult ContinuousEventTimeTrigger::OnEventTime(Timestamp time, const Window& window,
                                                      TriggerContext& ctx) {
  if (time == window.MaxTimestamp()) {
    return TriggerResult::kFire;
  }
  std::optional<int64_t> fire_time = ctx.GetState(kFireTimeState);
  if (fire_time && *fire_time == time) {
    ctx.ClearState(kFireTimeState);
    RegisterNextFireTimestamp(time, window, ctx);
    return TriggerResult::kFire;
  }
  return TriggerResult::kContinue;
}

TriggerResult ContinuousEventTimeTrigger::OnProcessingTime(Timestamp /*time*/,
                                                           const Window& /*window*/,
                                                           TriggerContext& /*ctx*/) {
  return TriggerResult::kContinue;
}

void ContinuousEventTimeTrigger::OnMerge(const Window& /*window*/, TriggerContext& ctx) {
  ctx.MergeState(kFireTimeState, &Min);
  if (std::optional<int64_t> next = ctx.GetState(kFireTimeState)) {
    ctx.RegisterEventTimeTimer(*next);
  }
}

void ContinuousEventTimeTrigger::Clear(const Window& /*window*/, TriggerContext& ctx) {
  if (std::optional<int64_t> fire_time = ctx.GetState(kFireTimeState)) {
    ctx.DeleteEventTimeTimer(*fire_time);
    ctx.ClearState(kFireTimeState);
  }
}

void ContinuousEventTimeTrigger::RegisterNextFireTimestamp(Timestamp time, const Window& window,
                                                           TriggerContext& ctx) {
  const Timestamp next = std::min(SaturatingAdd(time, interval_ms_), window.MaxTimestamp());
  std::optional<int64_t> current = ctx.GetState(kFireTimeState);
  ctx.SetState(kFireTimeState, current ? std::min(*current, next) : next);
  ctx.RegisterEventTimeTimer(next);
}

std::string ContinuousEventTimeTrigger::ToString() const {
  return fmt::format("ContinuousEventTimeTrigger({})", interval_ms_);
}

// ---- PurgingTrigger ----

PurgingTrigger::PurgingTrigger(std::unique_ptr<Trigger> nested) : nested_(std::move(nested)) {
  if (!nested_) {
    throw InvalidArgument("purging trigger needs a nested trigger");
  }
}

TriggerResult PurgingTrigger::Purging(TriggerResult r) {
  return IsFire(r) ? TriggerResult::kFireAndPurge : r;
}

TriggerResult PurgingTrigger::OnElement(const StreamRecord& record, Timestamp timestamp,
                                        const Window& window, TriggerContext& ctx) {
  return Purging(nested_->OnElement(record, timestamp, window, ctx));
}

TriggerResult PurgingTrigger::OnEventTime(Timestamp time, const Window& window,
                                          TriggerContext& ctx) {
  return Purging(nested_->OnEventTime(time, window, ctx));
}

TriggerResult PurgingTrigger::OnProcessingTime(Timestamp time, const Window& window,
                                               TriggerContext& ctx) {
  return Purging(nested_->OnProcessingTime(time, window, ctx));
}

void PurgingTrigger::OnMerge(const Window& window, TriggerContext& ctx) {
  nested_->OnMerge(window, ctx);
}

void PurgingTrigger::Clear(const Window& window, TriggerContext& ctx) {
  nested_->Clear(window, ctx);
}

std::string PurgingTrigger::ToString() const {
  return fmt::format("PurgingTrigger({})", nested_->ToString());
}

// ---- EndOfStreamTrigger ----

TriggerResult EndOfStreamTrigger::OnElement(const StreamRecord& /*record*/, Timestamp /*timestamp*/,
                                            const Window& window, TriggerContext& ctx) {
  ctx.RegisterEventTimeTimer(window.MaxTimestamp());
  return TriggerResult::kContinue;
}

TriggerResult EndOfStreamTrigger::OnEventTime(Timestamp time, const Window& window,
                                              TriggerContext& /*ctx*/) {
  return time == window.MaxTimestamp() ? TriggerResult::kFire : TriggerResult::kContinue;
}

void EndOfStreamTrigger::OnMerge(const Window& window, TriggerContext& ctx) {
  ctx.RegisterEventTimeTimer(window.MaxTimestamp());
}

void EndOfStreamTrigger::Clear(const Window& window, TriggerContext& ctx) {
  ctx.DeleteEventTimeTimer(window.MaxTimestamp());
}

// ---- MakeTrigger ----

namespace {

// A spec in a message: its start only, so that a 1 MB spec does not make a 1 MB message.
std::string Shown(const std::string& raw) {
  constexpr size_t kShown = 60;
  return raw.size() > kShown ? raw.substr(0, kShown) + "..." : raw;
}

// `count(N)`: N a positive whole number of elements.
int64_t ParseCount(const std::string& raw, const std::string& arg) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), v);
  if (ec != std::errc() || end != arg.data() + arg.size()) {
    throw InvalidArgument(fmt::format(
        "trigger '{}': count(N) needs a whole number of elements, got '{}'", Shown(raw), arg));
  }
  if (v < 1) {
    throw InvalidArgument(
        fmt::format("trigger '{}': count(N) needs at least 1 element, got {}", Shown(raw), v));
  }
  return v;
}

// `continuous-event-time(INTERVAL)`: a positive duration with a unit, like every duration of a job.
int64_t ParseInterval(const std::string& raw, const std::string& arg) {
  std::string why;
  std::optional<int64_t> ms = ParseDurationMs(arg, &why);
  if (!ms) {
    int64_t bare = 0;
    const auto [end, ec] = std::from_chars(arg.data(), arg.data() + arg.size(), bare);
    if (ec == std::errc() && end == arg.data() + arg.size()) {
      throw InvalidArgument(
          fmt::format("trigger '{}': the interval needs a unit, e.g. continuous-event-time({}ms)",
                      Shown(raw), arg));
    }
    throw InvalidArgument(fmt::format(
        "trigger '{}': expected an interval like 1s or 250ms, got '{}'", Shown(raw), arg));
  }
  if (*ms <= 0) {
    throw InvalidArgument(
        fmt::format("trigger '{}': the interval must be positive, got {}", Shown(raw), arg));
  }
  return *ms;
}

}  // namespace

std::unique_ptr<Trigger> MakeTrigger(const std::string& raw) {
  // Names may be written with '-' or '_'; a '-' after a letter is part of a name, any other
  // keeps its meaning ("count(-1)" stays -1).
  std::string spec;
  spec.reserve(raw.size());
  for (char c : raw) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      continue;
    }
    const bool after_letter =
        !spec.empty() && std::isalpha(static_cast<unsigned char>(spec.back())) != 0;
    spec += (c == '-' && after_letter) ? '_' : c;
  }
  // purging(purging(...(inner)...)): peeled in one pass over the text (linear time and memory),
  // at most kMaxTriggerNesting levels, then the innermost trigger is built and wrapped.
  static constexpr std::string_view kPurging = "purging(";
  size_t begin = 0;
  size_t end = spec.size();
  int purging = 0;
  while (std::string_view(spec).substr(begin, end - begin).starts_with(kPurging)) {
    if (spec[end - 1] != ')') {
      throw InvalidArgument(fmt::format("trigger '{}': purging( is not closed", Shown(raw)));
    }
    if (++purging > kMaxTriggerNesting) {
      throw InvalidArgument(fmt::format("trigger '{}': purging(...) nests deeper than {} levels",
                                        Shown(raw), kMaxTriggerNesting));
    }
    begin += kPurging.size();
    --end;
  }
  const std::string inner = spec.substr(begin, end - begin);
  if (inner.empty() && purging > 0) {
    throw InvalidArgument("purging trigger needs a nested trigger");
  }
  std::unique_ptr<Trigger> trigger;
  const size_t open = inner.find('(');
  if (open != std::string::npos) {
    const std::string name = inner.substr(0, open);
    if (inner.back() != ')') {
      // fall through to "unknown trigger"
    } else if (name == "count") {
      trigger = std::make_unique<CountTrigger>(
          ParseCount(raw, inner.substr(open + 1, inner.size() - open - 2)));
    } else if (name == "continuous_event_time") {
      trigger = std::make_unique<ContinuousEventTimeTrigger>(
          ParseInterval(raw, inner.substr(open + 1, inner.size() - open - 2)));
    }
  } else if (inner == "event_time") {
    trigger = std::make_unique<EventTimeTrigger>();
  } else if (inner == "processing_time") {
    trigger = std::make_unique<ProcessingTimeTrigger>();
  } else if (inner == "never") {
    trigger = std::make_unique<NeverTrigger>();
  } else if (inner == "end_of_stream") {
    trigger = std::make_unique<EndOfStreamTrigger>();
  }
  if (!trigger) {
    throw InvalidArgument(
        fmt::format("unknown trigger '{}' (expected event-time, processing-time, count(N), "
                    "continuous-event-time(INTERVAL, e.g. 1s), purging(<trigger>), never or "
                    "end-of-stream)",
                    Shown(raw)));
  }
  for (int i = 0; i < purging; ++i) {
    trigger = std::make_unique<PurgingTrigger>(std::move(trigger));
  }
  return trigger;
}

}  // namespace tidemark
