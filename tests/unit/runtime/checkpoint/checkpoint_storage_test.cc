// Checkpoint storage: state files with checksums, metadata last by rename, retention, and a
// corrupt or half-written checkpoint skipped for the previous one.
#include "runtime/checkpoint/checkpoint_storage.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "config/job_spec.h"

namespace tidemark {
namespace {

class CheckpointStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tm_ckpt_storage_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Complete(CheckpointStorage& s, int64_t id, const std::string& a, const std::string& b) {
    std::vector<StateFileHandle> h;
    h.push_back(s.WriteState(id, "windows", 0, a));
    h.push_back(s.WriteState(id, "windows", 1, b));
    s.Finalize(id, 1000 * id, h);
  }

  std::filesystem::path dir_;
};

TEST_F(CheckpointStorageTest, WritesAndLoadsTheLatestCompleteCheckpoint) {
  CheckpointStorage s(dir_, "job", 2);
  EXPECT_FALSE(s.LoadLatest().has_value());
  Complete(s, 1, "one-0", "one-1");
  Complete(s, 2, "two-0", std::string("\0two-1\xff", 7));
  std::optional<CompletedCheckpoint> cp = s.LoadLatest();
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->id, 2);
  EXPECT_EQ(cp->timestamp_ms, 2000);
  EXPECT_EQ(cp->job, "job");
  ASSERT_NE(cp->Find("windows", 1), nullptr);
  EXPECT_EQ(*cp->Find("windows", 0), "two-0");
  EXPECT_EQ(*cp->Find("windows", 1), std::string("\0two-1\xff", 7));
  EXPECT_EQ(cp->Find("windows", 2), nullptr);
  EXPECT_TRUE(std::filesystem::exists(dir_ / "chk-2" / "_metadata"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "chk-2" / "_metadata.inprogress"));
}

TEST_F(CheckpointStorageTest, RetainsNumRetainedAndDropsOlderUnfinishedOnes) {
  CheckpointStorage s(dir_, "job", 2);
  Complete(s, 1, "a", "b");
  s.WriteState(2, "windows", 0, "never finished");
  Complete(s, 3, "a", "b");
  Complete(s, 4, "a", "b");
  EXPECT_EQ(s.CompletedIds(), (std::vector<int64_t>{3, 4}));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "chk-1"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "chk-2"));
}

TEST_F(CheckpointStorageTest, AHalfWrittenCheckpointIsSkippedForThePreviousOne) {
  CheckpointStorage s(dir_, "job", 3);
  Complete(s, 1, "good-0", "good-1");
  // Checkpoint 2 crashed before its metadata rename.
  s.WriteState(2, "windows", 0, "partial");
  std::ofstream(dir_ / "chk-2" / "_metadata.inprogress") << "{\"trunc";
  std::vector<std::string> skipped;
  std::optional<CompletedCheckpoint> cp = s.LoadLatest(&skipped);
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->id, 1);
  EXPECT_EQ(*cp->Find("windows", 0), "good-0");
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0],
            "skipping checkpoint " + (dir_ / "chk-2").string() + ": no _metadata (not completed)");
}

TEST_F(CheckpointStorageTest, ACorruptStateFileIsDetectedAndSkipped) {
  CheckpointStorage s(dir_, "job", 3);
  Complete(s, 1, "good-0", "good-1");
  Complete(s, 2, "newer-0", "newer-1");
  // Flip one byte of a state file of checkpoint 2.
  std::filesystem::path victim;
  for (const auto& e : std::filesystem::directory_iterator(dir_ / "chk-2")) {
    if (e.path().extension() == ".state") {
      victim = e.path();
    }
  }
  ASSERT_FALSE(victim.empty());
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put('X');
  }
  std::vector<std::string> skipped;
  std::optional<CompletedCheckpoint> cp = s.LoadLatest(&skipped);
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->id, 1);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("fails its checksum"), std::string::npos) << skipped[0];
  // Truncated: a different message, same outcome.
  std::filesystem::resize_file(victim, 10);
  skipped.clear();
  EXPECT_EQ(s.LoadLatest(&skipped)->id, 1);
  EXPECT_NE(skipped[0].find("truncated"), std::string::npos) << skipped[0];
  // Garbage metadata.
  std::ofstream(dir_ / "chk-2" / "_metadata", std::ios::trunc) << "not json";
  skipped.clear();
  EXPECT_EQ(s.LoadLatest(&skipped)->id, 1);
  EXPECT_NE(skipped[0].find("not valid JSON"), std::string::npos) << skipped[0];
}

