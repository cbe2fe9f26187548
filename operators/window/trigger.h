#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "operators/window/window.h"
#include "runtime/core/key.h"
#include "runtime/core/stream_record.h"
#include "runtime/time/internal_timer_service.h"

namespace tidemark {

/// What a trigger decides for a window. Mirrors Flink's `TriggerResult`. An expected outcome,
/// so it is a `[[nodiscard]]` value: FIRE emits the window's contents, PURGE clears them.
enum class [[nodiscard]] TriggerResult{kContinue, kFire, kPurge, kFireAndPurge};

constexpr bool IsFire(TriggerResult r) {
  return r == TriggerResult::kFire || r == TriggerResult::kFireAndPurge;
}
constexpr bool IsPurge(TriggerResult r) {
  return r == TriggerResult::kPurge || r == TriggerResult::kFireAndPurge;
}
/// "CONTINUE" | "FIRE" | "PURGE" | "FIRE_AND_PURGE".
const char* ToString(TriggerResult r);

/// Keyed, per-window trigger state: named int64 values (Flink triggers keep small
/// ReducingState<Long>s: a count, a next fire time). Keyed by (key, window, name).
/// Threading: mailbox thread only.
class TriggerStateStore {
 public:
  std::optional<int64_t> Get(const Key& key, const Window& w, const std::string& name) const;
  void Set(const Key& key, const Window& w, const std::string& name, int64_t value);
  void Clear(const Key& key, const Window& w, const std::string& name);
  /// Number of stored values (all keys, windows and names).
  size_t size() const { return values_.size(); }
  /// Calls `f(key, window, name, value)` for every value, in (key, window, name) order.
  template <typename F>
  void ForEach(F&& f) const {
    for (const auto& [k, v] : values_) {
      f(std::get<0>(k), std::get<1>(k), std::get<2>(k), v);
    }
  }

 private:
  using StateKey = std::tuple<Key, Window, std::string>;
  std::map<StateKey, int64_t> values_;
};

/// The context a trigger acts through: timers and state of the current (key, window). Mirrors
/// Flink's `Trigger.TriggerContext` and `Trigger.OnMergeContext` (WindowOperator.Context).
///
/// The key is the `KeyContext`'s current key (the timer service registers timers for it);
/// the window is set with `set_window` by the caller before each trigger call.
/// Ownership: borrows the timer service, key context and state store; they outlive it.
/// Threading: mailbox thread only.
class TriggerContext {
 public:
  TriggerContext(InternalTimerService<Window>& timers, KeyContext& key_context,
                 TriggerStateStore& state)
      : timers_(timers), key_context_(key_context), state_(state) {}

  void set_window(const Window& w) { window_ = w; }
  const Window& window() const { return window_; }
  const Key& key() const { return key_context_.GetCurrentKey(); }

  Timestamp GetCurrentWatermark() const { return timers_.CurrentWatermark(); }
  Timestamp GetCurrentProcessingTime() const { return timers_.CurrentProcessingTime(); }
  void RegisterEventTimeTimer(Timestamp time) { timers_.RegisterEventTimeTimer(window_, time); }
  void DeleteEventTimeTimer(Timestamp time) { timers_.DeleteEventTimeTimer(window_, time); }
  void RegisterProcessingTimeTimer(Timestamp time) {
    timers_.RegisterProcessingTimeTimer(window_, time);
  }
  void DeleteProcessingTimeTimer(Timestamp time) {
    timers_.DeleteProcessingTimeTimer(window_, time);
  }

  /// The current window's value of the named state; nullopt when unset.
  std::optional<int64_t> GetState(const std::string& name) const;
  void SetState(const std::string& name, int64_t value);
  void ClearState(const std::string& name);

  /// During `Trigger::OnMerge` only: the windows being merged into the current window.
  const std::vector<Window>& merged_windows() const { return merged_windows_; }
  void set_merged_windows(std::vector<Window> windows) { merged_windows_ = std::move(windows); }
  /// During `OnMerge`: folds the named state of every merged window into the current window's
  /// with `combine` (Flink's mergePartitionedState with the state's reduce function). The merged
  /// windows' values stay until their `Clear`.
  void MergeState(const std::string& name, int64_t (*combine)(int64_t, int64_t));

