// `tidemark run --trace`: the event-time flow of the two-split experiment (seeds/000), checked
// against the sequence derived from the job itself, not from a previous run:
// one reader alternates fast (10.000 s + 50 ms j) and slow (5.000 s + 50 ms j) records every 30 ms
// of processing time (record k at 30k ms, 200 of each), bounded out-of-orderness 1 s, periodic
// emission every 200 ms (timers at an instant run before the record of that instant).

#include "runtime/task/watermark_trace.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

std::vector<nlohmann::json> TraceOf(const std::string& path) {
  std::vector<std::string> lines;
  WatermarkTrace trace([&lines](const std::string& line) { lines.push_back(line); });
  auto job = LocalJob::Create(LoadJobSpecFile(path), [](const std::string&) {});
  job->execution().SetTrace(&trace);
  job->execution().Start();
  EXPECT_EQ(job->execution().Wait(), JobState::kFinished) << job->execution().failure_cause();
  std::vector<nlohmann::json> events;
  for (const std::string& l : lines) {
    events.push_back(nlohmann::json::parse(l));
  }
  return events;
}

using TimedWatermarks = std::vector<std::pair<int64_t, int64_t>>;  // (processing time, watermark)

// The source's last record (k = 399) comes at 11970 ms and its input ends with it: the last
// periodic emission is the one at 11800 ms, and MAX follows at 11970 ms.
constexpr int64_t kEndMs = 30 * 399;

/// The watermark of one split's generator at every periodic emission where it rose: the largest
/// timestamp among the records emitted before the tick, minus 1 s, minus 1 ms.
TimedWatermarks ExpectedSplit(int64_t start_ms, int first_record) {
  TimedWatermarks out;
  int64_t last = kMinTimestamp;
  for (int64_t t = 200; t <= kEndMs; t += 200) {
    int64_t max_ts = kMinTimestamp;
    for (int j = 0; j < 200; ++j) {
      const int k = 2 * j + first_record;  // the reader's k-th record, emitted at 30k ms
      if (30 * k < t) {
        max_ts = start_ms + 50 * j;
      }
    }
    if (max_ts != kMinTimestamp && max_ts - 1001 > last) {
      last = max_ts - 1001;
      out.emplace_back(t, last);
    }
  }
  return out;
}

TimedWatermarks Select(const std::vector<nlohmann::json>& events, const std::string& op,
                       const std::string& event, const std::string& split = "") {
  TimedWatermarks out;
  for (const auto& e : events) {
    if (e["operator"] == op && e["event"] == event && (split.empty() || e["split"] == split)) {
      out.emplace_back(e["time"].get<int64_t>(), e["watermark"].get<int64_t>());
    }
  }
  return out;
}

TEST(WatermarkTraceTest, SplitModeShowsEachSplitsWatermarkAndTheSourceTakesTheMinimum) {
  const auto events = TraceOf("jobs/two_splits_split.yaml");
  const TimedWatermarks fast = ExpectedSplit(10000, 0);
  const TimedWatermarks slow = ExpectedSplit(5000, 1);
  ASSERT_EQ(fast.front(), (std::pair<int64_t, int64_t>{200, 9149}));  // 10.150 s - 1 s - 1 ms
  ASSERT_EQ(slow.front(), (std::pair<int64_t, int64_t>{200, 4099}));  // 5.100 s - 1 s - 1 ms
  EXPECT_EQ(Select(events, "source", "split-watermark", "fast"), fast);
  EXPECT_EQ(Select(events, "source", "split-watermark", "slow"), slow);
  // The slow split is always the minimum: the source emits its watermarks, then MAX at the end.
  TimedWatermarks source = slow;
  source.emplace_back(kEndMs, kMaxTimestamp);
  EXPECT_EQ(Select(events, "source", "output-watermark"), source);
  // The window task's input follows the source's output, event for event.
  TimedWatermarks windows_in;
  for (const auto& e : events) {
    if (e["operator"] == "windows" && e["event"] == "input-watermark") {
      EXPECT_EQ(e["input"], 0);
      windows_in.emplace_back(e["time"].get<int64_t>(), e["watermark"].get<int64_t>());
    }
  }
  EXPECT_EQ(windows_in, source);
}

TEST(WatermarkTraceTest, OperatorModeShowsTheSingleGeneratorOfTheAssigner) {
  const auto events = TraceOf("jobs/two_splits_operator.yaml");
  // No per-split watermarks: the source has no strategy; its only watermark is the final MAX.
  EXPECT_TRUE(Select(events, "source", "split-watermark").empty());
  EXPECT_EQ(Select(events, "source", "output-watermark"),
            (TimedWatermarks{{kEndMs, kMaxTimestamp}}));
  // One generator over the interleaved records: the largest timestamp is always the fast one's.
  TimedWatermarks assign = ExpectedSplit(10000, 0);
  assign.emplace_back(kEndMs, kMaxTimestamp);
  EXPECT_EQ(Select(events, "assign", "output-watermark"), assign);
}

