// End-to-end checks of the file, datagen and replay sources through LocalJob (compile, deploy,
// run): bad input is counted and reported with file and line while the job goes on; an
// unreadable file fails the job with its cause; 4 readers give the same windows as 1; a seeded
// datagen job is repeatable; replay regressions.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

struct RunResult {
  JobState state = JobState::kCreated;
  std::string cause;
  std::string printed;
  std::vector<StreamRecord> errors;  // rows of the `errors` collect sink, if any
  std::optional<std::string> report;
};

RunResult RunJob(const JobSpec& spec) {
  RunResult r;
  auto job = LocalJob::Create(spec, [&r](const std::string& line) { r.printed += line + "\n"; });
  job->execution().Start();
  r.state = job->execution().Wait();
  r.cause = job->execution().failure_cause();
  if (auto sink = job->resources().FindSinkResult("errors")) {
    r.errors = sink->Records();
  }
  r.report = job->ReportLine();
  return r;
}

std::string FireLines(const std::string& printed) {
  std::istringstream in(printed);
  std::string line;
  std::string out;
  while (std::getline(in, line)) {
    if (line.rfind(">>> FIRE", 0) == 0) {
      out += line + "\n";
    }
  }
  return out;
}

class InputSourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tidemark_input_sources_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  // A file job: per-split watermarks (0 ms), 1 s windows counted into `fired`, errors collected.
  static std::string FileJob(const std::string& path, const std::string& format) {
    return R"(
name: file-job
pipeline: {parallelism: 1, clock: virtual}
operators:
  - id: source
    type: source
    source:
      type: file
      path: )" +
           path + R"(
      format: )" +
           format + R"(
      schema: {ts: timestamp, user: string, amount: int64}
    watermarks: {strategy: bounded-out-of-orderness, max-out-of-orderness: 0ms, timestamp-field: ts}
  - id: windows
    type: window
    input: source
    window: {assigner: tumbling, size: 1s, aggregate: [count]}
  - id: fired
    type: sink
    input: windows
    sink: {type: collect}
  - id: errors
    type: sink
    inputs: [{from: source, side-output: errors}]
    sink: {type: collect}
report: {label: file, windows-sink: fired}
)";
  }

  fs::path dir_;
};

// An `errors` row (SourceErrorSchema: split, line, offset, reason, text) as "split:line reason".
std::string ErrorText(const StreamRecord& r) {
  return std::get<std::string>(r.row.Get(0)) + ":" +
         std::to_string(std::get<int64_t>(r.row.Get(1))) + " " +
         std::get<std::string>(r.row.Get(3));
}

TEST_F(InputSourcesTest, BadCsvLinesAndATenMegabyteLineAreReportedAndTheJobKeepsGoing) {
  std::string text = "1000,ann,1\n";
  text += "1100,bob\n";                                   // 2: wrong number of fields
  text += "later,carl,3\n";                               // 3: non-numeric timestamp
  text += "1200," + std::string(10 << 20, 'z') + ",4\n";  // 4: a 10 MB line
  text += "1300,dan,5\n";
  const std::string path = Write("in.csv", text);
  RunResult r = RunJob(LoadJobSpecString(FileJob(path, "csv"), "<string>"));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  ASSERT_EQ(r.errors.size(), 3u);
  EXPECT_EQ(ErrorText(r.errors[0]), path + ":2 expected 3 fields, got 2");
  EXPECT_EQ(ErrorText(r.errors[1]), path + ":3 field 1 \"ts\": expected timestamp, got \"later\"");
  EXPECT_EQ(ErrorText(r.errors[2]), path + ":4 line longer than max-line-bytes (1048576 bytes)");
  EXPECT_EQ(std::get<std::string>(r.errors[2].row.Get(4)).size(), 200u);
  // Each row carries its line's byte offset: 11, 20 and 33.
  EXPECT_EQ(std::get<int64_t>(r.errors[0].row.Get(2)), 11);
  EXPECT_EQ(std::get<int64_t>(r.errors[1].row.Get(2)), 20);
  EXPECT_EQ(std::get<int64_t>(r.errors[2].row.Get(2)), 33);
  EXPECT_EQ(r.report, ">>> file: windows fired=1, records in windows=2, late records=0, total=2");
}

