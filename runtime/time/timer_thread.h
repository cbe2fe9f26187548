#pragma once

#include <memory>
#include <thread>

#include "runtime/core/asio.h"

namespace tidemark {

/// One Boost.Asio `io_context` on its own thread, shared by the tasks of a job execution for
/// their system-clock timers. It never runs operator code: a due timer only posts a Mail into the
/// owning task's mailbox.
/// Lifetime: must be stopped (`Stop`, or the destructor) before the mailboxes it posts into die.
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

 private:
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::thread thread_;
};

}  // namespace tidemark
