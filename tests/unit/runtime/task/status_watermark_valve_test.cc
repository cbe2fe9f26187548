#include "runtime/task/status_watermark_valve.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

using Calls = std::vector<std::string>;

class StringValveOutput : public ValveOutput {
 public:
  void EmitWatermark(Watermark w) override {
    calls.push_back(
        "wm:" + (w.timestamp == kMaxTimestamp ? std::string("MAX") : std::to_string(w.timestamp)));
  }
  void EmitWatermarkStatus(WatermarkStatus s) override { calls.emplace_back(ToString(s)); }
  Calls Take() {
    Calls out;
    out.swap(calls);
    return out;
  }
  Calls calls;
};

constexpr WatermarkStatus kIdle = WatermarkStatus::kIdle;
constexpr WatermarkStatus kActive = WatermarkStatus::kActive;

TEST(StatusWatermarkValveTest, EmitsMinimumOfActiveChannelsOnlyWhenItIncreases) {
  StatusWatermarkValve valve(3);
  StringValveOutput out;
  valve.InputWatermark(Watermark{25}, 0, out);
  valve.InputWatermark(Watermark{10}, 1, out);
  EXPECT_EQ(out.Take(), Calls{}) << "channel 2 still at MIN";
  valve.InputWatermark(Watermark{17}, 2, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:10"}));
  valve.InputWatermark(Watermark{8}, 1, out);  // lower: ignored
  valve.InputWatermark(Watermark{30}, 1, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:17"}));
  EXPECT_EQ(valve.channel_watermark(1), 30);
  EXPECT_EQ(valve.last_output_watermark(), 17);
}

TEST(StatusWatermarkValveTest, WatermarkOnIdleChannelIsDiscarded) {
  StatusWatermarkValve valve(1);
  StringValveOutput out;
  valve.InputWatermark(Watermark{25}, 0, out);
  valve.InputWatermarkStatus(kIdle, 0, out);
  valve.InputWatermark(Watermark{50}, 0, out);
  EXPECT_EQ(valve.channel_watermark(0), 25);
  valve.InputWatermarkStatus(kActive, 0, out);
  valve.InputWatermark(Watermark{50}, 0, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:25", "IDLE", "ACTIVE", "wm:50"}));
}

TEST(StatusWatermarkValveTest, IdleOnlyWhenAllIdleAndActiveAsSoonAsOneResumes) {
  StatusWatermarkValve valve(2);
  StringValveOutput out;
  valve.InputWatermarkStatus(kActive, 0, out);
  valve.InputWatermarkStatus(kIdle, 1, out);
  EXPECT_EQ(out.Take(), Calls{});
  valve.InputWatermarkStatus(kIdle, 0, out);
  valve.InputWatermarkStatus(kIdle, 0, out);
  EXPECT_EQ(out.Take(), (Calls{"IDLE"}));
  valve.InputWatermarkStatus(kActive, 1, out);
  valve.InputWatermarkStatus(kActive, 0, out);
  EXPECT_EQ(out.Take(), (Calls{"ACTIVE"}));
}

TEST(StatusWatermarkValveTest, ChannelsGoingIdleAdvanceTheMinimumThenFlushMax) {
  StatusWatermarkValve valve(3);
  StringValveOutput out;
  valve.InputWatermark(Watermark{25}, 0, out);
  valve.InputWatermark(Watermark{10}, 1, out);
  valve.InputWatermark(Watermark{17}, 2, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:10"}));
  valve.InputWatermarkStatus(kIdle, 1, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:17"}));
  valve.InputWatermarkStatus(kIdle, 2, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:25"}));
  valve.InputWatermarkStatus(kIdle, 0, out);
  EXPECT_EQ(out.Take(), (Calls{"IDLE"}));
}

TEST(StatusWatermarkValveTest, LastChannelIdleFlushesMaxBeforeIdle) {
  StatusWatermarkValve valve(3);
  StringValveOutput out;
  valve.InputWatermark(Watermark{10}, 0, out);
  valve.InputWatermark(Watermark{5}, 1, out);
  valve.InputWatermark(Watermark{3}, 2, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:3"}));
  valve.InputWatermarkStatus(kIdle, 0, out);
  valve.InputWatermarkStatus(kIdle, 1, out);
  EXPECT_EQ(out.Take(), Calls{});
  valve.InputWatermarkStatus(kIdle, 2, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:10", "IDLE"}));
}

TEST(StatusWatermarkValveTest, RejoiningChannelBehindTheOutputDoesNotHoldItBack) {
  StatusWatermarkValve valve(2);
  StringValveOutput out;
  valve.InputWatermark(Watermark{7}, 0, out);
  valve.InputWatermark(Watermark{10}, 1, out);
  valve.InputWatermarkStatus(kIdle, 0, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:7", "wm:10"}));
  valve.InputWatermarkStatus(kActive, 0, out);
  EXPECT_FALSE(valve.channel_aligned(0));
  valve.InputWatermark(Watermark{9}, 0, out);  // still behind 10: unaligned
  valve.InputWatermark(Watermark{15}, 1, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:15"})) << "channel 0 at 9 is not part of the min";
  valve.InputWatermark(Watermark{16}, 0, out);  // caught up: aligned again
  EXPECT_TRUE(valve.channel_aligned(0));
  EXPECT_EQ(out.Take(), Calls{}) << "min(16, 15) does not advance";
  valve.InputWatermark(Watermark{20}, 1, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:16"}));
}

TEST(StatusWatermarkValveTest, OnlyUnalignedActiveChannelLeftEmitsNothing) {
  StatusWatermarkValve valve(3);
  StringValveOutput out;
  valve.InputWatermark(Watermark{10}, 0, out);
  valve.InputWatermark(Watermark{7}, 1, out);
  valve.InputWatermarkStatus(kIdle, 2, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:7"}));
  valve.InputWatermarkStatus(kActive, 2, out);
  valve.InputWatermarkStatus(kIdle, 0, out);
  valve.InputWatermarkStatus(kIdle, 1, out);
  EXPECT_EQ(out.Take(), Calls{});
  EXPECT_EQ(valve.output_status(), kActive);
}

// --- design.md "Decided" extensions -------------------------------------------------------

TEST(StatusWatermarkValveTest, FinishedChannelLeavesTheMinimum) {
  StatusWatermarkValve valve(2);
  StringValveOutput out;
  valve.InputWatermark(Watermark{5}, 0, out);
  valve.InputWatermark(Watermark{20}, 1, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:5"}));
  valve.MarkChannelFinished(0, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:20"}));
  valve.InputWatermark(Watermark{100}, 0, out);  // after end of input: ignored
  valve.InputWatermark(Watermark{30}, 1, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:30"}));
  valve.MarkChannelFinished(1, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:MAX"}));
  valve.MarkChannelFinished(1, out);
  EXPECT_EQ(out.Take(), Calls{});
}

TEST(StatusWatermarkValveTest, FinishedInputDoesNotWinOverIdleOnes) {
  // Flink would let the finished channel's MAX through and make every later record late;
  // here the output goes IDLE and keeps its watermark.
  StatusWatermarkValve valve(2);
  StringValveOutput out;
  valve.InputWatermark(Watermark{40}, 1, out);
  valve.InputWatermarkStatus(kIdle, 1, out);
  valve.InputWatermark(Watermark{10}, 0, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:10"}));
  valve.MarkChannelFinished(0, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:40", "IDLE"}));
  valve.InputWatermarkStatus(kActive, 1, out);
  valve.InputWatermark(Watermark{50}, 1, out);
  EXPECT_EQ(out.Take(), (Calls{"ACTIVE", "wm:50"}));
  valve.MarkChannelFinished(1, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:MAX"}));
}

TEST(StatusWatermarkValveTest, AllFinishedWhileIdleEmitsActiveThenMax) {
  StatusWatermarkValve valve(1);
  StringValveOutput out;
  valve.InputWatermarkStatus(kIdle, 0, out);
  valve.MarkChannelFinished(0, out);
  EXPECT_EQ(out.Take(), (Calls{"IDLE", "ACTIVE", "wm:MAX"}));
}

TEST(StatusWatermarkValveTest, MaxWatermarkCountsAsMinimumByDefaultAndAsEndOfInputOnRequest) {
  {
    StatusWatermarkValve flink(2);
    StringValveOutput out;
    flink.InputWatermarkStatus(kIdle, 1, out);
    flink.InputWatermark(Watermark{kMaxTimestamp}, 0, out);
    EXPECT_EQ(out.Take(), (Calls{"wm:MAX"}));
  }
  {
    StatusWatermarkValve decided(
        2, StatusWatermarkValve::Options{.end_of_input_on_max_watermark = true});
    StringValveOutput out;
    decided.InputWatermarkStatus(kIdle, 1, out);
    decided.InputWatermark(Watermark{kMaxTimestamp}, 0, out);
    EXPECT_EQ(out.Take(), (Calls{"IDLE"}));
    EXPECT_TRUE(decided.channel_finished(0));
  }
}

TEST(StatusWatermarkValveTest, ExcludedBroadcastChannelDoesNotHoldEventTimeBack) {
  StatusWatermarkValve valve(2);
  valve.SetChannelExcludedFromMin(1, true);
  StringValveOutput out;
  valve.InputWatermark(Watermark{100}, 0, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:100"})) << "channel 1 at MIN is not part of the min";
  valve.InputWatermarkStatus(kIdle, 1, out);
  valve.InputWatermarkStatus(kActive, 1, out);
  EXPECT_EQ(out.Take(), Calls{}) << "its status does not change the output status";
  valve.InputWatermarkStatus(kIdle, 0, out);
  EXPECT_EQ(out.Take(), (Calls{"IDLE"}));
  valve.MarkChannelFinished(0, out);
  EXPECT_EQ(out.Take(), Calls{}) << "MAX only once every channel, broadcast included, finished";
  valve.MarkChannelFinished(1, out);
  EXPECT_EQ(out.Take(), (Calls{"ACTIVE", "wm:MAX"}));
}

}  // namespace
}  // namespace tidemark