TEST_F(InputSourcesTest, ARecordWithoutTimestampGoesToErrorsWithAReason) {
  const std::string path = Write("in.jsonl",
                                 "{\"ts\": 1000, \"user\": \"a\"}\n"
                                 "{\"user\": \"no-ts\"}\n");
  RunResult r = RunJob(LoadJobSpecString(FileJob(path, "jsonl"), "<string>"));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  ASSERT_EQ(r.errors.size(), 1u);
  // The true line of the record (it used to say 0).
  EXPECT_EQ(ErrorText(r.errors[0]), path + ":2 no timestamp: field 'ts' is missing or NULL");
  EXPECT_EQ(std::get<std::string>(r.errors[0].row.Get(4)),
            "{\"ts\":null,\"user\":\"no-ts\",\"amount\":null}");
  EXPECT_EQ(std::get<int64_t>(r.errors[0].row.Get(2)), 26);  // the line's byte offset
}

TEST_F(InputSourcesTest, ALongMinValueTimestampGoesToErrorsInsteadOfFailingTheWindow) {
  // Long.MIN_VALUE is StreamRecord's "no timestamp" marker; it used to reach the window, which
  // failed the whole job with "Record has no timestamp".
  const std::string path = Write("in.csv",
                                 "1000,ann,1\n"
                                 "-9223372036854775808,min,2\n"
                                 "1300,dan,5\n");
  std::string with_watermarks = FileJob(path, "csv");
  std::string source_timestamps = with_watermarks;
  source_timestamps.replace(
      source_timestamps.find("    watermarks:"),
      source_timestamps.find("  - id: windows") - source_timestamps.find("    watermarks:"), "");
  for (const auto& [yaml, reason] :
       {std::pair{with_watermarks, std::string("field 'ts' is Long.MIN_VALUE")},
        std::pair{source_timestamps, std::string("its timestamp is Long.MIN_VALUE")}}) {
    RunResult r = RunJob(LoadJobSpecString(yaml, "<string>"));
    ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
    ASSERT_EQ(r.errors.size(), 1u);
    EXPECT_EQ(ErrorText(r.errors[0]), path + ":2 no timestamp: " + reason +
                                          " (-9223372036854775808), which means no timestamp");
    EXPECT_EQ(std::get<std::string>(r.errors[0].row.Get(4)),
              "{\"ts\":-9223372036854775808,\"user\":\"min\",\"amount\":2}");
    EXPECT_EQ(r.report, ">>> file: windows fired=1, records in windows=2, late records=0, total=2");
  }
}

TEST_F(InputSourcesTest, InvalidUtf8InAStringFieldIsPrintedAsReplacementCharacters) {
  // The JSON sinks used to throw nlohmann's type_error 316 and fail the job on such a record.
  const std::string path = Write("in.csv", "1000,\xff\xfeok,1\n2000,bob,2\n");
  const std::string yaml = R"(
name: utf8
operators:
  - id: source
    type: source
    source:
      type: file
      path: )" + path + R"(
      format: csv
      schema: {ts: timestamp, user: string, amount: int64}
  - id: out
    type: sink
    input: source
    sink: {type: print}
)";
  RunResult r = RunJob(LoadJobSpecString(yaml, "<string>"));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  EXPECT_EQ(r.printed,
            "{\"ts\":1000,\"user\":\"\xef\xbf\xbd\xef\xbf\xbdok\",\"amount\":1}\n"
            "{\"ts\":2000,\"user\":\"bob\",\"amount\":2}\n");
}

TEST_F(InputSourcesTest, FinalMetricsKeepTheLinesAndBytesOfAFinishedFile) {
  // They used to drop to 0 when the reader closed the file, so `--metrics` and the daemon's final
  // status showed lines=0 bytes=0 next to records=2.
  const std::string path = Write("in.csv", "1000,ann,1\nbad\n1300,dan,5\n");
  auto job = LocalJob::Create(LoadJobSpecString(FileJob(path, "csv"), "<string>"),
                              [](const std::string&) {});
  job->execution().Start();
  ASSERT_EQ(job->execution().Wait(), JobState::kFinished) << job->execution().failure_cause();
  std::map<std::string, int64_t> gauges;
  for (const SubtaskMetrics& m : job->execution().Metrics()) {
    for (const OperatorMetrics& op : m.operators) {
      if (op.name == "source") {
        gauges.insert(op.gauges.begin(), op.gauges.end());
      }
    }
  }
  EXPECT_EQ(gauges["split." + path + ".records"], 2);
  EXPECT_EQ(gauges["split." + path + ".lines"], 3);
  EXPECT_EQ(gauges["split." + path + ".bytes"], 26);
}

