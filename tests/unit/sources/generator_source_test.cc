#include "sources/generator_source.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/eventtime/punctuated_watermarks.h"
#include "runtime/io/wakeup.h"
#include "runtime/time/manual_processing_time_service.h"
#include "sources/source_operator.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

/// Records every element as CollectingOutput does, each batch's size, and then (like a task's
/// output that gives the rows to a channel) moves the rows out of the batch, so the source must
/// rebuild them.
class TakingOutput : public testing::CollectingOutput {
 public:
  void CollectBatch(RecordBatch& batch) override {
    batch_sizes.push_back(batch.size);
    Output::CollectBatch(batch);
    for (size_t i = 0; i < batch.size; ++i) {
      Row taken = std::move(batch[i].row);
    }
  }
  std::vector<size_t> batch_sizes;
};

SourceSpec Generator(int64_t count, int64_t watermark_every) {
  SourceSpec spec;
  spec.type = "generator";
  spec.count = count;
  spec.keys = 7;
  spec.step_ms = 3;
  spec.watermark_every = watermark_every;
  return spec;
}

/// Punctuated on field `wm` (slot 3 of the generator's schema): a watermark after every record
/// whose `wm` is set.
WatermarkStrategy PunctuatedOnWm() {
  return WatermarkStrategy(RecordTimestampAssigner(), [] {
    return std::make_unique<PunctuatedWatermarks>(
        [](const StreamRecord& r, Timestamp) -> std::optional<Timestamp> {
          if (r.row.IsNull(3)) {
            return std::nullopt;
          }
          return r.row.GetInt64(3);
        });
  });
}

/// A generator source operator of subtask `subtask` of `parallelism`, writing into `output`
/// (with the task's `wakeup` and clock kind, when given).
struct Harness {
  Harness(const SourceSpec& spec, std::optional<WatermarkStrategy> strategy, Output& output,
          int subtask = 0, int parallelism = 1, Wakeup* wakeup = nullptr,
          bool virtual_clock = false) {
    op = std::make_unique<SourceOperator>(std::make_shared<GeneratorSource>(spec),
                                          std::move(strategy));
    OperatorContext context;
    context.name = "source";
    context.output = &output;
    context.processing_time = &time;
    context.subtask_index = subtask;
    context.parallelism = parallelism;
    context.auto_watermark_interval_ms = 0;
    context.wakeup = wakeup;
    context.virtual_clock = virtual_clock;
    op->SetWatermarkReporter([](Timestamp) {});
    op->Open(context);
  }
  ~Harness() { op->Close(); }
  /// EmitBatch(max_polls) until it stops returning kMoreAvailable; the polls of every call.
  std::vector<int64_t> DrainBatches(int64_t max_polls, InputStatus* last) {
    std::vector<int64_t> polls;
    for (;;) {
      int64_t n = 0;
      *last = op->EmitBatch(max_polls, &n);
      polls.push_back(n);
      if (*last != InputStatus::kMoreAvailable) {
        return polls;
      }
    }
  }

  ManualProcessingTimeService time{0};
  std::unique_ptr<SourceOperator> op;
};

std::vector<std::string> PerRecord(const SourceSpec& spec,
                                   std::optional<WatermarkStrategy> strategy, int subtask = 0,
                                   int parallelism = 1) {
  testing::CollectingOutput out;
  Harness h(spec, std::move(strategy), out, subtask, parallelism);
  while (h.op->EmitNext() == InputStatus::kMoreAvailable) {
  }
  return out.Describe();
}