TEST_F(CheckpointStorageTest, AMetadataListingOneSubtaskTwiceIsRefused) {
  // A hand-edited `_metadata` whose second entry for subtask 0 points at the same file: restored,
  // a source's split would be read twice.
  CheckpointStorage s(dir_, "job", 3);
  Complete(s, 1, "good-0", "good-1");
  std::vector<StateFileHandle> h;
  h.push_back(s.WriteState(2, "windows", 0, "two-0"));
  h.push_back(h.back());
  s.Finalize(2, 2000, h);
  std::vector<std::string> skipped;
  std::optional<CompletedCheckpoint> cp = s.LoadLatest(&skipped);
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->id, 1);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0], "skipping checkpoint " + (dir_ / "chk-2").string() +
                            ": _metadata lists operator \"windows\" subtask 0 twice");
}

// A hand-edited `_metadata` without a key, or with a key of the wrong type, named nlohmann's
// exception ("[json.exception.out_of_range.403] key 'checkpoint_id' not found"): now the file
// and the key.
TEST_F(CheckpointStorageTest, AMetadataMissingAKeyNamesTheFileAndTheKey) {
  CheckpointStorage s(dir_, "job", 3);
  Complete(s, 1, "a", "b");
  const std::filesystem::path chk = dir_ / "chk-1";
  auto rewrite = [&](const std::string& text) {
    std::ofstream(chk / "_metadata", std::ios::trunc) << text;
  };
  auto error = [&]() -> std::string {
    try {
      CheckpointStorage::Load(chk.string(), "job");
    } catch (const std::exception& e) {
      return e.what();
    }
    return "<no error>";
  };
  const std::string prefix = "cannot restore from " + chk.string() + ": ";
  rewrite(R"({"version": 1, "job": "job", "timestamp_ms": 1, "states": []})");
  EXPECT_EQ(error(), prefix + "_metadata has no key \"checkpoint_id\"");
  rewrite(R"({"version": 1, "job": "job", "checkpoint_id": "one", "timestamp_ms": 1,
              "states": []})");
  EXPECT_EQ(error(), prefix + "_metadata key \"checkpoint_id\" is not an integer, got \"one\"");
  rewrite(R"({"version": 1, "job": "job", "checkpoint_id": 1, "timestamp_ms": 1,
              "states": [{"file": "x", "size": 1}]})");
  EXPECT_EQ(error(), prefix + "_metadata states[0] has no key \"xxh3\"");
  rewrite(R"({"job": "job"})");
  EXPECT_EQ(error(), prefix + "_metadata has no key \"version\"");
}

TEST_F(CheckpointStorageTest, ACheckpointOfAnotherJobIsNotRestored) {
  CheckpointStorage other(dir_, "other-job", 1);
  Complete(other, 7, "x", "y");
  CheckpointStorage s(dir_, "job", 1);
  std::vector<std::string> skipped;
  EXPECT_FALSE(s.LoadLatest(&skipped).has_value());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("written by job \"other-job\""), std::string::npos) << skipped[0];
}

