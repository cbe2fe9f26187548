#pragma once

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

}  // namespace tidemark::bench
