#include "operators/window/window_assigner.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"

namespace tidemark {
namespace {

class FixedClock : public WindowAssigner::Context {
 public:
  explicit FixedClock(Timestamp now) : now_(now) {}
  Timestamp GetCurrentProcessingTime() override { return now_; }
  Timestamp now_;
};

std::vector<TimeWindow> Assign(WindowAssigner& assigner, Timestamp ts, Timestamp now = 0) {
  FixedClock clock(now);
  std::vector<TimeWindow> out;
  for (const Window& w : assigner.AssignWindows(StreamRecord(Row{}, ts), clock)) {
    out.push_back(w.time_window());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(TimeWindowTest, WindowStartUsesFlooredModuloForNegativeTimestamps) {
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(-8, 0, 7), -14);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(-7, 0, 7), -7);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(-1, 0, 7), -7);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(6, 0, 7), 0);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(7, 0, 7), 7);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(-1, 3, 7), -4);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(-10, 3, 7), -11);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(1470902048450, -28800000, 86400000),
            1470844800000);
}

// Windows that reach past the int64 range are cut to it, not wrapped (Flink's `long` arithmetic
// gives a record at Long.MIN + 1 the window [Long.MAX - 191, Long.MAX], and its sliding assigner
// then walks the whole range down: 18 GB and a bad_alloc in the adversarial pass).
// Long.MIN = 192 (mod 1000 and mod 2000), Long.MAX = 807 (mod 1000) = 1807 (mod 2000): the
// lowest aligned starts in range are Long.MIN + 808 (slide 1000) and Long.MIN + 1808 (2000).
TEST(TimeWindowTest, WindowsAtTheEndsOfTheRangeAreCutNotWrapped) {
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(kMinTimestamp + 1, 0, 2000), kMinTimestamp);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(kMinTimestamp + 192, 0, 2000), kMinTimestamp);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(kMinTimestamp + 807, 0, 1000), kMinTimestamp);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(kMinTimestamp + 809, 0, 1000),
            kMinTimestamp + 808);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(kMaxTimestamp, 0, 2000), kMaxTimestamp - 1807);
  // timestamp - offset beyond the range: the exact form.
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(kMinTimestamp + 1, 500, 2000), kMinTimestamp);
  EXPECT_EQ(TimeWindow::GetWindowStartWithOffset(kMaxTimestamp, -500, 2000), kMaxTimestamp - 307);

  TumblingWindows tumbling(true, 2000, 0);
  EXPECT_EQ(Assign(tumbling, kMinTimestamp + 1),
            std::vector<TimeWindow>{TimeWindow(kMinTimestamp, kMinTimestamp + 1808)});
  EXPECT_EQ(Assign(tumbling, kMaxTimestamp),
            std::vector<TimeWindow>{TimeWindow(kMaxTimestamp - 1807, kMaxTimestamp)});

  SlidingWindows sliding(true, 2000, 1000, 0);
  EXPECT_EQ(Assign(sliding, kMinTimestamp + 1),
            (std::vector<TimeWindow>{TimeWindow(kMinTimestamp, kMinTimestamp + 808),
                                     TimeWindow(kMinTimestamp, kMinTimestamp + 1808)}));
  EXPECT_EQ(Assign(sliding, kMaxTimestamp),
            (std::vector<TimeWindow>{TimeWindow(kMaxTimestamp - 1807, kMaxTimestamp),
                                     TimeWindow(kMaxTimestamp - 807, kMaxTimestamp)}));
  // Past the lowest cut window: whole windows, as for any timestamp.
  EXPECT_EQ(Assign(sliding, kMinTimestamp + 2192),
            (std::vector<TimeWindow>{TimeWindow(kMinTimestamp + 808, kMinTimestamp + 2808),
                                     TimeWindow(kMinTimestamp + 1808, kMinTimestamp + 3808)}));
}

TEST(TimeWindowTest, MaxTimestampIntersectsAndCover) {
  const TimeWindow w(10, 20);
  EXPECT_EQ(w.MaxTimestamp(), 19);
  EXPECT_TRUE(w.Intersects(TimeWindow(20, 30)));  // touching counts
  EXPECT_TRUE(TimeWindow(20, 30).Intersects(w));
  EXPECT_FALSE(w.Intersects(TimeWindow(21, 30)));
  EXPECT_EQ(w.Cover(TimeWindow(15, 40)), TimeWindow(10, 40));
  EXPECT_EQ(Window(GlobalWindow()).MaxTimestamp(), kMaxTimestamp);
}

TEST(TumblingWindowsTest, AssignsNegativeTimestampToTheFlooredWindow) {
  TumblingWindows tumbling(true, 7, 0);
  EXPECT_EQ(Assign(tumbling, -8), std::vector<TimeWindow>{TimeWindow(-14, -7)});
  EXPECT_EQ(Assign(tumbling, -7), std::vector<TimeWindow>{TimeWindow(-7, 0)});
  EXPECT_EQ(Assign(tumbling, 0), std::vector<TimeWindow>{TimeWindow(0, 7)});
}

TEST(TumblingWindowsTest, AppliesPositiveAndNegativeOffsets) {
  TumblingWindows plus(true, 5000, 100);
  EXPECT_EQ(Assign(plus, 5099), std::vector<TimeWindow>{TimeWindow(100, 5100)});
  EXPECT_EQ(Assign(plus, 5100), std::vector<TimeWindow>{TimeWindow(5100, 10100)});
  TumblingWindows minus(true, 5000, -100);
  EXPECT_EQ(Assign(minus, 4899), std::vector<TimeWindow>{TimeWindow(-100, 4900)});
}

