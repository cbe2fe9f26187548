// Snapshot / restore of the interval join, the window join and the keyed process operator (with
// the dedup built-in): for every cut of a scripted input the restored run's output equals the
// uninterrupted run's (tests/testing/snapshot_round_trip.h).

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/builtins.h"
#include "operators/interval_join_operator.h"
#include "operators/keyed_process_operator.h"
#include "operators/window/window_operator.h"
#include "operators/window_join_operator.h"
#include "tests/testing/snapshot_round_trip.h"

namespace tidemark {
namespace {

using testing::ElementStep;
using testing::EndInputStep;
using testing::ExpectSnapshotRoundTrips;
using testing::ProcessingTimeStep;
using testing::ScriptStep;
using testing::WatermarkStep;

Row KV(const std::string& k, int64_t v) {
  return Row{Value(k), Value(v)};
}

// Two inputs of (key, value): matches, out-of-order arrivals, a late record per side, watermarks
// that clean up buffered rows on one side only, idleness and the end of both inputs.
std::vector<ScriptStep> TwoInputScript() {
  return {
      ElementStep(KV("a", 1), 1000, 0),
      ElementStep(KV("a", 2), 1100, 1),
      ElementStep(KV("b", 3), 1200, 1),
      ElementStep(KV("a", 4), 900, 1),
      WatermarkStep(1000, 0),
      ElementStep(KV("b", 5), 1300, 0),
      WatermarkStep(1150, 1),
      ElementStep(KV("a", 7), 1900, 0),
      WatermarkStep(1800, 0),
      ElementStep(KV("a", 6), 1050, 0),  // behind 1150: late
      ElementStep(KV("b", 8), 1500, 1),
      ElementStep(KV("a", 9), 1950, 1),
      WatermarkStep(2500, 1),
      ElementStep(KV("a", 11), 1400, 1),  // behind 1800: late
      ElementStep(KV("b", 10), 2600, 0),
      WatermarkStep(kMaxTimestamp, 0),
      EndInputStep(0),
      WatermarkStep(kMaxTimestamp, 1),
      EndInputStep(1),
  };
}

TEST(StatefulOperatorSnapshotTest, IntervalJoinBuffersTimersAndLateCountRoundTrip) {
  testing::OperatorFactory factory = [] {
    IntervalJoinOperator::Options options;
    options.lower_bound_ms = -200;
    options.upper_bound_ms = 300;
    options.upper_inclusive = false;
    options.left_key_slots = {0};
    options.right_key_slots = {0};
    options.left_layout = RowLayout::Of({FieldType::kString, FieldType::kInt64});
    options.right_layout = options.left_layout;
    return std::make_unique<IntervalJoinOperator>(options, nullptr);
  };
  const auto run =
      ExpectSnapshotRoundTrips(factory, TwoInputScript(), [](const StreamOperator& op) {
        return std::vector<int64_t>{
            static_cast<const IntervalJoinOperator&>(op).num_late_records_dropped()};
      });
  EXPECT_EQ(run.counters, std::vector<int64_t>{2});
  EXPECT_EQ(run.main, (std::vector<std::string>{
                          "record([\"a\",1,\"a\",2]@1100)", "record([\"a\",1,\"a\",4]@1000)",
                          "record([\"b\",5,\"b\",3]@1300)", "watermark(1000)", "watermark(1150)",
                          "record([\"b\",5,\"b\",8]@1500)", "record([\"a\",7,\"a\",9]@1950)",
                          "watermark(1800)", "watermark(2500)", "watermark(9223372036854775807)"}));
}

TEST(StatefulOperatorSnapshotTest, WindowJoinPanesAndWatermarksRoundTrip) {
  testing::OperatorFactory factory = [] {
    WindowSpec spec;
    spec.assigner = "tumbling";
    spec.size_ms = 500;
    WindowJoinOperator::Options options;
    options.left_key_slots = {0};
    options.right_key_slots = {0};
    options.left_layout = RowLayout::Of({FieldType::kString, FieldType::kInt64});
    options.right_layout = RowLayout::Of({FieldType::kString, FieldType::kInt64});
    return std::make_unique<WindowJoinOperator>(MakeWindowAssigner(spec), options);
  };
  const auto run =
      ExpectSnapshotRoundTrips(factory, TwoInputScript(), [](const StreamOperator& op) {
        return std::vector<int64_t>{
            static_cast<const WindowJoinOperator&>(op).num_late_records_dropped()};
      });
  EXPECT_EQ(run.counters, std::vector<int64_t>{1});
  EXPECT_EQ(
      run.main,
      (std::vector<std::string>{
          "watermark(1000)", "watermark(1150)", "record([\"a\",1,\"a\",2,1000,1500]@1499)",
          "record([\"a\",6,\"a\",2,1000,1500]@1499)", "record([\"b\",5,\"b\",3,1000,1500]@1499)",
          "watermark(1800)", "record([\"a\",7,\"a\",9,1500,2000]@1999)", "watermark(2500)",
          "watermark(9223372036854775807)"}));
}

// Counts per key in keyed state and reports the count at an event-time timer 100 ms after each
// record and at a processing-time timer.
class CountAndReport : public KeyedCoProcessFunction {
 public:
  void ProcessElement1(const StreamRecord& r, ProcessContext& ctx) override { Count(r, ctx, 1); }
  void ProcessElement2(const StreamRecord& r, ProcessContext& ctx) override { Count(r, ctx, 100); }
  void OnTimer(Timestamp timestamp, ProcessContext& ctx) override {
    std::vector<Value> out = ctx.current_key();
    const Value* n = ctx.State("n");
    out.push_back(n != nullptr ? *n : Value());
    out.emplace_back(ctx.time_domain() == TimeDomain::kEventTime ? "event" : "processing");
    ctx.Collect(Row::FromValues(out), timestamp);
  }

