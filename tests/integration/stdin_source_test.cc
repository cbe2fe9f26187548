// `cat x.csv | tidemark run job.yaml` (issue 43): a `stdin` source fed by a real pipe into the
// built binary (<build>/tools/tidemark), its records printed by the `print` sink (stdout, one JSON
// object per record, as the file sink writes them). Checks the exact rows, that the end of the
// input fires every window (the watermark goes to the end of time, as a bounded file's does), the
// counted bad lines, `errors: fail`, and that checkpointing is refused.

#include <cstdlib>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/testing/daemon_harness.h"

namespace tidemark {
namespace {

using testing::CliResult;
using testing::TempDir;

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// `cat input | tidemark run job` in `dir` (a checkpoint dir stays there), stdout and stderr apart.
CliResult PipeInto(const TempDir& dir, const std::string& input, const std::string& job) {
  Write(dir.path() + "/in.txt", input);
  Write(dir.path() + "/job.yaml", job);
  const std::string out = dir.path() + "/run.out";
  const std::string err = dir.path() + "/run.err";
  const std::string cmd =
      fmt::format("cd '{0}' && cat in.txt | '{1}' run '{0}/job.yaml' >'{2}' 2>'{3}'", dir.path(),
                  (testing::ToolsDir() / "tidemark").string(), out, err);
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, testing::ReadFile(out),
          testing::ReadFile(err)};
}

std::string Job(const std::string& source, const std::string& extra = "") {
  return fmt::format(R"(name: stdin-test
pipeline: {{parallelism: 1, clock: virtual}}
{}operators:
  - id: source
    type: source
    source:
{}    watermarks: {{strategy: bounded-out-of-orderness, max-out-of-orderness: 1s, timestamp-field: ts}}
  - id: windows
    type: window
    input: source
    key-by: [user]
    window: {{assigner: tumbling, size: 10s, aggregate: [count, {{fn: sum, field: amount, as: amount}}]}}
  - id: out
    type: sink
    input: windows
    sink: {{type: print}}
)",
                     extra, source);
}

constexpr const char* kCsvSource = R"(      type: stdin
      format: csv
      csv-header: true
      columns: by-name
      schema: {ts: timestamp, user: string, amount: int64}
)";

TEST(StdinSourceTest, CsvThroughAPipeGivesEveryWindowAtTheEndOfInput) {
  TempDir dir;
  // The last window [20s, 30s) fires only because the end of the input moves the watermark to
  // the end of time; column order differs from the schema's (by-name).
  const CliResult r = PipeInto(dir,
                               "user,ts,amount\n"
                               "ann,1000,5\n"
                               "bob,2000,7\n"
                               "ann,9999,1\n"
                               "bob,12000,2\n"
                               "ann,25000,4\n",
                               Job(kCsvSource));
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "{\"user\":\"ann\",\"window_start\":0,\"window_end\":10000,\"count\":2,\"amount\":6}\n"
            "{\"user\":\"bob\",\"window_start\":0,\"window_end\":10000,\"count\":1,\"amount\":7}\n"
            "{\"user\":\"bob\",\"window_start\":10000,\"window_end\":20000,\"count\":1,"
            "\"amount\":2}\n"
            "{\"user\":\"ann\",\"window_start\":20000,\"window_end\":30000,\"count\":1,"
            "\"amount\":4}\n");
}

TEST(StdinSourceTest, BadLinesAreCountedAndErrorsFailStopsTheJob) {
  TempDir dir;
  const std::string input =
      "{\"ts\": 1000, \"user\": \"ann\", \"amount\": 5}\n"
      "{\"ts\": 1500, \"user\": \"ann\", \"amount\": \"x\"}\n"
      "{\"ts\": 2000, \"user\": \"ann\", \"amount\": 2}\n";
  const std::string json = R"(      type: stdin
      format: jsonl
      schema: {ts: timestamp, user: string, amount: int64}
)";
  const CliResult ok = PipeInto(dir, input, Job(json));
  ASSERT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(
      ok.out,
      "{\"user\":\"ann\",\"window_start\":0,\"window_end\":10000,\"count\":2,\"amount\":7}\n");
  EXPECT_NE(ok.err.find("<stdin>:2: field \"amount\": expected int64, got \"x\""),
            std::string::npos)
      << ok.err;

  const CliResult failed = PipeInto(dir, input, Job(json + "      errors: fail\n"));
  EXPECT_NE(failed.rc, 0);
  EXPECT_EQ(failed.out, "");
  EXPECT_NE(failed.err.find("bad input (errors: fail): <stdin>:2 (byte 41): field \"amount\": "
                            "expected int64, got \"x\""),
            std::string::npos)
      << failed.err;
}

TEST(StdinSourceTest, CheckpointingIsRefusedWhenTheJobIsCompiled) {
  TempDir dir;
  const CliResult r = PipeInto(dir, "user,ts,amount\n",
                               Job(kCsvSource, "checkpointing: {interval: 1s, dir: ckpt}\n"));
  EXPECT_NE(r.rc, 0);
  EXPECT_NE(r.err.find("job.yaml:8:13: error: operators[0].source.type: a stdin source cannot be "
                       "restored from a checkpoint (its input cannot be read again from an "
                       "offset): remove `checkpointing:`, or read a file"),
            std::string::npos)
      << r.err;
}

// Standard input is one stream: a second stdin source would take lines from the first.
TEST(StdinSourceTest, ASecondStdinSourceIsRefusedAtItsType) {
  TempDir dir;
  const std::string job = R"(name: two-stdin
pipeline: {parallelism: 1, clock: virtual}
operators:
  - id: a
    type: source
    source: {type: stdin, format: csv, schema: {ts: int64, k: string}}
  - id: b
    type: source
    source: {type: stdin, format: csv, schema: {ts: int64, k: string}}
  - id: both
    type: union
    inputs: [a, b]
  - id: out
    type: sink
    input: both
    sink: {type: print}
)";
  const CliResult r = PipeInto(dir, "1,x\n", job);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("job.yaml:9:20: error: operators[1].source.type: a job has one stdin "
                       "source; 'a' already reads the standard input (join or union its stream "
                       "instead)"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tidemark
