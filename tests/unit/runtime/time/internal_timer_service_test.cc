#include "runtime/time/internal_timer_service.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/time/manual_processing_time_service.h"

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

}  // namespace
}  // namespace tidemark
