#include "runtime/eventtime/adaptive_out_of_orderness_watermarks.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/job_spec.h"
#include "runtime/core/errors.h"
#include "runtime/eventtime/make_watermark_strategy.h"
#include "runtime/eventtime/relative_clock.h"
#include "tests/unit/runtime/eventtime/recording_watermark_output.h"

namespace tidemark {
namespace {

using testing::RecordingWatermarkOutput;

class AdaptiveOutOfOrdernessWatermarksTest : public ::testing::Test {
 protected:
  void Event(AdaptiveOutOfOrdernessWatermarks& g, Timestamp ts) {
    g.OnEvent(StreamRecord(Row{}, ts), ts, out_);
  }
  std::vector<std::string> Emit(AdaptiveOutOfOrdernessWatermarks& g) {
    g.OnPeriodicEmit(out_);
    return out_.Take();
  }
  RecordingWatermarkOutput out_;
};

AdaptiveOutOfOrdernessParams Params(double percentile, int64_t window, int64_t min, int64_t max,
                                    int64_t initial) {
  AdaptiveOutOfOrdernessParams p;
  p.percentile = percentile;
  p.window_ms = window;
  p.min_ms = min;
  p.max_ms = max;
  p.initial_ms = initial;
  return p;
}

TEST_F(AdaptiveOutOfOrdernessWatermarksTest, EmitsNothingBeforeTheFirstRecord) {
  AdaptiveOutOfOrdernessWatermarks g(Params(99, 1000, 0, 5000, 500));
  EXPECT_TRUE(Emit(g).empty());
  EXPECT_EQ(g.last_watermark(), kMinTimestamp);
  EXPECT_EQ(g.CurrentOutOfOrdernessMs(), std::optional<int64_t>(500));
}

TEST_F(AdaptiveOutOfOrdernessWatermarksTest, FollowsTheWindowPercentileAndNeverMovesBack) {
  AdaptiveOutOfOrdernessWatermarks g(Params(50, 1000, 0, 10000, 300));
  // Latenesses 0, 0, 100, 0, 200; max 1500 is less than one window past the first (1000): the
  // initial bound 300 applies.
  for (Timestamp ts : {1000, 1200, 1100, 1500, 1300}) {
    Event(g, ts);
  }
  EXPECT_EQ(Emit(g), std::vector<std::string>{"wm:1199"});  // 1500 - 300 - 1
  // 2000 evicts the record that arrived with max 1000 (<= 2000 - 1000); the window holds
  // [0, 100, 0, 200, 0]: the 3rd of 5 (nearest rank ceil(2.5)) is 0.
  Event(g, 2000);
  EXPECT_EQ(g.window_size(), 5u);
  EXPECT_EQ(Emit(g), std::vector<std::string>{"wm:1999"});
  EXPECT_EQ(g.CurrentOutOfOrdernessMs(), std::optional<int64_t>(0));
  // Latenesses 500 and 400: sorted [0, 0, 0, 100, 200, 400, 500], the 4th is 100. The candidate
  // 2000 - 100 - 1 = 1899 is behind 1999: the watermark is held, not moved back.
  Event(g, 1500);
  Event(g, 1600);
  EXPECT_EQ(Emit(g), std::vector<std::string>{"wm:1999"});
  EXPECT_EQ(g.CurrentOutOfOrdernessMs(), std::optional<int64_t>(100));
  // 2600 evicts everything that arrived with max <= 1600: left [0, 500, 400, 0] -> 2nd is 0.
  Event(g, 2600);
  EXPECT_EQ(g.window_size(), 4u);
  EXPECT_EQ(Emit(g), std::vector<std::string>{"wm:2599"});
}

TEST_F(AdaptiveOutOfOrdernessWatermarksTest, NinetyNinthPercentileIsTheNearestRank) {
  AdaptiveOutOfOrdernessWatermarks g(Params(99, 100000, 0, 100000, 0));
  // Lateness k for k = 0..99 (each record k ms behind the first one, at 200000), then one
  // record far ahead so that a whole window has been seen: its lateness 0 makes 101 values.
  Event(g, 200000);
  for (int k = 1; k < 100; ++k) {
    Event(g, 200000 - k);
  }
  Event(g, 300000);  // max_at_arrival 300000: evicts those that arrived with max <= 200000
  EXPECT_EQ(g.window_size(), 1u);
  EXPECT_EQ(g.ComputeBoundMs(), 0);

  AdaptiveOutOfOrdernessWatermarks h(Params(99, 1000, 0, 100000, 0));
  for (int k = 0; k <= 100; ++k) {
    Event(h, 990 + 10 * k);  // in order: lateness 0; max reaches 1990, the first (990) is evicted
  }
  for (int k = 0; k < 100; ++k) {
    Event(h, 1990 - k);  // latenesses 0..99
  }
  // 200 values in the window: 101 zeros and 1..99; rank ceil(0.99 * 200) = 198 -> the 97th of
  // 1..99, i.e. 97.
  EXPECT_EQ(h.window_size(), 200u);
  EXPECT_EQ(h.ComputeBoundMs(), 97);
  EXPECT_EQ(Emit(h), std::vector<std::string>{"wm:1892"});  // 1990 - 97 - 1
}

TEST_F(AdaptiveOutOfOrdernessWatermarksTest, BoundIsClampedToMinAndMax) {
  AdaptiveOutOfOrdernessWatermarks g(Params(100, 100, 50, 300, 50));
  Event(g, 1000);
  Event(g, 1200);  // a whole window (100) seen; lateness 0 -> clamped up to min 50
  EXPECT_EQ(Emit(g), std::vector<std::string>{"wm:1149"});
  Event(g, 700);  // lateness 500 -> clamped down to max 300; 1200 - 300 - 1 = 899 < 1149: held
  EXPECT_EQ(Emit(g), std::vector<std::string>{"wm:1149"});
  EXPECT_EQ(g.CurrentOutOfOrdernessMs(), std::optional<int64_t>(300));
  Event(g, 1500);  // evicts max_at_arrival <= 1400: everything before; window [0] -> min 50
  EXPECT_EQ(Emit(g), std::vector<std::string>{"wm:1449"});
}

TEST_F(AdaptiveOutOfOrdernessWatermarksTest, InvalidParametersAreRejected) {
  EXPECT_THROW(AdaptiveOutOfOrdernessWatermarks(Params(0, 1000, 0, 10, 0)), InvalidArgument);
  EXPECT_THROW(AdaptiveOutOfOrdernessWatermarks(Params(100.5, 1000, 0, 10, 0)), InvalidArgument);
  EXPECT_THROW(AdaptiveOutOfOrdernessWatermarks(Params(99, 0, 0, 10, 0)), InvalidArgument);
  EXPECT_THROW(AdaptiveOutOfOrdernessWatermarks(Params(99, 1000, -1, 10, 0)), InvalidArgument);
  EXPECT_THROW(AdaptiveOutOfOrdernessWatermarks(Params(99, 1000, 20, 10, 15)), InvalidArgument);
  EXPECT_THROW(AdaptiveOutOfOrdernessWatermarks(Params(99, 1000, 0, 10, 11)), InvalidArgument);
}

TEST_F(AdaptiveOutOfOrdernessWatermarksTest, StrategyFromSpecKeepsTheBoundVisibleThroughIdleness) {
  WatermarkStrategySpec spec;
  spec.strategy = "adaptive-out-of-orderness";
  spec.adaptive = WatermarkStrategySpec::Adaptive{90, 2000, 0, 4000, 1000};
  spec.idleness_ms = 5000;
  Schema schema;
  schema.Add("ts", FieldType::kTimestamp);
  spec.timestamp_field = "ts";
  const WatermarkStrategy strategy = MakeWatermarkStrategy(spec, schema);
  ManualRelativeClock clock(1);
  auto g = strategy.CreateWatermarkGenerator(&clock);
  g->OnEvent(StreamRecord(Row{Value{int64_t{5000}}}, 5000), 5000, out_);
  g->OnPeriodicEmit(out_);
  EXPECT_EQ(out_.Take(), std::vector<std::string>{"wm:3999"});  // initial bound 1000
  EXPECT_EQ(g->CurrentOutOfOrdernessMs(), std::optional<int64_t>(1000));

  spec.adaptive->initial_ms = 5000;  // outside [min, max]
  EXPECT_THROW(MakeWatermarkStrategy(spec, schema), InvalidArgument);
}

}  // namespace
}  // namespace tidemark
