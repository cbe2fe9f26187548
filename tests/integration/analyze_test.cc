// `tidemark analyze` against real runs: the bound it suggests, run, gives the late fraction it
// promised; its late-record predictions and state estimates match what the job measures.

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "tools/analyze/lateness_analysis.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

using analyze::AnalyzeOptions;
using analyze::SourceAnalysis;

/// Runs `spec` and returns the late records (dropped + side output) of window `window`, and its
/// stateBytesPeak through `peak`.
int64_t RunLate(const JobSpec& spec, const std::string& window, int64_t* peak = nullptr) {
  auto job = LocalJob::Create(spec, [](const std::string&) {});
  job->execution().Start();
  EXPECT_EQ(job->execution().Wait(), JobState::kFinished) << job->execution().failure_cause();
  int64_t late = 0;
  for (const auto& m : job->execution().Metrics()) {
    for (const auto& op : m.operators) {
      if (op.name != window) {
        continue;
      }
      for (const auto& [name, value] : op.gauges) {
        if (name == "numLateRecordsDropped" || name == "numLateRecordsSideOutput") {
          late += value;
        } else if (name == "stateBytesPeak" && peak != nullptr) {
          *peak = value;
        }
      }
    }
  }
  return late;
}

OperatorSpec& Op(JobSpec& spec, const std::string& id) {
  for (OperatorSpec& op : spec.operators) {
    if (op.id == id) {
      return op;
    }
  }
  ADD_FAILURE() << "no operator " << id;
  return spec.operators.front();
}

TEST(AnalyzeTest, TwoSplitExperimentSplitsAreInOrderAndMergedTrailsByFiveSeconds) {
  JobSpec spec = LoadJobSpecFile("jobs/two_splits_operator.yaml");
  const std::vector<SourceAnalysis> result = analyze::Analyze(spec, AnalyzeOptions{});
  ASSERT_EQ(result.size(), 1u);
  ASSERT_EQ(result[0].subtasks.size(), 1u);
  const analyze::SubtaskReport& r = result[0].subtasks[0];
  EXPECT_EQ(r.records, 400);
  ASSERT_EQ(r.splits.size(), 2u);
  for (const auto& split : r.splits) {
    EXPECT_EQ(split.lateness.count, 200) << split.id;
    EXPECT_EQ(split.lateness.max, 0) << split.id;  // each split is in order
  }
  // Fast record k (10 s + 50k ms) always comes just before slow record k (5 s + 50k ms).
  EXPECT_EQ(r.merged.p50, 0);
  EXPECT_EQ(r.merged.p99, 5000);
  EXPECT_EQ(r.merged.max, 5000);
  EXPECT_EQ(r.bound.at_source_ms, 0);        // per-split generators need no bound
  EXPECT_EQ(r.bound.after_source_ms, 5000);  // an assigner after the source needs 5 s ...
  EXPECT_EQ(r.bound.after_source_with_margin_ms, 5500);  // ... and 5.5 s with the margin
  // The job's own strategy (assigner, 1 s): the 197 late records of seed 000.
  ASSERT_EQ(result[0].late.size(), 1u);
  EXPECT_EQ(result[0].late[0].at, "windows");
  EXPECT_EQ(result[0].late[0].late, 197);
  EXPECT_EQ(RunLate(spec, "windows"), 197);

  // The suggested bounds, run in operator mode: nothing late.
  for (int64_t bound : {r.bound.after_source_ms, r.bound.after_source_with_margin_ms}) {
    Op(spec, "assign").watermarks->max_out_of_orderness_ms = bound;
    EXPECT_EQ(RunLate(spec, "windows"), 0) << bound;
  }
  // The bound is the smallest for which no record is behind the watermark; a window drops a
  // record only once its whole window is behind, so 1 s less already loses records there; the
  // analysis predicts the run's count.
  Op(spec, "assign").watermarks->max_out_of_orderness_ms = r.bound.after_source_ms - 1000;
  EXPECT_EQ(RunLate(spec, "windows"), 170);
  EXPECT_EQ(analyze::Analyze(spec, AnalyzeOptions{})[0].late[0].late, 170);
}

// A file of 20000 events, one per 10 ms of event time, each delayed by an exponential jitter
// (mean 300 ms, cut at 3 s) from a fixed LCG, 10 keys; read at 10 ms per record.
std::string WriteJitteredJob(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  {
    std::ofstream data(dir / "jittered.jsonl");
    uint64_t state = 7;
    for (int i = 0; i < 20000; ++i) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      const double u = static_cast<double>(state >> 11) / 9007199254740992.0;
      const int64_t delay =
          std::min<int64_t>(3000, static_cast<int64_t>(-300.0 * std::log(1.0 - u)));
      data << "{\"ts\": " << (1000000 + 10 * i - delay) << ", \"key\": " << i % 10 << "}\n";
    }
  }
  const std::filesystem::path job = dir / "jittered.yaml";
  std::ofstream(job) << R"(name: jittered
