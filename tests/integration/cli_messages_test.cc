// What a user of the `tidemark` CLI reads at the end of `run` (issue 42, "nothing silent"): the
// records a job did not turn into results, one line each with its count and first place; the
// cause of a Ctrl-C; times in ISO-8601 UTC or, with --time-format epoch-ms, as integers. Runs the
// built binary (<build>/tools/tidemark) and compares its exact stderr.

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tests/testing/daemon_harness.h"

namespace tidemark {
namespace {

using testing::CliResult;
using testing::TempDir;

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// `tidemark ARGS` (no daemon involved); the socket option is ignored by `run`.
CliResult Tidemark(const TempDir& dir, const std::string& args) {
  return testing::RunCli(dir.path() + "/no.sock", args, dir.path());
}

// A CSV whose line 4 has no timestamp, line 5 is late (event time 1.2s after the punctuated
// watermark 2.5s closed its window [1s, 2s)) and line 6 has one field instead of 3.
std::string DroppingJob(const TempDir& dir) {
  Write(dir.path() + "/in.csv",
        "ts,user,wm\n"
        "1000,ann,\n"
        "2500,bob,2500\n"
        ",carl,\n"
        "1200,dan,\n"
        "oops\n"
        "3000,eve,\n");
  const std::string job = dir.path() + "/dropping.yaml";
  Write(job, fmt::format(R"(name: dropping
pipeline: {{parallelism: 1, clock: virtual}}
operators:
  - id: source
    type: source
    source:
      type: file
      path: {}/in.csv
      format: csv
      csv-header: true
      schema: {{ts: timestamp, user: string, wm: int64}}
    watermarks: {{strategy: punctuated, timestamp-field: ts, watermark-field: wm}}
  - id: windows
    type: window
    input: source
    window: {{assigner: tumbling, size: 1s, aggregate: [count]}}
  - id: fired
    type: sink
    input: windows
    sink: {{type: print}}
)",
                         dir.path()));
  return job;
}

// stderr without spdlog's lines (`[date] [task] [warning] ...`, a timestamp of their own).
std::string WithoutLogLines(const std::string& err) {
  std::string out;
  size_t start = 0;
  while (start < err.size()) {
    size_t end = err.find('\n', start);
    end = end == std::string::npos ? err.size() : end + 1;
    if (err[start] != '[') {
      out += err.substr(start, end - start);
    }
    start = end;
  }
  return out;
}

TEST(CliMessagesTest, RunStatesEveryDroppedRecordKindWithItsCountAndFirstPlace) {
  TempDir dir;
  const std::string job = DroppingJob(dir);
  const CliResult r = Tidemark(dir, "run " + job);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "{\"window_start\":1000,\"window_end\":2000,\"count\":1}\n"
            "{\"window_start\":2000,\"window_end\":3000,\"count\":1}\n"
            "{\"window_start\":3000,\"window_end\":4000,\"count\":1}\n");
  const std::string csv = dir.path() + "/in.csv";
  EXPECT_EQ(WithoutLogLines(r.err),
            "source: 1 input record rejected; first: " + csv +
                ":6: expected 3 fields, got 1\n"
                "source: 1 record without timestamp; first: " +
                csv +
                ":4: no timestamp: field 'ts' is missing or NULL\n"
                "windows: 1 late record dropped; first: event time 1.2s behind watermark 2.5s\n");
}

// Job `name`: `csv` (ts,user lines) counted in 1 s event-time windows and printed, with `top`
// (top-level keys) before its operators and `tail` after them.
std::string CountJob(const TempDir& dir, const std::string& name, const std::string& csv,
                     const std::string& top, const std::string& tail) {
  Write(dir.path() + "/in.csv", csv);
  const std::string job = dir.path() + "/" + name + ".yaml";
  Write(job, fmt::format(R"(name: {}
pipeline: {{parallelism: 1, clock: virtual}}
{}operators:
  - id: source
    type: source
    source: {{type: file, path: {}/in.csv, format: csv, schema: {{ts: timestamp, user: string}}}}
    watermarks: {{strategy: bounded-out-of-orderness, max-out-of-orderness: 0ms, timestamp-field: ts}}
  - id: windows
    type: window
    input: source
    window: {{assigner: tumbling, size: 1s, aggregate: [count]}}
  - id: fired
    type: sink
    input: windows
    sink: {{type: print}}
{})",
                         name, top, dir.path(), tail));
  return job;
}

