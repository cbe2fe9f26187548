#include "runtime/eventtime/watermark_output_multiplexer.h"

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "tests/unit/runtime/eventtime/recording_watermark_output.h"

namespace tidemark {
namespace {

using Calls = std::vector<std::string>;

class WatermarkOutputMultiplexerTest : public ::testing::Test {
 protected:
  testing::RecordingWatermarkOutput out_;
  WatermarkOutputMultiplexer mux_{out_};
};

TEST_F(WatermarkOutputMultiplexerTest, CombinedWatermarkIsMinOverSplits) {
  mux_.RegisterNewOutput("a");
  mux_.RegisterNewOutput("b");
  mux_.GetImmediateOutput("a").EmitWatermark(Watermark{7});
  EXPECT_EQ(out_.Take(), (Calls{"active"}))
      << "b has reported nothing yet and holds the min at MIN; a made the stream active";
  mux_.GetImmediateOutput("b").EmitWatermark(Watermark{3});
  EXPECT_EQ(out_.Take(), (Calls{"wm:3", "active"}));
  mux_.GetImmediateOutput("b").EmitWatermark(Watermark{10});
  EXPECT_EQ(out_.Take(), (Calls{"wm:7", "active"}));
  mux_.GetImmediateOutput("a").EmitWatermark(Watermark{12});
  EXPECT_EQ(out_.Take(), (Calls{"wm:10", "active"}));
  EXPECT_EQ(mux_.combined_watermark(), 10);
}

TEST_F(WatermarkOutputMultiplexerTest, IdleSplitLeavesTheMinAndAllIdleGivesMaxThenIdle) {
  mux_.RegisterNewOutput("a");
  mux_.RegisterNewOutput("b");
  mux_.GetImmediateOutput("a").EmitWatermark(Watermark{2});
  mux_.GetImmediateOutput("b").EmitWatermark(Watermark{5});
  out_.Take();
  mux_.GetImmediateOutput("a").MarkIdle();
  EXPECT_EQ(out_.Take(), (Calls{"wm:5", "active"}));
  mux_.GetImmediateOutput("b").MarkIdle();
  EXPECT_EQ(out_.Take(), (Calls{"idle"})) << "max over all (5) is not above 5";
  EXPECT_TRUE(mux_.IsIdle());
}

TEST_F(WatermarkOutputMultiplexerTest, AllIdleTakesTheMaximumRegardlessOfOrder) {
  mux_.RegisterNewOutput("a");
  mux_.RegisterNewOutput("b");
  mux_.GetDeferredOutput("a").EmitWatermark(Watermark{5});
  mux_.GetDeferredOutput("a").MarkIdle();
  mux_.GetDeferredOutput("b").EmitWatermark(Watermark{2});
  mux_.GetDeferredOutput("b").MarkIdle();
  EXPECT_EQ(out_.Take(), Calls{}) << "deferred updates wait for the periodic emit";
  mux_.OnPeriodicEmit();
  EXPECT_EQ(out_.Take(), (Calls{"wm:5", "idle"}));
}

TEST_F(WatermarkOutputMultiplexerTest, ImmediateEmitBelowCombinedDoesNotRecompute) {
  mux_.RegisterNewOutput("x");
  mux_.GetDeferredOutput("x").EmitWatermark(Watermark{5});
  mux_.GetImmediateOutput("x").EmitWatermark(Watermark{2});
  EXPECT_EQ(out_.Take(), Calls{});
  mux_.OnPeriodicEmit();
  EXPECT_EQ(out_.Take(), (Calls{"wm:5", "active"}));
}

TEST_F(WatermarkOutputMultiplexerTest, UnregisterDoesNotRecomputeAndNeverRetracts) {
  mux_.RegisterNewOutput("lower");
  mux_.RegisterNewOutput("higher");
  mux_.GetImmediateOutput("lower").EmitWatermark(Watermark{-4343});
  mux_.GetImmediateOutput("higher").EmitWatermark(Watermark{-4333});
  EXPECT_EQ(out_.Take(), (Calls{"active", "wm:-4343", "active"}));
  EXPECT_TRUE(mux_.UnregisterOutput("lower"));
  EXPECT_EQ(out_.Take(), Calls{});
  EXPECT_FALSE(mux_.UnregisterOutput("lower"));
  mux_.OnPeriodicEmit();
  EXPECT_EQ(out_.Take(), (Calls{"wm:-4333", "active"}));
  mux_.RegisterNewOutput("late");
  mux_.GetImmediateOutput("late").EmitWatermark(Watermark{-5000});
  mux_.OnPeriodicEmit();
  EXPECT_EQ(mux_.combined_watermark(), -4333);
}

TEST_F(WatermarkOutputMultiplexerTest, NoOutputsMeansNoCallsAndAllRemovedMeansIdle) {
  mux_.OnPeriodicEmit();
  EXPECT_EQ(out_.Take(), Calls{});
  mux_.RegisterNewOutput("a");
  mux_.OnPeriodicEmit();
  EXPECT_EQ(out_.Take(), Calls{}) << "a silent registered output makes no calls";
  mux_.GetImmediateOutput("a").EmitWatermark(Watermark{1});
  out_.Take();
  mux_.UnregisterOutput("a");
  mux_.OnPeriodicEmit();
  EXPECT_EQ(out_.Take(), (Calls{"idle"}));
}

TEST_F(WatermarkOutputMultiplexerTest, MarkActiveAfterAllIdleMarksUnderlyingActive) {
  mux_.RegisterNewOutput("a");
  mux_.RegisterNewOutput("b");
  mux_.GetImmediateOutput("a").EmitWatermark(Watermark{5});
  mux_.GetImmediateOutput("b").EmitWatermark(Watermark{2});
  mux_.GetImmediateOutput("a").MarkIdle();
  mux_.GetImmediateOutput("b").MarkIdle();
  out_.Take();
  mux_.GetImmediateOutput("a").MarkActive();
  EXPECT_EQ(out_.Take(), (Calls{"active"}));
  EXPECT_FALSE(mux_.IsIdle());
}

TEST_F(WatermarkOutputMultiplexerTest, DuplicateOrUnknownIdsAreRejected) {
  mux_.RegisterNewOutput("a");
  EXPECT_THROW(mux_.RegisterNewOutput("a"), InvalidArgument);
  EXPECT_THROW(mux_.GetImmediateOutput("nope"), InvalidArgument);
}

TEST(CombinedWatermarkStatusTest, UnknownInputsHoldBackButDoNotActivate) {
  CombinedWatermarkStatus status;
  PartialWatermark* a = status.Add();
  status.Add();
  a->SetWatermark(10);
  EXPECT_FALSE(status.UpdateCombinedWatermark());
  EXPECT_EQ(status.combined_watermark(), kMinTimestamp);
  EXPECT_FALSE(status.IsIdle());
  EXPECT_TRUE(status.HasActiveInput());
}

TEST(CombinedWatermarkStatusTest, InitiallyEmptyStaysNonIdle) {
  CombinedWatermarkStatus status;
  EXPECT_FALSE(status.UpdateCombinedWatermark());
  EXPECT_FALSE(status.IsIdle());
  EXPECT_EQ(status.combined_watermark(), kMinTimestamp);
}

}  // namespace
}  // namespace tidemark
