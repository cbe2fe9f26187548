#pragma once

#include <cstdint>

#include "config/job_spec.h"
#include "tools/bench/bench_command.h"

namespace tidemark::bench {

/// `tidemark bench` for a job whose source is a `file` (jobs/bench/events_*.yaml): the file the
/// source names must be a generated events file (tools/bench/events_data.h: its name is its
/// recipe, `events-n<count>-u<users>-j<jitter>-s<seed>.jsonl`); it is looked up in
/// `options.data_dir` and written there first when missing; `--count` replaces the recipe's
/// line count. Each measured run is followed by the hand-written file baseline
/// (tools/bench/file_baseline.h) on the same file; the report gives MB/s and records/s of both,
/// their ratio, and whether the sink's count and checksum equal the baseline's.
/// Exit codes as RunBench.
int RunFileBench(const BenchOptions& options, JobSpec spec);

/// The `split-bytes` the file bench gives a job reading a file of `file_bytes` at `parallelism`
/// (> 1): about 8 byte ranges per reader, ceil(file_bytes / (8 * parallelism)), at least 1.
/// Range i goes to reader i mod parallelism and a reader reads its ranges one after another in
/// file order (sources/file_source.h), so on a time-ordered file the readers stay within about
/// one range of each other in event time; with one range per reader, reader 0 would read the
/// first half of the file's event time and reader 1 the second, and the windows of the second
/// half would stay open until the first half was read.
int64_t BenchSplitBytes(int64_t file_bytes, int parallelism);

}  // namespace tidemark::bench
