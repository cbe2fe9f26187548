#include "runtime/time/timer_thread.h"

#include <future>
#include <new>
#include <string>

#include <gtest/gtest.h>

#include "runtime/core/thread_entry.h"

namespace tidemark {
namespace {

TEST(TimerThreadTest, HandlerThatFailsToAllocateFailsThroughTheHandlerAndTheThreadRunsOn) {
  TimerThread timers;
  std::promise<std::string> cause;
  timers.SetFailureHandler([&cause](const std::string& c) { cause.set_value(c); });
  boost::asio::post(timers.io_context(), [] { throw std::bad_alloc(); });
  EXPECT_EQ(cause.get_future().get(), OutOfMemoryCause(AddressSpaceLimitBytes()));

  // The thread survived: the next handler still runs.
  std::promise<int> ran;
  boost::asio::post(timers.io_context(), [&ran] { ran.set_value(7); });
  EXPECT_EQ(ran.get_future().get(), 7);
  timers.Stop();
}

TEST(TimerThreadTest, NonStandardExceptionIsReportedAsUnknown) {
  TimerThread timers;
  std::promise<std::string> cause;
  timers.SetFailureHandler([&cause](const std::string& c) { cause.set_value(c); });
  boost::asio::post(timers.io_context(), [] { throw 42; });
  EXPECT_EQ(cause.get_future().get(), "unknown exception");
}

}  // namespace
}  // namespace tidemark