TEST_F(InputSourcesTest, AnUnreadableFileFailsTheJobWithItsCause) {
  const std::string path = Write("gone.csv", "1000,ann,1\n");
  auto job = LocalJob::Create(LoadJobSpecString(FileJob(path, "csv"), "<string>"),
                              [](const std::string&) {});
  fs::remove(path);  // listed when the job was compiled, gone when it runs
  job->execution().Start();
  EXPECT_EQ(job->execution().Wait(), JobState::kFailed);
  EXPECT_NE(job->execution().failure_cause().find("cannot open input file '" + path +
                                                  "': No such file or directory"),
            std::string::npos)
      << job->execution().failure_cause();
}

TEST_F(InputSourcesTest, AMissingPathIsACompileError) {
  try {
    LocalJob::Create(LoadJobSpecString(FileJob((dir_ / "none-*.csv").string(), "csv"), "<string>"));
    FAIL() << "expected a compile error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("no file matches"), std::string::npos) << e.what();
  }
}

// A plain file sink whose file is one of the job's input files would truncate it when the job
// starts (tryout 33: `validate` said valid, `run` read 0 records and left the input empty). Refused
// at the source's `path`, naming the sink, however the two paths are spelled, and the input is
// untouched; an exactly-once sink (new part files only) or a sink file that does not exist yet
// is fine.
TEST_F(InputSourcesTest, AFileSinkWritingTheJobsOwnInputIsACompileError) {
  const std::string text = "1000,ann,1\n2000,bob,2\n";
  const std::string in = Write("in.csv", text);
  fs::create_directories(dir_ / "sub");
  fs::create_symlink(in, dir_ / "sub" / "link.csv");
  fs::create_hard_link(in, dir_ / "hard.csv");
  // FileJob reading `source_path`, plus a sink `out` of `sink` (a flow mapping) at `parallelism`.
  auto job_with_sink = [&](const std::string& source_path, const std::string& sink,
                           int parallelism) {
    std::string yaml = FileJob(source_path, "csv");
    yaml.insert(yaml.find("report:"), "  - id: out\n    type: sink\n    input: source\n" +
                                          std::string("    parallelism: ") +
                                          std::to_string(parallelism) + "\n    sink: " + sink +
                                          "\n");
    return yaml;
  };
  auto file_sink = [](const fs::path& path, const std::string& more = "") {
    return "{type: file, path: " + path.string() + more + "}";
  };
  auto first_error = [](const std::string& yaml) -> std::string {
    try {
      LocalJob::Create(LoadJobSpecString(yaml, "job.yaml"), [](const std::string&) {});
    } catch (const std::exception& e) {
      const std::string what = e.what();
      return what.substr(0, what.find('\n'));
    }
    return "";
  };
  const std::string tail =
      "): the sink would truncate the job's own input when it starts, or append to it; write the "
      "sink's output to another file";
  // The same path, another spelling of it, a symbolic link and a hard link to it.
  EXPECT_EQ(first_error(job_with_sink(in, file_sink(in), 1)),
            "job.yaml:9:13: error: operators[0].source.path: reads '" + in +
                "', which file sink 'out' writes (operators[4].sink.path '" + in + "', at 29:11" +
                tail);
  const std::string dotted = (dir_ / "sub" / ".." / "in.csv").string();
  EXPECT_NE(first_error(job_with_sink(in, file_sink(dotted), 1))
                .find("which file sink 'out' writes (operators[4].sink.path '" + dotted + "'"),
            std::string::npos);
  EXPECT_NE(first_error(job_with_sink((dir_ / "sub" / "link.csv").string(), file_sink(in), 1))
                .find("reads '" + (dir_ / "sub" / "link.csv").string() + "', which file sink"),
            std::string::npos);
  EXPECT_NE(first_error(job_with_sink(in, file_sink(dir_ / "hard.csv"), 1))
                .find("which file sink 'out' writes"),
            std::string::npos);
  // A directory source and a sink of parallelism 2, whose second file is in that directory.
  fs::create_directories(dir_ / "data");
  const std::string part = Write("data/a.csv", text);
  Write("data/out.1", text);
  EXPECT_NE(
      first_error(job_with_sink((dir_ / "data").string(), file_sink(dir_ / "data" / "out"), 2))
          .find("reads '" + (dir_ / "data" / "out.1").string() + "', which file sink 'out' writes"),
      std::string::npos);
  // Not refused: a sink file that does not exist yet; the same sink at parallelism 1 (it writes
  // data/out, not data/out.1); an exactly-once sink writing part files into the directory.
  EXPECT_EQ(first_error(job_with_sink(in, file_sink(dir_ / "new.jsonl"), 1)), "");
  EXPECT_EQ(first_error(job_with_sink(part, file_sink(dir_ / "data" / "out"), 1)), "");
  EXPECT_EQ(
      first_error(job_with_sink((dir_ / "data").string(),
                                file_sink(dir_ / "data", ", delivery-guarantee: exactly-once"), 1)),
      "");
  // Nothing was truncated.
  std::ifstream f(in, std::ios::binary);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(f), {}), text);
}

