// The exactly-once file sink's keys (`delivery-guarantee`, `part-prefix`, `part-suffix`,
// `rolling-policy`): Flink's DefaultRollingPolicy defaults, memory sizes with a unit, and
// file:line:column errors for keys that are unknown, misplaced or malformed.
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "tests/testing/sink_keys.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

constexpr const char* kFile = "jobs/sink.yaml";

// The sink block starts on line 10 of this job (tests/testing/sink_keys.h).
JobSpec Load(const std::string& sink) {
  return testing::LoadSinkJob(sink, kFile);
}
std::string ErrorOf(const std::string& sink) {
  return testing::SinkJobError(sink, kFile);
}
using testing::SinkOf;

TEST(FileSinkKeysTest, WithoutDeliveryGuaranteeTheFileSinkIsUnchanged) {
  JobSpec job = Load("      {type: file, path: out.jsonl}\n");
  EXPECT_EQ(SinkOf(job).delivery_guarantee, "none");
  EXPECT_EQ(SinkOf(job).path, "out.jsonl");
}

TEST(FileSinkKeysTest, ExactlyOnceHasFlinksDefaults) {
  JobSpec job = Load("      {type: file, path: out, delivery-guarantee: exactly-once}\n");
  const SinkSpec& s = SinkOf(job);
  EXPECT_EQ(s.delivery_guarantee, "exactly-once");
  EXPECT_EQ(s.part_prefix, "part");
  EXPECT_EQ(s.part_suffix, "");
  EXPECT_EQ(s.rolling_policy.part_size_bytes, 134217728);
  EXPECT_EQ(s.rolling_policy.rollover_interval_ms, 60000);
  EXPECT_EQ(s.rolling_policy.inactivity_interval_ms, 60000);
  EXPECT_EQ(s.rolling_policy.check_interval_ms, 60000);
  EXPECT_FALSE(s.rolling_policy.roll_on_checkpoint);
}

TEST(FileSinkKeysTest, RollingPolicyAndNamesAreRead) {
  JobSpec job = Load(
      "      type: file\n"
      "      path: out\n"
      "      delivery-guarantee: exactly-once\n"
      "      part-prefix: counts\n"
      "      part-suffix: .jsonl\n"
      "      rolling-policy: {part-size: 64 KB, rollover-interval: 5s, inactivity-interval: 2s,\n"
      "                       check-interval: 250ms, roll-on-checkpoint: true}\n");
  const SinkSpec& s = SinkOf(job);
  EXPECT_EQ(s.part_prefix, "counts");
  EXPECT_EQ(s.part_suffix, ".jsonl");
  EXPECT_EQ(s.rolling_policy.part_size_bytes, 65536);
  EXPECT_EQ(s.rolling_policy.rollover_interval_ms, 5000);
  EXPECT_EQ(s.rolling_policy.inactivity_interval_ms, 2000);
  EXPECT_EQ(s.rolling_policy.check_interval_ms, 250);
  EXPECT_TRUE(s.rolling_policy.roll_on_checkpoint);
}

