#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace tidemark {

/// The one thing a StreamTask sleeps on. Mail, channel pushes (for the consumer), channel pops
/// (for a producer waiting on a full channel) and clock advances all call `Signal`.
/// A signal sent while nobody waits is remembered, so no wake-up is lost.
/// Thread-safe: `Signal` from any thread; `Wait*` from the owning task thread only.
class Wakeup {
 public:
  void Signal() {
    if (!signaled_.exchange(true, std::memory_order_acq_rel)) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_one();
    }
  }

  /// Blocks until signalled (consuming the signal).
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return signaled_.load(std::memory_order_acquire); });
    signaled_.store(false, std::memory_order_release);
  }

  /// Blocks until signalled or `timeout` passed. Returns true when signalled.
  bool WaitFor(std::chrono::nanoseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    bool got = cv_.wait_for(lock, timeout, [this] { return signaled_.load(std::memory_order_acquire); });
    signaled_.store(false, std::memory_order_release);
    return got;
  }

  /// Consumes a pending signal without blocking.
  void Clear() { signaled_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> signaled_{false};
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace tidemark
