// Replay regression for watermark alignment (jobs/replay_alignment_ahead.yaml): split b runs
// 10 min ahead of split a in one reader. With alignment, b is paused after the first report
// (1000 ms) and resumed by the announcement after a ended (4000 ms); without it, b's records
// interleave with a's. Either way the job ends; the virtual clock makes both runs exact.

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

struct AlignmentRun {
  JobState state = JobState::kCreated;
  std::string cause;
  std::string printed;
  std::vector<std::string> records;  // "split:ts" in arrival order at sink `records`
  std::optional<Timestamp> group_minimum;
};

AlignmentRun RunAlignmentJob(const JobSpec& spec) {
  AlignmentRun r;
  auto job = LocalJob::Create(spec, [&r](const std::string& line) { r.printed += line + "\n"; });
  job->execution().Start();
  // A hang is a failure, not a stuck test: the whole run takes milliseconds of wall time.
  if (!job->execution().WaitFor(std::chrono::seconds(60))) {
    job->execution().Cancel();
    job->execution().Wait();
    r.cause = "did not finish within 60 s (hang)";
    return r;
  }
  r.state = job->execution().Wait();
  r.cause = job->execution().failure_cause();
  if (auto sink = job->resources().FindSinkResult("records")) {
    for (const StreamRecord& rec : sink->Records()) {
      r.records.push_back(std::get<std::string>(rec.row.Get(1)) + ":" +
                          std::to_string(std::get<int64_t>(rec.row.Get(0))));
    }
  }
  r.group_minimum = job->execution().source_coordinator().GroupMinimum("g");
  return r;
}

size_t IndexOf(const std::vector<std::string>& v, const std::string& x) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == x) {
      return i;
    }
  }
  ADD_FAILURE() << "record " << x << " not found";
  return v.size();
}

TEST(ReplayAlignmentTest, SplitTenMinutesAheadIsPausedThenResumedWithoutHang) {
  const AlignmentRun r = RunAlignmentJob(LoadJobSpecFile("jobs/replay_alignment_ahead.yaml"));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  ASSERT_EQ(r.records.size(), 21u);
  // b read normally until the first announcement (its line at 600 ms came before a's at 600 ms)...
  EXPECT_LT(IndexOf(r.records, "b:601600"), IndexOf(r.records, "a:1600"));
  // ... then its lines at 1200, 1800 and 2400 ms waited until a had ended and b was resumed.
  EXPECT_EQ(r.records[18], "b:602200");
  EXPECT_EQ(r.records[19], "b:602800");
  EXPECT_EQ(r.records[20], "b:603400");
  EXPECT_EQ(r.records[17], "a:3800");
  // a alone drove event time while b was paused; b's resumed records are not late.
  EXPECT_EQ(r.printed,
            ">>> FIRE window=[1s,2s) count=5 watermark=1.999s\n"
            ">>> FIRE window=[2s,3s) count=5 watermark=2.999s\n"
            ">>> FIRE window=[3s,4s) count=5 watermark=601.599s\n"
            ">>> FIRE window=[601s,602s) count=3 watermark=MAX\n"
            ">>> FIRE window=[602s,603s) count=2 watermark=MAX\n"
            ">>> FIRE window=[603s,604s) count=1 watermark=MAX\n");
  // The finished subtask reported MAX: it holds nobody back.
  EXPECT_EQ(r.group_minimum, kMaxTimestamp);
}

TEST(ReplayAlignmentTest, WithoutAlignmentTheFastSplitIsNotHeldBack) {
  JobSpec spec = LoadJobSpecFile("jobs/replay_alignment_ahead.yaml");
  ASSERT_TRUE(spec.operators[0].watermarks);
  spec.operators[0].watermarks->alignment.reset();
  const AlignmentRun r = RunAlignmentJob(spec);
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  ASSERT_EQ(r.records.size(), 21u);
  // b's line at 1200 ms arrives with a's line of the same time, not after a's end.
  EXPECT_LT(IndexOf(r.records, "b:602200"), IndexOf(r.records, "a:2400"));
  EXPECT_FALSE(r.group_minimum.has_value());  // nobody took part in alignment
}

}  // namespace
}  // namespace tidemark
