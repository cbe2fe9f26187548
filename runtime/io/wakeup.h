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
///
/// `Signal` takes the lock and makes a futex call only when the owner is parked (or about to
/// park): a push to a busy consumer is one atomic exchange. The notify comes after the unlock,
/// so the woken thread does not block again on the mutex the signaller still holds. The flag
/// and the parked count are read crosswise under sequential consistency: the waiter announces
/// itself and then reads the flag, the signaller sets the flag and then reads the count, so at
/// least one of them sees the other (the waiter does not sleep, or the signaller notifies).
/// Thread-safe: `Signal` from any thread; `Wait*`, `WakeNoLaterThan` and `Clear` from the owning
/// task thread only.
class Wakeup {
 public:
  void Signal() {
    if (signaled_.exchange(true, std::memory_order_seq_cst)) {
      return;  // already pending: whoever set it notifies, or the owner has not parked since
    }
    if (parked_.load(std::memory_order_seq_cst) == 0) {
      return;  // the owner is running: it sees the flag before it parks
    }
    { std::lock_guard<std::mutex> lock(mu_); }  // the owner is in cv_.wait or before its check
    cv_.notify_one();
  }

  /// Blocks until signalled (consuming the signal), or until the `WakeNoLaterThan` deadline.
  void Wait() {
    if (deadline_) {
      WaitFor(*deadline_ - std::chrono::steady_clock::now());
      return;
    }
    std::unique_lock<std::mutex> lock(mu_);
    parked_.fetch_add(1, std::memory_order_seq_cst);
    cv_.wait(lock, [this] { return signaled_.load(std::memory_order_seq_cst); });
    parked_.fetch_sub(1, std::memory_order_relaxed);
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
    parked_.fetch_add(1, std::memory_order_seq_cst);
    cv_.wait_until(lock, until, [this] { return signaled_.load(std::memory_order_seq_cst); });
    parked_.fetch_sub(1, std::memory_order_relaxed);
    // Consumed by an exchange: a signal sent just after the timeout stays pending for next time.
    return signaled_.exchange(false, std::memory_order_acq_rel);
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
  std::atomic<int> parked_{0};  ///< owners inside Wait / WaitFor (0 or 1)
  std::optional<std::chrono::steady_clock::time_point> deadline_;  // owner thread only
  // Guards no data (the flag is atomic): it only orders the owner's park against Signal's notify,
  // so a plain std::mutex with std::condition_variable, unannotated, on this hot path.
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace tidemark
