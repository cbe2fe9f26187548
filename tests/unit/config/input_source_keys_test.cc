// Loader tests for the keys of the file, datagen and replay sources (docs/job-reference.md,
// "source").

#include <string>

#include <gtest/gtest.h>

#include "config/diagnostic.h"
#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

std::string Job(const std::string& source_block) {
  return "name: j\noperators:\n  - id: src\n    type: source\n    source:\n" + source_block +
         "  - id: out\n    type: sink\n    input: src\n    sink: {type: print}\n";
}

std::string ErrorsOf(const std::string& yaml) {
  try {
    LoadJobSpecString(yaml, "t.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(InputSourceKeysTest, FileSourceReadsEveryKey) {
  const JobSpec job = LoadJobSpecString(Job(R"(      type: file
      path: data/*.csv
      format: csv
      schema: {ts: timestamp, user: string, amount: double, ok: bool, n: int64}
      csv-header: true
      csv-delimiter: ";"
      max-line-bytes: 4096
      pacing: 10ms
)"),
                                        "t.yaml");
  const SourceSpec& s = *job.operators[0].source;
  EXPECT_EQ(s.type, "file");
  EXPECT_EQ(s.file.path, "data/*.csv");
  EXPECT_EQ(s.file.format, "csv");
  ASSERT_EQ(s.file.schema.size(), 5u);
  EXPECT_EQ(s.file.schema[0].name, "ts");
  EXPECT_EQ(s.file.schema[0].type, "timestamp");
  EXPECT_EQ(s.file.schema[4].name, "n");
  EXPECT_EQ(s.file.schema[4].type, "int64");
  EXPECT_TRUE(s.file.csv_header);
  EXPECT_EQ(s.file.csv_delimiter, ";");
  EXPECT_EQ(s.file.max_line_bytes, 4096);
  EXPECT_EQ(s.pacing_ms, 10);
}

TEST(InputSourceKeysTest, FileSourceDefaults) {
  const JobSpec job = LoadJobSpecString(Job("      type: file\n      path: a.jsonl\n      format: "
                                            "jsonl\n      schema: {ts: timestamp}\n"),
                                        "t.yaml");
  const SourceSpec& s = *job.operators[0].source;
  EXPECT_FALSE(s.file.csv_header);
  EXPECT_EQ(s.file.csv_delimiter, ",");
  EXPECT_EQ(s.file.max_line_bytes, 1048576);
  EXPECT_EQ(s.file.split_bytes, 0);
  EXPECT_EQ(s.pacing_ms, 0);
}

TEST(InputSourceKeysTest, SplitBytesIsAPositiveInteger) {
  const JobSpec job = LoadJobSpecString(Job("      type: file\n      path: a.jsonl\n      format: "
                                            "jsonl\n      schema: {ts: timestamp}\n"
                                            "      split-bytes: 67108864\n"),
                                        "t.yaml");
  EXPECT_EQ(job.operators[0].source->file.split_bytes, 67108864);
  EXPECT_EQ(ErrorsOf(Job("      type: file\n      path: a.jsonl\n      format: jsonl\n"
                         "      schema: {ts: timestamp}\n      split-bytes: 0\n")),
            "t.yaml:10:20: error: operators[0].source.split-bytes: must be at least 1, got 0");
}

TEST(InputSourceKeysTest, FileSourceErrorsNameTheKey) {
  EXPECT_EQ(
      ErrorsOf(Job("      type: file\n      format: xml\n      schema: {ts: time}\n      "
                   "csv-header: true\n      splits: []\n")),
      "t.yaml:6:7: error: operators[0].source.path: missing required key\n"
      "t.yaml:7:15: error: operators[0].source.format: unknown value \"xml\"; allowed: jsonl | "
      "csv\n"
      "t.yaml:8:20: error: operators[0].source.schema.ts: unknown value \"time\"; allowed: int64 | "
      "double | bool | string | timestamp\n"
      "t.yaml:9:7: error: operators[0].source.csv-header: applies only to format csv\n"
      "t.yaml:10:7: error: operators[0].source.splits: does not apply to a source of type file; "
      "allowed keys: type, path, format, schema, csv-header, csv-delimiter, columns, "
      "max-line-bytes, split-bytes, pacing, errors");
}

TEST(InputSourceKeysTest, ErrorsIsSideOutputOrFailOnFileReplayAndKafkaSources) {
  const std::string file =
      "      type: file\n      path: a.csv\n      format: csv\n"
      "      schema: {ts: timestamp}\n";
  EXPECT_EQ(LoadJobSpecString(Job(file), "t.yaml").operators[0].source->errors, "side-output");
  EXPECT_EQ(
      LoadJobSpecString(Job(file + "      errors: fail\n"), "t.yaml").operators[0].source->errors,
      "fail");
  EXPECT_EQ(LoadJobSpecString(Job("      type: replay\n      path: r.jsonl\n      schema: {ts: "
                                  "timestamp}\n      errors: fail\n"),
                              "t.yaml")
                .operators[0]
                .source->errors,
            "fail");
  EXPECT_EQ(ErrorsOf(Job(file + "      errors: skip\n")),
            "t.yaml:10:15: error: operators[0].source.errors: unknown value \"skip\"; allowed: "
            "side-output | fail");
  // Generated input has no bad records.
  EXPECT_EQ(ErrorsOf(Job("      type: datagen\n      splits: 1\n      count: 1\n      rate: 1\n"
                         "      errors: fail\n")),
            "t.yaml:10:7: error: operators[0].source.errors: does not apply to a source of type "
            "datagen; allowed keys: type, splits, count, rate, keys, start, disorder, "
            "max-out-of-orderness, skew, idle-periods, seed");
  // Nor has a sequence or generator source (only file, replay and kafka read input).
  EXPECT_EQ(ErrorsOf(Job(
                "      type: sequence\n      splits: [{id: a, start: 0ms, step: 1ms, count: 1}]\n"
                "      errors: fail\n")),
            "t.yaml:8:7: error: operators[0].source.errors: does not apply to a source of type "
            "sequence (only to file, replay or kafka)");
  EXPECT_EQ(ErrorsOf(Job("      type: generator\n      count: 1\n      errors: fail\n")),
            "t.yaml:8:7: error: operators[0].source.errors: does not apply to a source of type "
            "generator (only to file, replay or kafka)");
}

TEST(InputSourceKeysTest, DatagenReadsEveryKey) {
  const JobSpec job = LoadJobSpecString(Job(R"(      type: datagen
      splits: 3
      count: 100
      rate: 50
      keys: 7
      start: 10s
      disorder: exponential
      max-out-of-orderness: 2s
      skew: -500ms
      idle-periods: [{split: 2, start: 1s, end: 3s}]
      seed: 42
)"),
                                        "t.yaml");
  const DatagenSourceSpec& g = job.operators[0].source->datagen;
  EXPECT_EQ(g.split_count, 3);
  EXPECT_EQ(g.count, 100);
  EXPECT_EQ(g.rate, 50);
  EXPECT_EQ(g.key_count, 7);
  EXPECT_EQ(g.first_timestamp_ms, 10000);
  EXPECT_EQ(g.disorder, "exponential");
  EXPECT_EQ(g.max_out_of_orderness_ms, 2000);
  EXPECT_EQ(g.skew_ms, -500);
  ASSERT_EQ(g.idle_periods.size(), 1u);
  EXPECT_EQ(g.idle_periods[0].split, 2);
  EXPECT_EQ(g.idle_periods[0].start_ms, 1000);
  EXPECT_EQ(g.idle_periods[0].end_ms, 3000);
  EXPECT_EQ(g.seed, 42);
}

TEST(InputSourceKeysTest, DatagenErrors) {
  EXPECT_EQ(
      ErrorsOf(Job("      type: datagen\n      splits: 2\n      count: 1\n      rate: 0\n      "
                   "disorder: uniform\n      idle-periods: [{split: 2, start: 2s, end: 1s}]\n")),
      "t.yaml:6:7: error: operators[0].source.max-out-of-orderness: missing required key "
      "(disorder uniform needs a bound)\n"
      "t.yaml:9:13: error: operators[0].source.rate: must be at least 1, got 0\n"
      "t.yaml:11:30: error: operators[0].source.idle-periods[0].split: no split 2 (splits: 2, "
      "numbered from 0)\n"
      "t.yaml:11:49: error: operators[0].source.idle-periods[0].end: must be after start");
}

TEST(InputSourceKeysTest, ReplayReadsItsKeysAndSequenceRejectsThem) {
  const JobSpec job = LoadJobSpecString(
      Job("      type: replay\n      path: r.jsonl\n      schema: {ts: timestamp, v: int64}\n"),
      "t.yaml");
  EXPECT_EQ(job.operators[0].source->replay.path, "r.jsonl");
  EXPECT_EQ(job.operators[0].source->replay.schema.size(), 2u);
  EXPECT_EQ(ErrorsOf(Job("      type: sequence\n      path: r.jsonl\n      splits: [{id: a, start: "
                         "0ms, step: 1ms, count: 1}]\n")),
            "t.yaml:7:7: error: operators[0].source.path: does not apply to a source of type "
            "sequence (only to file or replay)");
  // Each key names the source types that take it.
  EXPECT_EQ(
      ErrorsOf(Job("      type: sequence\n      split-bytes: 10\n      seed: 3\n      splits: "
                   "[{id: a, start: 0ms, step: 1ms, count: 1}]\n")),
      "t.yaml:7:7: error: operators[0].source.split-bytes: does not apply to a source of type "
      "sequence (only to file)\n"
      "t.yaml:8:7: error: operators[0].source.seed: does not apply to a source of type "
      "sequence (only to datagen)");
}

TEST(InputSourceKeysTest, ASourcesErrorsSideOutputCanBeRead) {
  const JobSpec job = LoadJobSpecString(
      "name: j\noperators:\n  - id: src\n    type: source\n    source: {type: replay, path: r, "
      "schema: {ts: timestamp}}\n  - id: bad\n    type: sink\n    inputs: [{from: src, "
      "side-output: errors}]\n    sink: {type: print}\n",
      "t.yaml");
  EXPECT_EQ(job.operators[1].inputs[0].side_output, "errors");
}

}  // namespace
}  // namespace tidemark
