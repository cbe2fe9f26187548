// Loader tests for the keys of the kafka source (docs/job-reference.md, "source of type kafka").

#include <string>

#include <gtest/gtest.h>

#include "config/diagnostic.h"
#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

std::string Job(const std::string& source_block) {
  return "name: j\noperators:\n  - id: src\n    type: source\n    source:\n      type: kafka\n" +
         source_block + "  - id: out\n    type: sink\n    input: src\n    sink: {type: print}\n";
}

std::string ErrorsOf(const std::string& yaml) {
  try {
    LoadJobSpecString(yaml, "t.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(KafkaSourceKeysTest, ReadsEveryKey) {
  const JobSpec job = LoadJobSpecString(Job(R"(      bootstrap-servers: "k1:9092,k2:9092"
      topics: [orders, payments]
      group-id: g
      properties: {fetch.wait.max.ms: "50", isolation.level: read_committed}
      starting-offsets: specific
      starting-specific-offsets: {orders-0: 42, payments-3: 7}
      starting-offsets-reset: latest
      bounded: specific
      bounded-specific-offsets: {orders-0: 100}
      format: json
      schema: {ts: timestamp, user: string}
      key-field: k
      pacing: 5ms
)"),
                                        "t.yaml");
  const KafkaSourceSpec& k = job.operators[0].source->kafka;
  EXPECT_EQ(k.bootstrap_servers, "k1:9092,k2:9092");
  EXPECT_EQ(k.topics, (std::vector<std::string>{"orders", "payments"}));
  EXPECT_EQ(k.group_id, "g");
  EXPECT_EQ(k.properties.at("fetch.wait.max.ms"), "50");
  EXPECT_EQ(k.properties.at("isolation.level"), "read_committed");
  EXPECT_EQ(k.starting_offsets, "specific");
  EXPECT_EQ(k.starting_specific,
            (std::map<std::string, int64_t>{{"orders-0", 42}, {"payments-3", 7}}));
  EXPECT_EQ(k.offset_reset, "latest");
  EXPECT_EQ(k.bounded, "specific");
  EXPECT_EQ(k.bounded_specific, (std::map<std::string, int64_t>{{"orders-0", 100}}));
  EXPECT_EQ(k.schema.size(), 2u);
  EXPECT_EQ(k.key_field, "k");
  EXPECT_EQ(job.operators[0].source->pacing_ms, 5);
}

TEST(KafkaSourceKeysTest, Defaults) {
  const JobSpec job = LoadJobSpecString(Job("      bootstrap-servers: k:9092\n      topic-pattern: "
                                            "\"orders-.*\"\n      format: raw\n"),
                                        "t.yaml");
  const KafkaSourceSpec& k = job.operators[0].source->kafka;
  EXPECT_EQ(k.topic_pattern, "orders-.*");
  EXPECT_EQ(k.starting_offsets, "earliest");
  EXPECT_EQ(k.offset_reset, "earliest");
  EXPECT_EQ(k.bounded, "");
  EXPECT_EQ(k.discovery_interval_ms, 300000);  // Flink's 5 min
  EXPECT_EQ(k.format, "raw");
  EXPECT_FALSE(k.mock.has_value());
}

TEST(KafkaSourceKeysTest, ErrorsNameFileLineColumnAndKey) {
  EXPECT_EQ(
      ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n      format: raw\n"
                   "      start-offsets: earliest\n"))
          .substr(0, 123),
      "t.yaml:10:7: error: operators[0].source.start-offsets: unknown key \"start-offsets\" for a "
      "source of type kafka; allowed keys");
  EXPECT_EQ(ErrorsOf(Job("      topics: [t]\n      format: raw\n")),
            "t.yaml:6:7: error: operators[0].source.bootstrap-servers: missing required key (or "
            "mock-cluster, for an in-process mock cluster)");
  EXPECT_EQ(
      ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n      topic-pattern: x\n"
                   "      format: raw\n")),
      "t.yaml:9:7: error: operators[0].source.topic-pattern: give either topics or "
      "topic-pattern, not both");
  EXPECT_EQ(
      ErrorsOf(
          Job("      bootstrap-servers: k:9092\n      topic-pattern: \"(\"\n      format: raw\n"))
          .substr(0, 80),
      "t.yaml:8:22: error: operators[0].source.topic-pattern: not a regular expression:");
  EXPECT_EQ(ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n      format: raw\n"
                         "      starting-timestamp: 5\n")),
            "t.yaml:10:7: error: operators[0].source.starting-timestamp: applies only to "
            "starting-offsets: timestamp");
  EXPECT_EQ(
      ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n      format: raw\n"
                   "      starting-offsets: specific\n      starting-specific-offsets: {t: 1}\n")),
      "t.yaml:11:35: error: operators[0].source.starting-specific-offsets.t: expected a split "
      "id topic-partition like orders-0, got \"t\"");
  EXPECT_EQ(
      ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n      format: raw\n"
                   "      bounded: latest\n      partition-discovery-interval: 1min\n")),
      "t.yaml:11:7: error: operators[0].source.partition-discovery-interval: does not apply to "
      "a bounded source (its partitions are discovered once, at start)");
  EXPECT_EQ(
      ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n"
                   "      properties: {group.id: x}\n      format: raw\n")),
      "t.yaml:9:20: error: operators[0].source.properties.group.id: set it with the source key "
      "group-id instead");
  // Flink's KafkaSource refuses committed offsets without group.id; so does the loader, at the
  // value.
  EXPECT_EQ(
      ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n      format: raw\n"
                   "      starting-offsets: committed\n")),
      "t.yaml:10:25: error: operators[0].source.starting-offsets: committed offsets need group-id "
      "(the consumer group whose committed offsets the source starts from)");
  EXPECT_EQ(ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n      format: raw\n"
                         "      group-id: g\n      starting-offsets: committed\n")),
            "<no error>");
  // The properties block: a mapping; duplicate names are errors at the second one.
  EXPECT_EQ(
      ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n      format: raw\n"
                   "      properties: [a]\n")),
      "t.yaml:10:19: error: operators[0].source.properties: expected a mapping of Kafka client "
      "properties like {fetch.max.bytes: 1048576}, got a list");
  EXPECT_EQ(
      ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n"
                   "      properties: {group.id: x}\n      format: raw\n")),
      "t.yaml:9:20: error: operators[0].source.properties.group.id: set it with the source key "
      "group-id instead");
  EXPECT_EQ(ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n")),
            "t.yaml:6:7: error: operators[0].source.schema: missing required key (format json "
            "needs the value's fields)");
  // A kafka key on another source type, and a file key on kafka.
  EXPECT_EQ(ErrorsOf("name: j\noperators:\n  - id: src\n    type: source\n    source:\n"
                     "      type: sequence\n      topics: [t]\n      splits: [{id: a, start: 0s, "
                     "step: 1s, count: 1}]\n"
                     "  - id: out\n    type: sink\n    input: src\n    sink: {type: print}\n"),
            "t.yaml:7:7: error: operators[0].source.topics: does not apply to a source of type "
            "sequence (only to kafka)");
  EXPECT_NE(
      ErrorsOf(Job("      bootstrap-servers: k:9092\n      topics: [t]\n      format: raw\n"
                   "      path: x\n"))
          .find("t.yaml:10:7: error: operators[0].source.path: does not apply to a source of type "
                "kafka; allowed keys:"),
      std::string::npos);
}

}  // namespace
}  // namespace tidemark
