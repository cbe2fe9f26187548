#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "runtime/core/asio.h"
#include "runtime/core/mutex.h"

namespace tidemark {

/// One Boost.Asio `io_context` on its own thread, shared by the tasks of a job execution for
/// their system-clock timers. It never runs operator code: a due timer only posts a Mail into the
/// owning task's mailbox.
/// Lifetime: must be stopped (`Stop`, or the destructor) before the mailboxes it posts into die.
/// A handler that throws (std::bad_alloc turning a due timer into a mail under a tight memory
/// limit) does not end the thread: the failure handler hears the cause, as the job's failure,
/// and the thread runs on for the other timers.
/// Thread-safe.
class TimerThread {
 public:
  TimerThread();
  ~TimerThread();
  TimerThread(const TimerThread&) = delete;
  TimerThread& operator=(const TimerThread&) = delete;

  boost::asio::io_context& io_context() { return io_; }
  /// Stops the io_context and joins its thread; pending timers are dropped. Idempotent.
  void Stop();

  /// Called on the timer thread with the cause (see FailureCause) when a handler threw: the
  /// timer it handled is lost, so the owner fails what depends on it (JobExecution fails the
  /// job). Without a handler the cause is logged. Set before the first timer; thread-safe.
  void SetFailureHandler(std::function<void(const std::string& cause)> handler);

 private:
  void Run();
  void OnFailure(const std::string& cause);

  Mutex mu_;
  std::function<void(const std::string&)> on_failure_ ABSL_GUARDED_BY(mu_);
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace tidemark
