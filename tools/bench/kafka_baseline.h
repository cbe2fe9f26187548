#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "tools/bench/baselines.h"

namespace tidemark::bench {

/// What the Kafka baseline read (`seconds` from creating its consumer to the last record: its
/// end-offset look-up included, its close not, as the job's time holds the source's look-ups and
/// not its consumer's close, which runs on another thread).
struct KafkaBaselineResult : BaselineResult {
  int64_t records = 0;  ///< values read as records
  int64_t errors = 0;   ///< values that are not objects of the schema
};

/// The hand-written limit for a Kafka scan job (jobs/bench/kafka_scan.yaml), on one thread: a
/// plain librdkafka consumer on `bootstrap_servers` that looks up the end offsets of `topic`'s
/// partitions itself (one ListOffsets request; they must equal `end_offsets`, else it throws),
/// assigned every partition p with `end_offsets[p] > 0` from offset 0 (as the source, which
/// resolves its starting offsets before it assigns), draining one queue per partition
/// (`rd_kafka_queue_get_partition`, forwarded nowhere, as the source reads) with non-blocking
/// `rd_kafka_consume_batch_queue`, round-robin, sleeping 200 us when nothing is fetched yet, until
/// each partition reached `end_offsets[p]`, and every value scanned by JsonValueScan (the file
/// baseline's simdjson parse and checksum). Throws std::runtime_error (librdkafka's reason) when a
/// partition reports an error, or when no record arrives for 30 s.
KafkaBaselineResult RunKafkaBaseline(const std::vector<SchemaFieldSpec>& schema,
                                     const std::string& bootstrap_servers, const std::string& topic,
                                     const std::vector<int64_t>& end_offsets);

/// The offsets after the last record of each partition of `topic` (its high watermarks), read
/// with a throw-away consumer; throws std::runtime_error when a partition's low watermark is not
/// 0 (the mock cluster dropped its oldest records) or a look-up fails.
std::vector<int64_t> KafkaEndOffsets(const std::string& bootstrap_servers, const std::string& topic,
                                     int partitions);

}  // namespace tidemark::bench
