// Checkpoint size and duration on the RocksDB state backend, full (canonical) vs incremental
// (issue 45; `checkpointing.incremental`): a window operator holding kKeys keys of one open window
// takes a checkpoint after each round of kChanged changed keys. Counters per checkpoint:
// `bytes_written` (new bytes in the checkpoint directory: state file, _metadata, new shared SST
// files) and `full_bytes` (everything the checkpoint needs); the time is the checkpoint's
// (the changed records are processed outside the timed part).
//   build/release/tests/bench/rocksdb_checkpoint_bench --benchmark_counters_tabular=true

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include <benchmark/benchmark.h>

#include "operators/window/window_operator.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/time/manual_processing_time_service.h"

namespace tidemark {
namespace {

constexpr int64_t kKeys = 50000;
constexpr int64_t kChanged = 100;

class DiscardOutput : public Output {
 public:
  void Collect(StreamRecord&) override {}
  void CollectSide(std::string_view, StreamRecord&) override {}
  void EmitWatermark(Watermark) override {}
  void EmitWatermarkStatus(WatermarkStatus) override {}
};

uint64_t DirBytes(const std::filesystem::path& root) {
  uint64_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) {
      n += e.file_size();
    }
  }
  return n;
}

void BM_RocksDbCheckpoint(benchmark::State& state) {
  const bool incremental = state.range(0) != 0;
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() /
      ("tm_rocks_ckpt_bench_" + std::to_string(::getpid()) + (incremental ? "_incr" : "_full"));
  std::filesystem::remove_all(root);
  CheckpointStorage storage(root, "bench", 1);
  Schema schema;
  schema.Add("k", FieldType::kInt64);
  schema.Add("v", FieldType::kInt64);
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = 3'600'000;
  AggregateSpec count;
  count.function = "count";
  count.as = "n";
  spec.aggregates = {count};
  std::unique_ptr<StreamOperator> op = WindowOperator::Compile(schema, spec, {"k"}).factory();
  ManualProcessingTimeService clock;
  DiscardOutput out;
  OperatorContext ctx;
  ctx.name = "windows";
  ctx.output = &out;
  ctx.processing_time = &clock;
  ctx.state_backend = "rocksdb";
  ctx.rocksdb.memory_fixed_per_slot = int64_t{4} << 20;  // ~13k keys cached: the rest spill
  op->Open(ctx);
  auto process = [&](int64_t from, int64_t to, int64_t step) {
    std::vector<StreamRecord> records;
    for (int64_t i = from; i < to; i += step) {
      records.emplace_back(Row{Value(i), int64_t{1}}, i % 1000);
    }
    std::vector<StreamRecord*> pointers;
    for (StreamRecord& r : records) {
      pointers.push_back(&r);
    }
    RecordBatch batch{pointers.data(), pointers.size()};
    op->ProcessBatch(batch, 0);
  };
  int64_t id = 0;
  auto checkpoint = [&] {
    StateWriter w;
    StateSnapshotContext sctx{++id, 0, w};
    IncrementalSnapshotTarget target;
    target.root = storage.dir();
    if (incremental) {
      sctx.incremental = &target;
    }
    op->SnapshotState(sctx);
    std::vector<StateFileHandle> h;
    h.push_back(storage.WriteState(id, "windows", 0, w.bytes(), w.ReleaseBlocks(),
                                   std::move(target.referenced)));
    storage.Finalize(id, id, h);
  };
  process(0, kKeys, 1);
  checkpoint();
  uint64_t written = 0;
  uint64_t full = 0;
  int64_t round = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ++round;
    process(round % 997, kKeys, kKeys / kChanged);  // kChanged keys change
    std::map<std::string, uint64_t> before;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (e.is_regular_file()) {
        before[e.path().string()] = e.file_size();
      }
    }
    state.ResumeTiming();
    checkpoint();
    state.PauseTiming();
    for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
      if (e.is_regular_file() && before.count(e.path().string()) == 0) {
        written += e.file_size();
      }
    }
    full += DirBytes(root);  // num-retained 1: the directory is this checkpoint's full size
    state.ResumeTiming();
  }
  state.counters["bytes_written"] =
      benchmark::Counter(static_cast<double>(written), benchmark::Counter::kAvgIterations);
  state.counters["full_bytes"] =
      benchmark::Counter(static_cast<double>(full), benchmark::Counter::kAvgIterations);
  op->Close();
  std::filesystem::remove_all(root);
}
BENCHMARK(BM_RocksDbCheckpoint)
    ->ArgName("incremental")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(5);

}  // namespace
}  // namespace tidemark
