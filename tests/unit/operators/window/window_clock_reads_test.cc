// The window operator reads the processing-time clock only when something asks for it: firing
// windows hands the window function a context whose `current_processing_time()` reads the clock
// on demand, so a watermark that fires many windows does not read the (system) clock once per
// window. A clock that counts its reads shows it for the sliced path (count per key), the flat
// session path and the per-window path (a buffering function), and the function that does ask
// gets the clock's time.

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

/// A manual clock that counts `GetCurrentProcessingTime` calls.
class CountingClock : public ManualProcessingTimeService {
 public:
  using ManualProcessingTimeService::ManualProcessingTimeService;
  Timestamp GetCurrentProcessingTime() override {
    ++reads;
    return ManualProcessingTimeService::GetCurrentProcessingTime();
  }
  int64_t reads = 0;
};

WindowSpec CountSpec(const std::string& assigner, int64_t size_or_gap_ms) {
  WindowSpec spec;
  spec.assigner = assigner;
  if (assigner == "session") {
    spec.gap_ms = size_or_gap_ms;
  } else {
    spec.size_ms = size_or_gap_ms;
  }
  AggregateSpec count;
  count.function = "count";
  spec.aggregates = {count};
  return spec;
}

struct Fired {
  int64_t results = 0;
  int64_t reads_while_firing = 0;  // clock reads during the watermark that fired them
};

// `keys` int64 keys, one record each at event time 5, through `op`; then one watermark that
// fires every key's window.
Fired FireKeys(StreamOperator& op, CountingClock& clock, testing::CollectingOutput& out,
               int64_t keys) {
  for (int64_t k = 0; k < keys; ++k) {
    StreamRecord r(Row{Value(k), Value(Timestamp{5})}, 5);
    op.ProcessElement(r, 0);
  }
  const size_t before_results = out.Records().size();
  const int64_t before_reads = clock.reads;
  op.ProcessWatermark(Watermark{100000}, 0);
  return Fired{static_cast<int64_t>(out.Records().size() - before_results),
               clock.reads - before_reads};
}

std::unique_ptr<StreamOperator> Compiled(const WindowSpec& spec, CountingClock& clock,
                                         testing::CollectingOutput& out) {
  const Schema input({{"key", FieldType::kInt64}, {"ts", FieldType::kTimestamp}});
  WindowOperatorPlan plan = WindowOperator::Compile(input, spec, {"key"});
  std::unique_ptr<StreamOperator> op = plan.factory();
  OperatorContext ctx;
  ctx.name = "windows";
  ctx.output = &out;
  ctx.processing_time = &clock;
  op->Open(ctx);
  return op;
}

class WindowClockReadsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(WindowClockReadsTest, FiringManyWindowsReadsTheClockNoMoreThanFiringFew) {
  CountingClock few_clock(1000);
  testing::CollectingOutput few_out;
  auto few_op = Compiled(CountSpec(GetParam(), 10), few_clock, few_out);
  const Fired few = FireKeys(*few_op, few_clock, few_out, 10);

  CountingClock many_clock(1000);
  testing::CollectingOutput many_out;
  auto many_op = Compiled(CountSpec(GetParam(), 10), many_clock, many_out);
  const Fired many = FireKeys(*many_op, many_clock, many_out, 10000);

  EXPECT_EQ(few.results, 10);
  EXPECT_EQ(many.results, 10000);
  EXPECT_EQ(many.reads_while_firing, few.reads_while_firing)
      << "10 windows: " << few.reads_while_firing
      << " clock reads, 10000 windows: " << many.reads_while_firing;
  EXPECT_LE(many.reads_while_firing, 2);
}

INSTANTIATE_TEST_SUITE_P(Assigners, WindowClockReadsTest, ::testing::Values("tumbling", "session"));

TEST(WindowClockReadsTest, AFunctionThatAsksGetsTheClocksTime) {
  CountingClock clock(123456);
  testing::CollectingOutput out;
  WindowOperator::Options options;
  options.key_slots = {0};
  auto fn = std::make_unique<BufferingWindowFunction>([](const WindowFunction::Context& ctx,
                                                         const std::vector<StreamRecord>&,
                                                         std::vector<Row>& rows) {
    rows.push_back(Row{ctx.key[0], ctx.window.end(), ctx.current_processing_time()});
  });
  WindowOperator op(std::make_unique<TumblingWindows>(true, 10, 0), nullptr, std::move(fn),
                    options);
  OperatorContext ctx;
  ctx.name = "windows";
  ctx.output = &out;
  ctx.processing_time = &clock;
  op.Open(ctx);
  StreamRecord r(Row{Value(int64_t{7}), Value(Timestamp{5})}, 5);
  op.ProcessElement(r, 0);
  op.ProcessWatermark(Watermark{100}, 0);
  ASSERT_EQ(out.Records().size(), 1u);
  EXPECT_EQ(out.Records()[0].row,
            (Row{Value(int64_t{7}), Value(int64_t{10}), Value(int64_t{123456})}));
}

}  // namespace
}  // namespace tidemark
