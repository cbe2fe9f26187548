#pragma once

// `tidemark kafka-mock`: librdkafka's in-process mock Kafka cluster for trying Kafka jobs without
// a broker (sources/kafka/kafka_mock_load.h loads the topics).

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace tidemark {

struct KafkaMockOptions {
  std::vector<std::string> topics;  ///< `--topic NAME:PARTITIONS` (repeatable)
  std::vector<std::string> loads;   ///< `--load TOPIC=FILE` (repeatable)
  std::string partition_field;      ///< `--partition-field`
  std::string timestamp_field;      ///< `--timestamp-field`
  std::string key_field;            ///< `--key-field`
  int brokers = 1;
};

CLI::App* AddKafkaMockSubcommand(CLI::App& app, KafkaMockOptions& options);

/// Starts the cluster, creates and loads the topics, prints `bootstrap-servers: HOST:PORT` and
/// one line per loaded file, then stays up until SIGINT / SIGTERM. Exit code 0, or 2 for bad
/// options or input (the reason on stderr).
int RunKafkaMock(const KafkaMockOptions& options);

}  // namespace tidemark
