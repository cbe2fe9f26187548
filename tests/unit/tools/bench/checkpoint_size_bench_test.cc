// The checkpoint-size bench (issue 45): its recording is the recipe its name spells, and on a
// small recording jobs/bench/rocksdb_incremental_checkpoint.yaml's second incremental checkpoint
// writes only what changed while the canonical one writes everything again. Not timed: the
// durations are only checked to have been taken.

#include "tools/bench/checkpoint_size_bench.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "tools/bench/bench_run.h"
#include "tools/engine/engine.h"

namespace tidemark::bench {
namespace {

namespace fs = std::filesystem;

class CheckpointSizeBenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tm_checkpoint_size_bench_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

TEST_F(CheckpointSizeBenchTest, FileNameIsTheRecipe) {
  const CheckpointRecordingSpec spec{.keys = 100000, .changed = 100, .interval_ms = 1000};
  EXPECT_EQ(CheckpointRecordingName(spec), "checkpoint-phases-k100000-c100-i1000.jsonl");
  auto parsed = ParseCheckpointRecordingName("a/b/checkpoint-phases-k100000-c100-i1000.jsonl");
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(*parsed, spec);
  EXPECT_FALSE(ParseCheckpointRecordingName("checkpoint-phases-k0-c1-i1000.jsonl").has_value());
  EXPECT_FALSE(ParseCheckpointRecordingName("checkpoint-phases-k10-c0-i1000.jsonl").has_value());
  EXPECT_FALSE(ParseCheckpointRecordingName("checkpoint-phases-k10-c11-i1000.jsonl").has_value());
  EXPECT_FALSE(ParseCheckpointRecordingName("checkpoint-phases-k10-c1-i1001.jsonl").has_value());
  EXPECT_FALSE(ParseCheckpointRecordingName("checkpoint-phases-k10-c1-i8.jsonl").has_value());
  EXPECT_FALSE(ParseCheckpointRecordingName("checkpoint-phases-k10-c1-i1000.json").has_value());
}

TEST_F(CheckpointSizeBenchTest, RecordingHasEveryKeyThenTheChangedOnes) {
  const std::string path =
      EnsureCheckpointRecording(dir_.string(), {.keys = 4, .changed = 2, .interval_ms = 100});
  EXPECT_EQ(path, (dir_ / "checkpoint-phases-k4-c2-i100.jsonl").string());
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(),
            "{\"split\":\"s\",\"at\":0,\"record\":{\"key\":0,\"ts\":1000}}\n"
            "{\"split\":\"s\",\"at\":0,\"record\":{\"key\":1,\"ts\":1000}}\n"
            "{\"split\":\"s\",\"at\":0,\"record\":{\"key\":2,\"ts\":1000}}\n"
            "{\"split\":\"s\",\"at\":0,\"record\":{\"key\":3,\"ts\":1000}}\n"
            "{\"split\":\"s\",\"at\":150,\"record\":{\"key\":0,\"ts\":1000}}\n"
            "{\"split\":\"s\",\"at\":150,\"record\":{\"key\":2,\"ts\":1000}}\n"
            "{\"at\":250}\n");
}

TEST_F(CheckpointSizeBenchTest, SecondIncrementalCheckpointWritesOnlyWhatChanged) {
  constexpr int64_t kKeys = 20000;
  JobSpec spec = LoadJobSpecFile("jobs/bench/rocksdb_incremental_checkpoint.yaml");
  const std::string data = EnsureCheckpointRecording(
      dir_.string(),
      {.keys = kKeys, .changed = 10, .interval_ms = spec.checkpointing->interval_ms});
  for (OperatorSpec& op : spec.operators) {
    if (op.type == "source") {
      op.source->replay.path = data;
    }
  }
  const CheckpointSizeRun full = RunCheckpointSizeJob(spec, SinkId(spec), false);
  const CheckpointSizeRun incr = RunCheckpointSizeJob(spec, SinkId(spec), true);
  ASSERT_EQ(full.failure, "");
  ASSERT_EQ(incr.failure, "");
  // One count per key, the same in both.
  EXPECT_EQ(full.sink_records, kKeys);
  EXPECT_EQ(incr.sink_records, kKeys);
  EXPECT_EQ(full.checksum, incr.checksum);
  // Checkpoints at 1 s and 2 s of virtual time, then the final one after the window fired.
  ASSERT_EQ(full.checkpoints.size(), 3u);
  ASSERT_EQ(incr.checkpoints.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(full.checkpoints[i].id, static_cast<int64_t>(i + 1));
    EXPECT_EQ(incr.checkpoints[i].id, static_cast<int64_t>(i + 1));
    EXPECT_GT(full.checkpoints[i].duration_ms, 0);
    EXPECT_GT(incr.checkpoints[i].duration_ms, 0);
    // Canonical: no shared files, everything written again; the source's and the windows' state
    // files and `_metadata`.
    EXPECT_EQ(full.checkpoints[i].shared_files, 0);
    EXPECT_EQ(full.checkpoints[i].written_bytes, full.checkpoints[i].state_bytes);
    EXPECT_EQ(full.checkpoints[i].files_written, 3);
    // Every byte of a checkpoint is new or an earlier checkpoint's shared file.
    EXPECT_EQ(incr.checkpoints[i].written_bytes + incr.checkpoints[i].shared_reused_bytes,
              incr.checkpoints[i].state_bytes);
  }
  // The full checkpoints 1 and 2 hold the same keys.
  EXPECT_EQ(full.checkpoints[0].state_bytes, full.checkpoints[1].state_bytes);
  // Incremental 1 uploads one SST file; 2 references it and uploads one with the 10 keys.
  const CheckpointSizeFigures& i1 = incr.checkpoints[0];
  const CheckpointSizeFigures& i2 = incr.checkpoints[1];
  EXPECT_EQ(i1.shared_files, 1);
  EXPECT_EQ(i1.shared_reused_bytes, 0u);
  EXPECT_EQ(i1.files_written, 4);
  EXPECT_EQ(i2.shared_files, 2);
  EXPECT_EQ(i2.files_written, 4);
  EXPECT_GT(i2.shared_reused_bytes, 0u);
  EXPECT_LT(i2.written_bytes * 10, i2.state_bytes)
      << "checkpoint 2 wrote " << i2.written_bytes << " of " << i2.state_bytes;
  EXPECT_LT(i2.written_bytes * 10, full.checkpoints[1].written_bytes);
  // After the window fired the windows hold nothing: the final checkpoint references no SST.
  EXPECT_EQ(incr.checkpoints[2].shared_files, 0);
}

}  // namespace
}  // namespace tidemark::bench