TEST(GeneratorSourceTest, RecordGeneratorEqualsThePlainModuloForEveryKeyCount) {
  // The divider replaces `%` for speed only: every key count (1, powers of two and their
  // neighbours, the benches' counts, counts past 2^32 and up to INT64_MAX) gives the same keys.
  std::vector<int64_t> key_counts = {1,
                                     2,
                                     3,
                                     7,
                                     10,
                                     1000,
                                     100000,
                                     1000000,
                                     4294967295LL,
                                     4294967296LL,
                                     4294967297LL,
                                     int64_t{0x7FFFFFFFFFFFFFFF}};
  for (int shift = 1; shift < 63; shift += 7) {
    key_counts.push_back((int64_t{1} << shift) - 1);
    key_counts.push_back(int64_t{1} << shift);
    key_counts.push_back((int64_t{1} << shift) + 1);
  }
  int64_t differing = 0;
  for (const int64_t keys : key_counts) {
    const RecordGenerator generate(keys, 3);
    for (int64_t i = 0; i < 20000; ++i) {
      // Small indexes and indexes near the top of the range.
      for (const int64_t index : {i, int64_t{0x7FFFFFFFFFFFFFFF} / 3 - i * 977}) {
        const GeneratedRecord expected = GenerateRecord(index, keys, 3);
        const GeneratedRecord got = generate(index);
        differing +=
            got.key != expected.key || got.value != expected.value || got.ts != expected.ts;
      }
    }
  }
  EXPECT_EQ(differing, 0);
  // A few by value, so the reference itself cannot drift unnoticed.
  EXPECT_EQ(RecordGenerator(1, 3)(12345).key, 0);
  EXPECT_EQ(RecordGenerator(1000, 3)(0).key, static_cast<int64_t>(Mix64(0) % 1000));
  EXPECT_EQ(RecordGenerator(1000, 3)(7).ts, 21);
}

TEST(GeneratorSourceTest, BatchPollGivesThePerRecordRecordsAndTimestamps) {
  for (const auto& [subtask, parallelism] : std::vector<std::pair<int, int>>{{0, 1}, {1, 3}}) {
    const SourceSpec spec = Generator(1000 * parallelism, 0);
    const std::vector<std::string> expected = PerRecord(spec, std::nullopt, subtask, parallelism);
    ASSERT_EQ(expected.size(), 1000u);
    TakingOutput out;
    Harness h(spec, std::nullopt, out, subtask, parallelism);
    InputStatus last;
    // The pool holds kBatchSize records: a call of 1000 polls fills three batches and a part.
    EXPECT_EQ(h.DrainBatches(1000, &last), (std::vector<int64_t>{1000, 0}));
    EXPECT_EQ(last, InputStatus::kEndOfInput);
    EXPECT_EQ(out.batch_sizes, (std::vector<size_t>{256, 256, 256, 232}));
    EXPECT_EQ(out.Describe(), expected);
    const std::vector<StreamRecord> records = out.Records();
    for (size_t k = 0; k < records.size(); ++k) {
      const int64_t i = subtask + static_cast<int64_t>(k) * parallelism;
      const GeneratedRecord g = GenerateRecord(i, spec.keys, spec.step_ms);
      ASSERT_EQ(records[k].row.GetInt64(0), g.key);
      ASSERT_EQ(records[k].row.GetDouble(1), g.value);
      ASSERT_EQ(records[k].row.GetInt64(2), g.ts);
      ASSERT_EQ(records[k].timestamp, g.ts);
    }
  }
}

TEST(GeneratorSourceTest, BatchPollWithATimestampOnlyGeneratorGivesThePerRecordOutput) {
  // A bounded-out-of-orderness generator reads only timestamps: the batch takes its own loop.
  // The assigner moves each timestamp by +1 ms and finds none for key 3: those records go to
  // the errors output, in both paths alike.
  auto strategy = [] {
    return WatermarkStrategy::ForBoundedOutOfOrderness(
        std::chrono::milliseconds(0), [](const StreamRecord& r) -> std::optional<Timestamp> {
          if (r.row.GetInt64(0) == 3) {
            return std::nullopt;
          }
          return r.row.GetInt64(2) + 1;
        });
  };
  const SourceSpec spec = Generator(1000, 0);
  testing::CollectingOutput per_record;
  {
    Harness a(spec, strategy(), per_record);
    while (a.op->EmitNext() == InputStatus::kMoreAvailable) {
    }
  }
  TakingOutput batched;
  {
    Harness b(spec, strategy(), batched);
    InputStatus last;
    b.DrainBatches(300, &last);
    EXPECT_EQ(last, InputStatus::kEndOfInput);
  }
  EXPECT_EQ(batched.Describe(), per_record.Describe());
  const RecordGenerator generate(spec.keys, spec.step_ms);
  int64_t key3 = 0;
  for (int64_t i = 0; i < 1000; ++i) {
    key3 += generate(i).key == 3;
  }
  ASSERT_GT(key3, 0);
  EXPECT_EQ(static_cast<int64_t>(batched.SideOutput("errors").size()), key3);
  EXPECT_EQ(static_cast<int64_t>(batched.Records().size()), 1000 - key3);
  for (const StreamRecord& r : batched.Records()) {
    ASSERT_EQ(r.timestamp, r.row.GetInt64(2) + 1);
  }
}

