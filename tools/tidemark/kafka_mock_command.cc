#include "tools/tidemark/kafka_mock_command.h"

#include <csignal>
#include <cstdio>
#include <iostream>
#include <map>
#include <unistd.h>

#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "runtime/io/kafka_client.h"
#include "sources/kafka/kafka_mock_load.h"

namespace tidemark {
namespace {

volatile std::sig_atomic_t g_stop = 0;
void OnStopSignal(int) {
  g_stop = 1;
}

}  // namespace

CLI::App* AddKafkaMockSubcommand(CLI::App& app, KafkaMockOptions& options) {
  auto* cmd = app.add_subcommand(
      "kafka-mock",
      "Start librdkafka's mock Kafka cluster, create and load topics, print the bootstrap address, "
      "stay up until Ctrl-C");
  cmd->add_option("--topic", options.topics,
                  "create topic NAME with N partitions (NAME:N; repeatable)")
      ->required();
  cmd->add_option("--load", options.loads,
                  "produce FILE's JSON lines into TOPIC (TOPIC=FILE; repeatable)");
  cmd->add_option("--partition-field", options.partition_field,
                  "int field of each line giving its partition (default: lines round-robin)");
  cmd->add_option("--timestamp-field", options.timestamp_field,
                  "int field of each line giving its timestamp in ms (default: now)");
  cmd->add_option("--key-field", options.key_field, "field of each line giving its key");
  cmd->add_option("--brokers", options.brokers, "number of mock brokers (default 1)")
      ->check(CLI::Range(1, 16));
  return cmd;
}

int RunKafkaMock(const KafkaMockOptions& options) {
  std::map<std::string, int> partitions;
  for (const std::string& t : options.topics) {
    const size_t colon = t.rfind(':');
    int n = 0;
    try {
      n = colon == std::string::npos ? 1 : std::stoi(t.substr(colon + 1));
    } catch (const std::exception&) {
      n = 0;
    }
    const std::string name = t.substr(0, colon);
    if (name.empty() || n < 1 || n > 10000) {
      std::cerr << fmt::format(
          "tidemark kafka-mock: --topic: expected NAME:PARTITIONS like orders:2, "
          "got '{}'\n",
          t);
      return 2;
    }
    partitions[name] = n;
  }
  std::vector<std::pair<std::string, std::string>> loads;
  for (const std::string& l : options.loads) {
    const size_t eq = l.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == l.size() ||
        !partitions.count(l.substr(0, eq))) {
      std::cerr << fmt::format(
          "tidemark kafka-mock: --load: expected TOPIC=FILE with a TOPIC given by "
          "--topic, got '{}'\n",
          l);
      return 2;
    }
    loads.emplace_back(l.substr(0, eq), l.substr(eq + 1));
  }
  try {
    KafkaMockCluster cluster(options.brokers);
    for (const auto& [name, n] : partitions) {
      cluster.CreateTopic(name, n);
    }
    std::cout << "bootstrap-servers: " << cluster.bootstrap_servers() << "\n";
    for (const auto& [topic, path] : loads) {
      KafkaLoadOptions load;
      load.topic = topic;
      load.path = path;
      load.partitions = partitions[topic];
      load.partition_field = options.partition_field;
      load.timestamp_field = options.timestamp_field;
      load.key_field = options.key_field;
      const int64_t n = LoadJsonLinesIntoTopic(cluster.bootstrap_servers(), load);
      std::cout << fmt::format("loaded {} records from {} into {} ({} partitions)\n", n, path,
                               topic, load.partitions);
    }
    std::cout << "running; Ctrl-C stops the cluster" << std::endl;
    std::signal(SIGINT, OnStopSignal);
    std::signal(SIGTERM, OnStopSignal);
    while (g_stop == 0) {
      usleep(100 * 1000);
    }
    std::cout << "stopped" << std::endl;
    return 0;
  } catch (const Error& e) {
    std::cerr << "tidemark kafka-mock: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tidemark kafka-mock: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace tidemark
