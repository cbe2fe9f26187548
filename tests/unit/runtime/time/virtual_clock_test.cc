#include "runtime/time/virtual_clock.h"

#include <vector>

#include <gtest/gtest.h>

#include "runtime/time/manual_processing_time_service.h"

namespace tidemark {
namespace {

TEST(VirtualProcessingTimeServiceTest, FiresDueTimersInTimeThenRegistrationOrder) {
  VirtualClock clock;
  VirtualProcessingTimeService pts(clock);
  std::vector<std::string> fired;
  pts.RegisterTimer(200, [&](Timestamp t) { fired.push_back("a@" + std::to_string(t)); });
  pts.RegisterTimer(100, [&](Timestamp t) { fired.push_back("b@" + std::to_string(t)); });
  pts.RegisterTimer(200, [&](Timestamp t) { fired.push_back("c@" + std::to_string(t)); });
  pts.FireDueTimers();
  EXPECT_TRUE(fired.empty());
  clock.AdvanceTo(150);
  pts.FireDueTimers();
  EXPECT_EQ(fired, (std::vector<std::string>{"b@100"}));
  clock.AdvanceTo(210);
  pts.FireDueTimers();
  EXPECT_EQ(fired, (std::vector<std::string>{"b@100", "a@200", "c@200"}));
  EXPECT_EQ(pts.GetCurrentProcessingTime(), 210);
}

TEST(VirtualClockTest, NeverMovesBack) {
  VirtualClock clock;
  clock.AdvanceTo(500);
  clock.AdvanceTo(300);
  EXPECT_EQ(clock.Now(), 500);
}

TEST(VirtualProcessingTimeServiceTest, NextTimerTimeIsTheTasksNextEventAndFiringReportsWork) {
  VirtualClock clock;
  VirtualProcessingTimeService pts(clock);
  EXPECT_EQ(pts.NextTimerTime(), kMaxTimestamp);
  std::vector<Timestamp> fired;
  pts.RegisterTimer(300, [&](Timestamp t) { fired.push_back(t); });
  const auto id = pts.RegisterTimer(100, [&](Timestamp t) { fired.push_back(t); });
  EXPECT_EQ(pts.NextTimerTime(), 100);
  pts.CancelTimer(id);
  EXPECT_EQ(pts.NextTimerTime(), 300);
  EXPECT_FALSE(pts.FireDueTimers());
  clock.AdvanceTo(300);
  EXPECT_TRUE(pts.FireDueTimers());
  EXPECT_FALSE(pts.FireDueTimers());
  EXPECT_EQ(fired, (std::vector<Timestamp>{300}));
  EXPECT_EQ(pts.NextTimerTime(), kMaxTimestamp);
}

TEST(ManualProcessingTimeServiceTest, CancelledTimerDoesNotFire) {
  ManualProcessingTimeService pts;
  int fired = 0;
  auto id = pts.RegisterTimer(10, [&](Timestamp) { ++fired; });
  pts.RegisterTimer(20, [&](Timestamp) { fired += 10; });
  pts.CancelTimer(id);
  pts.AdvanceTo(30);
  EXPECT_EQ(fired, 10);
}

TEST(ManualProcessingTimeServiceTest, TimerRegisteredByACallbackForNowAlsoFires) {
  ManualProcessingTimeService pts;
  std::vector<Timestamp> fired;
  pts.RegisterTimer(10, [&](Timestamp t) {
    fired.push_back(t);
    pts.RegisterTimer(5, [&](Timestamp t2) { fired.push_back(t2); });
  });
  pts.AdvanceTo(10);
  EXPECT_EQ(fired, (std::vector<Timestamp>{10, 5}));
}

}  // namespace
}  // namespace tidemark