TEST(GeneratorSourceTest, BatchPollKeepsEachPunctuatedWatermarkRightAfterItsRecord) {
  const SourceSpec spec = Generator(300, 5);
  const std::vector<std::string> expected = PerRecord(spec, PunctuatedOnWm());
  ASSERT_EQ(expected.size(), 300u + 60u);
  // The 5th record has its `wm` set (to its timestamp 12): its watermark follows it.
  const GeneratedRecord fifth = GenerateRecord(4, spec.keys, spec.step_ms);
  EXPECT_EQ(expected[4],
            fmt::format("record([{},{},12,12]@12)", fifth.key, ValueToJson(Value{fifth.value})));
  EXPECT_EQ(expected[5], "watermark(12)");
  TakingOutput out;
  Harness h(spec, PunctuatedOnWm(), out);
  InputStatus last;
  // The last call meets the end of input after its 44 records.
  EXPECT_EQ(h.DrainBatches(64, &last), (std::vector<int64_t>{64, 64, 64, 64, 44}));
  EXPECT_EQ(last, InputStatus::kEndOfInput);
  EXPECT_EQ(out.Describe(), expected);
  // Every watermark first sent the five records before it; a call's end sends what it has
  // (64 = 12 * 5 + 4: the 13th group of five leaves as 4 + 1).
  ASSERT_GE(out.batch_sizes.size(), 14u);
  EXPECT_EQ(std::vector<size_t>(out.batch_sizes.begin(), out.batch_sizes.begin() + 14),
            (std::vector<size_t>{5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 4, 1}));
}

TEST(GeneratorSourceTest, BatchPollStopsRightAfterTheRecordThatStartsAnAlignmentWait) {
  // Records every 3 ms with a watermark on every 5th: 12, 27, 42, ... The maximum allowed 30 is
  // passed by the 15th record's watermark 42: the subtask waits after it, in both paths.
  const SourceSpec spec = Generator(40, 5);
  const WatermarkStrategy strategy = PunctuatedOnWm().WithAlignment({"g", 0, 1000});
  testing::CollectingOutput per_record;
  Harness a(spec, strategy, per_record);
  a.op->HandleAlignmentEvent(30);
  std::vector<InputStatus> statuses;
  for (int k = 0; k < 16; ++k) {
    statuses.push_back(a.op->EmitNext());
  }
  EXPECT_EQ(statuses.back(), InputStatus::kNothingAvailable);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), InputStatus::kMoreAvailable), 15);
  a.op->HandleAlignmentEvent(kMaxTimestamp);
  while (a.op->EmitNext() == InputStatus::kMoreAvailable) {
  }

  TakingOutput batched;
  Harness b(spec, strategy, batched);
  b.op->HandleAlignmentEvent(30);
  int64_t polls = 0;
  EXPECT_EQ(b.op->EmitBatch(256, &polls), InputStatus::kNothingAvailable);
  EXPECT_EQ(polls, 15);
  EXPECT_TRUE(b.op->waiting_for_alignment());
  EXPECT_EQ(batched.Records().size(), 15u);
  EXPECT_EQ(batched.Watermarks(), (std::vector<Timestamp>{12, 27, 42}));
  b.op->HandleAlignmentEvent(kMaxTimestamp);
  InputStatus last;
  EXPECT_EQ(b.DrainBatches(256, &last), (std::vector<int64_t>{25}));
  EXPECT_EQ(last, InputStatus::kEndOfInput);
  EXPECT_EQ(batched.Describe(), per_record.Describe());
  EXPECT_EQ(batched.Records().size(), 40u);
}

TEST(GeneratorSourceTest, EmitNextEmitsOneRecordPerPoll) {
  // Outside EmitBatch the split output lends no slots: the reader polls record by record.
  testing::CollectingOutput out;
  Harness h(Generator(3, 0), std::nullopt, out);
  EXPECT_EQ(h.op->EmitNext(), InputStatus::kMoreAvailable);
  EXPECT_EQ(out.Records().size(), 1u);
  EXPECT_EQ(h.op->EmitNext(), InputStatus::kMoreAvailable);
  EXPECT_EQ(h.op->EmitNext(), InputStatus::kMoreAvailable);
  EXPECT_EQ(h.op->EmitNext(), InputStatus::kEndOfInput);
  EXPECT_EQ(out.Records().size(), 3u);
}