 private:
  InternalTimerService<Window>& timers_;
  KeyContext& key_context_;
  TriggerStateStore& state_;
  Window window_;
  std::vector<Window> merged_windows_;
};

/// Decides when a window fires and when it is purged. Mirrors Flink's `Trigger`.
/// Implementations are stateless apart from what they keep through the `TriggerContext`, so one
/// instance serves every key and window of an operator. Threading: mailbox thread only.
class Trigger {
 public:
  virtual ~Trigger() = default;
  /// An element with event timestamp `timestamp` was added to `window`.
  virtual TriggerResult OnElement(const StreamRecord& record, Timestamp timestamp,
                                  const Window& window, TriggerContext& ctx) = 0;
  /// An event-time timer registered through `ctx` for `window` fired at `time`.
  virtual TriggerResult OnEventTime(Timestamp time, const Window& window, TriggerContext& ctx) = 0;
  /// A processing-time timer registered through `ctx` for `window` fired at `time`.
  virtual TriggerResult OnProcessingTime(Timestamp time, const Window& window,
                                         TriggerContext& ctx) = 0;
  /// Whether `OnMerge` is supported (required for merging window assigners).
  virtual bool CanMerge() const { return false; }
  /// `ctx.merged_windows()` were merged into `window`. Default: throws `InvalidArgument`.
  virtual void OnMerge(const Window& window, TriggerContext& ctx);
  /// Removes all timers and state the trigger keeps for `window` (called at window cleanup).
  virtual void Clear(const Window& window, TriggerContext& ctx) = 0;
  /// For logs: "EventTimeTrigger()", "PurgingTrigger(CountTrigger(4))", ...
  virtual std::string ToString() const = 0;
};

/// Fires once the watermark passes the window's max timestamp; fires at once for an element of a
/// window that is already complete (late but within allowed lateness). Flink's `EventTimeTrigger`,
/// the default of event-time assigners.
class EventTimeTrigger : public Trigger {
 public:
  TriggerResult OnElement(const StreamRecord& record, Timestamp timestamp, const Window& window,
                          TriggerContext& ctx) override;
  TriggerResult OnEventTime(Timestamp time, const Window& window, TriggerContext& ctx) override;
  TriggerResult OnProcessingTime(Timestamp time, const Window& window,
                                 TriggerContext& ctx) override;
  bool CanMerge() const override { return true; }
  void OnMerge(const Window& window, TriggerContext& ctx) override;
  void Clear(const Window& window, TriggerContext& ctx) override;
  std::string ToString() const override { return "EventTimeTrigger()"; }
};

/// Fires when processing time passes the window's max timestamp. Flink's `ProcessingTimeTrigger`,
/// the default of processing-time assigners.
class ProcessingTimeTrigger : public Trigger {
 public:
  TriggerResult OnElement(const StreamRecord& record, Timestamp timestamp, const Window& window,
                          TriggerContext& ctx) override;
  TriggerResult OnEventTime(Timestamp time, const Window& window, TriggerContext& ctx) override;
  TriggerResult OnProcessingTime(Timestamp time, const Window& window,
                                 TriggerContext& ctx) override;
  bool CanMerge() const override { return true; }
  void OnMerge(const Window& window, TriggerContext& ctx) override;
  void Clear(const Window& window, TriggerContext& ctx) override;
  std::string ToString() const override { return "ProcessingTimeTrigger()"; }
};

/// Fires (without purging) when a window has received `max_count` elements since it last fired;
/// counts add up when windows merge. Flink's `CountTrigger`. `max_count` must be > 0.
class CountTrigger : public Trigger {
 public:
  explicit CountTrigger(int64_t max_count);
  TriggerResult OnElement(const StreamRecord& record, Timestamp timestamp, const Window& window,
                          TriggerContext& ctx) override;
  TriggerResult OnEventTime(Timestamp time, const Window& window, TriggerContext& ctx) override;
  TriggerResult OnProcessingTime(Timestamp time, const Window& window,
                                 TriggerContext& ctx) override;
  bool CanMerge() const override { return true; }
  void OnMerge(const Window& window, TriggerContext& ctx) override;
  void Clear(const Window& window, TriggerContext& ctx) override;
  std::string ToString() const override;

