#include "operators/window/window_operator.h"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

using testing::CollectingOutput;
using testing::DescribeRecord;

// Window function over rows (key, value): emits [key, window_start, window_end, sum(value)].
std::unique_ptr<WindowFunction> SumFunction() {
  return std::make_unique<BufferingWindowFunction>([](const WindowFunction::Context& ctx,
                                                      const std::vector<StreamRecord>& elements,
                                                      std::vector<Row>& out) {
    int64_t sum = 0;
    for (const StreamRecord& r : elements) {
      sum += std::get<int64_t>(r.row.Get(1));
    }
    out.push_back(Row{ctx.key[0], ctx.window.start(), ctx.window.end(), sum});
  });
}

std::string Rec(const std::string& key, int64_t start, int64_t end, int64_t sum, Timestamp ts) {
  return DescribeRecord(StreamRecord(Row{key, start, end, sum}, ts));
}
std::string Wm(Timestamp ts) {
  return "watermark(" + std::to_string(ts) + ")";
}

class WindowOperatorTest : public ::testing::Test {
 protected:
  void Open(std::unique_ptr<StreamOperator> op) {
    op_ = std::move(op);
    OperatorContext ctx;
    ctx.name = "windows";
    ctx.output = &out_;
    ctx.processing_time = &clock_;
    op_->Open(ctx);
  }
  void OpenWindows(std::unique_ptr<WindowAssigner> assigner, int64_t lateness, std::string late_tag,
                   std::unique_ptr<Trigger> trigger = nullptr) {
    WindowOperator::Options options;
    options.key_slots = {0};
    options.allowed_lateness_ms = lateness;
    options.late_output_tag = std::move(late_tag);
    Open(std::make_unique<WindowOperator>(std::move(assigner), std::move(trigger), SumFunction(),
                                          options));
  }
  void Element(const std::string& key, int64_t value, Timestamp ts) {
    StreamRecord r(Row{key, value}, ts);
    op_->ProcessElement(r, 0);
  }
  void Watermark(Timestamp ts) { op_->ProcessWatermark(tidemark::Watermark{ts}, 0); }
  WindowOperator& window_op() { return static_cast<WindowOperator&>(*op_); }

  ManualProcessingTimeService clock_;
  CollectingOutput out_;
  std::unique_ptr<StreamOperator> op_;
};

TEST_F(WindowOperatorTest, TumblingWindowsFireBeforeTheWatermarkIsForwarded) {
  OpenWindows(std::make_unique<TumblingWindows>(true, 3000, 0), 0, "");
  Element("a", 1, 20);
  Element("b", 5, 2999);
  Element("a", 2, 0);
  Element("a", 4, 3000);
  Watermark(2998);
  Watermark(2999);
  Watermark(6000);
  EXPECT_EQ(out_.Describe(), (std::vector<std::string>{Wm(2998), Rec("a", 0, 3000, 3, 2999),
                                                       Rec("b", 0, 3000, 5, 2999), Wm(2999),
                                                       Rec("a", 3000, 6000, 4, 5999), Wm(6000)}));
  EXPECT_EQ(window_op().num_windows_fired(), 3);
  EXPECT_EQ(window_op().timer_service().NumEventTimeTimers(), 0u);
}

TEST_F(WindowOperatorTest, NegativeTimestampsLandInFlooredWindows) {
  OpenWindows(std::make_unique<TumblingWindows>(true, 7, 0), 0, "");
  Element("a", 1, -8);
  Element("a", 2, -14);
  Element("a", 4, -7);
  Watermark(0);
  EXPECT_EQ(out_.Describe(),
            (std::vector<std::string>{Rec("a", -14, -7, 3, -8), Rec("a", -7, 0, 4, -1), Wm(0)}));
}

