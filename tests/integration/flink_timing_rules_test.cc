// The three timing rules of issue 46, job by job on the virtual clock, with outputs derived from
// the rules (docs: "Three timing rules"):
// 1. a processing-time timer for T fires once processing time has passed T (Flink's
//    SystemProcessingTimeService#registerTimer, ProcessingTimeServiceUtil#getProcessingTimeDelay);
// 2. a keyed `process` with two inputs leaves an idle input out of the minimum and recomputes on
//    every status change (Flink's AbstractStreamOperator#processWatermarkStatus(status, index));
// 3. at one instant, tasks act in a fixed order: sources in job order, subtask 0 first, then the
//    others, each reading its channels from the first.

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

class FlinkTimingRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tidemark_timing_rules_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A replay source `id` reading `lines` (JSON Lines, written to the test's directory) until
  // `until`, with `watermarks` (a YAML flow map) unless empty: its YAML operator entry.
  std::string ReplaySource(const std::string& id, const std::string& lines,
                           const std::string& until, const std::string& schema,
                           const std::string& watermarks = "") {
    const fs::path path = dir_ / (id + ".jsonl");
    std::ofstream(path) << lines;
    std::string yaml = "  - id: " + id +
                       "\n    type: source\n    source: {type: replay, path: " + path.string() +
                       ", until: " + until + ", schema: " + schema + "}\n";
    if (!watermarks.empty()) {
      yaml += "    watermarks: " + watermarks + "\n";
    }
    return yaml;
  }

  // Runs the job `pipeline` (a YAML flow map) with `operators`; returns what its sinks printed.
  static std::string Run(const std::string& pipeline, const std::string& operators) {
    const std::string yaml = "name: t\npipeline: " + pipeline + "\noperators:\n" + operators;
    std::string out;
    auto job = LocalJob::Create(LoadJobSpecString(yaml, "t.yaml"),
                                [&out](const std::string& line) { out += line + "\n"; });
    job->execution().Start();
    EXPECT_EQ(job->execution().Wait(), JobState::kFinished) << job->execution().failure_cause();
    return out;
  }

  fs::path dir_;
};

// Rule 1, processing-time window: records arrive at 0 ms, 999 ms and 1998 ms. The window
// [0 s, 1 s) fires for its timer at 999 only at 1000 ms, after the record of 999 ms went into it:
// one firing with 2 records (with the timer firing at 999 it fired with 1 record, and then once
// more for the record of 999 ms). [1 s, 2 s) fires at 2000 ms with the record of 1998 ms.
TEST_F(FlinkTimingRulesTest, ProcessingTimeWindowFiresAfterItsLastMillisecond) {
  const std::string source =
      ReplaySource("source",
                   "{\"split\": \"s\", \"at\": 0, \"record\": {\"v\": 1}}\n"
                   "{\"split\": \"s\", \"at\": 999, \"record\": {\"v\": 2}}\n"
                   "{\"split\": \"s\", \"at\": 1998, \"record\": {\"v\": 4}}\n",
                   "3s", "{v: int64}");
  EXPECT_EQ(Run("{parallelism: 1, clock: virtual}",
                source + "  - id: w\n"
                         "    type: window\n"
                         "    input: source\n"
                         "    window:\n"
                         "      assigner: tumbling\n"
                         "      time: processing\n"
                         "      size: 1s\n"
                         "      aggregate: [count, {fn: sum, field: v}]\n"
                         "  - id: out\n"
                         "    type: sink\n"
                         "    input: w\n"
                         "    sink: {type: print}\n"),
            "{\"window_start\":0,\"window_end\":1000,\"count\":2,\"sum_v\":3}\n"
            "{\"window_start\":1000,\"window_end\":2000,\"count\":1,\"sum_v\":4}\n");
}

// Rule 1, keyed process: alice's first payment (at 0 ms) sets a processing-time timer for
// now + 300 = 300, her second (at 300 ms) one for 600. The timer for 300 fires at 301 ms, after
// the payment of 300 ms was counted (n = 2), and reads now = 301; the one for 600 at 601.
TEST_F(FlinkTimingRulesTest, KeyedProcessingTimerFiresAfterTheRecordsOfItsMillisecond) {
  const std::string source = ReplaySource(
      "source",
      "{\"split\": \"s\", \"at\": 0, \"record\": {\"user\": \"alice\", \"amount\": 1}}\n"
      "{\"split\": \"s\", \"at\": 300, \"record\": {\"user\": \"alice\", \"amount\": 2}}\n",
      "1s", "{user: string, amount: int64}");
  EXPECT_EQ(Run("{parallelism: 1, clock: virtual}",
                source + "  - id: p\n"
                         "    type: process\n"
                         "    input: source\n"
                         "    key-by: [user]\n"
                         "    process:\n"
                         "      state: {n: 0}\n"
                         "      on-record:\n"
                         "        set: {n: \"n + 1\"}\n"
                         "        processing-timer: \"now + 300\"\n"
                         "      on-timer:\n"
                         "        emit: [user, n, {at: timer}, {fired: now}]\n"
                         "  - id: out\n"
                         "    type: sink\n"
                         "    input: p\n"
                         "    sink: {type: print}\n"),
            "{\"user\":\"alice\",\"n\":2,\"at\":300,\"fired\":301}\n"
            "{\"user\":\"alice\",\"n\":2,\"at\":600,\"fired\":601}\n");
}

}  // namespace
}  // namespace tidemark