 private:
  int64_t max_count_;
};

/// Fires repeatedly every `interval_ms` of event time (at multiples of the interval after the
/// first element, capped at the window's max timestamp) and at the window's end. Flink's
/// `ContinuousEventTimeTrigger`. `interval_ms` must be > 0.
class ContinuousEventTimeTrigger : public Trigger {
 public:
  explicit ContinuousEventTimeTrigger(int64_t interval_ms);
  TriggerResult OnElement(const StreamRecord& record, Timestamp timestamp, const Window& window,
                          TriggerContext& ctx) override;
  TriggerResult OnEventTime(Timestamp time, const Window& window, TriggerContext& ctx) override;
  TriggerResult OnProcessingTime(Timestamp time, const Window& window,
                                 TriggerContext& ctx) override;
  bool CanMerge() const override { return true; }
  void OnMerge(const Window& window, TriggerContext& ctx) override;
  void Clear(const Window& window, TriggerContext& ctx) override;
  std::string ToString() const override;

 private:
  void RegisterNextFireTimestamp(Timestamp time, const Window& window, TriggerContext& ctx);
  int64_t interval_ms_;
};

/// Wraps a trigger and turns every FIRE into FIRE_AND_PURGE. Flink's `PurgingTrigger`.
/// Owns the nested trigger.
class PurgingTrigger : public Trigger {
 public:
  explicit PurgingTrigger(std::unique_ptr<Trigger> nested);
  TriggerResult OnElement(const StreamRecord& record, Timestamp timestamp, const Window& window,
                          TriggerContext& ctx) override;
  TriggerResult OnEventTime(Timestamp time, const Window& window, TriggerContext& ctx) override;
  TriggerResult OnProcessingTime(Timestamp time, const Window& window,
                                 TriggerContext& ctx) override;
  bool CanMerge() const override { return nested_->CanMerge(); }
  void OnMerge(const Window& window, TriggerContext& ctx) override;
  void Clear(const Window& window, TriggerContext& ctx) override;
  std::string ToString() const override;

 private:
  static TriggerResult Purging(TriggerResult r);
  std::unique_ptr<Trigger> nested_;
};

/// Never fires (Flink's `GlobalWindows.NeverTrigger`, the default of `GlobalWindows`).
class NeverTrigger : public Trigger {
 public:
  TriggerResult OnElement(const StreamRecord&, Timestamp, const Window&, TriggerContext&) override {
    return TriggerResult::kContinue;
  }
  TriggerResult OnEventTime(Timestamp, const Window&, TriggerContext&) override {
    return TriggerResult::kContinue;
  }
  TriggerResult OnProcessingTime(Timestamp, const Window&, TriggerContext&) override {
    return TriggerResult::kContinue;
  }
  bool CanMerge() const override { return true; }
  void OnMerge(const Window&, TriggerContext&) override {}
  void Clear(const Window&, TriggerContext&) override {}
  std::string ToString() const override { return "NeverTrigger()"; }
};

/// Fires exactly once, when event time reaches the window's max timestamp; for the global window
/// that is the MAX watermark at end of input. Flink's `GlobalWindows.EndOfStreamTrigger`.
class EndOfStreamTrigger : public Trigger {
 public:
  TriggerResult OnElement(const StreamRecord& record, Timestamp timestamp, const Window& window,
                          TriggerContext& ctx) override;
  TriggerResult OnEventTime(Timestamp time, const Window& window, TriggerContext& ctx) override;
  TriggerResult OnProcessingTime(Timestamp, const Window&, TriggerContext&) override {
    return TriggerResult::kContinue;
  }
  bool CanMerge() const override { return true; }
  void OnMerge(const Window& window, TriggerContext& ctx) override;
  void Clear(const Window& window, TriggerContext& ctx) override;
  std::string ToString() const override { return "EndOfStreamTrigger()"; }
};

/// Deepest `purging(purging(...))` nesting `MakeTrigger` accepts: each level is one more
/// PurgingTrigger that every element and timer passes through.
inline constexpr int kMaxTriggerNesting = 8;

/// Builds a trigger from its spec: `event-time`, `processing-time`, `count(N)` (N >= 1 elements),
/// `continuous-event-time(INTERVAL)` (a positive duration with a unit, e.g. `1s`; a bare number is
/// an error), `purging(<trigger>)`, `never`, `end-of-stream` (`_` is accepted for `-` in names).
/// Linear in the length of `spec`. Throws `InvalidArgument` (`trigger 'count(-1)': count(N) needs
/// at least 1 element, got -1`) for anything else, including nesting beyond kMaxTriggerNesting.
std::unique_ptr<Trigger> MakeTrigger(const std::string& spec);

}  // namespace tidemark
