#include "sources/source_operator.h"

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/eventtime/bounded_out_of_orderness_watermarks.h"
#include "runtime/eventtime/punctuated_watermarks.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

const Schema& ValueSchema() {
  static const Schema schema({{"value", FieldType::kInt64}});
  return schema;
}

class IdSplit : public SourceSplit {
 public:
  explicit IdSplit(std::string id) : id_(std::move(id)) {}
  std::string SplitId() const override { return id_; }

 private:
  std::string id_;
};

/// Emits the queued timestamps of its splits, one per poll, through each split's output (record
/// value = timestamp). Never ends on its own.
class QueueReader : public SourceReader {
 public:
  explicit QueueReader(std::map<std::string, std::deque<Timestamp>>& queues) : queues_(queues) {}
  void Start(SourceReaderContext&) override {}
  void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) override {
    for (const auto& s : splits) {
      order_.push_back(s->SplitId());
    }
  }
  void NotifyNoMoreSplits() override {}
  InputStatus PollNext(ReaderOutput& output) override {
    for (const std::string& id : order_) {
      auto& q = queues_[id];
      if (!q.empty()) {
        const Timestamp ts = q.front();
        q.pop_front();
        output.CreateOutputForSplit(id).Collect(Row{Value{ts}}, ts);
        return InputStatus::kMoreAvailable;
      }
    }
    return InputStatus::kNothingAvailable;
  }

 private:
  std::map<std::string, std::deque<Timestamp>>& queues_;
  std::vector<std::string> order_;
};

class QueueSource : public Source {
 public:
  explicit QueueSource(std::map<std::string, std::deque<Timestamp>>& queues) : queues_(queues) {}
  const Schema& schema() const override { return ValueSchema(); }
  std::vector<std::unique_ptr<SourceSplit>> CreateSplits() const override { return {}; }
  std::unique_ptr<SourceReader> CreateReader(int) const override {
    return std::make_unique<QueueReader>(queues_);
  }

 private:
  std::map<std::string, std::deque<Timestamp>>& queues_;
};

struct Harness {
  explicit Harness(WatermarkStrategy strategy, int64_t interval_ms) {
    SourceOperatorOptions options;
    options.assign_splits_on_open = false;
    op = std::make_unique<SourceOperator>(std::make_shared<QueueSource>(queues),
                                          std::move(strategy), options);
    OperatorContext context;
    context.name = "source";
    context.output = &output;
    context.processing_time = &time;
    context.auto_watermark_interval_ms = interval_ms;
    op->SetWatermarkReporter([this](Timestamp w) { reports.push_back(w); });
    op->Open(context);
  }
  ~Harness() { op->Close(); }
  void AddSplit(const std::string& id, std::deque<Timestamp> records) {
    queues[id] = std::move(records);
    std::vector<std::unique_ptr<SourceSplit>> splits;
    splits.push_back(std::make_unique<IdSplit>(id));
    op->AddSplits(std::move(splits));
  }

  std::map<std::string, std::deque<Timestamp>> queues;
  testing::CollectingOutput output;
  ManualProcessingTimeService time{0};
  std::vector<Timestamp> reports;
  std::unique_ptr<SourceOperator> op;
};

WatermarkStrategy PerEventStrategy() {
  return WatermarkStrategy(RecordTimestampAssigner(), [] {
    return std::make_unique<PunctuatedWatermarks>(
        [](const StreamRecord&, Timestamp ts) -> std::optional<Timestamp> { return ts; });
  });
}

