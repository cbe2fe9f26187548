// Micro-benchmark of window state: records of `range(0)` keys into a keyed tumbling count window
// (WindowOperator, per-key per-window state and timers), then one watermark firing everything.

#include <benchmark/benchmark.h>

#include "operators/window/window_operator.h"
#include "runtime/time/manual_processing_time_service.h"

namespace tidemark {
namespace {

class NullOutput : public Output {
 public:
  void Collect(StreamRecord&) override { ++records; }
  void CollectSide(std::string_view, StreamRecord&) override {}
  void EmitWatermark(Watermark) override {}
  void EmitWatermarkStatus(WatermarkStatus) override {}
  int64_t records = 0;
};

void BM_TumblingCountWindowState(benchmark::State& state) {
  const int64_t keys = state.range(0);
  constexpr int64_t kRecords = 100000;
  Schema input({Field{"key", FieldType::kInt64}, Field{"ts", FieldType::kTimestamp}});
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = 1000;
  spec.aggregates.push_back(AggregateSpec{"count", "", "count", {}});
  const WindowOperatorPlan plan = WindowOperator::Compile(input, spec, {"key"});
  std::vector<StreamRecord> records;
  for (int64_t i = 0; i < kRecords; ++i) {
    records.emplace_back(Row{Value{(i * 7919) % keys}, Value{i / 100}}, i / 100);
  }
  for (auto _ : state) {
    state.PauseTiming();
    ManualProcessingTimeService clock;
    NullOutput out;
    auto op = plan.factory();
    OperatorContext ctx;
    ctx.output = &out;
    ctx.processing_time = &clock;
    op->Open(ctx);
    std::vector<StreamRecord> batch = records;
    state.ResumeTiming();
    for (StreamRecord& r : batch) {
      op->ProcessElement(r, 0);
    }
    op->ProcessWatermark(Watermark{kMaxTimestamp}, 0);
    benchmark::DoNotOptimize(out.records);
  }
  state.SetItemsProcessed(state.iterations() * kRecords);
}
BENCHMARK(BM_TumblingCountWindowState)->Arg(1000)->Arg(100000);

// Sliding count windows of 10 s over 1e3 keys, slide = 10 s / range(0): the cost per record
// should not grow with the number of windows a record is in (slices of gcd(size, slide)),
// although the number of results does (every window of every key fires).
void BM_SlidingCountWindowState(benchmark::State& state) {
  const int64_t size_over_slide = state.range(0);
  constexpr int64_t kKeys = 1000;
  constexpr int64_t kRecords = 10000;
  Schema input({Field{"key", FieldType::kInt64}, Field{"ts", FieldType::kTimestamp}});
  WindowSpec spec;
  spec.assigner = "sliding";
  spec.size_ms = 10000;
  spec.slide_ms = 10000 / size_over_slide;
  spec.aggregates.push_back(AggregateSpec{"count", "", "count", {}});
  const WindowOperatorPlan plan = WindowOperator::Compile(input, spec, {"key"});
  std::vector<StreamRecord> records;
  for (int64_t i = 0; i < kRecords; ++i) {
    records.emplace_back(Row{Value{(i * 7919) % kKeys}, Value{i}}, i);
  }
  int64_t results = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ManualProcessingTimeService clock;
    NullOutput out;
    auto op = plan.factory();
    OperatorContext ctx;
    ctx.output = &out;
    ctx.processing_time = &clock;
    op->Open(ctx);
    std::vector<StreamRecord> batch = records;
    state.ResumeTiming();
    for (size_t i = 0; i < batch.size(); ++i) {
      op->ProcessElement(batch[i], 0);
      if (i % 1000 == 999) {
        op->ProcessWatermark(Watermark{batch[i].timestamp}, 0);
      }
    }
    op->ProcessWatermark(Watermark{kMaxTimestamp}, 0);
    benchmark::DoNotOptimize(out.records);
    results = out.records;
  }
  state.SetItemsProcessed(state.iterations() * kRecords);
  state.counters["results"] = static_cast<double>(results);
}
BENCHMARK(BM_SlidingCountWindowState)
    ->Arg(1)
    ->Arg(10)
    ->Arg(100)
    ->Arg(1000)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace tidemark