// Exactly Flink's MemorySize.parse: its unit names in any case, 1024-based, a bare number is
// bytes; nothing else.
TEST(FileSinkKeysTest, MemorySizesAreFlinksMemorySize) {
  EXPECT_EQ(ParseMemorySize("128mb"), 134217728);
  EXPECT_EQ(ParseMemorySize("128"), 128);
  EXPECT_EQ(ParseMemorySize("0"), 0);
  EXPECT_EQ(ParseMemorySize("512b"), 512);
  EXPECT_EQ(ParseMemorySize("512 bytes"), 512);
  EXPECT_EQ(ParseMemorySize("2k"), 2048);
  EXPECT_EQ(ParseMemorySize("2KB"), 2048);
  EXPECT_EQ(ParseMemorySize("2 kibibytes"), 2048);
  EXPECT_EQ(ParseMemorySize("3m"), 3 << 20);
  EXPECT_EQ(ParseMemorySize("3 MebiBytes"), 3 << 20);
  EXPECT_EQ(ParseMemorySize("1g"), int64_t{1} << 30);
  EXPECT_EQ(ParseMemorySize("1 Gb"), int64_t{1} << 30);
  EXPECT_EQ(ParseMemorySize("1gibibytes"), int64_t{1} << 30);
  EXPECT_EQ(ParseMemorySize("2t"), int64_t{2} << 40);
  EXPECT_EQ(ParseMemorySize("2tb"), int64_t{2} << 40);
  EXPECT_EQ(ParseMemorySize("2 tebibytes"), int64_t{2} << 40);
  EXPECT_EQ(ParseMemorySize("  64mb  "), int64_t{64} << 20);
  for (const char* refused : {"1 GiB", "1mib", "1kib", "1tib", "1gigabytes", "1 kilobytes", "mb",
                              "", "-1mb", "+1mb", "1.5mb", "1e3", "1 m b"}) {
    EXPECT_EQ(ParseMemorySize(refused), std::nullopt) << refused;
  }
  std::string error;
  EXPECT_EQ(ParseMemorySize("1 GiB", &error), std::nullopt);
  EXPECT_EQ(error,
            "expected a memory size like \"128mb\" (a whole number of bytes, or one followed by a "
            "unit, in any case: b|bytes, k|kb|kibibytes, m|mb|mebibytes, g|gb|gibibytes, "
            "t|tb|tebibytes; 1024-based), got \"1 GiB\"");
  EXPECT_EQ(ParseMemorySize("9223372036854775807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(ParseMemorySize("8388608tb", &error), std::nullopt);  // 2^63 bytes
  EXPECT_EQ(error,
            "expected a memory size of at most 9223372036854775807 bytes, got \"8388608tb\"");
  EXPECT_EQ(ParseMemorySize("8388607tb"), int64_t{8388607} << 40);
  EXPECT_EQ(ParseMemorySize("99999999999999999999", &error), std::nullopt);
  EXPECT_EQ(error,
            "expected a memory size of at most 9223372036854775807 bytes, got "
            "\"99999999999999999999\"");
}

TEST(FileSinkKeysTest, ErrorsNameTheKeyAndItsPosition) {
  EXPECT_EQ(ErrorOf("      {type: file, path: out, delivery-guarantee: at-least-once}\n"),
            "jobs/sink.yaml:10:51: error: operators[1].sink.delivery-guarantee: unknown value "
            "\"at-least-once\"; "
            "allowed: none | exactly-once");
  EXPECT_EQ(ErrorOf("      {type: file, path: out, rolling-policy: {part-size: 1mb}}\n"),
            "jobs/sink.yaml:10:31: error: operators[1].sink.rolling-policy: applies only to a file "
            "sink with "
            "delivery-guarantee: exactly-once");
  EXPECT_EQ(ErrorOf("      {type: print, delivery-guarantee: exactly-once}\n"),
            "jobs/sink.yaml:10:21: error: operators[1].sink.delivery-guarantee: applies only to a "
            "sink of type "
            "file or kafka, not print");
  EXPECT_EQ(ErrorOf("      {type: file, path: out, delivery-guarantee: exactly-once,\n"
                    "       rolling-policy: {part-size: 1Mi, rollover: 1s}}\n"),
            "jobs/sink.yaml:11:36: error: operators[1].sink.rolling-policy.part-size: expected a "
            "memory size like \"128mb\" (a whole number of bytes, or one followed by a unit, in "
            "any case: b|bytes, k|kb|kibibytes, m|mb|mebibytes, g|gb|gibibytes, t|tb|tebibytes; "
            "1024-based), got \"1Mi\"\n"
            "jobs/sink.yaml:11:41: error: operators[1].sink.rolling-policy.rollover: unknown key "
            "\"rollover\"; "
            "allowed keys: part-size, rollover-interval, inactivity-interval, check-interval, "
            "roll-on-checkpoint");
  EXPECT_EQ(ErrorOf("      {type: file, path: out, delivery-guarantee: exactly-once,\n"
                    "       rolling-policy: {rollover-interval: 0ms, check-interval: 5}}\n"),
            "jobs/sink.yaml:11:44: error: operators[1].sink.rolling-policy.rollover-interval: must "
            "be greater than "
            "0, got \"0ms\"\n"
            "jobs/sink.yaml:11:65: error: operators[1].sink.rolling-policy.check-interval: "
            "expected a duration "
            "like \"5s\", got 5");
  EXPECT_EQ(
      ErrorOf("      {type: file, path: out, delivery-guarantee: exactly-once, part-prefix: a/b,\n"
              "       part-suffix: .inprogress.x}\n"),
      "jobs/sink.yaml:10:78: error: operators[1].sink.part-prefix: must not contain '/', got "
      "\"a/b\"\n"
      "jobs/sink.yaml:11:21: error: operators[1].sink.part-suffix: must not contain "
      "\".inprogress.\", got "
      "\".inprogress.x\"");
  EXPECT_EQ(ErrorOf("      {type: file, path: out, delivery-guarantee: exactly-once, part-prefix: "
                    ".hidden}\n"),
            "jobs/sink.yaml:10:78: error: operators[1].sink.part-prefix: must not start with '.' "
            "(hidden names "
            "are in-progress files), got \".hidden\"");
}

TEST(FileSinkKeysTest, TheExampleJobLoads) {
  JobSpec job = LoadJobSpecFile("jobs/exactly_once_file_sink.yaml");
  ASSERT_TRUE(job.checkpointing.has_value());
  EXPECT_EQ(job.checkpointing->interval_ms, 100);
  const SinkSpec& s = *job.operators.at(2).sink;
  EXPECT_EQ(s.delivery_guarantee, "exactly-once");
  EXPECT_EQ(s.path, "out/exactly_once_file_sink");
  EXPECT_EQ(s.rolling_policy.part_size_bytes, 32768);
  EXPECT_EQ(s.rolling_policy.rollover_interval_ms, 1000);
  EXPECT_EQ(s.rolling_policy.check_interval_ms, 100);
  ASSERT_TRUE(job.operators.at(0).source.has_value());
}

}  // namespace
}  // namespace tidemark
