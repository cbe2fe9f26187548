// Flink's restart strategies on a manual clock: attempts and gaps of fixed-delay, the growth, cap,
// jitter bounds and reset of exponential-delay, the sliding window of failure-rate.
#include "runtime/checkpoint/restart_backoff_time_strategy.h"

#include <set>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

TEST(RestartBackoffTimeStrategyTest, NoneNeverRestarts) {
  NoRestartBackoffTimeStrategy none;
  EXPECT_FALSE(none.CanRestart());
  none.NotifyFailure("boom");
  EXPECT_FALSE(none.CanRestart());
}

TEST(RestartBackoffTimeStrategyTest, FixedDelayRestartsAttemptsTimesWithTheSameGap) {
  FixedDelayRestartBackoffTimeStrategy fixed(3, 1500);
  for (int failure = 1; failure <= 3; ++failure) {
    fixed.NotifyFailure("boom");
    EXPECT_TRUE(fixed.CanRestart()) << "failure " << failure;
    EXPECT_EQ(fixed.GetBackoffTimeMs(), 1500);
  }
  fixed.NotifyFailure("boom");  // the fourth failure: three restarts used up
  EXPECT_FALSE(fixed.CanRestart());
  FixedDelayRestartBackoffTimeStrategy zero(0, 10);
  EXPECT_TRUE(zero.CanRestart());
  zero.NotifyFailure("boom");
  EXPECT_FALSE(zero.CanRestart());
}

TEST(RestartBackoffTimeStrategyTest, ExponentialDelayGrowsIsCappedAndResets) {
  ManualRelativeClock clock;
  // No jitter: the exact sequence 100, 200, 400, 800, 1000 (capped), 1000.
  ExponentialDelayRestartBackoffTimeStrategy exp(clock, 100, 1000, 2.0, 5000, 0.0, 7);
  const int64_t expected[] = {100, 200, 400, 800, 1000, 1000};
  for (int64_t want : expected) {
    clock.AdvanceMillis(10);
    exp.NotifyFailure("boom");
    EXPECT_TRUE(exp.CanRestart());
    EXPECT_EQ(exp.GetBackoffTimeMs(), want);
  }
  // Reset only once the job ran threshold + current backoff (5000 + 1000) since the last failure.
  clock.AdvanceMillis(5999);
  exp.NotifyFailure("boom");
  EXPECT_EQ(exp.GetBackoffTimeMs(), 1000);  // 5999 < 6000: still capped
  clock.AdvanceMillis(6000);
  exp.NotifyFailure("boom");
  EXPECT_EQ(exp.GetBackoffTimeMs(), 100);  // reset
  clock.AdvanceMillis(1);
  exp.NotifyFailure("boom");
  EXPECT_EQ(exp.GetBackoffTimeMs(), 200);  // and grows again
}

TEST(RestartBackoffTimeStrategyTest, FlinksMultipleSettingsCase) {
  // Flink's ExponentialDelayRestartBackoffTimeStrategyTest#testMultipleSettings.
  ManualRelativeClock clock;
  ExponentialDelayRestartBackoffTimeStrategy exp(clock, 1, 9, 2.0, 8, 0.25, 1);
  EXPECT_EQ(exp.GetBackoffTimeMs(), 1);
  clock.AdvanceMillis(50);
  exp.NotifyFailure("boom");
  EXPECT_EQ(exp.GetBackoffTimeMs(), 1);
  clock.AdvanceMillis(4);
  exp.NotifyFailure("boom");
  EXPECT_EQ(exp.GetBackoffTimeMs(), 2);  // jitter offset 2 * 0.25 truncates to 0
  clock.AdvanceMillis(8 + 9 + 1);
  exp.NotifyFailure("boom");
  EXPECT_EQ(exp.GetBackoffTimeMs(), 1);
  exp.NotifyFailure("boom");
  EXPECT_EQ(exp.GetBackoffTimeMs(), 2);
}