TEST(CliMessagesTest, RunThatDroppedNothingPrintsNothingOnStderrAndAnUnlabelledReport) {
  TempDir dir;
  const std::string job =
      CountJob(dir, "clean", "1000,ann\n1500,bob\n", "", "report: {windows-sink: fired}\n");
  const CliResult r = Tidemark(dir, "run " + job);
  EXPECT_EQ(r.rc, 0) << r.err;
  // A report without a label prints none (it used to print ">>> : windows fired=...").
  EXPECT_EQ(r.out,
            "{\"window_start\":1000,\"window_end\":2000,\"count\":2}\n"
            ">>> windows fired=1, records in windows=2, late records=0, total=2\n");
  EXPECT_EQ(r.err, "");
}

// A run that restarted says so after its results, with each failure it restarted from: the
// results came after them (a restart may have resumed on changed input), and a log line far above
// was all a user had (session 28's trial).
TEST(CliMessagesTest, RunThatRestartedStatesHowOftenAndWhy) {
  TempDir dir;
  const std::string job =
      CountJob(dir, "restarting", "1000,ann\n1500,bob\n2500,cid\n",
               "restart-strategy: {type: fixed-delay, attempts: 3, delay: 10ms}\n"
               "faults:\n  - {operator: windows, after-records: 1, times: 2}\n",
               "");
  const CliResult r = Tidemark(dir, "run " + job);
  EXPECT_EQ(r.rc, 0) << r.err;
  const std::string cause =
      "  restart cause: task windows -> fired#0: operator 'windows' failed: injected fault "
      "(faults: process) while processing its record 2\n";
  EXPECT_EQ(WithoutLogLines(r.err),
            "job 'restarting' restarted 2 times from a failure:\n" + cause + cause);
}

// A CSV source read with `extra` keys, its records counted in 1 s windows and printed.
std::string CsvJob(const TempDir& dir, const std::string& csv, const std::string& extra,
                   const std::string& schema = "{ts: timestamp, user: string, amount: int64}") {
  Write(dir.path() + "/in.csv", csv);
  const std::string job = dir.path() + "/csv.yaml";
  Write(job, fmt::format(R"(name: csv
pipeline: {{parallelism: 1, clock: virtual}}
operators:
  - id: source
    type: source
    source:
      type: file
      path: {}/in.csv
      format: csv
      schema: {}
{}    watermarks: {{strategy: bounded-out-of-orderness, max-out-of-orderness: 0ms, timestamp-field: ts}}
  - id: windows
    type: window
    input: source
    window: {{assigner: tumbling, size: 1s, aggregate: [count, {{fn: sum, field: amount}}]}}
  - id: fired
    type: sink
    input: windows
    sink: {{type: print}}
)",
                         dir.path(), schema, extra));
  return job;
}

TEST(CliMessagesTest, ErrorsFailStopsTheJobAtTheFirstBadLineNamingFileLineAndByte) {
  TempDir dir;
  // Line 3 starts at byte 26 (15 + 11); line 4 is bad too but is never read.
  const std::string job = CsvJob(dir, "ts,user,amount\n1000,ann,5\n1200,bob\n1300,carl,x\n",
                                 "      csv-header: true\n      errors: fail\n");
  const CliResult r = Tidemark(dir, "run " + job);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(
      WithoutLogLines(r.err),
      "job 'csv' FAILED: task source#0: operator 'source' failed: bad input (errors: fail): " +
          dir.path() + "/in.csv:3 (byte 26): expected 3 fields, got 2\n");
}

TEST(CliMessagesTest, ErrorsFailAlsoFailsOnARecordWithoutTimestamp) {
  TempDir dir;
  const std::string job = CsvJob(dir, "1000,ann,5\n,bob,6\n", "      errors: fail\n");
  const CliResult r = Tidemark(dir, "run " + job);
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_EQ(
      WithoutLogLines(r.err),
      "job 'csv' FAILED: task source#0: operator 'source' failed: bad input (errors: fail): " +
          dir.path() + "/in.csv:2 (byte 11): no timestamp: field 'ts' is missing or NULL\n");
}