 private:
  static void Count(const StreamRecord& r, ProcessContext& ctx, int64_t by) {
    const Value* n = ctx.State("n");
    ctx.SetState("n", (n ? std::get<int64_t>(*n) : 0) + by);
    ctx.SetState("last", r.row.Get(1));
    ctx.RegisterEventTimeTimer(r.timestamp + 100);
    ctx.RegisterProcessingTimeTimer(ctx.CurrentProcessingTime() + 50);
  }
};

TEST(StatefulOperatorSnapshotTest, KeyedCoProcessStateAndBothTimerDomainsRoundTrip) {
  testing::OperatorFactory factory = [] {
    KeyedProcessOperator::Options options;
    options.key_slots[0] = {0};
    options.key_slots[1] = {0};
    return std::make_unique<KeyedProcessOperator>(std::make_unique<CountAndReport>(), options);
  };
  std::vector<ScriptStep> script = TwoInputScript();
  std::vector<ScriptStep> with_time;
  for (size_t i = 0; i < script.size(); ++i) {
    with_time.push_back(script[i]);
    if (i % 4 == 2) {
      with_time.push_back(ProcessingTimeStep(static_cast<Timestamp>(i) * 20));
    }
  }
  const auto run = ExpectSnapshotRoundTrips(factory, with_time);
  EXPECT_GT(run.main.size(), 10u);
}

// Input 1 is broadcast: its records set the broadcast state "limit"; input 0's records are
// emitted with the limit in force when they arrive, and counted per key.
class AboveLimit : public KeyedCoProcessFunction {
 public:
  void ProcessElement1(const StreamRecord& r, ProcessContext& ctx) override {
    const Value* limit = ctx.BroadcastState("limit");
    const Value* n = ctx.State("n");
    ctx.SetState("n", (n ? std::get<int64_t>(*n) : 0) + 1);
    std::vector<Value> out = r.row.ToValues();
    out.push_back(limit != nullptr ? *limit : Value());
    out.push_back(*ctx.State("n"));
    ctx.Collect(Row::FromValues(out), r.timestamp);
  }
  void ProcessElement2(const StreamRecord& r, ProcessContext& ctx) override {
    ctx.SetBroadcastState("limit", r.row.Get(1));
  }
};

TEST(StatefulOperatorSnapshotTest, BroadcastStateRoundTrips) {
  testing::OperatorFactory factory = [] {
    KeyedProcessOperator::Options options;
    options.key_slots[0] = {0};
    options.broadcast_input = 1;
    options.excluded_from_min[1] = true;
    return std::make_unique<KeyedProcessOperator>(std::make_unique<AboveLimit>(), options);
  };
  const std::vector<ScriptStep> script = {
      ElementStep(KV("a", 1), 100, 0),    ElementStep(KV("limit", 10), 0, 1),
      ElementStep(KV("b", 2), 200, 0),    WatermarkStep(150, 0),
      ElementStep(KV("limit", 20), 0, 1), ElementStep(KV("a", 3), 300, 0),
      WatermarkStep(kMaxTimestamp, 0),    EndInputStep(0),
      WatermarkStep(kMaxTimestamp, 1),    EndInputStep(1),
  };
  const auto run = ExpectSnapshotRoundTrips(factory, script);
  EXPECT_EQ(run.main,
            (std::vector<std::string>{"record([\"a\",1,null,1]@100)", "record([\"b\",2,10,1]@200)",
                                      "watermark(150)", "record([\"a\",3,20,2]@300)",
                                      "watermark(9223372036854775807)"}));
}

TEST(StatefulOperatorSnapshotTest, DedupKeepsFirstSeenAndExpiryAcrossRestore) {
  for (bool event_time : {true, false}) {
    SCOPED_TRACE(event_time ? "event time" : "processing time");
    testing::OperatorFactory factory = [event_time] {
      KeyedProcessOperator::Options options;
      options.key_slots[0] = {0};
      return std::make_unique<KeyedProcessOperator>(MakeDedupFunction(300, event_time), options);
    };
    const std::vector<ScriptStep> script = {
        ElementStep(KV("a", 1), 100),
        ElementStep(KV("a", 2), 200),  // duplicate
        ProcessingTimeStep(150),
        ElementStep(KV("b", 3), 250),
        WatermarkStep(350),
        ElementStep(KV("a", 4), 390),  // duplicate (100 + 300)
        ProcessingTimeStep(500),
        ElementStep(KV("a", 5), 400),  // kept: 400 >= 100 + 300
        ElementStep(KV("b", 6), 540),
        WatermarkStep(700),
        ElementStep(KV("b", 7), 560),
        ProcessingTimeStep(1000),
        ElementStep(KV("a", 8), 1200),
        WatermarkStep(kMaxTimestamp),
        EndInputStep(),
    };
    const auto run = ExpectSnapshotRoundTrips(factory, script);
    // Event time: b's 540 is within 300 of 250, 560 comes after the watermark cleared it.
    // Processing time (all arrivals at 0, 150, 500): state cleared at 500, b6 kept, b7 not.
    const std::string b_kept = event_time ? "record([\"b\",7]@560)" : "record([\"b\",6]@540)";
    std::vector<std::string> expected = {"record([\"a\",1]@100)", "record([\"b\",3]@250)",
                                         "watermark(350)", "record([\"a\",5]@400)"};
    if (event_time) {
      expected.insert(expected.end(), {"watermark(700)", b_kept});
    } else {
      expected.insert(expected.end(), {b_kept, "watermark(700)"});
    }
    expected.insert(expected.end(), {"record([\"a\",8]@1200)", "watermark(9223372036854775807)"});
    EXPECT_EQ(run.main, expected);
  }
}

}  // namespace
}  // namespace tidemark
