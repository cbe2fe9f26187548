#include "runtime/eventtime/bounded_out_of_orderness_watermarks.h"

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/eventtime/no_watermarks_generator.h"
#include "tests/unit/runtime/eventtime/recording_watermark_output.h"

namespace tidemark {
namespace {

using std::chrono::milliseconds;
using Calls = std::vector<std::string>;

void Event(WatermarkGenerator& g, Timestamp ts, WatermarkOutput& out) {
  StreamRecord record(Row{}, ts);
  g.OnEvent(record, ts, out);
}

TEST(BoundedOutOfOrdernessWatermarksTest, EmitsMinBeforeTheFirstRecord) {
  BoundedOutOfOrdernessWatermarks g(milliseconds(10));
  testing::RecordingWatermarkOutput out;
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:MIN"}));
}

TEST(BoundedOutOfOrdernessWatermarksTest, EmitsMaxTimestampMinusBoundMinusOne) {
  BoundedOutOfOrdernessWatermarks g(milliseconds(10));
  testing::RecordingWatermarkOutput out;
  Event(g, 1337, out);
  EXPECT_TRUE(out.calls.empty()) << "OnEvent must never emit";
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:1326"}));
  EXPECT_EQ(g.CurrentWatermark(), 1326);
}

TEST(BoundedOutOfOrdernessWatermarksTest, RepeatsTheSameWatermarkOnEveryPeriodicEmit) {
  BoundedOutOfOrdernessWatermarks g(milliseconds(10));
  testing::RecordingWatermarkOutput out;
  Event(g, 723456, out);
  g.OnPeriodicEmit(out);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:723445", "wm:723445"}));
}

TEST(BoundedOutOfOrdernessWatermarksTest, KeepsTheMaximumOverOutOfOrderEvents) {
  BoundedOutOfOrdernessWatermarks g(milliseconds(100));
  testing::RecordingWatermarkOutput out;
  Event(g, 5000, out);
  Event(g, 4000, out);
  g.OnPeriodicEmit(out);
  Event(g, 5200, out);
  Event(g, 5100, out);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:4899", "wm:5099"}));
}

TEST(BoundedOutOfOrdernessWatermarksTest, ZeroBoundEmitsTimestampMinusOne) {
  BoundedOutOfOrdernessWatermarks g(milliseconds(0));
  testing::RecordingWatermarkOutput out;
  Event(g, 0, out);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:-1"}));
}

TEST(BoundedOutOfOrdernessWatermarksTest, EventAtMinDoesNotUnderflow) {
  BoundedOutOfOrdernessWatermarks g(milliseconds(3000));
  testing::RecordingWatermarkOutput out;
  Event(g, kMinTimestamp, out);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:MIN"}));
}

TEST(BoundedOutOfOrdernessWatermarksTest, RejectsNegativeBound) {
  EXPECT_THROW(BoundedOutOfOrdernessWatermarks(milliseconds(-1)), InvalidArgument);
}

TEST(AscendingTimestampsWatermarksTest, EmitsMinBeforeRecordsAndTimestampMinusOneAfter) {
  AscendingTimestampsWatermarks g;
  testing::RecordingWatermarkOutput out;
  g.OnPeriodicEmit(out);
  Event(g, 1337, out);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:MIN", "wm:1336"}));
}

TEST(AscendingTimestampsWatermarksTest, LowerTimestampDoesNotPullTheWatermarkBack) {
  AscendingTimestampsWatermarks g;
  testing::RecordingWatermarkOutput out;
  Event(g, 12345, out);
  Event(g, 12340, out);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:12344"}));
}

TEST(NoWatermarksGeneratorTest, NeverEmits) {
  NoWatermarksGenerator g;
  testing::RecordingWatermarkOutput out;
  Event(g, 100, out);
  g.OnPeriodicEmit(out);
  EXPECT_TRUE(out.calls.empty());
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

void SqlEvent(WatermarkGenerator& g, Timestamp ts, WatermarkOutput& out) {
  StreamRecord record(Row{}, ts);
  g.OnEvent(record, ts, out);
}

TEST(SqlIntervalWatermarksTest, OffersTheLatestRecordsTimestampMinusTheIntervalWithoutMinusOne) {
  SqlIntervalWatermarks g(std::chrono::milliseconds(1000));
  testing::RecordingWatermarkOutput out;
  g.OnPeriodicEmit(out);
  SqlEvent(g, 2999, out);
  EXPECT_EQ(out.calls.size(), 1u) << "OnEvent must never emit";
  g.OnPeriodicEmit(out);
  SqlEvent(g, 1500, out);  // older than the latest: the candidate drops (Flink SQL's rule)
  g.OnPeriodicEmit(out);
  SqlEvent(g, 3500, out);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (std::vector<std::string>{"wm:MIN", "wm:1999", "wm:500", "wm:2500"}));
}

TEST(SqlIntervalWatermarksTest, SaturatesAtMinAndRejectsANegativeInterval) {
  SqlIntervalWatermarks g(std::chrono::milliseconds(1000));
  testing::RecordingWatermarkOutput out;
  SqlEvent(g, kMinTimestamp + 10, out);
  g.OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (std::vector<std::string>{"wm:MIN"}));
  EXPECT_THROW(SqlIntervalWatermarks(std::chrono::milliseconds(-1)), InvalidArgument);
}

}  // namespace
}  // namespace tidemark
