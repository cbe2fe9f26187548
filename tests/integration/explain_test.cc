// `tidemark run --explain`: why a window's watermark stood where it did until end of input.

#include "tools/engine/explain.h"

#include <string>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

std::string ExplainJob(const std::string& path, const std::string& op = "") {
  auto job = LocalJob::Create(LoadJobSpecFile(path), [](const std::string&) {});
  job->execution().EnableWatermarkSnapshots();
  job->execution().Start();
  EXPECT_EQ(job->execution().Wait(), JobState::kFinished) << job->execution().failure_cause();
  return ExplainWatermarks(job->spec(), job->execution().WatermarkSnapshots(), op);
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ExplainTest, NamesTheStoppedSplitAndTheMissingIdleness) {
  const std::string text = ExplainJob("jobs/slow_split_stops_no_idleness.yaml");
  // The slow split's last record is its 50th, at 2970 ms: event time 7.450 s - 1 s - 1 ms.
  EXPECT_TRUE(Has(text, "windows#0: input watermark 6.449s")) << text;
  EXPECT_TRUE(Has(text,
                  "split slow: 6.449s, active, 50 records, the last before 3s <- holds the "
                  "minimum"))
      << text;
  EXPECT_TRUE(Has(text, "likely mistake: split slow stopped (no record after 3s")) << text;
  EXPECT_TRUE(Has(text, "no idleness is set on source 'source' (watermarks.idleness)")) << text;
  EXPECT_FALSE(Has(text, "set after the source")) << text;
}

TEST(ExplainTest, WithIdlenessTheStoppedSplitIsNoMistake) {
  const std::string text = ExplainJob("jobs/slow_split_stops_idleness.yaml");
  EXPECT_FALSE(Has(text, "likely mistake")) << text;
}

TEST(ExplainTest, NamesTheAssignerAfterTheSource) {
  const std::string text = ExplainJob("jobs/two_splits_operator.yaml");
  EXPECT_TRUE(Has(text, "'assign' (assign-timestamps-and-watermarks) generates this watermark"))
      << text;
  EXPECT_TRUE(Has(text,
                  "likely mistake: the watermark strategy is set after the source: 'assign' "
                  "follows source 'source'"))
      << text;
}

TEST(ExplainTest, FollowsTheHoldingChannelToItsUpstreamSubtask) {
  // The views subtask without splits holds the union at MIN (jobs/two_sources_p2.yaml).
  const std::string text = ExplainJob("jobs/two_sources_p2.yaml", "both");
  EXPECT_TRUE(Has(text, "from views#1: MIN (none yet), active <- holds the minimum")) << text;
  EXPECT_TRUE(Has(text, "source 'views'#1: MIN (none yet); it has no split")) << text;
}

TEST(ExplainTest, SaysTheWatermarkCameFromIdleAdvance) {
  // jobs/idle_advance.yaml: the tick at 8000 ms advanced to 5200 + 3850 - 501 = 8.549 s, above
  // both splits' own watermarks, just before a's last record and end of input.
  const std::string text = ExplainJob("jobs/idle_advance.yaml");
  EXPECT_TRUE(Has(text,
                  "8.549s came from idle-advance (2000 ms): no split has had a record for "
                  "that long"))
      << text;
  EXPECT_FALSE(Has(text, "likely mistake")) << text;  // idle-advance lets event time go on
  const std::string plain = ExplainJob("jobs/slow_split_stops_idleness.yaml");
  EXPECT_FALSE(Has(plain, "idle-advance")) << plain;
}

TEST(ExplainTest, UnknownOperator) {
  EXPECT_EQ(ExplainJob("jobs/two_splits_split.yaml", "nope"),
            "nope: no such operator in the job\n");
}

}  // namespace
}  // namespace tidemark