TEST(TumblingWindowsTest, NaturalStaggerShiftsByFirstProcessingTime) {
  TumblingWindows staggered(true, 5000, 0, WindowStagger::kNatural);
  EXPECT_EQ(Assign(staggered, 150, /*now=*/150), std::vector<TimeWindow>{TimeWindow(150, 5150)});
  EXPECT_EQ(Assign(staggered, 5300, /*now=*/9999),
            std::vector<TimeWindow>{TimeWindow(5150, 10150)});
}

TEST(TumblingWindowsTest, ProcessingTimeUsesTheClockNotTheRecord) {
  TumblingWindows tumbling(false, 3000, 0);
  EXPECT_EQ(Assign(tumbling, kMaxTimestamp, /*now=*/3),
            std::vector<TimeWindow>{TimeWindow(0, 3000)});
}

TEST(TumblingWindowsTest, RejectsBadParametersAndRecordsWithoutTimestamp) {
  EXPECT_THROW(TumblingWindows(true, -1000, 0), InvalidArgument);
  EXPECT_THROW(TumblingWindows(true, 0, 0), InvalidArgument);
  EXPECT_THROW(TumblingWindows(true, 10000, 20000), InvalidArgument);
  EXPECT_THROW(TumblingWindows(true, 10000, -11000), InvalidArgument);
  TumblingWindows tumbling(true, 10, 0);
  FixedClock clock(0);
  EXPECT_THROW(tumbling.AssignWindows(StreamRecord(Row{}), clock), NoTimestamp);
}

TEST(SlidingWindowsTest, AssignsSizeOverSlideWindows) {
  SlidingWindows sliding(true, 5000, 1000, 100);
  EXPECT_EQ(Assign(sliding, 100),
            (std::vector<TimeWindow>{
                {-3900, 1100}, {-2900, 2100}, {-1900, 3100}, {-900, 4100}, {100, 5100}}));
  SlidingWindows negative(true, 5000, 1000, -100);
  EXPECT_EQ(Assign(negative, 4900),
            (std::vector<TimeWindow>{
                {900, 5900}, {1900, 6900}, {2900, 7900}, {3900, 8900}, {4900, 9900}}));
  SlidingWindows small(true, 3, 1, 0);
  EXPECT_EQ(Assign(small, -1), (std::vector<TimeWindow>{{-3, 0}, {-2, 1}, {-1, 2}}));
}

TEST(SlidingWindowsTest, RejectsBadParameters) {
  EXPECT_THROW(SlidingWindows(true, -2000, 1000, 0), InvalidArgument);
  EXPECT_THROW(SlidingWindows(true, 2000, -1000, 0), InvalidArgument);
  EXPECT_THROW(SlidingWindows(true, 20000, 10000, 11000), InvalidArgument);
  try {
    SlidingWindows(true, 20000, 10000, -11000);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("abs(offset) < slide and size > 0"), std::string::npos);
  }
}

TEST(SessionWindowsTest, AssignsGapWindowAndMergesChains) {
  SessionWindows sessions(true, 5000);
  EXPECT_EQ(Assign(sessions, 4999), std::vector<TimeWindow>{TimeWindow(4999, 9999)});
  std::vector<std::pair<std::vector<Window>, Window>> merges;
  sessions.MergeWindows(
      {TimeWindow(0, 1), TimeWindow(1, 2), TimeWindow(2, 3), TimeWindow(4, 5), TimeWindow(5, 6)},
      [&](const std::vector<Window>& merged, const Window& result) {
        merges.emplace_back(merged, result);
      });
  ASSERT_EQ(merges.size(), 2u);
  EXPECT_EQ(merges[0].second, Window(TimeWindow(0, 3)));
  EXPECT_EQ(merges[0].first.size(), 3u);
  EXPECT_EQ(merges[1].second, Window(TimeWindow(4, 6)));
  EXPECT_EQ(merges[1].first.size(), 2u);
  EXPECT_THROW(SessionWindows(true, 0), InvalidArgument);
}

TEST(SessionWindowsTest, RecordWithoutTimestampGetsSessionAtMin) {
  // Flink's EventTimeSessionWindows and DynamicEventTimeSessionWindows do not check for a missing
  // timestamp (tumbling and sliding ones do): the record's Long.MIN_VALUE opens [MIN, MIN + gap).
  FixedClock clock(0);
  SessionWindows sessions(true, 5000);
  EXPECT_EQ(sessions.AssignWindows(StreamRecord(Row{}), clock),
            std::vector<Window>{Window(TimeWindow(kMinTimestamp, kMinTimestamp + 5000))});
  SessionWindows dynamic(true, [](const StreamRecord&) -> int64_t { return 7; });
  EXPECT_EQ(dynamic.AssignWindows(StreamRecord(Row{}), clock),
            std::vector<Window>{Window(TimeWindow(kMinTimestamp, kMinTimestamp + 7))});
  // The gap is still checked for a record without a timestamp.
  SessionWindows bad_gap(true, [](const StreamRecord&) -> int64_t { return 0; });
  EXPECT_THROW(bad_gap.AssignWindows(StreamRecord(Row{}), clock), InvalidArgument);
  // Tumbling and sliding event-time windows reject it.
  TumblingWindows tumbling(true, 1000, 0);
  EXPECT_THROW(tumbling.AssignWindows(StreamRecord(Row{}), clock), NoTimestamp);
  SlidingWindows sliding(true, 1000, 500, 0);
  EXPECT_THROW(sliding.AssignWindows(StreamRecord(Row{}), clock), NoTimestamp);
}

}  // namespace
}  // namespace tidemark
