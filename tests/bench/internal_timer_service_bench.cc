// Micro-benchmark of the InternalTimerService (the timer heap): register `range(0)` event-time
// timers over 1,000 keys, then fire them all with one watermark.

#include <benchmark/benchmark.h>

#include "runtime/time/internal_timer_service.h"
#include "runtime/time/manual_processing_time_service.h"

namespace tidemark {
namespace {

class CountingTarget : public Triggerable<VoidNamespace> {
 public:
  void OnEventTime(const InternalTimer<VoidNamespace>&) override { ++fired; }
  void OnProcessingTime(const InternalTimer<VoidNamespace>&) override {}
  int64_t fired = 0;
};

void BM_TimerRegisterAndFire(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<Key> keys;
  for (int64_t k = 0; k < 1000; ++k) {
    keys.push_back(Key{Value{k}});
  }
  for (auto _ : state) {
    ManualProcessingTimeService clock;
    SimpleKeyContext key_context;
    CountingTarget target;
    InternalTimerService<VoidNamespace> timers(clock, key_context, target);
    for (int64_t i = 0; i < n; ++i) {
      key_context.SetCurrentKey(keys[static_cast<size_t>(i % 1000)]);
      timers.RegisterEventTimeTimer(VoidNamespace{}, i / 10);
    }
    timers.AdvanceWatermark(kMaxTimestamp);
    benchmark::DoNotOptimize(target.fired);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_TimerRegisterAndFire)->Arg(1000)->Arg(100000);

}  // namespace
}  // namespace tidemark
