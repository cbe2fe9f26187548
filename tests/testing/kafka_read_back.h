#pragma once

// Reading a Kafka topic back in tests (the Kafka sink's tests): a plain librdkafka consumer,
// manually assigned every partition from the beginning, reading until the end of each.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tidemark::testing {

struct KafkaRecord {
  int32_t partition = 0;
  int64_t offset = 0;
  bool has_key = false;
  std::string key;
  std::string value;
  int64_t timestamp_ms = 0;
};

/// Every record of `topic` (partitions 0..partitions-1), ordered by partition then offset.
/// `isolation_level`: "read_committed" or "read_uncommitted". Fails the test (gtest ADD_FAILURE)
/// and returns what it has if a partition's end is not reached within 20 s.
std::vector<KafkaRecord> ReadTopic(const std::string& bootstrap_servers, const std::string& topic,
                                   int partitions,
                                   const std::string& isolation_level = "read_committed");

/// The `"state":"committed"` lines of a Kafka sink's commit log, in order (its `committing`
/// lines left out; a torn last line too). Empty when the file does not exist.
std::vector<nlohmann::json> CommittedLines(const std::filesystem::path& commit_log);

}  // namespace tidemark::testing
