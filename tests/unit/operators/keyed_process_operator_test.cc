#include "operators/keyed_process_operator.h"

#include <gtest/gtest.h>

#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

using testing::CollectingOutput;

/// The seed's exercise 3: a timer at currentWatermark - 1 registered in ProcessElement.
class BehindWatermarkTimer : public KeyedProcessFunction {
 public:
  void ProcessElement(const StreamRecord& /*record*/, ProcessContext& ctx) override {
    ctx.RegisterEventTimeTimer(ctx.CurrentWatermark() - 1);
  }
  void OnTimer(Timestamp timestamp, ProcessContext& ctx) override {
    std::vector<Value> out = ctx.current_key();
    out.emplace_back(timestamp);
    out.emplace_back(ctx.CurrentWatermark());
    ctx.Collect(Row::FromValues(out), timestamp);
  }
};

/// Counts per key in keyed state; emits the count at a processing-time timer.
class CountUntilProcessingTime : public KeyedProcessFunction {
 public:
  void ProcessElement(const StreamRecord& /*record*/, ProcessContext& ctx) override {
    const Value* n = ctx.State("n");
    ctx.SetState("n", (n ? std::get<int64_t>(*n) : 0) + 1);
    ctx.RegisterProcessingTimeTimer(100);
  }
  void OnTimer(Timestamp timestamp, ProcessContext& ctx) override {
    EXPECT_EQ(ctx.time_domain(), TimeDomain::kProcessingTime);
    std::vector<Value> out = ctx.current_key();
    out.push_back(*ctx.State("n"));
    ctx.ClearState("n");
    ctx.Collect(Row::FromValues(out), timestamp);
  }
};

struct Harness {
  ManualProcessingTimeService time;
  CollectingOutput output;
  std::unique_ptr<KeyedProcessOperator> op;

  explicit Harness(std::unique_ptr<KeyedProcessOperator> o,
                   bool finished_input_counts_as_max = false)
      : op(std::move(o)) {
    OperatorContext ctx;
    ctx.name = "process";
    ctx.output = &output;
    ctx.processing_time = &time;
    ctx.finished_input_counts_as_max = finished_input_counts_as_max;
    op->Open(ctx);
  }
  void Element(const std::string& key, Timestamp ts) {
    StreamRecord r(Row{key}, ts);
    op->ProcessElement(r, 0);
  }
};

KeyedProcessOperator::Options KeyedOnSlot0() {
  KeyedProcessOperator::Options options;
  options.key_slots[0] = {0};
  return options;
}

TEST(KeyedProcessOperatorTest, TimerBehindWatermarkFiresOnlyAtNextWatermark) {
  Harness h(std::make_unique<KeyedProcessOperator>(std::make_unique<BehindWatermarkTimer>(),
                                                   KeyedOnSlot0()));
  h.op->ProcessWatermark(Watermark{1000}, 0);
  h.Element("a", 1500);
  // Registered at 999 <= watermark 1000, but nothing fires at registration.
  EXPECT_TRUE(h.output.Records().empty());
  EXPECT_EQ(h.op->timer_service().NumEventTimeTimers(), 1u);
  h.op->ProcessWatermark(Watermark{2000}, 0);
  ASSERT_EQ(h.output.Describe(),
            (std::vector<std::string>{"watermark(1000)", "record([\"a\",999,2000]@999)",
                                      "watermark(2000)"}));
}

TEST(KeyedProcessOperatorTest, KeyedStateAndProcessingTimeTimers) {
  Harness h(std::make_unique<KeyedProcessOperator>(std::make_unique<CountUntilProcessingTime>(),
                                                   KeyedOnSlot0()));
  h.Element("a", 1);
  h.Element("b", 2);
  h.Element("a", 3);
  h.time.AdvanceTo(99);
  EXPECT_TRUE(h.output.Records().empty());
  h.time.AdvanceTo(100);
  ASSERT_EQ(h.output.Describe(),
            (std::vector<std::string>{"record([\"a\",2]@100)", "record([\"b\",1]@100)"}));
}

