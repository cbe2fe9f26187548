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

}  // namespace
}  // namespace tidemark
