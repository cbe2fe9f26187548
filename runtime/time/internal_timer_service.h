#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/core/key.h"
#include "runtime/core/timestamp.h"
#include "runtime/time/processing_time_service.h"
#include "runtime/time/timer_heap_set.h"

namespace tidemark {

/// One registered timer: (timestamp, key, namespace). Mirrors Flink's `InternalTimer` /
/// `TimerHeapInternalTimer`. Value type. Timers are ordered by timestamp first, then key, then
/// namespace, so iteration order is deterministic (Flink leaves the order of equal timestamps
/// unspecified; any order among equal timestamps is a valid Flink order).
///
/// `N` (the namespace) must be copyable and provide `operator<` and `operator==`; the window
/// operator uses its `Window`, keyed process functions a `VoidNamespace` or a string.
template <typename N>
struct InternalTimer {
  Timestamp timestamp = 0;
  Key key;
  N ns{};

  friend bool operator<(const InternalTimer& a, const InternalTimer& b) {
    if (a.timestamp != b.timestamp) {
      return a.timestamp < b.timestamp;
    }
    if (a.key != b.key) {
      return a.key < b.key;
    }
    return a.ns < b.ns;
  }
  friend bool operator==(const InternalTimer& a, const InternalTimer& b) {
    return a.timestamp == b.timestamp && a.key == b.key && a.ns == b.ns;
  }
};

/// The namespace of operators that do not partition their keyed state further (Flink's
/// `VoidNamespace`): every timer of a key lives in this one namespace.
struct VoidNamespace {
  friend bool operator<(const VoidNamespace&, const VoidNamespace&) { return false; }
  friend bool operator==(const VoidNamespace&, const VoidNamespace&) { return true; }
  template <typename H>
  friend H AbslHashValue(H h, const VoidNamespace&) {
    return h;
  }
};

/// Holds "the key being processed" of a keyed operator. The timer service reads it when a timer
/// is registered and sets it before each timer callback. Mirrors Flink's `KeyContext`.
/// Threading: mailbox thread only.
class KeyContext {
 public:
  virtual ~KeyContext() = default;
  virtual void SetCurrentKey(const Key& key) = 0;
  virtual const Key& GetCurrentKey() const = 0;
};

/// A `KeyContext` that simply stores the key (for operators and harnesses without other key state).
class SimpleKeyContext : public KeyContext {
 public:
  void SetCurrentKey(const Key& key) override { key_ = key; }
  const Key& GetCurrentKey() const override { return key_; }

 private:
  Key key_;
};

/// What a timer service calls when a timer fires. Mirrors Flink's `Triggerable`.
/// The current key of the service's `KeyContext` is the timer's key during the call; the
/// callee may register and delete timers (of any key) from inside the callback.
template <typename N>
class Triggerable {
 public:
  virtual ~Triggerable() = default;
  virtual void OnEventTime(const InternalTimer<N>& timer) = 0;
  virtual void OnProcessingTime(const InternalTimer<N>& timer) = 0;
};

/// Per-operator event-time and processing-time timers for keyed state. Mirrors Flink's
/// `InternalTimerServiceImpl`.
///
/// - Each domain is a *set* of (timestamp, key, namespace): registering an existing timer again
///   keeps one; deleting a timer that does not exist does nothing.
/// - `AdvanceWatermark(t)` first sets the current watermark to `t`, then fires every event-time
///   timer with timestamp <= t in ascending timestamp order, including timers registered by the
///   callbacks themselves that are already due.
/// - Processing time: the service keeps exactly one wake-up registered with the
///   `ProcessingTimeService`, for the earliest processing-time timer. Registering an earlier timer
///   cancels it and registers a new one; when the wake-up for time T runs it fires every timer
///   <= T and re-registers a wake-up for the new earliest timer. The wake-up is registered with
///   `ProcessingTimeService::RegisterTimerAfter`, as Flink's `InternalTimerServiceImpl` registers
///   its `nextTimer` with `ProcessingTimeService#registerTimer`: on the system clock and the
///   virtual clock a timer for T fires once processing time has passed T (at T + 1 ms, FLINK-9857),
///   after every record of processing time T; on the `ManualProcessingTimeService` (Flink's
///   `TestProcessingTimeService`, the harness's `setProcessingTime`) it fires at T.
///
/// Threading: mailbox thread only (the processing-time wake-up callbacks run there too).
/// Ownership: borrows the `ProcessingTimeService`, `KeyContext` and `Triggerable`; all three must
/// outlive this object. The destructor cancels a pending wake-up.
/// Each domain is a `TimerHeapSet` (Flink's `HeapPriorityQueueSet`): a heap of plain timers
/// with a hash index, so registering (new or existing) and deleting cost a hash lookup plus
/// O(log n) sifting, firing O(log n).
/// Cost: the key is copied once per registration call.
template <typename N>
class InternalTimerService {
 public:
  using Timer = InternalTimer<N>;

  InternalTimerService(ProcessingTimeService& processing_time, KeyContext& key_context,
                       Triggerable<N>& target)
      : processing_time_(processing_time), key_context_(key_context), target_(target) {}

  ~InternalTimerService() { CancelWakeUp(); }

  InternalTimerService(const InternalTimerService&) = delete;
  InternalTimerService& operator=(const InternalTimerService&) = delete;

  /// Current processing time of the underlying service (ms).
  Timestamp CurrentProcessingTime() const { return processing_time_.GetCurrentProcessingTime(); }
  /// The processing-time service the timers run on (borrowed; see the class comment).
  ProcessingTimeService& processing_time_service() const { return processing_time_; }
  /// The last watermark passed to `AdvanceWatermark`; `kMinTimestamp` before the first.
  Timestamp CurrentWatermark() const { return current_watermark_; }

