#pragma once

#include <map>
#include <utility>

#include "runtime/time/processing_time_service.h"

namespace tidemark {

/// The one-shot processing-time timers of one task, ordered by (time, registration), for the
/// clocks whose timers run inside the task (manual and virtual). Single-threaded.
class TimerQueue {
 public:
  using TimerId = ProcessingTimeService::TimerId;
  using Callback = ProcessingTimeService::Callback;

  TimerId Register(Timestamp time_ms, Callback callback) {
    const TimerId id = next_id_++;
    timers_.emplace(std::make_pair(time_ms, id), std::move(callback));
    return id;
  }

  void Cancel(TimerId id) {
    for (auto it = timers_.begin(); it != timers_.end(); ++it) {
      if (it->first.second == id) {
        timers_.erase(it);
        return;
      }
    }
  }

  /// Runs every timer due at `now_ms` (including ones that callbacks register for <= now), each
  /// with its registered time.
  void FireDue(Timestamp now_ms) {
    while (!timers_.empty() && timers_.begin()->first.first <= now_ms) {
      auto node = timers_.extract(timers_.begin());
      node.mapped()(node.key().first);
    }
  }

  size_t size() const { return timers_.size(); }
  /// Time of the earliest timer, or kMaxTimestamp when none.
  Timestamp NextTime() const {
    return timers_.empty() ? kMaxTimestamp : timers_.begin()->first.first;
  }

 private:
  TimerId next_id_ = 1;
  std::map<std::pair<Timestamp, TimerId>, Callback> timers_;
};

}  // namespace tidemark