class TwoSided : public KeyedCoProcessFunction {
 public:
  void ProcessElement1(const StreamRecord& r, ProcessContext& ctx) override {
    ctx.SetState("left", r.row.Get(1));
  }
  void ProcessElement2(const StreamRecord& r, ProcessContext& ctx) override {
    if (const Value* left = ctx.State("left")) {
      ctx.Collect(Row{ctx.current_key()[0], *left, r.row.Get(1)}, r.timestamp);
    }
  }
};

TEST(KeyedProcessOperatorTest, ConnectSharesKeyedStateAndTakesMinWatermark) {
  KeyedProcessOperator::Options options;
  options.key_slots[0] = {0};
  options.key_slots[1] = {0};
  Harness h(std::make_unique<KeyedProcessOperator>(std::make_unique<TwoSided>(), options));
  StreamRecord l(Row{std::string("k"), int64_t{1}}, 10);
  h.op->ProcessElement(l, 0);
  StreamRecord r(Row{std::string("k"), int64_t{2}}, 20);
  h.op->ProcessElement(r, 1);
  h.op->ProcessWatermark(Watermark{50}, 0);
  h.op->ProcessWatermark(Watermark{30}, 1);
  h.op->ProcessWatermark(Watermark{40}, 1);
  ASSERT_EQ(h.output.Describe(),
            (std::vector<std::string>{"record([\"k\",1,2]@20)", "watermark(30)", "watermark(40)"}));
}

TEST(KeyedProcessOperatorTest, ExcludedBroadcastInputDoesNotHoldEventTimeBack) {
  KeyedProcessOperator::Options options;
  options.excluded_from_min[1] = true;
  Harness h(std::make_unique<KeyedProcessOperator>(std::make_unique<TwoSided>(), options));
  h.op->ProcessWatermark(Watermark{50}, 0);
  h.op->ProcessWatermark(Watermark{kMaxTimestamp}, 0);  // input 0 ends; broadcast still open
  h.op->ProcessWatermark(Watermark{kMaxTimestamp}, 1);
  ASSERT_EQ(h.output.Watermarks(), (std::vector<Timestamp>{50, kMaxTimestamp}));
}

// Broadcast state is written only by the broadcast input's elements, so every subtask's copy
// stays the same (Flink gives the keyed side a read-only view).
class WritesBroadcastState : public KeyedProcessFunction {
 public:
  void ProcessElement(const StreamRecord&, ProcessContext& ctx) override {
    EXPECT_EQ(ctx.BroadcastState("x"), nullptr);
    ctx.SetBroadcastState("x", Value(int64_t{1}));
  }
};

TEST(KeyedProcessOperatorTest, KeyedInputCannotWriteBroadcastState) {
  Harness h(std::make_unique<KeyedProcessOperator>(std::make_unique<WritesBroadcastState>(),
                                                   KeyedOnSlot0()));
  EXPECT_THROW(h.Element("a", 5), InvalidArgument);
}

// Flink's AbstractStreamOperator#processWatermarkStatus(status, index) through
// IndexedCombinedWatermarkStatus: an idle input is left out of the minimum, the combined
// watermark is recomputed on every status change, all idle gives the maximum and IDLE (after
// that watermark), and an input coming back ACTIVE behind the combined watermark holds nothing
// back until it passes it. Here the broadcast input takes part (`broadcast-watermarks: include`).
TEST(KeyedProcessOperatorTest, IdleInputLeavesTheMinimumAndStatusChangesRecompute) {
  KeyedProcessOperator::Options options;
  options.broadcast_input = 1;  // include: not excluded from the minimum
  Harness h(std::make_unique<KeyedProcessOperator>(std::make_unique<TwoSided>(), options));
  h.op->ProcessWatermark(Watermark{10}, 0);                 // input 1 has nothing yet: held at MIN
  h.op->ProcessWatermarkStatus(WatermarkStatus::kIdle, 1);  // left out: 10 goes through
  h.op->ProcessWatermark(Watermark{20}, 0);
  h.op->ProcessWatermarkStatus(WatermarkStatus::kIdle, 0);    // all idle: max(20, MIN) = 20, IDLE
  h.op->ProcessWatermarkStatus(WatermarkStatus::kActive, 1);  // ACTIVE at MIN: no regress
  h.op->ProcessWatermark(Watermark{15}, 1);                   // min over active = 15 < 20: nothing
  h.op->ProcessWatermark(Watermark{25}, 1);
  ASSERT_EQ(h.output.Describe(),
            (std::vector<std::string>{"watermark(10)", "watermark(20)", "status(IDLE)",
                                      "status(ACTIVE)", "watermark(25)"}));
}

