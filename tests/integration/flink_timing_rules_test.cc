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

// Rule 2, `broadcast-watermarks: include`: the limits (broadcast) input has one record (ts 0,
// watermark -1 from 200 ms) and then nothing until it ends at 4 s; with 500 ms idleness its first
// quiet periodic check (400 ms) starts the countdown and the check at 1000 ms (600 > 500) marks it
// idle. Payments: ts 1000 at 100 ms, ts 1500 at 500 ms, ts 2500 at 1100 ms, watermark = max ts - 1
// every 200 ms (999 at 200, 1499 at 600, 2499 at 1200); they end at 3 s. An event-time timer at
// each payment's ts reports the watermark that fires it.
// - 1000 ms: limits goes IDLE; left out of the minimum, the operator's event time is payments'
//   1499 at once (recomputed on the status change): alice's 1000 fires at 1499;
// - 1200 ms: 2499 fires bob's 1500;
// - 3 s: payments end (a finished input leaves the minimum, design.md); limits is idle, so the
//   operator goes IDLE; 4 s: limits ends, MAX fires alice's 2500.
// Taking the minimum over both inputs whatever their status, every timer fired only at MAX.
TEST_F(FlinkTimingRulesTest, IdleBroadcastInputIsLeftOutOfTheMinimumWithInclude) {
  const std::string limits = ReplaySource(
      "limits", "{\"split\": \"l\", \"at\": 0, \"record\": {\"ts\": 0, \"max_amount\": 100}}\n",
      "4s", "{ts: timestamp, max_amount: int64}",
      "{max-out-of-orderness: 0ms, timestamp-field: ts, idleness: 500ms}");
  const std::string payments = ReplaySource(
      "payments",
      "{\"split\": \"p\", \"at\": 100, \"record\": {\"user\": \"alice\", \"ts\": 1000}}\n"
      "{\"split\": \"p\", \"at\": 500, \"record\": {\"user\": \"bob\", \"ts\": 1500}}\n"
      "{\"split\": \"p\", \"at\": 1100, \"record\": {\"user\": \"alice\", \"ts\": 2500}}\n",
      "3s", "{user: string, ts: timestamp}", "{max-out-of-orderness: 0ms, timestamp-field: ts}");
  EXPECT_EQ(Run("{parallelism: 1, clock: virtual, auto-watermark-interval: 200ms}",
                limits + payments +
                    "  - id: p\n"
                    "    type: process\n"
                    "    inputs:\n"
                    "      - {from: payments}\n"
                    "      - {from: limits, partition: broadcast}\n"
                    "    key-by: [user]\n"
                    "    broadcast-watermarks: include\n"
                    "    process:\n"
                    "      broadcast-state: {limit: 0}\n"
                    "      on-broadcast:\n"
                    "        set: {limit: \"max_amount\"}\n"
                    "      on-record:\n"
                    "        event-timer: \"ts\"\n"
                    "      on-timer:\n"
                    "        emit: [user, {at: timer}, watermark]\n"
                    "  - id: out\n"
                    "    type: sink\n"
                    "    input: p\n"
                    "    sink: {type: print}\n"),
            "{\"user\":\"alice\",\"at\":1000,\"watermark\":1499}\n"
            "{\"user\":\"bob\",\"at\":1500,\"watermark\":2499}\n"
            "{\"user\":\"alice\",\"at\":2500,\"watermark\":9223372036854775807}\n");
}

// Rule 3: sources `a` (periodic watermarks) and `b` (none) both have a record due at 0 ms and at
// 450 ms, into a union printed in arrival order. At every instant `a` acts first, then `b`, then
// the union reads its first input first: a0, b0, a1, b1. (Carried over from the previous instant
// the round started at 450 ms after `a`, whose periodic emission at 400 ms was the last task to
// act, so b1 came before a1.)
TEST_F(FlinkTimingRulesTest, SourcesActInJobOrderAtEveryInstant) {
  const std::string a = ReplaySource(
      "a",
      "{\"split\": \"a\", \"at\": 0, \"record\": {\"ts\": 0, \"src\": \"a0\"}}\n"
      "{\"split\": \"a\", \"at\": 450, \"record\": {\"ts\": 450, \"src\": \"a1\"}}\n",
      "1s", "{ts: timestamp, src: string}", "{max-out-of-orderness: 0ms, timestamp-field: ts}");
  const std::string b =
      ReplaySource("b",
                   "{\"split\": \"b\", \"at\": 0, \"record\": {\"ts\": 0, \"src\": \"b0\"}}\n"
                   "{\"split\": \"b\", \"at\": 450, \"record\": {\"ts\": 450, \"src\": \"b1\"}}\n",
                   "1s", "{ts: timestamp, src: string}", "{strategy: none}");
  EXPECT_EQ(Run("{parallelism: 1, clock: virtual, auto-watermark-interval: 200ms}",
                a + b +
                    "  - id: both\n"
                    "    type: union\n"
                    "    inputs: [a, b]\n"
                    "  - id: out\n"
                    "    type: sink\n"
                    "    input: both\n"
                    "    sink: {type: print}\n"),
            "{\"ts\":0,\"src\":\"a0\"}\n"
            "{\"ts\":0,\"src\":\"b0\"}\n"
            "{\"ts\":450,\"src\":\"a1\"}\n"
            "{\"ts\":450,\"src\":\"b1\"}\n");
}

}  // namespace
}  // namespace tidemark
