#include "runtime/time/timer_thread.h"

namespace tidemark {

TimerThread::TimerThread()
    : work_(boost::asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}

TimerThread::~TimerThread() {
  Stop();
}

void TimerThread::Stop() {
  work_.reset();
  io_.stop();
  if (thread_.joinable()) {
    thread_.join();
  }
}

}  // namespace tidemark
