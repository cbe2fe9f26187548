#include "operators/timestamps_and_watermarks_operator.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/eventtime/punctuated_watermarks.h"
#include "runtime/time/manual_processing_time_service.h"

namespace tidemark {
namespace {

using Calls = std::vector<std::string>;

std::string Ts(Timestamp ts) {
  return ts == kMaxTimestamp ? "MAX" : ts == kMinTimestamp ? "MIN" : std::to_string(ts);
}

// Records emissions as strings; moves from collected records like a real downstream may.
class StringOutput : public Output {
 public:
  void Collect(StreamRecord& record) override {
    calls.push_back("rec:" + ValueToJson(record.row.Get(0)) + "@" +
                    (record.has_timestamp ? Ts(record.timestamp) : "-"));
    StreamRecord sink = std::move(record);  // the operator must not rely on `record` afterwards
    (void)sink;
  }
  void CollectSide(std::string_view tag, StreamRecord& record) override {
    side.push_back(std::string(tag) + ":" + ValueToJson(record.row.Get(0)) +
                   (record.has_timestamp ? "@" + Ts(record.timestamp) : ""));
  }
  void EmitWatermark(Watermark w) override { calls.push_back("wm:" + Ts(w.timestamp)); }
  void EmitWatermarkStatus(WatermarkStatus s) override { calls.emplace_back(ToString(s)); }
  Calls Take() {
    Calls out;
    out.swap(calls);
    return out;
  }
  Calls calls;
  Calls side;
};

// Timestamp = the int64 in slot 0; NULL or anything else = no timestamp.
std::optional<Timestamp> FirstField(const StreamRecord& r) {
  if (const Value v = r.row.Get(0); std::holds_alternative<int64_t>(v)) {
    return std::get<int64_t>(v);
  }
  return std::nullopt;
}

class TimestampsAndWatermarksOperatorTest : public ::testing::Test {
 protected:
  void Open(TimestampsAndWatermarksOperator& op, int64_t interval_ms = 50) {
    OperatorContext ctx;
    ctx.name = "assign";
    ctx.output = &out_;
    ctx.processing_time = &time_;
    ctx.auto_watermark_interval_ms = interval_ms;
    op.Open(ctx);
  }
  void Push(TimestampsAndWatermarksOperator& op, Value v,
            std::optional<Timestamp> upstream_ts = {}) {
    StreamRecord r(Row{std::move(v)});
    if (upstream_ts) {
      r.SetTimestamp(*upstream_ts);
    }
    op.ProcessElement(r, 0);
  }

