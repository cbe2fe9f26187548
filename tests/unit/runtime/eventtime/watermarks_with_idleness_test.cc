#include "runtime/eventtime/watermarks_with_idleness.h"

#include <type_traits>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/eventtime/bounded_out_of_orderness_watermarks.h"
#include "runtime/eventtime/pausable_relative_clock.h"
#include "runtime/eventtime/punctuated_watermarks.h"
#include "tests/unit/runtime/eventtime/recording_watermark_output.h"

namespace tidemark {
namespace {

using std::chrono::milliseconds;
using Calls = std::vector<std::string>;
constexpr int64_t kStart = 1'000'000'000;  // not 0: 0 is the "no countdown" sentinel

void Event(WatermarkGenerator& g, Timestamp ts, WatermarkOutput& out) {
  StreamRecord record(Row{}, ts);
  g.OnEvent(record, ts, out);
}

TEST(IdlenessTimerTest, RejectsZeroAndNegativeTimeouts) {
  ManualRelativeClock clock(kStart);
  EXPECT_THROW(IdlenessTimer(clock, milliseconds(0)), InvalidArgument);
  EXPECT_THROW(IdlenessTimer(clock, milliseconds(-1)), InvalidArgument);
}

TEST(IdlenessTimerTest, FirstQuietCheckStartsTheCountdown) {
  ManualRelativeClock clock(kStart);
  IdlenessTimer timer(clock, milliseconds(10));
  EXPECT_FALSE(timer.CheckIfIdle());  // starts the countdown
  clock.AdvanceMillis(10);
  EXPECT_FALSE(timer.CheckIfIdle()) << "elapsed == timeout is not idle (strict)";
  clock.AdvanceMillis(1);
  EXPECT_TRUE(timer.CheckIfIdle());
  EXPECT_TRUE(timer.CheckIfIdle());
}

TEST(IdlenessTimerTest, ActivityResetsTheCountdownUntilTheNextQuietCheck) {
  ManualRelativeClock clock(kStart);
  IdlenessTimer timer(clock, milliseconds(122));
  EXPECT_FALSE(timer.CheckIfIdle());
  clock.AdvanceMillis(123);
  EXPECT_TRUE(timer.CheckIfIdle());
  timer.Activity();
  EXPECT_FALSE(timer.CheckIfIdle());  // sees the activity: countdown off
  EXPECT_FALSE(timer.CheckIfIdle());  // first quiet check: countdown starts here
  clock.AdvanceMillis(122);
  EXPECT_FALSE(timer.CheckIfIdle());
  clock.AdvanceMillis(1);
  EXPECT_TRUE(timer.CheckIfIdle());
}

TEST(IdlenessTimerTest, ClockAtZeroMeansNoCountdownRunning) {
  ManualRelativeClock clock(0);
  IdlenessTimer timer(clock, milliseconds(10));
  EXPECT_FALSE(timer.CheckIfIdle());  // start recorded as 0 == not running
  clock.AdvanceMillis(11);
  EXPECT_FALSE(timer.CheckIfIdle());  // so this check starts it
  clock.AdvanceMillis(11);
  EXPECT_TRUE(timer.CheckIfIdle());
}

TEST(WatermarksWithIdlenessTest, MarksIdleOnceAndSkipsTheInnerPeriodicEmit) {
  ManualRelativeClock clock(kStart);
  WatermarksWithIdleness g(std::make_unique<BoundedOutOfOrdernessWatermarks>(milliseconds(0)),
                           milliseconds(10), clock);
  testing::RecordingWatermarkOutput out;
  Event(g, 100, out);
  g.OnPeriodicEmit(out);  // activity seen
  g.OnPeriodicEmit(out);  // countdown starts
  clock.AdvanceMillis(11);
  g.OnPeriodicEmit(out);  // idle
  g.OnPeriodicEmit(out);  // still idle: no second mark, no watermark
  EXPECT_EQ(out.Take(), (Calls{"wm:99", "wm:99", "idle"}));
  EXPECT_TRUE(g.IsIdleNow());
}

TEST(WatermarksWithIdlenessTest, EventClearsTheLatchWithoutEmitting) {
  ManualRelativeClock clock(kStart);
  WatermarksWithIdleness g(std::make_unique<BoundedOutOfOrdernessWatermarks>(milliseconds(0)),
                           milliseconds(10), clock);
  testing::RecordingWatermarkOutput out;
  g.OnPeriodicEmit(out);
  clock.AdvanceMillis(11);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:MIN", "idle"}));
  Event(g, 50, out);
  EXPECT_TRUE(out.calls.empty()) << "an event never emits, not even ACTIVE";
  EXPECT_FALSE(g.IsIdleNow());
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:49"}));
}

TEST(WatermarksWithIdlenessTest, IdleAtFirstProbeStrictlyAfterTimeoutFromFirstQuietProbe) {
  // Probes every 5 ms after an event at t=4: countdown starts at t=10, idle at t=25 (15 > 10).
  ManualRelativeClock clock(kStart);
  WatermarksWithIdleness g(std::make_unique<BoundedOutOfOrdernessWatermarks>(milliseconds(0)),
                           milliseconds(10), clock);
  testing::RecordingWatermarkOutput out;
  clock.AdvanceMillis(4);
  Event(g, 1, out);
  clock.AdvanceMillis(1);
  for (int t = 5; t <= 25; t += 5) {
    g.OnPeriodicEmit(out);
    const std::vector<std::string> calls = out.Take();
    const bool idle = !calls.empty() && calls.back() == "idle";
    EXPECT_EQ(idle, t == 25) << "t=" << t;
    clock.AdvanceMillis(5);
  }
}

TEST(WatermarksWithIdlenessTest, PausedClockKeepsASplitFromGoingIdle) {
  ManualRelativeClock base(kStart);
  PausableRelativeClock clock(base);
  WatermarksWithIdleness g(std::make_unique<BoundedOutOfOrdernessWatermarks>(milliseconds(0)),
                           milliseconds(10), clock);
  testing::RecordingWatermarkOutput out;
  g.OnPeriodicEmit(out);  // countdown starts
  clock.Pause();
  base.AdvanceMillis(1000);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:MIN", "wm:MIN"}));
  clock.Unpause();
  base.AdvanceMillis(11);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"idle"}));
}

