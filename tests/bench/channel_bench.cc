// Micro-benchmarks of the SPSC channel and the RecordWriter: one thread, push then pop, so the
// figures are the per-element / per-record cost without a thread hand-off.

#include <benchmark/benchmark.h>

#include "runtime/io/channel.h"
#include "runtime/task/record_writer.h"

namespace tidemark {
namespace {

void BM_ChannelPushPop(benchmark::State& state) {
  Wakeup consumer;
  Wakeup producer;
  Channel channel(1024, &consumer);
  channel.SetProducerWakeup(&producer);
  for (auto _ : state) {
    auto e = StreamElement::OfWatermark(Watermark{1});
    benchmark::DoNotOptimize(channel.TryPush(e));
    benchmark::DoNotOptimize(channel.Pop());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ChannelPushPop);

// Records through a RecordWriter (batch `range(0)`) into a channel, popped and recycled: the
// per-record cost of the network path on one thread.
void BM_RecordWriterBatch(benchmark::State& state) {
  const auto batch = static_cast<size_t>(state.range(0));
  Wakeup consumer;
  Wakeup producer;
  Channel channel(1024, &consumer);
  channel.SetProducerWakeup(&producer);
  RecordWriter writer(Partitioning::kForward, {&channel}, {}, 0, batch);
  StreamRecord record(Row{Value{int64_t{7}}, Value{0.5}, Value{int64_t{1000}}}, 1000);
  int64_t n = 0;
  for (auto _ : state) {
    writer.Emit(record);
    if (++n % static_cast<int64_t>(batch) == 0) {
      auto e = channel.Pop();
      benchmark::DoNotOptimize(e->records.data());
      channel.Recycle(std::move(e));
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RecordWriterBatch)->Arg(1)->Arg(64)->Arg(256);

}  // namespace
}  // namespace tidemark
