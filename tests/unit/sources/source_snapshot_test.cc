// Snapshot / restore of the sequence, generator, datagen and replay readers: for every number of
// records read before the snapshot, the restored reader continues exactly where the first
// stopped (tests/testing/source_round_trip.h).

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "sources/datagen_source.h"
#include "sources/generator_source.h"
#include "sources/replay_source.h"
#include "sources/sequence_source.h"
#include "tests/testing/source_round_trip.h"

namespace tidemark {
namespace {

using testing::ExpectSourceRoundTrips;

SequenceSplitSpec SeqSplit(const std::string& id, int64_t start, int64_t step, int64_t count,
                           int64_t v) {
  SequenceSplitSpec s;
  s.id = id;
  s.first_timestamp_ms = start;
  s.step_ms = step;
  s.count = count;
  s.fields = {{"v", ConfigValue{v}}};
  return s;
}

TEST(SourceSnapshotTest, SequenceSplitsKeepPositionAndRoundRobinOrder) {
  SourceSpec spec;
  spec.type = "sequence";
  // Uneven counts: splits finish at different points, the round-robin skips them.
  spec.splits = {SeqSplit("a", 0, 10, 5, 1), SeqSplit("b", 1000, 100, 2, 2),
                 SeqSplit("c", 500, 1, 4, 3)};
  spec.pacing_ms = 25;  // pacing restarts on restore: compared without processing times
  SequenceSource source(spec);
  const auto whole = ExpectSourceRoundTrips(source, /*with_times=*/false);
  ASSERT_EQ(whole.size(), 11u);
  EXPECT_EQ(whole[0], "rec a ts=0 {\"ts\":0,\"v\":1}");
  EXPECT_EQ(whole[1], "rec b ts=1000 {\"ts\":1000,\"v\":2}");
  EXPECT_EQ(whole[10], "rec a ts=40 {\"ts\":40,\"v\":1}");
}

TEST(SourceSnapshotTest, SequenceRestoreRejectsForeignOrCorruptSplits) {
  SourceSpec spec;
  spec.type = "sequence";
  spec.splits = {SeqSplit("a", 0, 10, 5, 1)};
  SequenceSource source(spec);
  StateWriter w;
  w.BeginSection("sequence-split", 1);
  w.WriteString("zzz");
  w.WriteI64(1);
  w.EndSection();
  StateReader r1(w.bytes());
  EXPECT_THROW(source.RestoreSplit(r1), StateCorrupt);
  StateReader r2(std::string_view(w.bytes()).substr(0, 6));
  EXPECT_THROW(source.RestoreSplit(r2), StateCorrupt);
}

TEST(SourceSnapshotTest, GeneratorContinuesItsIndexSpaceOnEverySubtask) {
  SourceSpec spec;
  spec.type = "generator";
  spec.count = 13;
  spec.keys = 5;
  spec.step_ms = 3;
  spec.watermark_every = 4;  // depends on the records emitted so far
  GeneratorSource source(spec);
  const auto whole = ExpectSourceRoundTrips(source, true, /*subtask=*/1, /*parallelism=*/3);
  EXPECT_EQ(whole.size(), 4u);  // records 1, 4, 7, 10
  ExpectSourceRoundTrips(source, true, 0, 1);
}

TEST(SourceSnapshotTest, DatagenSplitsKeepRandomStreamAndSchedule) {
  SourceSpec spec;
  spec.type = "datagen";
  spec.datagen.split_count = 3;
  spec.datagen.count = 6;
  spec.datagen.rate = 10;
  spec.datagen.key_count = 4;
  spec.datagen.disorder = "uniform";
  spec.datagen.max_out_of_orderness_ms = 300;
  spec.datagen.skew_ms = 7;
  spec.datagen.seed = 11;
  IdlePeriodSpec idle;
  idle.split = 1;
  idle.start_ms = 150;
  idle.end_ms = 900;
  spec.datagen.idle_periods = {idle};
  DatagenSource source(spec);
  // Processing times too: the schedule continues from the first reader's start.
  const auto whole = ExpectSourceRoundTrips(source, /*with_times=*/true);
  EXPECT_EQ(whole.size(), 18u);
  ExpectSourceRoundTrips(source, true, 1, 2);
}

TEST(SourceSnapshotTest, ReplaySplitsResumeAtTheirNextLine) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tidemark_replay_snapshot_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  std::ofstream(path) << R"({"split": "a", "at": 100, "record": {"ts": 5000, "v": 1}}
{"split": "b", "at": 150, "record": {"ts": 4000, "v": 2}}
{"split": "a", "at": 200, "idle": true}
{"split": "a", "at": 300, "active": true}
{"split": "b", "at": 300, "record": {"ts": 4100, "v": "bad"}}
{"split": "a", "at": 400, "record": {"ts": 5100, "v": 3}}
{"split": "b", "at": 450, "end": true}
{"at": 600}
{"split": "a", "at": 700, "record": {"ts": 5200, "v": 4}}
)";
  SourceSpec spec;
  spec.type = "replay";
  spec.replay.path = path;
  spec.replay.schema = {{"ts", "timestamp", {}}, {"v", "int64", {}}};
  ReplaySource source(spec);
  const auto whole = ExpectSourceRoundTrips(source, /*with_times=*/true);
  EXPECT_EQ(whole, (std::vector<std::string>{
                       "rec a @100 ts=5000 {\"ts\":5000,\"v\":1}",
                       "rec b @150 ts=4000 {\"ts\":4000,\"v\":2}",
                       "rec a @400 ts=5100 {\"ts\":5100,\"v\":3}",
                       "rec a @700 ts=5200 {\"ts\":5200,\"v\":4}",
                   }));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tidemark