TEST_F(WindowOperatorTest, SessionsMergeAndABridgingRecordJoinsTwoSessions) {
  OpenWindows(std::make_unique<SessionWindows>(true, 3000), 0, "");
  Element("a", 1, 0);
  Element("a", 2, 5000);
  Element("b", 10, 100);
  EXPECT_EQ(window_op().GetMergingWindowSet(Key{Value{"a"}})->mapping().size(), 2u);
  Element("a", 4, 2500);  // [2500,5500) touches [0,3000) and [5000,8000)
  EXPECT_EQ(window_op().GetMergingWindowSet(Key{Value{"a"}})->mapping().size(), 1u);
  Watermark(7999);
  EXPECT_EQ(out_.Describe(), (std::vector<std::string>{Rec("b", 100, 3100, 10, 3099),
                                                       Rec("a", 0, 8000, 7, 7999), Wm(7999)}));
  // Fired and cleaned up (lateness 0): nothing left behind.
  EXPECT_EQ(window_op().GetMergingWindowSet(Key{Value{"a"}}), nullptr);
  EXPECT_EQ(window_op().timer_service().NumEventTimeTimers(), 0u);
}

TEST_F(WindowOperatorTest, LateRecordsWithinLatenessRefireAndBeyondGoToTheSideOutput) {
  OpenWindows(std::make_unique<TumblingWindows>(true, 2000, 0), 500, "late");
  Element("k", 1, 500);
  Watermark(1500);
  Element("k", 1, 1300);
  Watermark(2300);        // fires [0,2000); cleanup at 2499
  Element("k", 1, 1997);  // late but allowed: fires again at once, accumulated
  Watermark(6000);        // cleanup ran
  Element("k", 1, 1998);  // beyond lateness
  Watermark(7000);
  EXPECT_EQ(out_.Describe(),
            (std::vector<std::string>{Wm(1500), Rec("k", 0, 2000, 2, 1999), Wm(2300),
                                      Rec("k", 0, 2000, 3, 1999), Wm(6000), Wm(7000)}));
  const std::vector<StreamRecord> late = out_.SideOutput("late");
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(DescribeRecord(late[0]), DescribeRecord(StreamRecord(Row{"k", int64_t{1}}, 1998)));
  EXPECT_EQ(window_op().num_late_records_side_output(), 1);
  EXPECT_EQ(window_op().num_late_records_dropped(), 0);
  EXPECT_EQ(window_op().num_windows_fired(), 2);
}

TEST_F(WindowOperatorTest, LateRecordsWithoutSideOutputAreDroppedAndCounted) {
  OpenWindows(std::make_unique<TumblingWindows>(true, 1000, 0), 0, "");
  Watermark(999);  // [0,1000) is late: maxTimestamp + 0 <= 999
  Element("k", 1, 999);
  Element("k", 1, 0);
  Element("k", 1, 1000);
  Watermark(2000);
  EXPECT_EQ(out_.Describe(),
            (std::vector<std::string>{Wm(999), Rec("k", 1000, 2000, 1, 1999), Wm(2000)}));
  EXPECT_EQ(window_op().num_late_records_dropped(), 2);
  EXPECT_TRUE(out_.SideOutput("late").empty());
}

TEST_F(WindowOperatorTest, SlidingRecordLateForItsOldestWindowStillCountsInTheOthers) {
  OpenWindows(std::make_unique<SlidingWindows>(true, 3000, 1000, 0), 0, "late");
  Watermark(2999);  // [0,3000) and older are late; [1000,4000), [2000,5000) are open
  Element("k", 1, 2000);
  Watermark(5000);
  EXPECT_EQ(out_.Describe(), (std::vector<std::string>{Wm(2999), Rec("k", 1000, 4000, 1, 3999),
                                                       Rec("k", 2000, 5000, 1, 4999), Wm(5000)}));
  EXPECT_TRUE(out_.SideOutput("late").empty());
  EXPECT_EQ(window_op().num_late_records_dropped(), 0);
}

TEST_F(WindowOperatorTest, PurgingTriggerFiresOnlyNewContentsWithinLateness) {
  OpenWindows(std::make_unique<TumblingWindows>(true, 2000, 0), 500, "late",
              std::make_unique<PurgingTrigger>(std::make_unique<EventTimeTrigger>()));
  Element("k", 1, 500);
  Element("k", 1, 1300);
  Watermark(2300);
  Element("k", 5, 1997);
  EXPECT_EQ(out_.Describe(), (std::vector<std::string>{Rec("k", 0, 2000, 2, 1999), Wm(2300),
                                                       Rec("k", 0, 2000, 5, 1999)}));
}