// `until` keeps a replay input open after its last line: five records arrive by 0.5 s into 1 s
// processing-time windows. Without `until` the input ends at 0.5 s and the open window never
// fires (pending processing-time timers are dropped at end of input); `until: 2500ms` keeps it
// open past 0.999 s, so [0s, 1s) fires with all 5. `until` before the last line is an error at
// the key.
TEST_F(InputSourcesTest, ReplayUntilKeepsTheInputOpenSoProcessingTimeWindowsFire) {
  std::string lines;
  for (int i = 1; i <= 5; ++i) {
    lines += "{\"split\": \"s\", \"at\": " + std::to_string(i * 100) +
             ", \"record\": {\"v\": " + std::to_string(i) + "}}\n";
  }
  const std::string path = Write("r.jsonl", lines);
  auto job = [&](const std::string& until) {
    return "name: until\n"
           "pipeline: {parallelism: 1, clock: virtual}\n"
           "operators:\n"
           "  - id: source\n"
           "    type: source\n"
           "    source:\n"
           "      type: replay\n"
           "      path: " +
           path +
           "\n"
           "      schema: {v: int64}\n" +
           until +
           "  - id: windows\n"
           "    type: window\n"
           "    input: source\n"
           "    window: {assigner: tumbling, time: processing, size: 1s, aggregate: [count]}\n"
           "  - id: fired\n"
           "    type: sink\n"
           "    input: windows\n"
           "    sink: {type: print}\n";
  };
  RunResult without = RunJob(LoadJobSpecString(job(""), "u.yaml"));
  EXPECT_EQ(without.state, JobState::kFinished) << without.cause;
  EXPECT_EQ(without.printed, "");
  RunResult with = RunJob(LoadJobSpecString(job("      until: 2500ms\n"), "u.yaml"));
  EXPECT_EQ(with.state, JobState::kFinished) << with.cause;
  EXPECT_EQ(with.printed, "{\"window_start\":0,\"window_end\":1000,\"count\":5}\n");
  try {
    LocalJob::Create(LoadJobSpecString(job("      until: 400ms\n"), "u.yaml"));
    FAIL() << "expected a compile error";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.substr(0, what.find('\n')),
              "u.yaml:10:14: error: operators[0].source.until: until (400 ms) is before the "
              "recording's last "
              "arrival at 500 ms in " +
                  path + "; the input cannot end before it");
  }
}

