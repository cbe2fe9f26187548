// The realistic file bench (issue 17): the generated events file is deterministic, and the bench
// jobs jobs/bench/events_*.yaml, the hand-written file baseline and an independent reference
// (nlohmann-json + std::map) compute the same result on a small generated file. Not timed.

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/job_loader.h"
#include "runtime/core/checksum.h"
#include "sources/file_source.h"
#include "tools/bench/bench_run.h"
#include "tools/bench/events_data.h"
#include "tools/bench/file_baseline.h"
#include "tools/bench/file_bench.h"
#include "tools/engine/engine.h"

namespace tidemark::bench {
namespace {

namespace fs = std::filesystem;

class EventsBenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tm_events_bench_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  /// jobs/bench/<name>.yaml reading `data`, with `split-bytes` as `tidemark bench` sets it (with
  /// parallelism 2: 16 byte ranges, 8 per reader).
  static JobSpec LoadBenchJob(const std::string& name, const std::string& data) {
    JobSpec spec = LoadJobSpecFile("jobs/bench/" + name + ".yaml");
    for (OperatorSpec& op : spec.operators) {
      if (op.type == "source") {
        op.source->file.path = data;
        if (op.source->file.split_bytes > 0) {
          op.source->file.split_bytes =
              BenchSplitBytes(static_cast<int64_t>(fs::file_size(data)), spec.pipeline.parallelism);
        }
      }
    }
    return spec;
  }

  fs::path dir_;
};

TEST_F(EventsBenchTest, FileNameIsTheRecipe) {
  EventsFileSpec spec{.count = 2000000, .users = 100000, .jitter_ms = 2000, .seed = 1};
  EXPECT_EQ(EventsFileName(spec), "events-n2000000-u100000-j2000-s1.jsonl");
  auto parsed = ParseEventsFileName("some/dir/events-n2000000-u100000-j2000-s1.jsonl");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, spec);
  EXPECT_FALSE(ParseEventsFileName("events-n0-u10-j0-s1.jsonl").has_value());
  EXPECT_FALSE(ParseEventsFileName("events-n10-u0-j0-s1.jsonl").has_value());
  EXPECT_FALSE(ParseEventsFileName("events-n10-u10-j-1-s1.jsonl").has_value());
  EXPECT_FALSE(ParseEventsFileName("events-n10-u10-j0-s1.json").has_value());
  EXPECT_FALSE(ParseEventsFileName("data.jsonl").has_value());
}

// A ratio between a job and its baseline is paired run by run: a machine that runs at half speed
// for some runs moves both sides of those runs, not the ratio.
TEST(BenchFiguresTest, RatioIsPairedRunByRun) {
  // The machine is twice as slow for runs 3 and 4, and for run 5's job but not its baseline.
  // The medians give 5 / 20 = 0.25; four runs of five say 0.5.
  const std::vector<double> job{10, 10, 5, 5, 5};
  const std::vector<double> base{20, 20, 10, 10, 20};
  EXPECT_DOUBLE_EQ(Median(job) / Median(base), 0.25);
  EXPECT_DOUBLE_EQ(MedianPairedRatio(job, base), 0.5);
  // Odd and even counts: the middle ratio, or the mean of the middle two.
  EXPECT_DOUBLE_EQ(MedianPairedRatio({1, 3, 2}, {1, 1, 1}), 2.0);
  EXPECT_DOUBLE_EQ(MedianPairedRatio({1, 2, 3, 4}, {1, 1, 1, 1}), 2.5);
  // A zero denominator (a run too short to time) is left out; no pairs give 0.
  EXPECT_DOUBLE_EQ(MedianPairedRatio({4, 9, 6}, {2, 0, 3}), 2.0);
  EXPECT_DOUBLE_EQ(MedianPairedRatio({}, {}), 0.0);
  // Pairs only as far as the shorter vector.
  EXPECT_DOUBLE_EQ(MedianPairedRatio({3, 100}, {1}), 3.0);
}

TEST_F(EventsBenchTest, GeneratedFileIsDeterministic) {
  EventsFileSpec spec{.count = 1000, .users = 100000, .jitter_ms = 2000, .seed = 1};
  const std::string a = EnsureEventsFile((dir_ / "a").string(), spec);
  const std::string b = EnsureEventsFile((dir_ / "b").string(), spec);
  const std::string text = Slurp(a);
  EXPECT_EQ(text, Slurp(b));
  EXPECT_EQ(text.substr(0, text.find('\n')),
            R"({"user":"user_013600","ts":1767225601149,"amount":31,"page":"/page/2"})");
  std::istringstream lines(text);
  std::string line;
  int64_t n = 0;
  int64_t max_seen = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    const int64_t ts = j["ts"].get<int64_t>();
    // Line n is at kStartMs + n plus a jitter in [0, 2000]: never more than 2 s out of order.
    EXPECT_GE(ts, EventsFileSpec::kStartMs + n);
    EXPECT_LE(ts, EventsFileSpec::kStartMs + n + 2000);
    EXPECT_GE(ts, max_seen - 2000);
    max_seen = std::max(max_seen, ts);
    ++n;
  }
  EXPECT_EQ(n, 1000);
  // An existing file is kept as it is.
  std::ofstream(a, std::ios::trunc) << "x\n";
  EXPECT_EQ(Slurp(EnsureEventsFile((dir_ / "a").string(), spec)), "x\n");
  spec.seed = 2;
  EXPECT_NE(Slurp(EnsureEventsFile((dir_ / "b").string(), spec)), text);
}

