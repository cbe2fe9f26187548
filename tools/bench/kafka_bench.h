#pragma once

#include "config/job_spec.h"
#include "tools/bench/bench_command.h"

namespace tidemark::bench {

/// `tidemark bench` for a job whose source is a `kafka` source with `mock-cluster` loading a
/// generated events file (jobs/bench/kafka_scan.yaml): the file (tools/bench/events_data.h, its
/// name is its recipe; `--count` replaces the recipe's line count) is written into the data
/// directory when missing; then, before any timing, this process starts one librdkafka mock
/// cluster, creates the topic with `mock-cluster.partitions` partitions, produces every line
/// (round-robin over the partitions, CreateTime the line's `ts`) and checks
/// that the mock kept them all (it drops the oldest records past 100,000 or 5 MB a
/// partition). Every run then reads the same topic: the job with `bootstrap-servers` pointed at
/// the cluster (it must be `bounded: latest` from `starting-offsets: earliest`), the Kafka
/// baseline (tools/bench/kafka_baseline.h: a plain librdkafka consumer loop and the same
/// simdjson parse), and the same job with a `file` source over the events file, so the report
/// shows Kafka beside the file source and the limit, all measured in the same run. MB/s count
/// the bytes of the JSON values (the events file's size). The sink's count and checksum must
/// equal the baseline's and the file job's. A job that is not source -> sink (a window,
/// jobs/bench/kafka_windowed.yaml) has no Kafka baseline: it is compared with the file job only.
/// Exit codes as RunBench.
int RunKafkaBench(const BenchOptions& options, JobSpec spec);

}  // namespace tidemark::bench