TEST(SourceOperatorTest, SplitsAssignedBeforeTheFirstPollGetOutputsAndReportsAtThatPoll) {
  // Flink's OUTPUT_NOT_INITIALIZED: periodic ticks before the first emitNext do nothing, and the
  // alignment reports run every update-interval counted from that first emitNext.
  WatermarkStrategy strategy =
      WatermarkStrategy(
          RecordTimestampAssigner(),
          [] {
            return std::make_unique<BoundedOutOfOrdernessWatermarks>(std::chrono::milliseconds(0));
          })
          .WithIdleness(std::chrono::milliseconds(100))
          .WithAlignment(WatermarkAlignmentParams{"g", 100, 7});
  Harness h(std::move(strategy), 50);
  h.AddSplit("s", {40});
  h.time.AdvanceTo(1000);  // without outputs, idleness cannot start: no IDLE before the first poll
  EXPECT_TRUE(h.output.Describe().empty());
  EXPECT_EQ(h.op->EmitNext(), InputStatus::kMoreAvailable);  // at 1000: reports at 1007, 1014, ...
  EXPECT_EQ(h.output.Describe(), std::vector<std::string>{"record([40]@40)"});
  h.time.AdvanceTo(1050);  // periodic tick at 1050: 40 - 0 - 1
  EXPECT_EQ(h.output.Watermarks(), std::vector<Timestamp>{39});
  EXPECT_TRUE(h.reports.empty());  // 1007 .. 1049: no watermark yet
  h.time.AdvanceTo(1056);          // counted from the open (0) the next report would be at 1057
  EXPECT_EQ(h.reports, std::vector<Timestamp>{39});
}

TEST(SourceOperatorTest, WaitingForAlignmentPausesIdlenessClocks) {
  // Flink pauses the main input activity clock (and so every split clock layered on it) while
  // the subtask waits for alignment: a waiting single-split source never turns idle.
  WatermarkStrategy strategy = PerEventStrategy()
                                   .WithIdleness(std::chrono::milliseconds(100))
                                   .WithAlignment(WatermarkAlignmentParams{"g", 1, 1000});
  Harness h(std::move(strategy), 100);
  h.time.AdvanceTo(1);
  h.AddSplit("s", {1, 5});
  EXPECT_EQ(h.op->EmitNext(), InputStatus::kMoreAvailable);  // 1 -> watermark 1
  h.op->HandleAlignmentEvent(4);
  h.time.AdvanceTo(101);
  // The record that passes the maximum: Flink returns the reader's MORE_AVAILABLE, then waits.
  EXPECT_EQ(h.op->EmitNext(), InputStatus::kMoreAvailable);
  EXPECT_FALSE(h.op->IsAvailable());
  EXPECT_EQ(h.op->EmitNext(), InputStatus::kNothingAvailable);
  // One periodic check per step (a timer sees the time an advance goes to): without the pause
  // the split's countdown would start at 300 and it would be idle at 500.
  for (Timestamp t = 200; t <= 1000; t += 100) {
    h.time.AdvanceTo(t);
    EXPECT_FALSE(h.op->IsIdle()) << "at " << t;
  }
  h.time.AdvanceTo(1001);
  EXPECT_FALSE(h.op->IsIdle());
  EXPECT_EQ(h.reports, std::vector<Timestamp>{5});  // 1001: active, so its real watermark
  h.op->HandleAlignmentEvent(10);
  EXPECT_TRUE(h.op->IsAvailable());
  // The split's countdown started at the quiet check at 300 with the clock stopped at 101; it
  // runs again from 1001: 99 ms at 1100, 199 ms at 1200.
  h.time.AdvanceTo(1100);
  EXPECT_FALSE(h.op->IsIdle());
  h.time.AdvanceTo(1200);
  EXPECT_TRUE(h.op->IsIdle());
  EXPECT_EQ(h.output.Describe().back(), "status(IDLE)");
}

/// Records the size of every batch handed to it (and records everything as CollectingOutput).
class BatchCountingOutput : public testing::CollectingOutput {
 public:
  void CollectBatch(RecordBatch& batch) override {
    batch_sizes.push_back(batch.size);
    Output::CollectBatch(batch);  // record by record into elements()
  }
  std::vector<size_t> batch_sizes;
};