// Paced at 50 records/s (checked every 16 records): the 17th record is due 320 ms after the
// first. Under the system clock the reader does not sleep on the task thread with the first 16
// records unflushed; it returns kNothingAvailable and sets the task's wake-up deadline, so the
// task flushes and then sleeps until the record is due. (The pace runs on the steady clock: 320
// ms is the margin a loaded machine has for 16 polls; at 1,000 records/s, 16 ms, it once took
// 32.)
TEST(GeneratorSourceTest, PacedReaderAheadOfScheduleAsksForAWakeUpInsteadOfSleeping) {
  SourceSpec spec = Generator(100, 0);
  spec.rate = 50;
  testing::CollectingOutput out;
  Wakeup wakeup;
  Harness h(spec, std::nullopt, out, 0, 1, &wakeup);
  int polls = 0;
  InputStatus status;
  while ((status = h.op->EmitNext()) == InputStatus::kMoreAvailable) {
    ++polls;
  }
  EXPECT_EQ(polls, 16);
  EXPECT_EQ(status, InputStatus::kNothingAvailable);
  EXPECT_EQ(h.time.NumPendingTimers(), 0u);  // no whole-millisecond processing-time wake-up
  // The deadline ends the next wait (it would otherwise last an hour), unsignalled, and is then
  // used up: a second wait lasts its own timeout.
  EXPECT_FALSE(wakeup.WaitFor(std::chrono::hours(1)));
  EXPECT_FALSE(wakeup.WaitFor(std::chrono::milliseconds(1)));
  // Once due, the next 16 records follow.
  while (h.op->EmitNext() == InputStatus::kNothingAvailable) {
    wakeup.WaitFor(std::chrono::hours(1));
  }
  polls = 1;
  while (h.op->EmitNext() == InputStatus::kMoreAvailable) {
    ++polls;
  }
  EXPECT_EQ(polls, 16);
}

// A batch poll takes the records due by now: at 1 record/s, the first; the second is due a
// second later, a wake-up deadline and not a sleep or a processing-time timer.
TEST(GeneratorSourceTest, PacedBatchPollTakesTheRecordsDueAndThenAsksForAWakeUp) {
  SourceSpec spec = Generator(100, 0);
  spec.rate = 1;
  TakingOutput out;
  Wakeup wakeup;
  Harness h(spec, std::nullopt, out, 0, 1, &wakeup);
  InputStatus last;
  EXPECT_EQ(h.DrainBatches(256, &last), (std::vector<int64_t>{1}));
  EXPECT_EQ(last, InputStatus::kNothingAvailable);
  EXPECT_EQ(out.batch_sizes, (std::vector<size_t>{1}));
  EXPECT_EQ(h.time.NumPendingTimers(), 0u);
  ASSERT_EQ(out.Describe().size(), 1u);
  EXPECT_EQ(out.Describe()[0], PerRecord(Generator(100, 0), std::nullopt)[0]);
}

// Under the virtual clock a gap of 2 ms or more is a processing-time wake-up (the clock moves to
// it when every task waits), not a wall-clock deadline.
TEST(GeneratorSourceTest, PacedReaderUnderTheVirtualClockWaitsForProcessingTime) {
  SourceSpec spec = Generator(100, 0);
  spec.rate = 1000;
  testing::CollectingOutput out;
  Wakeup wakeup;
  Harness h(spec, std::nullopt, out, 0, 1, &wakeup, /*virtual_clock=*/true);
  int polls = 0;
  while (h.op->EmitNext() == InputStatus::kMoreAvailable) {
    ++polls;
  }
  EXPECT_EQ(polls, 16);
  ASSERT_EQ(h.time.NumPendingTimers(), 1u);
  EXPECT_GE(h.time.NextTimerTime(), 1);   // whole milliseconds after now (0)
  EXPECT_LE(h.time.NextTimerTime(), 16);  // and no later than the record is due
}

}  // namespace
}  // namespace tidemark
