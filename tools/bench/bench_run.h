#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/job_spec.h"
#include "tools/bench/bench_command.h"

namespace tidemark::bench {

/// What one measured run of a benchmark job gave (tools/bench/bench_command.cc).
struct RunFigures {
  double seconds = 0;  ///< wall time from Start to the job's end
  int64_t sink_records = 0;
  uint64_t checksum = 0;
  std::vector<int64_t> latency_ns;
  int64_t state_bytes = 0;  ///< RSS growth during the run
  /// Keyed windows: the window operators' `stateMemoryBytesPeak` and `stateKeysPeak` gauges
  /// summed over subtasks (the most bytes their keyed state held allocated, and the most keys,
  /// over the samples); 0 for jobs without them.
  int64_t state_memory_bytes = 0;
  int64_t state_keys = 0;
  bool chained = true;                ///< every edge of the job graph is chained
  std::string failure;                ///< non-empty: the job did not FINISH (state and cause)
  int64_t checkpoints_completed = 0;  ///< a job with `checkpointing:`
  std::vector<int64_t> alignment_ns;  ///< per completed checkpoint, its longest alignment
};

/// Compiles and runs `spec` once on this thread's process and reads the `checksum` sink
/// `sink_id`; with `progress`, draws a bar on stderr against `total_records` source records.
/// Throws JobCompileError for a job that does not compile.
RunFigures RunJobOnce(const JobSpec& spec, const std::string& sink_id, int64_t total_records,
                      const std::string& label, bool progress);

/// Measured run `r` of `o.warmup + o.runs` (the first `o.warmup` are warm-ups, labelled so on
/// the progress bar): RunJobOnce, or nullopt after printing the failure to stderr.
std::optional<RunFigures> RunBenchJob(const BenchOptions& o, const JobSpec& spec,
                                      const std::string& sink_id, int64_t total_records, int r,
                                      bool progress);

/// The one source and the one sink of a benchmark job, and every operator by id; `unsupported`
/// says "more than one source" / "more than one sink" (then the pointers are not meaningful).
struct BenchJobEnds {
  std::map<std::string, const OperatorSpec*> by_id;
  const OperatorSpec* source = nullptr;
  const OperatorSpec* sink = nullptr;
  std::string unsupported;
};
BenchJobEnds FindBenchJobEnds(const JobSpec& job);

/// The id of the job's `checksum` sink, or "" when it has none.
std::string SinkId(const JobSpec& spec);
/// The median (0 for none).
double Median(std::vector<double> v);
/// The median over runs i of numerators[i] / denominators[i] (pairs with a zero denominator
/// are skipped; 0 for none): a job's run and its baseline's run right after it see the same
/// moment of a machine whose speed drifts over minutes, so their ratio is paired run by run
/// instead of taken between the two medians. Both vectors have one entry per measured run.
double MedianPairedRatio(const std::vector<double>& numerators,
                         const std::vector<double>& denominators);
/// This process's peak resident set size, in bytes.
int64_t PeakRssBytes();
/// CPU seconds (user + system) of this process so far: on a loaded machine a run's wall time
/// includes waiting for a core, its CPU time does not.
double ProcessCpuSeconds();
/// The opening fields of a data benchmark's JSON report (file and Kafka benches): name, file,
/// data_file, bytes, records, parallelism, runs, warmup, then the wall-time median, min and max
/// (`walls`, seconds, not empty) with records/s and MB/s.
nlohmann::ordered_json DataBenchJson(const std::string& name, const BenchOptions& o,
                                     const std::string& data_file, int64_t bytes, int64_t records,
                                     int parallelism, const std::vector<double>& walls);
/// Where generated bench input lives: `o.data_dir`, else $TIDEMARK_BENCH_DATA, else
/// <temp dir>/tidemark-bench-data.
std::string BenchDataDir(const BenchOptions& o);

}  // namespace tidemark::bench