TEST(PausableRelativeClockTest, StandsStillWhilePausedAndNests) {
  ManualRelativeClock base(500);
  PausableRelativeClock clock(base);
  EXPECT_EQ(clock.GetRelativeTimeNanos(), 500);
  clock.Pause();
  base.AdvanceNanos(100);
  EXPECT_EQ(clock.GetRelativeTimeNanos(), 500);
  clock.Pause();  // nested (e.g. backpressure during an alignment pause)
  base.AdvanceNanos(100);
  clock.Unpause();
  EXPECT_TRUE(clock.IsPaused());
  EXPECT_EQ(clock.GetRelativeTimeNanos(), 500);
  clock.Unpause();
  EXPECT_FALSE(clock.IsPaused());
  EXPECT_EQ(clock.GetRelativeTimeNanos(), 500);
  base.AdvanceNanos(30);
  EXPECT_EQ(clock.GetRelativeTimeNanos(), 530);
}

TEST(PausableRelativeClockTest, LayeredClockStandsStillWhileItsBaseIsPaused) {
  // A split clock layered on the source's main clock: pausing the main clock (alignment wait)
  // stops the split clock too; the split clock's own pause adds to it.
  ManualRelativeClock base(1000);
  PausableRelativeClock main_clock(base);
  const RelativeClock& main_as_base = main_clock;
  PausableRelativeClock split_clock(main_as_base);
  main_clock.Pause();
  base.AdvanceNanos(200);
  EXPECT_EQ(split_clock.GetRelativeTimeNanos(), 1000);
  main_clock.Unpause();
  base.AdvanceNanos(50);
  EXPECT_EQ(split_clock.GetRelativeTimeNanos(), 1050);
  split_clock.Pause();
  base.AdvanceNanos(70);
  EXPECT_EQ(split_clock.GetRelativeTimeNanos(), 1050);
  EXPECT_EQ(main_clock.GetRelativeTimeNanos(), 1120);
  split_clock.Unpause();
  base.AdvanceNanos(5);
  EXPECT_EQ(split_clock.GetRelativeTimeNanos(), 1055);
  static_assert(!std::is_copy_constructible_v<PausableRelativeClock>,
                "copying would share the base instead of layering on the clock");
}

TEST(PunctuatedWatermarksTest, EmitsWhatTheExtractorReturnsOnEventOnly) {
  PunctuatedWatermarks g([](const StreamRecord& r, Timestamp ts) -> std::optional<Timestamp> {
    if (std::get<bool>(r.row.Get(0))) {
      return ts;
    }
    return std::nullopt;
  });
  testing::RecordingWatermarkOutput out;
  StreamRecord flagged(Row{true}, 7);
  StreamRecord plain(Row{false}, 9);
  g.OnEvent(flagged, 7, out);
  g.OnEvent(plain, 9, out);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:7"}));
}

}  // namespace
}  // namespace tidemark