TEST(InputSourcesJobsTest, FourReadersOverEightFilesGiveTheSameWindowsAsOne) {
  const RunResult one = RunJob(LoadJobSpecFile("jobs/files_split_mode_p1.yaml"));
  const RunResult four = RunJob(LoadJobSpecFile("jobs/files_split_mode_p4.yaml"));
  ASSERT_EQ(one.state, JobState::kFinished) << one.cause;
  ASSERT_EQ(four.state, JobState::kFinished) << four.cause;
  EXPECT_EQ(FireLines(four.printed), FireLines(one.printed));
  EXPECT_EQ(FireLines(one.printed),
            ">>> FIRE window=[10s,11s) count=15\n>>> FIRE window=[11s,12s) count=18\n"
            ">>> FIRE window=[12s,13s) count=22\n>>> FIRE window=[13s,14s) count=18\n"
            ">>> FIRE window=[14s,15s) count=22\n>>> FIRE window=[15s,16s) count=18\n"
            ">>> FIRE window=[16s,17s) count=22\n>>> FIRE window=[17s,18s) count=18\n"
            ">>> FIRE window=[18s,19s) count=22\n>>> FIRE window=[19s,20s) count=18\n"
            ">>> FIRE window=[20s,21s) count=7\n");
}

TEST(InputSourcesJobsTest, SeededDatagenJobIsRepeatableAndLosesNothing) {
  const JobSpec spec = LoadJobSpecFile("jobs/datagen_out_of_order.yaml");
  const RunResult first = RunJob(spec);
  ASSERT_EQ(first.state, JobState::kFinished) << first.cause;
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(RunJob(spec).printed, first.printed);
  }
  ASSERT_TRUE(first.report);
  EXPECT_NE(first.report->find(", total=600"), std::string::npos) << *first.report;
}

TEST(InputSourcesJobsTest, ReplayFinishedInputDoesNotReleaseMaxWhileTheOtherIsIdle) {
  const RunResult r = RunJob(LoadJobSpecFile("jobs/replay_finished_and_idle.yaml"));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  EXPECT_NE(r.printed.find(">>> FIRE window=[3s,4s) count=7 watermark=MAX\n"), std::string::npos)
      << r.printed;
  EXPECT_EQ(r.report,
            ">>> replay-finished-and-idle: windows fired=3, records in windows=28, late "
            "records=0 (from b split: 0), total=28");
}

TEST(InputSourcesJobsTest, ReplaySplitBackBehindTheWatermarkIsLateAndHoldsItBack) {
  const RunResult r = RunJob(LoadJobSpecFile("jobs/replay_idle_returns_behind.yaml"));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  EXPECT_NE(r.printed.find(">>> FIRE window=[4s,5s) count=10 watermark=5.199s\n"),
            std::string::npos)
      << r.printed;
  EXPECT_EQ(r.report,
            ">>> replay-idle-returns-behind: windows fired=7, records in windows=64, late "
            "records=3 (from b split: 3), total=67");
}

TEST(InputSourcesJobsTest, ReplayEveryInputIdleThenOneActiveAgain) {
  const RunResult r = RunJob(LoadJobSpecFile("jobs/replay_all_idle_then_one_active.yaml"));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  // All idle: the maximum over the idle splits (a's 1.999 s) goes out; then a alone drives it.
  EXPECT_EQ(r.printed,
            ">>> FIRE window=[0s,1s) count=5 watermark=0.999s\n"
            ">>> FIRE window=[1s,2s) count=16 watermark=1.999s\n"
            ">>> FIRE window=[2s,3s) count=6 watermark=2.999s\n"
            ">>> FIRE window=[3s,4s) count=6 watermark=MAX\n");
}

TEST(InputSourcesJobsTest,
     ReplaySlowSplitGoesIdleAtTheFirstCheckMoreThanTheTimeoutAfterItsLastQuietOne) {
  const RunResult r = RunJob(LoadJobSpecFile("jobs/slow_split_stops_idleness.yaml"));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  EXPECT_NE(r.printed.find(">>> FIRE window=[6s,7s) count=20 watermark=15.449s\n"),
            std::string::npos)
      << r.printed;
  const RunResult without = RunJob(LoadJobSpecFile("jobs/slow_split_stops_no_idleness.yaml"));
  EXPECT_NE(without.printed.find(">>> FIRE window=[6s,7s) count=20 watermark=MAX\n"),
            std::string::npos)
      << without.printed;
}

}  // namespace
}  // namespace tidemark
