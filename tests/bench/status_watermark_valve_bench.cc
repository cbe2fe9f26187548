// Micro-benchmark of the StatusWatermarkValve: ascending watermarks round-robin over N channels.

#include <benchmark/benchmark.h>

#include "runtime/task/status_watermark_valve.h"

namespace tidemark {
namespace {

class CountingValveOutput : public ValveOutput {
 public:
  void EmitWatermark(Watermark) override { ++watermarks; }
  void EmitWatermarkStatus(WatermarkStatus) override {}
  int64_t watermarks = 0;
};

void BM_ValveInputWatermark(benchmark::State& state) {
  const auto channels = static_cast<size_t>(state.range(0));
  StatusWatermarkValve valve(channels);
  CountingValveOutput out;
  Timestamp t = 0;
  size_t c = 0;
  for (auto _ : state) {
    valve.InputWatermark(Watermark{++t}, c, out);
    c = (c + 1) % channels;
  }
  benchmark::DoNotOptimize(out.watermarks);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ValveInputWatermark)->Arg(1)->Arg(2)->Arg(16);

}  // namespace
}  // namespace tidemark
