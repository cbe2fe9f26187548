#include "runtime/time/internal_timer_service.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/time/manual_processing_time_service.h"
#include "runtime/time/virtual_clock.h"

namespace tidemark {
namespace {

using Fired = std::pair<std::string, Timestamp>;  // "<key>/<ns>", time

// Records every firing as "<key>/<namespace>" and checks that the key context was set.
class RecordingTarget : public Triggerable<std::string> {
 public:
  explicit RecordingTarget(KeyContext& keys) : keys_(keys) {}
  void OnEventTime(const InternalTimer<std::string>& t) override { Record(t, event); }
  void OnProcessingTime(const InternalTimer<std::string>& t) override { Record(t, processing); }

  std::vector<Fired> event;
  std::vector<Fired> processing;
  std::function<void(const InternalTimer<std::string>&)> on_fire;

 private:
  void Record(const InternalTimer<std::string>& t, std::vector<Fired>& into) {
    EXPECT_EQ(keys_.GetCurrentKey(), t.key);
    into.emplace_back(std::get<std::string>(t.key[0]) + "/" + t.ns, t.timestamp);
    if (on_fire) {
      on_fire(t);
    }
  }
  KeyContext& keys_;
};

class InternalTimerServiceTest : public ::testing::Test {
 protected:
  void SetKey(const std::string& k) { keys_.SetCurrentKey(Key{Value{k}}); }