TEST(KeyedProcessOperatorTest, LastActiveInputGoingIdleReleasesTheMaximum) {
  KeyedProcessOperator::Options options;
  Harness h(std::make_unique<KeyedProcessOperator>(std::make_unique<TwoSided>(), options));
  h.op->ProcessWatermark(Watermark{10}, 0);
  h.op->ProcessWatermark(Watermark{30}, 1);                 // min 10
  h.op->ProcessWatermarkStatus(WatermarkStatus::kIdle, 0);  // min over active: 30
  h.op->ProcessWatermark(Watermark{40}, 1);
  h.op->ProcessWatermarkStatus(WatermarkStatus::kIdle, 1);  // all idle: max(10, 40) = 40
  ASSERT_EQ(h.output.Describe(), (std::vector<std::string>{"watermark(10)", "watermark(30)",
                                                           "watermark(40)", "status(IDLE)"}));
}

// design.md's decided rule: a finished input (MAX) leaves the minimum, the operator goes IDLE when
// the unfinished inputs are all idle and reaches MAX only when both have finished;
// `pipeline.finished-input: max` gives Flink's behaviour, where the finished input's MAX wins
// over an idle one.
TEST(KeyedProcessOperatorTest, FinishedInputLeavesTheMinimumUnlessFinishedInputMax) {
  KeyedProcessOperator::Options options;
  Harness h(std::make_unique<KeyedProcessOperator>(std::make_unique<TwoSided>(), options));
  h.op->ProcessWatermark(Watermark{10}, 0);
  h.op->ProcessWatermarkStatus(WatermarkStatus::kIdle, 1);
  h.op->ProcessWatermark(Watermark{kMaxTimestamp}, 0);  // input 0 ends; input 1 idle
  h.op->ProcessWatermarkStatus(WatermarkStatus::kActive, 1);
  h.op->ProcessWatermark(Watermark{kMaxTimestamp}, 1);
  ASSERT_EQ(h.output.Describe(),
            (std::vector<std::string>{"watermark(10)", "status(IDLE)", "status(ACTIVE)",
                                      "watermark(9223372036854775807)"}));

  Harness flink(std::make_unique<KeyedProcessOperator>(std::make_unique<TwoSided>(), options),
                /*finished_input_counts_as_max=*/true);
  flink.op->ProcessWatermark(Watermark{10}, 0);
  flink.op->ProcessWatermarkStatus(WatermarkStatus::kIdle, 1);
  flink.op->ProcessWatermark(Watermark{kMaxTimestamp}, 0);
  ASSERT_EQ(flink.output.Describe(),
            (std::vector<std::string>{"watermark(10)", "watermark(9223372036854775807)"}));
}

// The default `broadcast-watermarks: exclude`: the broadcast input's statuses change nothing.
TEST(KeyedProcessOperatorTest, ExcludedBroadcastInputStatusChangesNothing) {
  KeyedProcessOperator::Options options;
  options.excluded_from_min[1] = true;
  options.broadcast_input = 1;
  Harness h(std::make_unique<KeyedProcessOperator>(std::make_unique<TwoSided>(), options));
  h.op->ProcessWatermarkStatus(WatermarkStatus::kIdle, 1);
  h.op->ProcessWatermark(Watermark{10}, 0);
  h.op->ProcessWatermarkStatus(WatermarkStatus::kIdle, 0);
  h.op->ProcessWatermarkStatus(WatermarkStatus::kActive, 1);
  ASSERT_EQ(h.output.Describe(), (std::vector<std::string>{"watermark(10)", "status(IDLE)"}));
}

}  // namespace
}  // namespace tidemark