TEST_F(WindowOperatorTest, ProcessingTimeWindowsFireFromTheClock) {
  OpenWindows(std::make_unique<TumblingWindows>(false, 3000, 0), 0, "");
  clock_.AdvanceTo(3);
  Element("k", 1, kMaxTimestamp);
  Element("k", 2, 7000);
  clock_.AdvanceTo(2998);
  EXPECT_TRUE(out_.elements().empty());
  clock_.AdvanceTo(5000);
  EXPECT_EQ(out_.Describe(), (std::vector<std::string>{Rec("k", 0, 3000, 3, 2999)}));
}

const Schema kInput({{"user", FieldType::kString},
                     {"ts", FieldType::kTimestamp},
                     {"amount", FieldType::kInt64},
                     {"price", FieldType::kDouble}});

AggregateSpec Agg(const std::string& function, const std::string& field, const std::string& as) {
  AggregateSpec a;
  a.function = function;
  a.field = field;
  a.as = as;
  return a;
}

WindowSpec TumblingSpec(int64_t size_ms) {
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = size_ms;
  return spec;
}

TEST(WindowOperatorCompileTest, OutputSchemaHasKeysWindowBoundsAggregatesAndWatermark) {
  WindowSpec spec = TumblingSpec(1000);
  spec.emit_watermark = true;
  spec.aggregates = {Agg("count", "", ""), Agg("sum", "amount", ""), Agg("avg", "amount", "mean"),
                     Agg("max", "price", "")};
  const WindowOperatorPlan plan = WindowOperator::Compile(kInput, spec, {"user"});
  EXPECT_EQ(plan.output_schema, Schema({{"user", FieldType::kString},
                                        {"window_start", FieldType::kTimestamp},
                                        {"window_end", FieldType::kTimestamp},
                                        {"count", FieldType::kInt64},
                                        {"sum_amount", FieldType::kInt64},
                                        {"mean", FieldType::kDouble},
                                        {"max_price", FieldType::kDouble},
                                        {"watermark", FieldType::kTimestamp}}));
}

void ExpectInvalid(const WindowSpec& spec, const std::vector<std::string>& key_by,
                   const std::string& message_part) {
  try {
    WindowOperator::Compile(kInput, spec, key_by);
    ADD_FAILURE() << "expected InvalidArgument containing '" << message_part << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(message_part), std::string::npos) << e.what();
  }
}

TEST(WindowOperatorCompileTest, RejectsBadSpecsWithClearMessages) {
  ExpectInvalid(TumblingSpec(0), {}, "window.size must be > 0");
  ExpectInvalid(TumblingSpec(-5), {}, "window.size must be > 0");
  WindowSpec sliding = TumblingSpec(1000);
  sliding.assigner = "sliding";
  sliding.slide_ms = 2000;
  ExpectInvalid(sliding, {}, "must not be larger than window.size");
  WindowSpec unknown = TumblingSpec(1000);
  unknown.aggregates = {Agg("median", "amount", "")};
  ExpectInvalid(unknown, {}, "unknown aggregate function 'median'");
  WindowSpec missing = TumblingSpec(1000);
  missing.aggregates = {Agg("sum", "nope", "")};
  ExpectInvalid(missing, {}, "no field 'nope'");
  ExpectInvalid(TumblingSpec(1000), {"nope"}, "key_by: the input has no field 'nope'");
  WindowSpec offset = TumblingSpec(1000);
  offset.offset_ms = 1000;
  ExpectInvalid(offset, {}, "abs(offset) < size");
}