  ManualProcessingTimeService time_;
  StringOutput out_;
};

TEST_F(TimestampsAndWatermarksOperatorTest, RestampsRecordsAndEmitsPeriodicWatermarks) {
  TimestampsAndWatermarksOperator op(
      WatermarkStrategy::ForBoundedOutOfOrderness(std::chrono::milliseconds(10), FirstField));
  Open(op);
  Push(op, int64_t{100}, 1);
  EXPECT_EQ(out_.Take(), (Calls{"rec:100@100"}));
  time_.AdvanceTo(49);
  EXPECT_EQ(out_.Take(), Calls{});
  time_.AdvanceTo(50);
  EXPECT_EQ(out_.Take(), (Calls{"wm:89"}));
  time_.AdvanceTo(100);  // same watermark again: de-duplicated
  EXPECT_EQ(out_.Take(), Calls{});
  Push(op, int64_t{200});
  time_.AdvanceTo(149);  // re-armed at now + interval = 150
  EXPECT_EQ(out_.Take(), (Calls{"rec:200@200"}));
  time_.AdvanceTo(150);
  EXPECT_EQ(out_.Take(), (Calls{"wm:189"}));
  op.Close();
  EXPECT_EQ(time_.NumPendingTimers(), 0u);
}

TEST_F(TimestampsAndWatermarksOperatorTest, NothingBeforeTheFirstRecord) {
  TimestampsAndWatermarksOperator op(
      WatermarkStrategy::ForBoundedOutOfOrderness(std::chrono::milliseconds(10), FirstField));
  Open(op);
  time_.AdvanceTo(500);
  EXPECT_EQ(out_.Take(), Calls{}) << "MIN is never forwarded";
}

TEST_F(TimestampsAndWatermarksOperatorTest, DropsUpstreamWatermarksAndStatusesButForwardsMax) {
  TimestampsAndWatermarksOperator op(WatermarkStrategy::ForMonotonousTimestamps(FirstField));
  Open(op);
  op.ProcessWatermark(Watermark{42}, 0);
  op.ProcessWatermarkStatus(WatermarkStatus::kIdle, 0);
  EXPECT_EQ(out_.Take(), Calls{});
  op.ProcessWatermark(Watermark{kMaxTimestamp}, 0);
  op.ProcessWatermark(Watermark{kMaxTimestamp}, 0);
  EXPECT_EQ(out_.Take(), (Calls{"wm:MAX"}));
}

TEST_F(TimestampsAndWatermarksOperatorTest, PunctuatedWatermarkFollowsItsRecord) {
  WatermarkStrategy strategy(FirstField, [] {
    return std::make_unique<PunctuatedWatermarks>(
        [](const StreamRecord& r, Timestamp ts) -> std::optional<Timestamp> {
          // Reads the row: the operator must hand it an intact record after emitting it.
          if (std::get<int64_t>(r.row.Get(0)) % 2 == 0) {
            return ts;
          }
          return std::nullopt;
        });
  });
  TimestampsAndWatermarksOperator op(std::move(strategy));
  Open(op);
  Push(op, int64_t{4});
  Push(op, int64_t{5});
  Push(op, int64_t{2});
  Push(op, int64_t{6});
  EXPECT_EQ(out_.Take(), (Calls{"rec:4@4", "wm:4", "rec:5@5", "rec:2@2", "rec:6@6", "wm:6"}));
}

TEST_F(TimestampsAndWatermarksOperatorTest, BatchModeEmitsNoWatermarksExceptMax) {
  TimestampsAndWatermarksOperator op(
      WatermarkStrategy::ForMonotonousTimestamps(FirstField),
      TimestampsAndWatermarksOptions{.emit_progressive_watermarks = false});
  Open(op);
  EXPECT_EQ(time_.NumPendingTimers(), 0u);
  Push(op, int64_t{10});
  time_.AdvanceTo(1000);
  op.ProcessWatermark(Watermark{kMaxTimestamp}, 0);
  op.Finish();
  EXPECT_EQ(out_.Take(), (Calls{"rec:10@10", "wm:MAX"}));
}

TEST_F(TimestampsAndWatermarksOperatorTest, FinishDoesALastPeriodicEmit) {
  TimestampsAndWatermarksOperator op(WatermarkStrategy::ForMonotonousTimestamps(FirstField));
  Open(op);
  Push(op, int64_t{10});
  op.Finish();
  EXPECT_EQ(out_.Take(), (Calls{"rec:10@10", "wm:9"}));
}

TEST_F(TimestampsAndWatermarksOperatorTest, RecordWithoutTimestampGoesToErrorsSideOutput) {
  TimestampsAndWatermarksOperator op(WatermarkStrategy::ForMonotonousTimestamps(FirstField));
  Open(op);
  Push(op, std::monostate{}, 77);
  Push(op, int64_t{10});
  time_.AdvanceTo(50);
  EXPECT_EQ(out_.Take(), (Calls{"rec:10@10", "wm:9"}))
      << "never stamped 0, never seen by the generator";
  EXPECT_EQ(out_.side, (Calls{"errors:null@77"}));
  EXPECT_EQ(op.num_records_without_timestamp(), 1);
}

TEST_F(TimestampsAndWatermarksOperatorTest, RecordWithoutTimestampCanFailTheTask) {
  TimestampsAndWatermarksOperator op(
      WatermarkStrategy::ForMonotonousTimestamps(FirstField),
      TimestampsAndWatermarksOptions{.on_missing_timestamp = MissingTimestampPolicy::kFail});
  Open(op);
  EXPECT_THROW(Push(op, std::string("x")), NoTimestamp);
  EXPECT_EQ(out_.Take(), Calls{});
  EXPECT_EQ(op.num_records_without_timestamp(), 1);
}

TEST_F(TimestampsAndWatermarksOperatorTest, IdlenessRunsOnProcessingTimeAndActiveComesBack) {
  TimestampsAndWatermarksOperator op(WatermarkStrategy::ForMonotonousTimestamps(FirstField)
                                         .WithIdleness(std::chrono::milliseconds(100)));
  Open(op);
  Push(op, int64_t{10});
  time_.AdvanceTo(50);   // activity seen: wm 9
  time_.AdvanceTo(100);  // first quiet check: countdown starts at 100
  time_.AdvanceTo(200);  // elapsed 100: not idle yet (strict)
  time_.AdvanceTo(250);  // elapsed 150 > 100: idle
  time_.AdvanceTo(400);
  EXPECT_EQ(out_.Take(), (Calls{"rec:10@10", "wm:9", "IDLE"}));
  Push(op, int64_t{20});
  time_.AdvanceTo(450);
  EXPECT_EQ(out_.Take(), (Calls{"rec:20@20", "ACTIVE", "wm:19"}));
}

TEST_F(TimestampsAndWatermarksOperatorTest, ExtremeTimestampsPassUnchanged) {
  TimestampsAndWatermarksOperator op(WatermarkStrategy::NoWatermarks(FirstField));
  Open(op);
  for (Timestamp ts : {kMinTimestamp, Timestamp{-1}, Timestamp{0}, kMaxTimestamp}) {
    Push(op, ts);
  }
  EXPECT_EQ(out_.Take(), (Calls{"rec:-9223372036854775808@MIN", "rec:-1@-1", "rec:0@0",
                                "rec:9223372036854775807@MAX"}));
}

}  // namespace
}  // namespace tidemark