TEST(CliMessagesTest, ErrorsSideOutputIsTheDefaultAndCountsTheLine) {
  TempDir dir;
  const std::string job = CsvJob(dir, "1000,ann,5\n1200,bob\n", "      errors: side-output\n");
  const CliResult r = Tidemark(dir, "run " + job);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "{\"window_start\":1000,\"window_end\":2000,\"count\":1,\"sum_amount\":5}\n");
  EXPECT_EQ(WithoutLogLines(r.err), "source: 1 input record rejected; first: " + dir.path() +
                                        "/in.csv:2: expected 3 fields, got 2\n");
}

// Issue 42: columns listed in another order than the header's gave wrong sums and exit 0.
TEST(CliMessagesTest, ACsvHeaderThatDoesNotNameTheSchemaInOrderIsAnErrorAtTheKey) {
  TempDir dir;
  const std::string job = CsvJob(dir, "ts,amount,user\n1000,5,ann\n", "      csv-header: true\n");
  const CliResult r = Tidemark(dir, "run " + job);
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, job + ":11:19: error: operators[0].source.csv-header: the header of '" +
                       dir.path() +
                       "/in.csv' names ts, amount, user; the schema declares ts, user, amount "
                       "(fields are read by position: declare them in the header's order, or "
                       "read them by name with columns: by-name)\n");
}

TEST(CliMessagesTest, ColumnsByNameReadsTheHeadersColumnsInAnyOrder) {
  TempDir dir;
  // `note` is not in the schema: ignored. Line 3 has a bad amount: its error row names the
  // field by its place in the line (3) and its schema name, with the line's byte offset (34).
  const std::string job = CsvJob(dir,
                                 "amount,note,ts,user\n"
                                 "5,hi,1000,ann\n"
                                 "x,,1100,bob\n"
                                 "7,\"a,b\",1500,carl\n",
                                 "      csv-header: true\n      columns: by-name\n");
  // One print sink (the error rows), so the output does not depend on two sinks' threads.
  std::string yaml = testing::ReadFile(job);
  yaml.replace(yaml.find("sink: {type: print}"), 19, "sink: {type: collect}");
  yaml +=
      "  - id: bad\n    type: sink\n    inputs: [{from: source, side-output: errors}]\n"
      "    sink: {type: print}\n";
  Write(job, yaml);
  const CliResult r = Tidemark(dir, "run " + job);
  EXPECT_EQ(r.rc, 0) << r.err;
  const std::string csv = dir.path() + "/in.csv";
  EXPECT_EQ(r.out, "{\"split\":\"" + csv +
                       "\",\"line\":3,\"offset\":34,\"reason\":\"field 1 \\\"amount\\\": expected "
                       "int64, got \\\"x\\\"\",\"text\":\"x,,1100,bob\"}\n");
  EXPECT_EQ(WithoutLogLines(r.err), "source: 1 input record rejected; first: " + csv +
                                        ":3: field 1 \"amount\": expected int64, got \"x\"\n");
}

TEST(CliMessagesTest, ColumnsByNameWithAColumnMissingFromTheHeaderIsAnErrorNamingBoth) {
  TempDir dir;
  const std::string job =
      CsvJob(dir, "user,ts\nann,1000\n", "      csv-header: true\n      columns: by-name\n");
  const CliResult r = Tidemark(dir, "run " + job);
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_EQ(r.err, job + ":12:16: error: operators[0].source.columns: the header of '" +
                       dir.path() +
                       "/in.csv' has no column amount (header: user, ts; schema: ts, user, "
                       "amount)\n");
}

// A binary file read as CSV: its header's bytes are shown escaped, not written to the terminal.
TEST(CliMessagesTest, AHeaderOfBinaryBytesIsShownEscaped) {
  TempDir dir;
  const std::string job = CsvJob(dir, std::string("u\xff\x01\x1b[2J,ts\nann,1000\n"),
                                 "      csv-header: true\n      columns: by-name\n");
  const CliResult r = Tidemark(dir, "run " + job);
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_EQ(r.err, job + ":12:16: error: operators[0].source.columns: the header of '" +
                       dir.path() +
                       "/in.csv' has no column user or amount (header: u\\xff\\x01\\x1b[2J, ts; "
                       "schema: ts, user, amount)\n");
}