// The rule both `tidemark run --from-checkpoint ROOT` and the daemon's recovery follow: falling
// back past a completed checkpoint that does not verify is refused when a sink commits at
// checkpoints (or when none verifies at all); otherwise it is allowed.
TEST_F(CheckpointStorageTest, AFallBackPastACompletedCheckpointIsUnsafeOnlyForCommittingSinks) {
  JobSpec spec;
  spec.name = "job";
  OperatorSpec sink;
  sink.id = "out";
  sink.type = "sink";
  sink.sink.emplace();
  sink.sink->type = "file";
  sink.sink->path = "parts";
  spec.operators.push_back(sink);
  CheckpointStorage s(dir_, "job", 3);
  Complete(s, 1, "a", "b");
  Complete(s, 2, "a", "b");
  const std::vector<std::string> skipped = {"skipping checkpoint 2: why"};
  // A plain file sink truncates back to what checkpoint 1 recorded: safe.
  EXPECT_EQ(CheckpointStorage::UnsafeFallBack(spec, dir_, 1, skipped), std::nullopt);
  spec.operators[0].sink->delivery_guarantee = "exactly-once";
  EXPECT_EQ(CheckpointStorage::UnsafeFallBack(spec, dir_, 1, skipped),
            "its newest completed checkpoint does not verify (skipping checkpoint 2: why), and "
            "sink 'out' commits at each checkpoint: restoring the older checkpoint " +
                (dir_ / "chk-1").string() + " would commit again what checkpoint 2 committed");
  // Nothing passed over (a checkpoint named by its own directory), or only checkpoints that
  // never completed: safe.
  EXPECT_EQ(CheckpointStorage::UnsafeFallBack(spec, dir_, 1, {}), std::nullopt);
  EXPECT_EQ(CheckpointStorage::UnsafeFallBack(spec, dir_, 2, skipped), std::nullopt);
  // None verifies: unsafe whatever the sinks.
  spec.operators[0].sink->delivery_guarantee = "none";
  EXPECT_EQ(CheckpointStorage::UnsafeFallBack(spec, dir_, 0, skipped),
            "no retained checkpoint of it verifies (skipping checkpoint 2: why), and starting it "
            "from scratch would write again what its sinks wrote for checkpoint 2");
  EXPECT_EQ(CheckpointStorage::UnsafeFallBack(spec, dir_ / "empty", 0, skipped), std::nullopt);
}

// `--from-savepoint FILE`: a file is not "no such directory"; the message says what it is and
// what to name instead.
TEST_F(CheckpointStorageTest, RestoringFromAFileSaysItIsAFile) {
  auto error = [&](const std::filesystem::path& from) -> std::string {
    try {
      CheckpointStorage::Load(from, "job");
    } catch (const std::exception& e) {
      return e.what();
    }
    return "<no error>";
  };
  EXPECT_EQ(error(dir_ / "nowhere"),
            "cannot restore from " + (dir_ / "nowhere").string() + ": no such directory");
  EXPECT_EQ(error(dir_ / "nowhere" / "chk-1"),
            "cannot restore from " + (dir_ / "nowhere" / "chk-1").string() + ": no such directory");
  CheckpointStorage s(dir_, "job", 1);
  Complete(s, 3, "a", "b");
  std::ofstream(dir_ / "savepoint.tar") << "not a directory";
  EXPECT_EQ(error(dir_ / "savepoint.tar"),
            "cannot restore from " + (dir_ / "savepoint.tar").string() +
                ": it is a file, not a directory: a checkpoint or savepoint is a directory (a "
                "checkpoint's chk-<id>, a savepoint's savepoint-<id>, or a checkpoint directory, "
                "whose newest checkpoint is taken)");
  EXPECT_EQ(error(dir_ / "chk-3" / "_metadata"),
            "cannot restore from " + (dir_ / "chk-3" / "_metadata").string() +
                ": it is the _metadata file of a checkpoint or savepoint; name its directory, " +
                (dir_ / "chk-3").string() + ", instead");
  EXPECT_EQ(CheckpointStorage::Load(dir_ / "chk-3", "job").id, 3);
  // A path through a file: nothing exists there.
  EXPECT_EQ(
      error(dir_ / "savepoint.tar" / "chk-1"),
      "cannot restore from " + (dir_ / "savepoint.tar" / "chk-1").string() + ": no such directory");
}

}  // namespace
}  // namespace tidemark
