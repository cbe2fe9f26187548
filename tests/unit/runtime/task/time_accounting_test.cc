#include "runtime/task/time_accounting.h"

#include <gtest/gtest.h>

namespace tidemark {
namespace {

constexpr size_t kBusy = 0, kIdle = 1, kBackPressured = 2;

TEST(TimeAccounting, SplitsASecondBetweenStatesAndSumsTo1000) {
  TimeAccounting t;
  t.Enter(kBusy, 10'000);
  t.Enter(kIdle, 10'250);           // busy 250
  t.Enter(kBackPressured, 10'400);  // idle 150
  t.Enter(kBusy, 11'000);           // back-pressured 600
  const auto s = t.Sample(11'000);
  EXPECT_EQ(s[kBusy], 250);
  EXPECT_EQ(s[kIdle], 150);
  EXPECT_EQ(s[kBackPressured], 600);
  EXPECT_EQ(t.accumulated()[kBackPressured], 600);
}

TEST(TimeAccounting, ShortWindowsKeepThePreviousFiguresAndLongOnesScale) {
  TimeAccounting t;
  t.Enter(kIdle, 0);
  EXPECT_EQ(t.Sample(500), (TimeAccounting::PerSecond{0, 0, 0}));  // no full window yet
  EXPECT_EQ(t.Sample(1000), (TimeAccounting::PerSecond{0, 1000, 0}));
  t.Enter(kBackPressured, 1000);
  EXPECT_EQ(t.Sample(1400), (TimeAccounting::PerSecond{0, 1000, 0}));   // window not over
  t.Enter(kBusy, 2500);                                                 // bp 1500
  EXPECT_EQ(t.Sample(4000), (TimeAccounting::PerSecond{500, 0, 500}));  // 3 s: 1.5 s bp, 1.5 s busy
}

TEST(TimeAccounting, RoundingGoesToTheFirstStateAndABackwardClockCountsNothing) {
  TimeAccounting t;
  t.Enter(kIdle, 0);
  t.Enter(kBackPressured, 1);
  t.Enter(kBusy, 2);
  t.Enter(kBusy, 1);  // backwards: ignored
  const auto s = t.Sample(3000);
  EXPECT_EQ(s[kIdle], 0);  // 1/3000 of a second rounds to 0
  EXPECT_EQ(s[kBackPressured], 0);
  EXPECT_EQ(s[kBusy], 1000);
  EXPECT_EQ(t.accumulated()[kBusy], 2998);
}

}  // namespace
}  // namespace tidemark