TEST(CliMessagesTest, MetricsPrintEpochLikeEventTimesAsIso8601OrEpochMsOnRequest) {
  TempDir dir;
  // 2001-04-24T06:56:59.999Z (also the punctuated watermark) and one second later.
  Write(dir.path() + "/in.csv", "988095419999,ann,988095419999\n988095420999,bob,\n");
  const std::string job = dir.path() + "/dates.yaml";
  Write(job, fmt::format(R"(name: dates
pipeline: {{parallelism: 1, clock: virtual}}
operators:
  - id: source
    type: source
    source:
      type: file
      path: {}/in.csv
      format: csv
      schema: {{ts: timestamp, user: string, wm: int64}}
    watermarks: {{strategy: punctuated, timestamp-field: ts, watermark-field: wm}}
  - id: out
    type: sink
    input: source
    sink: {{type: collect}}
)",
                         dir.path()));
  const CliResult readable = Tidemark(dir, "run --metrics " + job);
  EXPECT_EQ(readable.rc, 0) << readable.err;
  // The source's watermark before end of input (MAX then), and none on the task's input (MIN).
  EXPECT_NE(readable.err.find(" output_watermark=MAX sourceIdleTime=0 "
                              "currentOutputWatermark=2001-04-24T06:56:59.999Z "),
            std::string::npos)
      << readable.err;
  EXPECT_NE(readable.err.find("metrics: task=source -> out#0 records_in=2 input_watermark=MIN "
                              "finished=true\n"),
            std::string::npos)
      << readable.err;
  const CliResult epoch = Tidemark(dir, "run --metrics --time-format epoch-ms " + job);
  EXPECT_EQ(epoch.rc, 0) << epoch.err;
  EXPECT_NE(epoch.err.find(" output_watermark=9223372036854775807 sourceIdleTime=0 "
                           "currentOutputWatermark=988095419999 "),
            std::string::npos)
      << epoch.err;
  EXPECT_NE(epoch.err.find("input_watermark=-9223372036854775808 finished=true\n"),
            std::string::npos)
      << epoch.err;
  const CliResult bad = Tidemark(dir, "run --time-format iso " + job);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--time-format: iso not in {readable,epoch-ms}"), std::string::npos)
      << bad.err;
}

TEST(CliMessagesTest, CtrlCSaysTheUserCancelledTheJob) {
  TempDir dir;
  const std::string job = dir.path() + "/forever.yaml";
  Write(job, R"(name: forever
pipeline: {parallelism: 1}
operators:
  - id: source
    type: source
    source:
      type: sequence
      pacing: 5ms
      splits: [{id: s, start: 0ms, step: 1ms, count: 1000000000}]
  - id: out
    type: sink
    input: source
    sink: {type: print}
)");
  int out_pipe[2];
  ASSERT_EQ(::pipe(out_pipe), 0);
  const std::string bin = (testing::ToolsDir() / "tidemark").string();
  const std::string err_path = dir.path() + "/err";
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::close(out_pipe[0]);
    const int err_fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(err_fd, 2);
    ::execl(bin.c_str(), bin.c_str(), "run", job.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  // The first printed record: the job runs and the CLI's SIGINT handler is installed.
  std::string first;
  char c = 0;
  while (::read(out_pipe[0], &c, 1) == 1 && c != '\n') {
    first += c;
  }
  EXPECT_EQ(first, "{\"ts\":0}");
  ::kill(pid, SIGINT);
  // Drain stdout so the CLI never blocks on a full pipe while it cancels.
  char buf[4096];
  while (::read(out_pipe[0], buf, sizeof(buf)) > 0) {
  }
  ::close(out_pipe[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(testing::ReadFile(err_path),
            "job 'forever' CANCELED: cancelled by the user (SIGINT, Ctrl-C)\n");
}

}  // namespace
}  // namespace tidemark