TEST_F(WindowOperatorTest, EndOfInputMaxWatermarkFiresEverythingWithWatermarkColumn) {
  WindowSpec spec = TumblingSpec(1000);
  spec.emit_watermark = true;
  spec.allowed_lateness_ms = 5000;
  spec.aggregates = {Agg("count", "", ""), Agg("sum", "amount", "")};
  const WindowOperatorPlan plan = WindowOperator::Compile(kInput, spec, {});
  Open(plan.factory());
  for (const auto& [ts, amount] :
       std::vector<std::pair<int64_t, int64_t>>{{100, 1}, {2500, 2}, {900, 3}, {7000, 4}}) {
    StreamRecord r(Row{"u", ts, amount, 1.5}, ts);
    op_->ProcessElement(r, 0);
  }
  op_->ProcessWatermark(tidemark::Watermark{999}, 0);
  op_->ProcessWatermark(tidemark::Watermark{kMaxTimestamp}, 0);
  std::vector<std::string> expected = {
      DescribeRecord(
          StreamRecord(Row{int64_t{0}, int64_t{1000}, int64_t{2}, int64_t{4}, int64_t{999},
                           int64_t{0}},  // firing: allowed lateness > 0 adds the column
                       999)),
      Wm(999),
      DescribeRecord(StreamRecord(
          Row{int64_t{2000}, int64_t{3000}, int64_t{1}, int64_t{2}, kMaxTimestamp, int64_t{0}},
          2999)),
      DescribeRecord(StreamRecord(
          Row{int64_t{7000}, int64_t{8000}, int64_t{1}, int64_t{4}, kMaxTimestamp, int64_t{0}},
          7999)),
      Wm(kMaxTimestamp)};
  EXPECT_EQ(out_.Describe(), expected);
  EXPECT_EQ(window_op().timer_service().NumEventTimeTimers(), 0u);
}

// A sliced count window (tumbling 1 s) keyed by `key` over {key, ts} records: `batches` fed as
// batches, or the same records one at a time; then the MAX watermark. Every output described.
// The sliced count window (tumbling 1 s) keyed by `key` over {key, ts} records, opened on `out`.
std::unique_ptr<StreamOperator> OpenSlicedCounts(FieldType key_type, Output& out,
                                                 ManualProcessingTimeService& clock) {
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = 1000;
  AggregateSpec count;
  count.function = "count";
  spec.aggregates = {count};
  std::unique_ptr<StreamOperator> op =
      WindowOperator::Compile(Schema({{"key", key_type}, {"ts", FieldType::kTimestamp}}), spec,
                              {"key"})
          .factory();
  EXPECT_TRUE(static_cast<WindowOperator&>(*op).uses_slices());
  OperatorContext ctx;
  ctx.name = "windows";
  ctx.output = &out;
  ctx.processing_time = &clock;
  op->Open(ctx);
  return op;
}

std::vector<std::string> RunSlicedCounts(FieldType key_type,
                                         const std::vector<std::vector<StreamRecord>>& batches,
                                         bool as_batches) {
  ManualProcessingTimeService clock;
  CollectingOutput out;
  std::unique_ptr<StreamOperator> op = OpenSlicedCounts(key_type, out, clock);
  for (std::vector<StreamRecord> batch : batches) {
    if (as_batches) {
      std::vector<StreamRecord*> pointers;
      for (StreamRecord& r : batch) {
        pointers.push_back(&r);
      }
      RecordBatch records{pointers.data(), pointers.size()};
      op->ProcessBatch(records, 0);
    } else {
      for (StreamRecord& r : batch) {
        op->ProcessElement(r, 0);
      }
    }
  }
  op->ProcessWatermark(tidemark::Watermark{kMaxTimestamp}, 0);
  op->Close();
  return out.Describe();
}