pipeline: {parallelism: 1, clock: virtual, auto-watermark-interval: 200ms}
operators:
  - id: source
    type: source
    source: {type: file, path: jittered.jsonl, format: jsonl, schema: {ts: timestamp, key: int64}, pacing: 10ms}
    watermarks: {strategy: bounded-out-of-orderness, max-out-of-orderness: 100ms, timestamp-field: ts}
  - id: windows
    type: window
    input: source
    key-by: [key]
    window: {assigner: tumbling, size: 20ms, late-output: late, aggregate: [count]}
  - {id: fired, type: sink, input: windows, sink: {type: collect}}
  - {id: late, type: sink, inputs: [{from: windows, side-output: late}], sink: {type: collect}}
)";
  return job.string();
}

TEST(AnalyzeTest, BoundSuggestedForOnePercentGivesOnePercentLateAndStateIsEstimatedWithinTwice) {
  const std::string path = WriteJitteredJob(std::filesystem::temp_directory_path() /
                                            ("tidemark_analyze_" + std::to_string(::getpid())));
  JobSpec spec = LoadJobSpecFile(path);
  AnalyzeOptions options;
  options.target_late = 0.01;
  std::vector<SourceAnalysis> result = analyze::Analyze(spec, options);
  ASSERT_EQ(result.size(), 1u);
  const analyze::SubtaskReport& r = result[0].subtasks[0];
  EXPECT_EQ(r.records, 20000);
  EXPECT_NEAR(r.bound.at_source_late, 0.01, 0.0005);
  EXPECT_GT(r.bound.at_source_ms, 900);  // exponential with mean 300 ms: P99 of the delay ~1.38 s

  Op(spec, "source").watermarks->max_out_of_orderness_ms = r.bound.at_source_ms;
  int64_t peak = 0;
  const int64_t late = RunLate(spec, "windows", &peak);
  const double fraction = static_cast<double>(late) / 20000.0;
  EXPECT_NEAR(fraction, 0.01, 0.003) << late << " late with bound " << r.bound.at_source_ms;

  // The state estimate for the job as run (with that bound), against its measured peak.
  result = analyze::Analyze(spec, options);
  ASSERT_EQ(result[0].state.size(), 1u);
  const int64_t estimate = result[0].state[0].estimate_bytes;
  ASSERT_GT(peak, 0);
  EXPECT_LE(estimate, 2 * peak) << estimate << " vs " << peak;
  EXPECT_GE(2 * estimate, peak) << estimate << " vs " << peak;
  // The predicted late records of the job's strategy are what the run counted.
  ASSERT_EQ(result[0].late.size(), 1u);
  EXPECT_EQ(result[0].late[0].late, late);
  std::filesystem::remove_all(std::filesystem::path(path).parent_path());
}

TEST(AnalyzeTest, AdaptiveBoundStaysNearItsTargetWhileAFixedOneDropsManyMore) {
  // Figures derived in the comments of jobs/lateness_grows_*.yaml.
  const JobSpec adaptive = LoadJobSpecFile("jobs/lateness_grows_adaptive.yaml");
  const JobSpec fixed = LoadJobSpecFile("jobs/lateness_grows_fixed.yaml");
  const int64_t adaptive_late = RunLate(adaptive, "windows");
  const int64_t fixed_late = RunLate(fixed, "windows");
  EXPECT_EQ(adaptive_late, 48);
  EXPECT_EQ(fixed_late, 650);
  const double target = 0.01 * 4000;  // percentile 99
  EXPECT_LE(static_cast<double>(adaptive_late), 2 * target);
  EXPECT_GE(static_cast<double>(adaptive_late), target / 2);
  EXPECT_GE(fixed_late, 10 * adaptive_late);
  // analyze predicts the adaptive strategy's count by replaying the file through it.
  const std::vector<SourceAnalysis> result = analyze::Analyze(adaptive, AnalyzeOptions{});
  ASSERT_EQ(result[0].late.size(), 1u);
  EXPECT_EQ(result[0].late[0].late, 48);
}

TEST(AnalyzeTest, BadOptionsAreReported) {
  EXPECT_EQ(analyze::ParseLateTarget("0.1%"), std::optional<double>(0.001));
  EXPECT_EQ(analyze::ParseLateTarget("1"), std::nullopt);
  EXPECT_EQ(analyze::ParseLateTarget("%"), std::nullopt);
  EXPECT_EQ(analyze::ParseLateTarget("100%"), std::nullopt);
  EXPECT_EQ(analyze::ParseLateTarget("-1%"), std::nullopt);
  EXPECT_EQ(analyze::ParseLateTarget("1x%"), std::nullopt);
  const JobSpec spec = LoadJobSpecFile("jobs/two_splits_split.yaml");
  AnalyzeOptions options;
  options.source_id = "nope";
  try {
    analyze::Analyze(spec, options);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "--source: no source operator 'nope' in the job (sources: source)");
  }
}

}  // namespace
}  // namespace tidemark
