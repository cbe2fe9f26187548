#include "runtime/eventtime/watermark_to_data_output.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

class StringOutput : public Output {
 public:
  void Collect(StreamRecord& /*record*/) override { calls.emplace_back("record"); }
  void CollectSide(std::string_view /*tag*/, StreamRecord& /*record*/) override {
    calls.emplace_back("side");
  }
  void EmitWatermark(Watermark w) override { calls.push_back("wm:" + std::to_string(w.timestamp)); }
  void EmitWatermarkStatus(WatermarkStatus s) override { calls.emplace_back(ToString(s)); }
  std::vector<std::string> calls;
};

using Calls = std::vector<std::string>;

TEST(WatermarkToDataOutputTest, ForwardsOnlyStrictlyIncreasingWatermarks) {
  StringOutput out;
  std::vector<Timestamp> forwarded;
  WatermarkToDataOutput adapter(out, [&](Timestamp ts) { forwarded.push_back(ts); });
  for (Timestamp ts : {12, 17, 10, 18, 17, 18}) {
    adapter.EmitWatermark(Watermark{ts});
  }
  EXPECT_EQ(out.calls, (Calls{"wm:12", "wm:17", "wm:18"}));
  EXPECT_EQ(forwarded, (std::vector<Timestamp>{12, 17, 18}));
  EXPECT_EQ(adapter.max_watermark_so_far(), 18);
}

TEST(WatermarkToDataOutputTest, FirstWatermarkZeroIsForwardedAndMinNever) {
  StringOutput out;
  WatermarkToDataOutput adapter(out);
  adapter.EmitWatermark(Watermark{kMinTimestamp});
  adapter.EmitWatermark(Watermark{0});
  EXPECT_EQ(out.calls, (Calls{"wm:0"}));
}

TEST(WatermarkToDataOutputTest, IdleOnceThenActiveBeforeTheNextForwardedWatermark) {
  StringOutput out;
  WatermarkToDataOutput adapter(out);
  adapter.EmitWatermark(Watermark{100});
  adapter.MarkIdle();
  adapter.MarkIdle();
  adapter.EmitWatermark(Watermark{50});  // not forwarded: no ACTIVE either
  EXPECT_TRUE(adapter.IsIdle());
  adapter.EmitWatermark(Watermark{101});
  EXPECT_EQ(out.calls, (Calls{"wm:100", "IDLE", "ACTIVE", "wm:101"}));
}

TEST(WatermarkToDataOutputTest, MarkActiveEmitsActiveOnlyWhenIdle) {
  StringOutput out;
  WatermarkToDataOutput adapter(out);
  adapter.MarkActive();
  adapter.MarkIdle();
  adapter.MarkActive();
  adapter.MarkActive();
  EXPECT_EQ(out.calls, (Calls{"IDLE", "ACTIVE"}));
}

}  // namespace
}  // namespace tidemark