// The batch loops request each record's state a few records ahead from the store its key type
// lives in. A record in the middle of a batch may destroy that store: a far timestamp moves the
// operator off the sliced path, a NULL int64 key moves every key to the interned store. The
// records after it must go on (no lookup ahead into the destroyed store) and give what the
// same records one at a time give.
TEST(WindowOperatorBatchTest, ARecordThatDestroysTheSlicedStoreMidBatchIsFollowedCorrectly) {
  {
    SCOPED_TRACE("string keys, a far timestamp");
    std::vector<StreamRecord> batch;
    for (int64_t i = 0; i < 64; ++i) {
      const Timestamp ts = i == 30 ? (Timestamp{1} << 61) + 5 : i * 10;
      batch.emplace_back(Row{Value("user_" + std::to_string(i % 40)), Value(ts)}, ts);
    }
    const auto batched = RunSlicedCounts(FieldType::kString, {batch}, true);
    EXPECT_EQ(batched, RunSlicedCounts(FieldType::kString, {batch}, false));
    // 39 users in [0, 1000) (user_30's only record is the far one), the far window, the
    // watermark.
    EXPECT_EQ(batched.size(), 39u + 1u + 1u);
  }
  {
    SCOPED_TRACE("int64 keys past the look-ahead threshold, a NULL key");
    std::vector<StreamRecord> first;
    for (int64_t k = 0; k < 10000; ++k) {  // more keys than the int64 loop's touch threshold
      first.emplace_back(Row{Value(k), Value(k % 1000)}, k % 1000);
    }
    std::vector<StreamRecord> second;
    for (int64_t i = 0; i < 64; ++i) {
      const Value key = i == 20 ? Value(std::monostate{}) : Value(i);
      second.emplace_back(Row{key, Value(int64_t{500})}, 500);
    }
    const auto batched = RunSlicedCounts(FieldType::kInt64, {first, second}, true);
    EXPECT_EQ(batched, RunSlicedCounts(FieldType::kInt64, {first, second}, false));
    EXPECT_EQ(batched.size(), 10001u + 1u);  // keys 0-9999 and NULL in [0, 1000), the watermark
  }
}

// Records every emission as a line and the size of every batch handed over.
class BatchRecordingOutput : public Output {
 public:
  void Collect(StreamRecord& record) override { lines.push_back(DescribeRecord(record)); }
  void CollectBatch(RecordBatch& batch) override {
    batch_sizes.push_back(batch.size);
    for (size_t i = 0; i < batch.size; ++i) {
      Collect(*batch.records[i]);
    }
  }
  void CollectSide(std::string_view, StreamRecord&) override {}
  void EmitWatermark(tidemark::Watermark wm) override { lines.push_back(Wm(wm.timestamp)); }
  void EmitWatermarkStatus(WatermarkStatus) override {}
  std::vector<std::string> lines;
  std::vector<size_t> batch_sizes;
};

TEST(WindowOperatorSlicedTest, AWindowEndsResultsGoDownstreamInBatchesInKeyOrder) {
  // 600 string keys end a window at one watermark: their results leave in batches of 256 (the
  // last one shorter), in key order, before the watermark; the next window end's 3 in one.
  ManualProcessingTimeService clock;
  BatchRecordingOutput out;
  std::unique_ptr<StreamOperator> op = OpenSlicedCounts(FieldType::kString, out, clock);
  auto key = [](int i) {
    char k[16];  // room for any int: GCC checks the range, not the loop
    std::snprintf(k, sizeof(k), "k%03d", i);
    return std::string(k);
  };
  std::vector<std::string> expected;
  for (int i = 599; i >= 0; --i) {  // arrival order is not key order
    StreamRecord r(Row{key(i), int64_t{500}}, 500);
    op->ProcessElement(r, 0);
    if (i % 7 == 0) {
      StreamRecord again(Row{key(i), int64_t{900}}, 900);
      op->ProcessElement(again, 0);
    }
  }
  for (int i = 0; i < 600; ++i) {
    expected.push_back(DescribeRecord(
        StreamRecord(Row{key(i), int64_t{0}, int64_t{1000}, int64_t{i % 7 == 0 ? 2 : 1}}, 999)));
  }
  expected.push_back(Wm(999));
  for (int i : {5, 1, 3}) {
    StreamRecord r(Row{key(i), int64_t{1500}}, 1500);
    op->ProcessElement(r, 0);
  }
  for (int i : {1, 3, 5}) {
    expected.push_back(
        DescribeRecord(StreamRecord(Row{key(i), int64_t{1000}, int64_t{2000}, int64_t{1}}, 1999)));
  }
  expected.push_back(Wm(1999));
  op->ProcessWatermark(tidemark::Watermark{999}, 0);
  op->ProcessWatermark(tidemark::Watermark{1999}, 0);
  EXPECT_EQ(out.lines, expected);
  EXPECT_EQ(out.batch_sizes, (std::vector<size_t>{256, 256, 88, 3}));
  op->Close();
}

}  // namespace
}  // namespace tidemark
