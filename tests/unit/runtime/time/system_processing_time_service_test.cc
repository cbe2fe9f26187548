// The wall-clock processing-time service: a timer far in the future (a duration written in the
// hundreds of thousands of days, a time near Long.MAX) must not fire; its delay in the steady
// timer's int64 nanoseconds used to wrap to a negative expiry, which fired at once.
#include "runtime/time/system_processing_time_service.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/timestamp.h"
#include "runtime/io/wakeup.h"
#include "runtime/mailbox/task_mailbox.h"
#include "runtime/time/timer_thread.h"

namespace tidemark {
namespace {

TEST(SystemProcessingTimeServiceTest, ATimerCenturiesAheadDoesNotFireBeforeANearOne) {
  TimerThread timers;
  Wakeup wakeup;
  TaskMailbox mailbox(&wakeup);
  SystemProcessingTimeService pts(timers, mailbox);
  const Timestamp now = pts.GetCurrentProcessingTime();
  constexpr int64_t kDayMs = int64_t{24} * 3600 * 1000;
  std::vector<std::string> fired;
  // 200,000 days: 1.7e22 ns, wrapped to about -13,500 days. 106,751,991,166 days: near Long.MAX.
  pts.RegisterTimer(now + 200000 * kDayMs, [&fired](Timestamp) { fired.push_back("200000d"); });
  pts.RegisterTimer(kMaxTimestamp, [&fired](Timestamp) { fired.push_back("MAX"); });
  pts.RegisterTimer(now + 20, [&fired](Timestamp) { fired.push_back("20ms"); });
  // Run mails until the near timer fired (the far ones, registered first, came before it when
  // they wrapped). Not a timing assertion: the wait only ends the test when the timer thread
  // never delivers at all.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (fired.empty() || fired.back() != "20ms") {
    ASSERT_LT(std::chrono::steady_clock::now(), give_up) << "the 20 ms timer never fired";
    if (std::optional<Mail> mail = mailbox.TryTake()) {
      mail->action();
    } else {
      wakeup.WaitFor(std::chrono::milliseconds(100));
    }
  }
  while (std::optional<Mail> mail = mailbox.TryTake()) {
    mail->action();
  }
  EXPECT_EQ(fired, std::vector<std::string>{"20ms"});
  timers.Stop();
}

}  // namespace
}  // namespace tidemark