TEST(RestartBackoffTimeStrategyTest, ExponentialDelayJitterStaysWithinItsBoundsAndVaries) {
  ManualRelativeClock clock;
  ExponentialDelayRestartBackoffTimeStrategy exp(clock, 1000, 60000, 1.5, 3600000, 0.1, 42);
  exp.NotifyFailure("boom");
  exp.NotifyFailure("boom");  // backoff 1500: jitter in [-150, 150], then clamped to >= 1000
  ASSERT_EQ(exp.current_backoff_ms(), 1500);
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const int64_t b = exp.GetBackoffTimeMs();
    EXPECT_GE(b, 1350);
    EXPECT_LE(b, 1650);
    seen.insert(b);
  }
  EXPECT_GT(seen.size(), 250u);  // 301 possible values, 2000 draws
  EXPECT_TRUE(seen.count(1350) == 1 || seen.count(1650) == 1);
  // At the cap, jitter never exceeds max-backoff.
  ExponentialDelayRestartBackoffTimeStrategy capped(clock, 1000, 1000, 2.0, 3600000, 0.5, 3);
  for (int i = 0; i < 200; ++i) {
    capped.NotifyFailure("boom");
    const int64_t b = capped.GetBackoffTimeMs();
    EXPECT_GE(b, 1000);
    EXPECT_LE(b, 1000);
  }
  // Same seed, same sequence.
  ExponentialDelayRestartBackoffTimeStrategy a(clock, 1000, 60000, 1.5, 3600000, 0.5, 9);
  ExponentialDelayRestartBackoffTimeStrategy b(clock, 1000, 60000, 1.5, 3600000, 0.5, 9);
  for (int i = 0; i < 10; ++i) {
    a.NotifyFailure("x");
    b.NotifyFailure("x");
    EXPECT_EQ(a.GetBackoffTimeMs(), b.GetBackoffTimeMs());
  }
}

TEST(RestartBackoffTimeStrategyTest, FailureRateCountsFailuresInTheInterval) {
  ManualRelativeClock clock;
  FailureRateRestartBackoffTimeStrategy rate(clock, 2, 1000, 250);
  EXPECT_TRUE(rate.CanRestart());
  rate.NotifyFailure("boom");  // t=0
  EXPECT_TRUE(rate.CanRestart());
  EXPECT_EQ(rate.GetBackoffTimeMs(), 250);
  clock.AdvanceMillis(600);
  rate.NotifyFailure("boom");  // t=600: 2 within 1000 ms
  EXPECT_FALSE(rate.CanRestart());
  clock.AdvanceMillis(400);  // t=1000: the first is exactly 1000 ms old, still inside
  EXPECT_FALSE(rate.CanRestart());
  clock.AdvanceMillis(1);  // t=1001
  EXPECT_TRUE(rate.CanRestart());
  rate.NotifyFailure("boom");  // t=1001: failures at 600 and 1001
  EXPECT_FALSE(rate.CanRestart());
  clock.AdvanceMillis(600);  // t=1601: 600 is 1001 ms old
  EXPECT_TRUE(rate.CanRestart());
}

TEST(RestartBackoffTimeStrategyTest, CreatedFromTheSpec) {
  ManualRelativeClock clock;
  RestartStrategySpec spec;
  EXPECT_EQ(CreateRestartBackoffTimeStrategy(spec, clock, 1)->ToString(),
            "NoRestartBackoffTimeStrategy");
  spec.type = "fixed-delay";
  spec.attempts = 4;
  spec.delay_ms = 20;
  EXPECT_EQ(CreateRestartBackoffTimeStrategy(spec, clock, 1)->ToString(),
            "FixedDelayRestartBackoffTimeStrategy(maxNumberRestartAttempts=4, backoffTimeMS=20)");
  spec.type = "failure-rate";
  EXPECT_EQ(CreateRestartBackoffTimeStrategy(spec, clock, 1)->ToString(),
            "FailureRateRestartBackoffTimeStrategy(failuresIntervalMS=60000, backoffTimeMS=20, "
            "maxFailuresPerInterval=1)");
  spec.type = "exponential-delay";
  EXPECT_EQ(CreateRestartBackoffTimeStrategy(spec, clock, 1)->ToString(),
            "ExponentialDelayRestartBackoffTimeStrategy(initialBackoffMS=1000, maxBackoffMS=60000, "
            "backoffMultiplier=1.5, resetBackoffThresholdMS=3600000, jitterFactor=0.1, "
            "currentBackoffMS=1000)");
}

}  // namespace
}  // namespace tidemark