/// A source over one split "s" holding `timestamps`, writing into `output`.
std::unique_ptr<SourceOperator> OpenQueueSource(
    std::map<std::string, std::deque<Timestamp>>& queues, std::deque<Timestamp> timestamps,
    WatermarkStrategy strategy, Output& output, ManualProcessingTimeService& time) {
  SourceOperatorOptions options;
  options.assign_splits_on_open = false;
  auto op = std::make_unique<SourceOperator>(std::make_shared<QueueSource>(queues),
                                             std::move(strategy), options);
  OperatorContext context;
  context.name = "source";
  context.output = &output;
  context.processing_time = &time;
  context.auto_watermark_interval_ms = 0;
  op->Open(context);
  queues["s"] = std::move(timestamps);
  std::vector<std::unique_ptr<SourceSplit>> splits;
  splits.push_back(std::make_unique<IdSplit>("s"));
  op->AddSplits(std::move(splits));
  return op;
}

TEST(SourceOperatorTest, EmitBatchKeepsEveryWatermarkAfterItsRecord) {
  // Punctuated watermarks after every record: EmitBatch must send each record before the
  // watermark it caused, exactly as one EmitNext per record does.
  const std::deque<Timestamp> ts = {1, 2, 2, 5, 3, 8};
  std::map<std::string, std::deque<Timestamp>> q1, q2;
  ManualProcessingTimeService t1{0}, t2{0};
  testing::CollectingOutput per_record;
  BatchCountingOutput batched;
  auto a = OpenQueueSource(q1, ts, PerEventStrategy(), per_record, t1);
  auto b = OpenQueueSource(q2, ts, PerEventStrategy(), batched, t2);
  while (a->EmitNext() == InputStatus::kMoreAvailable) {
  }
  int64_t polls = 0;
  EXPECT_EQ(b->EmitBatch(100, &polls), InputStatus::kNothingAvailable);
  EXPECT_EQ(polls, 6);
  EXPECT_EQ(batched.Describe(), per_record.Describe());
  EXPECT_EQ(batched.Watermarks(), (std::vector<Timestamp>{1, 2, 5, 8}));
  // Each new watermark first sent the records before it; the repeated 2 and the late 3 made
  // none, so the 3rd and 4th records, and the 5th and 6th, left together.
  EXPECT_EQ(batched.batch_sizes, (std::vector<size_t>{1, 1, 2, 2}));
  a->Close();
  b->Close();
}

TEST(SourceOperatorTest, EmitBatchSendsFullBatchesAndNothingPendingAtReturn) {
  // Timestamps only (bounded out-of-orderness, no periodic tick): no watermark inside the polls,
  // so 300 records leave as one full batch and the rest, all before EmitBatch returns.
  std::deque<Timestamp> ts;
  for (Timestamp i = 0; i < 300; ++i) {
    ts.push_back(i);
  }
  std::map<std::string, std::deque<Timestamp>> queues;
  ManualProcessingTimeService time{0};
  BatchCountingOutput out;
  auto op =
      OpenQueueSource(queues, ts,
                      WatermarkStrategy(RecordTimestampAssigner(),
                                        [] {
                                          return std::make_unique<BoundedOutOfOrdernessWatermarks>(
                                              std::chrono::milliseconds(0));
                                        }),
                      out, time);
  int64_t polls = 0;
  EXPECT_EQ(op->EmitBatch(1000, &polls), InputStatus::kNothingAvailable);
  EXPECT_EQ(polls, 300);
  EXPECT_EQ(out.batch_sizes,
            (std::vector<size_t>{SourceOperator::kBatchSize, 300 - SourceOperator::kBatchSize}));
  const std::vector<StreamRecord> records = out.Records();
  ASSERT_EQ(records.size(), 300u);
  for (size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].timestamp, static_cast<Timestamp>(i));
    EXPECT_EQ(records[i].row, Row{Value{static_cast<int64_t>(i)}});
  }
  // A cap on the polls stops early; the next call goes on where it stopped.
  queues["s"] = {300, 301, 302};
  out.Clear();
  out.batch_sizes.clear();
  EXPECT_EQ(op->EmitBatch(2, &polls), InputStatus::kMoreAvailable);
  EXPECT_EQ(polls, 2);
  EXPECT_EQ(out.Records().size(), 2u);
  op->Close();
}

}  // namespace
}  // namespace tidemark