  ManualProcessingTimeService clock_;
  SimpleKeyContext keys_;
  RecordingTarget target_{keys_};
  InternalTimerService<std::string> timers_{clock_, keys_, target_};
};

TEST_F(InternalTimerServiceTest, RegisteringTheSameTimerTwiceStoresOne) {
  SetKey("a");
  timers_.RegisterEventTimeTimer("ns", 42);
  timers_.RegisterEventTimeTimer("ns", 42);
  timers_.RegisterEventTimeTimer("other", 42);
  SetKey("b");
  timers_.RegisterEventTimeTimer("ns", 42);
  EXPECT_EQ(timers_.NumEventTimeTimers(), 3u);
  EXPECT_EQ(timers_.NumEventTimeTimers("ns"), 2u);
  timers_.AdvanceWatermark(42);
  EXPECT_EQ(target_.event, (std::vector<Fired>{{"a/ns", 42}, {"a/other", 42}, {"b/ns", 42}}));
  EXPECT_EQ(timers_.NumEventTimeTimers(), 0u);
}

TEST_F(InternalTimerServiceTest, FiresDueEventTimersInTimeOrderWithTheirKey) {
  SetKey("x");
  timers_.RegisterEventTimeTimer("ns", 30);
  SetKey("y");
  timers_.RegisterEventTimeTimer("ns", 10);
  SetKey("z");
  timers_.RegisterEventTimeTimer("ns", 20);
  timers_.RegisterEventTimeTimer("ns", 31);
  timers_.AdvanceWatermark(30);
  EXPECT_EQ(target_.event, (std::vector<Fired>{{"y/ns", 10}, {"z/ns", 20}, {"x/ns", 30}}));
  EXPECT_EQ(timers_.CurrentWatermark(), 30);
  EXPECT_EQ(timers_.NumEventTimeTimers(), 1u);
}

TEST_F(InternalTimerServiceTest, WatermarkIsUpdatedBeforeTimersFire) {
  SetKey("k");
  timers_.RegisterEventTimeTimer("ns", 5);
  std::vector<Timestamp> seen;
  target_.on_fire = [&](const InternalTimer<std::string>&) {
    seen.push_back(timers_.CurrentWatermark());
  };
  timers_.AdvanceWatermark(17);
  EXPECT_EQ(seen, std::vector<Timestamp>{17});
}

TEST_F(InternalTimerServiceTest, TimersRegisteredWhileFiringFireWhenDue) {
  SetKey("k");
  timers_.RegisterEventTimeTimer("ns", 10);
  target_.on_fire = [&](const InternalTimer<std::string>& t) {
    if (t.timestamp == 10) {
      timers_.RegisterEventTimeTimer("ns", 15);  // due: fires in the same advance
      timers_.RegisterEventTimeTimer("ns", 25);  // not due
    }
  };
  timers_.AdvanceWatermark(20);
  EXPECT_EQ(target_.event, (std::vector<Fired>{{"k/ns", 10}, {"k/ns", 15}}));
  EXPECT_EQ(timers_.NumEventTimeTimers(), 1u);
}

TEST_F(InternalTimerServiceTest, DeleteRemovesOnlyThatTimerAndIgnoresUnknownOnes) {
  SetKey("a");
  timers_.DeleteEventTimeTimer("ns", 42);  // not registered: no-op
  timers_.RegisterEventTimeTimer("ns", 42);
  timers_.RegisterEventTimeTimer("ns", 43);
  SetKey("b");
  timers_.RegisterEventTimeTimer("ns", 42);
  SetKey("a");
  timers_.DeleteEventTimeTimer("ns", 42);
  timers_.AdvanceWatermark(100);
  EXPECT_EQ(target_.event, (std::vector<Fired>{{"b/ns", 42}, {"a/ns", 43}}));
}

TEST_F(InternalTimerServiceTest, ProcessingTimeKeepsOneWakeUpAtTheEarliestTimer) {
  SetKey("k");
  timers_.RegisterProcessingTimeTimer("ns", 20);
  EXPECT_EQ(timers_.ScheduledWakeUp(), 20);
  EXPECT_EQ(clock_.NumPendingTimers(), 1u);
  timers_.RegisterProcessingTimeTimer("ns", 10);  // earlier: the wake-up moves
  EXPECT_EQ(timers_.ScheduledWakeUp(), 10);
  EXPECT_EQ(clock_.NumPendingTimers(), 1u);
  timers_.RegisterProcessingTimeTimer("ns", 30);  // later: no new wake-up
  EXPECT_EQ(clock_.NumPendingTimers(), 1u);

  clock_.AdvanceTo(10);
  EXPECT_EQ(target_.processing, (std::vector<Fired>{{"k/ns", 10}}));
  EXPECT_EQ(timers_.ScheduledWakeUp(), 20);
  clock_.AdvanceTo(35);
  EXPECT_EQ(target_.processing, (std::vector<Fired>{{"k/ns", 10}, {"k/ns", 20}, {"k/ns", 30}}));
  EXPECT_EQ(timers_.ScheduledWakeUp(), std::nullopt);
  EXPECT_EQ(clock_.NumPendingTimers(), 0u);
}

TEST_F(InternalTimerServiceTest, TimerRegisteredInProcessingCallbackLeavesOneWakeUp) {
  SetKey("k");
  timers_.RegisterProcessingTimeTimer("ns", 10);
  target_.on_fire = [&](const InternalTimer<std::string>& t) {
    timers_.RegisterProcessingTimeTimer("ns", t.timestamp + 10);
  };
  clock_.AdvanceTo(10);
  EXPECT_EQ(clock_.NumPendingTimers(), 1u);
  EXPECT_EQ(clock_.NextTimerTime(), 20);
  EXPECT_EQ(timers_.NumProcessingTimeTimers(), 1u);
}

// Flink's running job (SystemProcessingTimeService#registerTimer with
// ProcessingTimeServiceUtil#getProcessingTimeDelay, FLINK-9857): a processing-time timer for T
// fires only once processing time has passed T, at T + 1 ms, with its own time T; a timer
// registered for a time already passed fires at once. The virtual clock does the same.
TEST(InternalTimerServiceVirtualClockTest, ProcessingTimerForTFiresOnlyAfterT) {
  VirtualClock clock;
  VirtualProcessingTimeService pts(clock);
  SimpleKeyContext keys;
  RecordingTarget target(keys);
  std::vector<Timestamp> now_at_fire;
  target.on_fire = [&](const InternalTimer<std::string>&) {
    now_at_fire.push_back(pts.GetCurrentProcessingTime());
  };
  InternalTimerService<std::string> timers(pts, keys, target);
  keys.SetCurrentKey(Key{Value{std::string("k")}});
  timers.RegisterProcessingTimeTimer("ns", 100);
  EXPECT_EQ(timers.ScheduledWakeUp(), 100);
  EXPECT_EQ(pts.NextTimerTime(), 101);  // the clock's next event: T + 1 ms
  clock.AdvanceTo(100);
  EXPECT_FALSE(pts.FireDueTimers());  // processing time 100 has not passed 100 yet
  EXPECT_TRUE(target.processing.empty());
  clock.AdvanceTo(101);
  EXPECT_TRUE(pts.FireDueTimers());
  EXPECT_EQ(target.processing, (std::vector<Fired>{{"k/ns", 100}}));
  EXPECT_EQ(now_at_fire, (std::vector<Timestamp>{101}));
  // A timer for a time already passed (50 < now 101) is due at once, not at 51.
  timers.RegisterProcessingTimeTimer("ns", 50);
  EXPECT_EQ(pts.NextTimerTime(), 50);
  EXPECT_TRUE(pts.FireDueTimers());
  EXPECT_EQ(target.processing, (std::vector<Fired>{{"k/ns", 100}, {"k/ns", 50}}));
  EXPECT_EQ(now_at_fire, (std::vector<Timestamp>{101, 101}));
}

// Flink's test harness (TestProcessingTimeService#setCurrentTime(T) runs every timer <= T): the
// ManualProcessingTimeService, which the scenario cases run on, fires the timer for T at T.
TEST_F(InternalTimerServiceTest, ManualClockFiresProcessingTimerForTAtTAsFlinksHarness) {
  SetKey("k");
  timers_.RegisterProcessingTimeTimer("ns", 100);
  EXPECT_EQ(clock_.NextTimerTime(), 100);
  clock_.AdvanceTo(100);
  EXPECT_EQ(target_.processing, (std::vector<Fired>{{"k/ns", 100}}));
}

}  // namespace
}  // namespace tidemark