  /// Registers an event-time timer for the current key. No-op if it already exists.
  void RegisterEventTimeTimer(const N& ns, Timestamp time) {
    event_timers_.Add(Timer{time, key_context_.GetCurrentKey(), ns});
  }
  /// Deletes the current key's event-time timer (ns, time), if registered.
  void DeleteEventTimeTimer(const N& ns, Timestamp time) {
    event_timers_.Remove(Timer{time, key_context_.GetCurrentKey(), ns});
  }

  /// Registers a processing-time timer for the current key; moves the wake-up earlier if needed.
  void RegisterProcessingTimeTimer(const N& ns, Timestamp time) {
    std::optional<Timestamp> old_head;
    if (!processing_timers_.empty()) {
      old_head = processing_timers_.Top().timestamp;
    }
    if (!processing_timers_.Add(Timer{time, key_context_.GetCurrentKey(), ns})) {
      return;
    }
    Timestamp next_trigger_time = old_head.value_or(kMaxTimestamp);
    if (time < next_trigger_time) {
      CancelWakeUp();
      ScheduleWakeUp(time);
    }
  }
  /// Deletes the current key's processing-time timer (ns, time), if registered. Like Flink, the
  /// scheduled wake-up is left alone (it then fires nothing or the next timers).
  void DeleteProcessingTimeTimer(const N& ns, Timestamp time) {
    processing_timers_.Remove(Timer{time, key_context_.GetCurrentKey(), ns});
  }

  /// Restore from a snapshot (`InitializeState`), before any element: sets the current
  /// watermark without firing anything.
  void RestoreWatermark(Timestamp time) { current_watermark_ = time; }
  /// Restore: re-registers an event-time timer of `timer.key` (not the current key).
  void RestoreEventTimeTimer(const Timer& timer) { event_timers_.Add(timer); }
  /// Restore: re-registers a processing-time timer of `timer.key`, moving the wake-up earlier
  /// when needed (a timer already due fires at the next wake-up of the processing-time service).
  void RestoreProcessingTimeTimer(const Timer& timer) {
    const Timestamp old_head =
        processing_timers_.empty() ? kMaxTimestamp : processing_timers_.Top().timestamp;
    if (processing_timers_.Add(timer) && (timer.timestamp < old_head || !wake_up_)) {
      CancelWakeUp();
      ScheduleWakeUp(processing_timers_.Top().timestamp);
    }
  }

  /// Sets the current watermark to `time`, then fires every due event-time timer (see class doc).
  void AdvanceWatermark(Timestamp time) {
    current_watermark_ = time;
    while (!event_timers_.empty() && event_timers_.Top().timestamp <= time) {
      const Timer timer = event_timers_.Pop();
      key_context_.SetCurrentKey(timer.key);
      target_.OnEventTime(timer);
    }
  }

  size_t NumEventTimeTimers() const { return event_timers_.size(); }
  size_t NumProcessingTimeTimers() const { return processing_timers_.size(); }
  /// Number of timers of the domain in namespace `ns` (all keys). O(n).
  size_t NumEventTimeTimers(const N& ns) const { return CountNamespace(event_timers_, ns); }
  size_t NumProcessingTimeTimers(const N& ns) const {
    return CountNamespace(processing_timers_, ns);
  }

  /// A copy of all registered timers, in (timestamp, key, namespace) order. O(n log n): for
  /// snapshots and tests, not per record.
  std::vector<Timer> EventTimeTimers() const { return event_timers_.Sorted(); }
  std::vector<Timer> ProcessingTimeTimers() const { return processing_timers_.Sorted(); }

  /// Time of the one processing-time wake-up this service has registered, if any.
  std::optional<Timestamp> ScheduledWakeUp() const {
    return wake_up_ ? std::optional<Timestamp>(wake_up_time_) : std::nullopt;
  }

 private:
  static size_t CountNamespace(const TimerHeapSet<N>& timers, const N& ns) {
    size_t n = 0;
    timers.ForEach([&](const Timer& t) { n += (t.ns == ns) ? 1 : 0; });
    return n;
  }

  void ScheduleWakeUp(Timestamp time) {
    wake_up_time_ = time;
    wake_up_ =
        processing_time_.RegisterTimerAfter(time, [this](Timestamp t) { OnProcessingTime(t); });
  }

  void CancelWakeUp() {
    if (wake_up_) {
      processing_time_.CancelTimer(*wake_up_);
      wake_up_.reset();
    }
  }

  // Runs as the wake-up callback with the wake-up's timer time (not the time it runs at): the
  // wake-up is consumed; timers registered from callbacks may schedule a new one (see
  // RegisterProcessingTimeTimer), otherwise one is scheduled at the end.
  void OnProcessingTime(Timestamp time) {
    wake_up_.reset();
    while (!processing_timers_.empty() && processing_timers_.Top().timestamp <= time) {
      const Timer timer = processing_timers_.Pop();
      key_context_.SetCurrentKey(timer.key);
      target_.OnProcessingTime(timer);
    }
    if (!processing_timers_.empty() && !wake_up_) {
      ScheduleWakeUp(processing_timers_.Top().timestamp);
    }
  }

  ProcessingTimeService& processing_time_;
  KeyContext& key_context_;
  Triggerable<N>& target_;
  Timestamp current_watermark_ = kMinTimestamp;
  TimerHeapSet<N> event_timers_;
  TimerHeapSet<N> processing_timers_;
  std::optional<ProcessingTimeService::TimerId> wake_up_;
  Timestamp wake_up_time_ = kMinTimestamp;
};

extern template class InternalTimerService<VoidNamespace>;
extern template class InternalTimerService<std::string>;

}  // namespace tidemark