TEST_F(EventsBenchTest, ScanJobBaselineAndReferenceAgree) {
  const EventsFileSpec spec{.count = 5000, .users = 300, .jitter_ms = 2000, .seed = 7};
  const std::string data = EnsureEventsFile(dir_.string(), spec);
  // Reference: every line, fields in schema order (user, ts, amount, page).
  uint64_t reference = 0;
  std::istringstream lines(Slurp(data));
  std::string line;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    reference +=
        RecordHash(FieldHash(0, Value(j["user"].get<std::string>())) +
                   FieldHash(1, j["ts"].get<int64_t>()) + FieldHash(2, j["amount"].get<int64_t>()) +
                   FieldHash(3, Value(j["page"].get<std::string>())));
  }
  for (const std::string name : {"events_scan", "events_scan_p2"}) {
    SCOPED_TRACE(name);
    const JobSpec job = LoadBenchJob(name, data);
    const FileBenchPlan plan = MakeFileBenchPlan(job);
    ASSERT_EQ(plan.unsupported, "");
    EXPECT_FALSE(plan.window.has_value());
    const FileBaselineResult base = RunFileBaseline(plan, data);
    EXPECT_EQ(base.records, 5000);
    EXPECT_EQ(base.errors, 0);
    EXPECT_EQ(base.sink_records, 5000);
    EXPECT_EQ(base.checksum, reference);
    const RunFigures run = RunJobOnce(job, SinkId(job), 5000, name, false);
    ASSERT_EQ(run.failure, "");
    EXPECT_EQ(run.sink_records, 5000);
    EXPECT_EQ(run.checksum, reference);
  }
}

TEST_F(EventsBenchTest, WindowedJobBaselineAndReferenceAgree) {
  const EventsFileSpec spec{.count = 12000, .users = 500, .jitter_ms = 2000, .seed = 7};
  const std::string data = EnsureEventsFile(dir_.string(), spec);
  // Reference: per (user, 10 s window) the count and the sum of amount (nothing is late: the
  // watermark trails the largest timestamp by 2 s + 1 ms and the jitter is at most 2 s).
  std::map<std::pair<std::string, int64_t>, std::pair<int64_t, int64_t>> windows;
  std::istringstream lines(Slurp(data));
  std::string line;
  int64_t total = 0;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    const int64_t ts = j["ts"].get<int64_t>();
    auto& w = windows[{j["user"].get<std::string>(), ts - ts % 10000}];
    ++w.first;
    w.second += j["amount"].get<int64_t>();
    ++total;
  }
  ASSERT_EQ(total, 12000);
  uint64_t reference = 0;
  for (const auto& [k, v] : windows) {
    reference +=
        RecordHash(FieldHash(0, Value(k.first)) + FieldHash(1, k.second) +
                   FieldHash(2, k.second + 10000) + FieldHash(3, v.first) + FieldHash(4, v.second));
  }
  // 12000 events over 12 s + 2 s of event time from a 10 s boundary on: windows [0, 10 s) and
  // [10 s, 20 s) of each of 500 users, so more than 500 and at most 1000 of them.
  EXPECT_GT(windows.size(), 500u);
  EXPECT_LE(windows.size(), 1000u);
  for (const std::string name : {"events_windowed", "events_windowed_p2"}) {
    SCOPED_TRACE(name);
    const JobSpec job = LoadBenchJob(name, data);
    const FileBenchPlan plan = MakeFileBenchPlan(job);
    ASSERT_EQ(plan.unsupported, "");
    ASSERT_TRUE(plan.window.has_value());
    EXPECT_EQ(plan.key_field, "user");
    const FileBaselineResult base = RunFileBaseline(plan, data);
    EXPECT_EQ(base.records, 12000);
    EXPECT_EQ(base.late, 0);
    EXPECT_EQ(base.sink_records, static_cast<int64_t>(windows.size()));
    EXPECT_EQ(base.checksum, reference);
    const RunFigures run = RunJobOnce(job, SinkId(job), 12000, name, false);
    ASSERT_EQ(run.failure, "");
    EXPECT_EQ(run.sink_records, static_cast<int64_t>(windows.size()));
    EXPECT_EQ(run.checksum, reference);
  }
}

TEST_F(EventsBenchTest, SplitBytesGiveAboutEightRangesPerReader) {
  EXPECT_EQ(BenchSplitBytes(160, 2), 10);
  EXPECT_EQ(BenchSplitBytes(161, 2), 11);
  EXPECT_EQ(BenchSplitBytes(5, 2), 1);
  EXPECT_EQ(BenchSplitBytes(240, 3), 10);
  // The windowed job at parallelism 2 on a small generated file: 16 ranges, 8 per reader.
  const EventsFileSpec spec{.count = 3000, .users = 50, .jitter_ms = 2000, .seed = 7};
  const JobSpec job = LoadBenchJob("events_windowed_p2", EnsureEventsFile(dir_.string(), spec));
  for (const OperatorSpec& op : job.operators) {
    if (op.type == "source") {
      EXPECT_EQ(FileSource(*op.source).CreateSplits().size(), 16u);
    }
  }
}

TEST_F(EventsBenchTest, PlanRefusesWhatTheBaselineDoesNotReproduce) {
  JobSpec job = LoadJobSpecFile("jobs/bench/events_windowed.yaml");
  for (OperatorSpec& op : job.operators) {
    if (op.type == "window") {
      op.window->assigner = "sliding";
      op.window->slide_ms = 5000;
    }
  }
  EXPECT_EQ(MakeFileBenchPlan(job).unsupported,
            "window 'windows' is not a tumbling event-time window keyed by one string field");
  EXPECT_EQ(MakeFileBenchPlan(LoadJobSpecFile("jobs/bench/chain2.yaml")).unsupported,
            "the source is not a JSON Lines file source");
}

}  // namespace
}  // namespace tidemark::bench
