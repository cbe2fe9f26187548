#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

namespace tidemark {

/// The one thing a StreamTask sleeps on. Mail, channel pushes (for the consumer), channel pops
/// (for a producer waiting on a full channel) and clock advances all call `Signal`.
/// A signal sent while nobody waits is remembered, so no wake-up is lost.
/// Thread-safe: `Signal` from any thread; `Wait*` and `WakeNoLaterThan` from the owning task
/// thread only.
class Wakeup {
 public:
  void Signal() {
    if (!signaled_.exchange(true, std::memory_order_acq_rel)) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_one();
    }
  }

  /// Blocks until signalled (consuming the signal), or until the `WakeNoLaterThan` deadline.
  void Wait() {
    if (deadline_) {
      WaitFor(*deadline_ - std::chrono::steady_clock::now());
      return;
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return signaled_.load(std::memory_order_acquire); });
    signaled_.store(false, std::memory_order_release);
  }

  /// Blocks until signalled, `timeout` passed, or the deadline set by `WakeNoLaterThan` (if
  /// earlier) came; the deadline is then cleared. Returns true when signalled.
  bool WaitFor(std::chrono::nanoseconds timeout) {
    auto until = std::chrono::steady_clock::now() + timeout;
    if (deadline_ && *deadline_ < until) {
      until = *deadline_;
    }
    deadline_.reset();
    std::unique_lock<std::mutex> lock(mu_);
    bool got = cv_.wait_until(lock, until, [this] { return signaled_.load(std::memory_order_acquire); });
    signaled_.store(false, std::memory_order_release);
    return got;
  }

  /// The owner's next wait ends by `deadline` at the latest (the earliest of several calls
  /// counts): a source pacing its records with sub-millisecond gaps asks to be polled again
  /// then, instead of sleeping on its thread with records still unflushed.
  void WakeNoLaterThan(std::chrono::steady_clock::time_point deadline) {
    if (!deadline_ || deadline < *deadline_) {
      deadline_ = deadline;
    }
  }

  /// Consumes a pending signal without blocking.
  void Clear() { signaled_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> signaled_{false};
  std::optional<std::chrono::steady_clock::time_point> deadline_;  // owner thread only
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace tidemark
