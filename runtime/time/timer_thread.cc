#include "runtime/time/timer_thread.h"

#include "runtime/core/logging.h"
#include "runtime/core/thread_entry.h"

namespace tidemark {

TimerThread::TimerThread() : work_(boost::asio::make_work_guard(io_)), thread_([this] { Run(); }) {}

TimerThread::~TimerThread() {
  Stop();
}

void TimerThread::Run() {
  pthread_setname_np(pthread_self(), "tm-timers");
  bool stopped = false;
  while (!stopped) {
    // Asio lets a handler's exception out of run(); run() may be called again after it.
    RunThreadEntry(
        "timer thread",
        [&] {
          io_.run();
          stopped = true;
        },
        [this](const std::string& cause) { OnFailure(cause); });
  }
}

void TimerThread::SetFailureHandler(std::function<void(const std::string& cause)> handler) {
  MutexLock lock(mu_);
  on_failure_ = std::move(handler);
}

void TimerThread::OnFailure(const std::string& cause) {
  std::function<void(const std::string&)> handler;
  {
    MutexLock lock(mu_);
    handler = on_failure_;
  }
  if (handler) {
    handler(cause);
  } else {
    GetLogger("task")->error("timer thread: a timer was lost: {}", cause);
  }
}

void TimerThread::Stop() {
  work_.reset();
  io_.stop();
  if (thread_.joinable()) {
    thread_.join();
  }
}

}  // namespace tidemark
