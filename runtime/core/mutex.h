#pragma once

#include <absl/base/thread_annotations.h>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace tidemark {

/// A mutex that clang's thread-safety analysis understands: members it protects are declared
/// `ABSL_GUARDED_BY(mu_)` and functions that expect it held `ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_)`;
/// clang-tidy (`.clang-tidy`, `-Wthread-safety`) then reports every access made without it.
/// libstdc++'s `std::mutex` carries no such annotations, and `absl::Mutex` from Debian's
/// (uninstrumented) abseil would hide its happens-before edges from ThreadSanitizer, so this wraps
/// `std::mutex` (which TSan intercepts) and only adds the annotations.
///
/// Thread-safe. Not recursive: locking it twice on one thread deadlocks. Lock it through
/// `MutexLock`; `Lock`/`Unlock` are for the rare hand-over-hand case.
class ABSL_LOCKABLE Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() { mu_.lock(); }
  void Unlock() ABSL_UNLOCK_FUNCTION() { mu_.unlock(); }
  /// Tells the analysis the calling thread holds this mutex (inside a lambda called under it,
  /// which the analysis looks at on its own). Checks nothing at run time.
  void AssertHeld() const ABSL_ASSERT_EXCLUSIVE_LOCK() {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

/// Holds a `Mutex` for its scope (`std::lock_guard` with annotations).
class ABSL_SCOPED_LOCKABLE MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ABSL_EXCLUSIVE_LOCK_FUNCTION(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() ABSL_UNLOCK_FUNCTION() { mu_.Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mu_;
};

/// A condition variable for `Mutex` (`std::condition_variable` underneath). Every wait requires
/// the mutex held and returns with it held again; wake-ups may be spurious, so callers wait in a
/// loop on their condition (`while (!ready_) cv_.Wait(mu_);`), which keeps the guarded reads
/// inside the analysed scope. Thread-safe.
class CondVar {
 public:
  void Wait(Mutex& mu) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held: the caller's MutexLock unlocks it
  }
  /// Waits at most `timeout`; returns false when it ran out (the condition may still have changed).
  template <class Rep, class Period>
  bool WaitFor(Mutex& mu, std::chrono::duration<Rep, Period> timeout)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool signalled = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return signalled;
  }
  /// Waits until `deadline` at most; returns false when it passed.
  template <class Clock, class Duration>
  bool WaitUntil(Mutex& mu, std::chrono::time_point<Clock, Duration> deadline)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    const bool signalled = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return signalled;
  }
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

}  // namespace tidemark
