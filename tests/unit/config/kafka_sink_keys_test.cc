// The Kafka sink's keys: Flink's DeliveryGuarantee names and default, properties passed through,
// and file:line:column errors for keys that are missing, unknown, misplaced or malformed.
#include <string>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "tests/testing/sink_keys.h"

namespace tidemark {
namespace {

constexpr const char* kFile = "jobs/kafka.yaml";

// The sink block starts on line 10 of this job (tests/testing/sink_keys.h).
JobSpec Load(const std::string& sink) {
  return testing::LoadSinkJob(sink, kFile);
}
std::string ErrorOf(const std::string& sink) {
  return testing::SinkJobError(sink, kFile);
}
using testing::SinkOf;

TEST(KafkaSinkKeysTest, DefaultsAreFlinks) {
  JobSpec job = Load("      {type: kafka, bootstrap-servers: 'h:1', topic: t}\n");
  const SinkSpec& s = SinkOf(job);
  EXPECT_EQ(s.type, "kafka");
  EXPECT_EQ(s.bootstrap_servers, "h:1");
  EXPECT_EQ(s.topic, "t");
  EXPECT_EQ(s.delivery_guarantee, "none");
  EXPECT_EQ(s.kafka_timeout_ms, 30000);
  EXPECT_TRUE(s.kafka_properties.empty());
}

TEST(KafkaSinkKeysTest, EveryKeyIsRead) {
  JobSpec job = Load(
      "      type: kafka\n"
      "      bootstrap-servers: 'h:1,h:2'\n"
      "      topic: t\n"
      "      delivery-guarantee: exactly-once\n"
      "      key-field: user\n"
      "      partition-field: p\n"
      "      transactional-id-prefix: job-a\n"
      "      commit-log: out/commits.jsonl\n"
      "      timeout: 5s\n"
      "      properties: {acks: all, linger.ms: 5}\n");
  const SinkSpec& s = SinkOf(job);
  EXPECT_EQ(s.delivery_guarantee, "exactly-once");
  EXPECT_EQ(s.key_field, "user");
  EXPECT_EQ(s.partition_field, "p");
  EXPECT_EQ(s.transactional_id_prefix, "job-a");
  EXPECT_EQ(s.commit_log, "out/commits.jsonl");
  EXPECT_EQ(s.kafka_timeout_ms, 5000);
  EXPECT_EQ(s.kafka_properties,
            (std::map<std::string, std::string>{{"acks", "all"}, {"linger.ms", "5"}}));
  EXPECT_EQ(s.key_field_location.line, 14);
}

TEST(KafkaSinkKeysTest, MissingRequiredKeysAreLocated) {
  EXPECT_EQ(
      ErrorOf("      {type: kafka, topic: t}\n"),
      "jobs/kafka.yaml:10:7: error: operators[1].sink.bootstrap-servers: missing required key");
  const std::string e = ErrorOf(
      "      {type: kafka, bootstrap-servers: 'h:1', topic: t, delivery-guarantee: "
      "exactly-once}\n");
  EXPECT_NE(e.find("jobs/kafka.yaml:10:7: error: operators[1].sink.transactional-id-prefix: "
                   "missing required key"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("operators[1].sink.commit-log: missing required key"), std::string::npos) << e;
}

TEST(KafkaSinkKeysTest, BadValuesAndMisplacedKeysAreLocated) {
  EXPECT_EQ(
      ErrorOf(
          "      {type: kafka, bootstrap-servers: 'h:1', topic: t, delivery-guarantee: once}\n"),
      "jobs/kafka.yaml:10:77: error: operators[1].sink.delivery-guarantee: unknown value \"once\" "
      "(did you mean \"none\"?); "
      "allowed: none | at-least-once | exactly-once");
  EXPECT_EQ(
      ErrorOf(
          "      {type: kafka, bootstrap-servers: 'h:1', topic: t, transactional-id-prefix: x}\n"),
      "jobs/kafka.yaml:10:57: error: operators[1].sink.transactional-id-prefix: applies only with "
      "delivery-guarantee: exactly-once");
  EXPECT_EQ(ErrorOf("      {type: kafka, bootstrap-servers: 'h:1', topic: t, path: x}\n"),
            "jobs/kafka.yaml:10:57: error: operators[1].sink.path: applies only to a sink of type "
            "file, not kafka");
  EXPECT_EQ(ErrorOf("      {type: print, topic: t}\n"),
            "jobs/kafka.yaml:10:21: error: operators[1].sink.topic: applies only to a sink of type "
            "kafka");
  EXPECT_EQ(ErrorOf("      {type: kafka, bootstrap-servers: 'h:1', topic: t, properties: "
                    "{transactional.id: x}}\n"),
            "jobs/kafka.yaml:10:70: error: operators[1].sink.properties.transactional.id: "
            "\"transactional.id\" is "
            "set by the sink (use transactional-id-prefix)");
  EXPECT_EQ(ErrorOf("      {type: kafka, bootstrap-servers: 'h:1', topic: t, timeout: 0s}\n"),
            "jobs/kafka.yaml:10:66: error: operators[1].sink.timeout: must be greater than 0, got "
            "\"0s\"");
  const std::string e =
      ErrorOf("      {type: kafka, bootstrap-servers: 'h:1', topic: t, topik: u}\n");
  EXPECT_NE(e.find("jobs/kafka.yaml:10:57: error: operators[1].sink.topik: unknown key \"topik\" "
                   "(did you mean \"topic\"?)"),
            std::string::npos)
      << e;
}

}  // namespace
}  // namespace tidemark
