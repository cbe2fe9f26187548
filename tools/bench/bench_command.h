#pragma once

#include <cstdint>
#include <string>

namespace CLI {
class App;
}

namespace tidemark::bench {

/// Options of `tidemark bench BENCH.yaml`.
struct BenchOptions {
  std::string path;  ///< a job YAML whose source is a `generator` (or a generated `file`) and whose
                     ///< sink is `checksum`
  int runs = 5;      ///< measured runs; figures are their medians
  int warmup = 1;    ///< unmeasured runs first
  bool json = false;      ///< one JSON object on stdout instead of the text report
  int64_t count = -1;     ///< >= 0: overrides the generator's `count`
  int64_t rate = -1;      ///< >= 0: overrides the generator's `rate` (records/s per subtask)
  bool baselines = true;  ///< false: skip the hand-written baselines
  bool progress = true;   ///< progress bar on stderr when it is a terminal
  /// File benchmarks (tools/bench/file_bench.h): where generated input files live. Empty: the
  /// environment variable TIDEMARK_BENCH_DATA, else <temp dir>/tidemark-bench-data.
  std::string data_dir;
  /// Checkpoint cost (issue 12): instead of the baselines, every measured run is the job three
  /// times in this process — without checkpoints, with `checkpointing.interval` 1 s and 100 ms
  /// (exactly-once, state kept in a temporary directory) — reporting each one's records/s, its
  /// ratio to the run without, the checkpoints completed and the p99 of the alignment time.
  bool checkpoints = false;
  /// Checkpoint size (issue 45, tools/bench/checkpoint_size_bench.h): the job, reading a generated
  /// replay recording, with full and with incremental checkpoints; per checkpoint the bytes
  /// written, the full size and the duration (no baselines). `count` then sets the keys.
  bool checkpoint_size = false;
};

/// Adds the `bench` subcommand to the `tidemark` CLI, filling `options` when parsed.
CLI::App* AddBenchSubcommand(CLI::App& app, BenchOptions& options);

/// Runs the benchmark: warm-up, then `runs` measured runs of the job interleaved with its
/// baselines (so machine noise hits both), prints medians, min–max, latency percentiles, peak
/// RSS, state bytes and the ratio to the baseline, and checks that the sink's count and checksum
/// equal the baseline's. Exit codes: 0 ok; 1 the job failed; 2 usage or invalid job; 3 the
/// checksum differs from the baseline's.
int RunBench(const BenchOptions& options);

}  // namespace tidemark::bench