TEST(WatermarkTraceTest, IdlenessAndAlignmentAreTraced) {
  // Split b of jobs/replay_idle_returns_behind.yaml becomes idle at the 1600 ms check
  // (docs/semantics.md, "Idleness and alignment").
  const auto events = TraceOf("jobs/replay_idle_returns_behind.yaml");
  std::vector<std::pair<int64_t, std::string>> b_status;
  for (const auto& e : events) {
    if (e["event"] == "split-idle" || e["event"] == "split-active") {
      if (e["split"] == "b") {
        b_status.emplace_back(e["time"].get<int64_t>(), e["event"].get<std::string>());
      }
    }
  }
  ASSERT_FALSE(b_status.empty());
  EXPECT_EQ(b_status.front(), (std::pair<int64_t, std::string>{1600, "split-idle"}));
  const auto aligned = TraceOf("jobs/replay_alignment_ahead.yaml");
  int paused = 0;
  int resumed = 0;
  for (const auto& e : aligned) {
    paused += e["event"] == "split-paused" ? 1 : 0;
    resumed += e["event"] == "split-resumed" ? 1 : 0;
  }
  EXPECT_GE(paused, 1);
  EXPECT_EQ(paused, resumed);
}

TEST(WatermarkTraceTest, IdleAdvanceIsTraced) {
  // jobs/idle_advance.yaml: quiet from 1050 ms (max timestamp 2050, lag 501 ms); advancing from
  // the 3200 ms tick (t + 499) until a's record at 4150; again from the 6200 ms tick
  // (5200 + quiet - 501) until a's record at 8000.
  const auto events = TraceOf("jobs/idle_advance.yaml");
  std::vector<std::pair<int64_t, int64_t>> advanced;
  std::vector<int64_t> ends;
  for (const auto& e : events) {
    if (e["event"] == "idle-advance") {
      advanced.emplace_back(e["time"].get<int64_t>(), e["watermark"].get<int64_t>());
    } else if (e["event"] == "idle-advance-end") {
      ends.push_back(e["time"].get<int64_t>());
    }
  }
  std::vector<std::pair<int64_t, int64_t>> expected;
  for (int64_t t = 3200; t <= 4000; t += 200) {
    expected.emplace_back(t, t + 499);
  }
  for (int64_t t = 6200; t <= 8000; t += 200) {
    expected.emplace_back(t, 5200 + (t - 4150) - 501);
  }
  EXPECT_EQ(advanced, expected);
  EXPECT_EQ(ends, (std::vector<int64_t>{4200}));  // the second advance ends with the input
}

TEST(WatermarkTraceTest, IdleAdvanceMakesAnIdleSourceActive) {
  // jobs/idle_advance_with_idleness.yaml: idleness marks every split idle first; idle-advance
  // then moves the watermark on and the source is active while it does.
  const auto events = TraceOf("jobs/idle_advance_with_idleness.yaml");
  std::vector<std::pair<int64_t, std::string>> status;
  TimedWatermarks output;
  for (const auto& e : events) {
    if (e["operator"] != "source") {
      continue;
    }
    if (e["event"] == "output-status") {
      status.emplace_back(e["time"].get<int64_t>(), e["status"].get<std::string>());
    } else if (e["event"] == "output-watermark" && e["time"].get<int64_t>() <= 6200) {
      output.emplace_back(e["time"].get<int64_t>(), e["watermark"].get<int64_t>());
    }
  }
  EXPECT_EQ(status, (std::vector<std::pair<int64_t, std::string>>{
                        {2600, "IDLE"}, {3200, "ACTIVE"}, {5600, "IDLE"}, {6200, "ACTIVE"}}));
  EXPECT_EQ(output, (TimedWatermarks{{200, 549},
                                     {400, 649},
                                     {800, 1049},
                                     {1000, 1149},
                                     {2200, 1549},
                                     {3200, 3699},
                                     {3400, 3899},
                                     {3600, 4099},
                                     {3800, 4299},
                                     {4000, 4499},
                                     {5600, 4699},
                                     {6200, 6749}}));
}

TEST(WatermarkTraceTest, TheSameTraceOnEveryRun) {
  const auto first = TraceOf("jobs/two_sources_p2.yaml");
  for (int run = 0; run < 5; ++run) {
    ASSERT_EQ(TraceOf("jobs/two_sources_p2.yaml"), first) << "run " << run;
  }
}

}  // namespace
}  // namespace tidemark
