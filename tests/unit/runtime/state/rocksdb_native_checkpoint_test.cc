// Native, incremental checkpoints of a RocksDB keyed store (issue 45) written through the
// checkpoint storage: only new SST files are uploaded to shared/, later checkpoints reference
// them by name, num-retained deletes exactly the shared files no retained checkpoint references,
// a restore rebuilds the same keys, and a checkpoint whose shared file is missing is skipped.

#include "runtime/state/rocksdb_native_checkpoint.h"

#include <filesystem>
#include <rocksdb/db.h>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/checkpoint/checkpoint_storage.h"

namespace tidemark {
namespace {

const KeyGroupRange kAllGroups{0, 127};

class RocksDbNativeCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() /
            ("tm_rocks_native_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  static RocksDbKeyedStore::Options StoreOptions(const std::string& name) {
    RocksDbKeyedStore::Options o;
    o.dir = RocksDbKeyedStore::InstanceDir(RocksDbSpec{}, name, 0);
    return o;
  }

  // Checkpoint `id` of `store` through `storage`, as a task would write it.
  void Checkpoint(CheckpointStorage& storage, RocksDbNativeCheckpoint& native, int64_t id) {
    StateWriter w;
    IncrementalSnapshotTarget target;
    target.root = storage.dir();
    native.Snapshot(id, kAllGroups, target, w);
    std::vector<StateFileHandle> h;
    h.push_back(storage.WriteState(id, "op", 0, w.bytes(), {}, target.referenced));
    storage.Finalize(id, id, h);
  }

  std::set<std::string> SharedFiles() const {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(root_ / "shared")) {
      names.insert("shared/" + e.path().filename().string());
    }
    return names;
  }
  static std::set<std::string> Referenced(const CompletedCheckpoint& cp) {
    std::set<std::string> names;
    for (const SharedStateFile& f : cp.shared.at({"op", 0})) {
      names.insert(f.path);
    }
    return names;
  }

  std::filesystem::path root_;
};

void PutKeys(RocksDbKeyedStore& store, int cf, int from, int to, const std::string& value) {
  for (int i = from; i < to; ++i) {
    store.StagePut(cf, i % 128, "key-" + std::to_string(i), value);
  }
  store.Commit();
}

TEST_F(RocksDbNativeCheckpointTest, NumRetainedDeletesOnlyUnreferencedSharedFiles) {
  CheckpointStorage storage(root_, "job", 2);
  RocksDbKeyedStore store(StoreOptions("retention"));
  const int cf = store.ColumnFamily("s");
  RocksDbNativeCheckpoint native(store);

  PutKeys(store, cf, 0, 1000, std::string(100, 'a'));
  Checkpoint(storage, native, 1);  // one SST: A
  const std::set<std::string> a = Referenced(CheckpointStorage::Load(root_ / "chk-1", "job"));
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(SharedFiles(), a);

  PutKeys(store, cf, 0, 10, std::string(100, 'b'));
  Checkpoint(storage, native, 2);  // A again, by name, and B
  const std::set<std::string> ab = Referenced(CheckpointStorage::Load(root_ / "chk-2", "job"));
  ASSERT_EQ(ab.size(), 2u);
  EXPECT_TRUE(ab.count(*a.begin()) == 1);
  EXPECT_EQ(SharedFiles(), ab);

  // A full compaction merges A and B into C: checkpoint 3 references C only. Checkpoint 1 is
  // retired (2 retained), but A and B are still referenced by checkpoint 2: nothing shared goes.
  rocksdb::CompactRangeOptions compact;
  compact.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  ASSERT_TRUE(store.db()->CompactRange(compact, store.handle(cf), nullptr, nullptr).ok());
  Checkpoint(storage, native, 3);
  const std::set<std::string> c = Referenced(CheckpointStorage::Load(root_ / "chk-3", "job"));
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(ab.count(*c.begin()), 0u);
  EXPECT_EQ(storage.CompletedIds(), (std::vector<int64_t>{2, 3}));
  std::set<std::string> abc = ab;
  abc.insert(*c.begin());
  EXPECT_EQ(SharedFiles(), abc);

  // Checkpoint 4 (no change: C by name) retires checkpoint 2, the last to reference A and B.
  Checkpoint(storage, native, 4);
  EXPECT_EQ(Referenced(CheckpointStorage::Load(root_ / "chk-4", "job")), c);
  EXPECT_EQ(storage.CompletedIds(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(SharedFiles(), c);
}

TEST_F(RocksDbNativeCheckpointTest, RestoresTheSameKeysAndReferencesTheRestoredFiles) {
  CheckpointStorage storage(root_, "job", 1);
  {
    RocksDbKeyedStore store(StoreOptions("restore-a"));
    const int cf = store.ColumnFamily("s");
    RocksDbNativeCheckpoint native(store);
    PutKeys(store, cf, 0, 500, "v1");
    Checkpoint(storage, native, 1);
    PutKeys(store, cf, 250, 300, "v2");
    store.Delete(cf, 7, "key-7");
    Checkpoint(storage, native, 2);
    PutKeys(store, cf, 0, 500, "after the checkpoint");  // not in it
  }
  const CompletedCheckpoint cp = CheckpointStorage::Load(root_ / "chk-2", "job");
  StateReader r(*cp.Find("op", 0));
  RocksDbNativeCheckpoint::Restored restored =
      RocksDbNativeCheckpoint::Restore(r, root_, StoreOptions("restore-b"), kAllGroups, "op");
  RocksDbKeyedStore& store = *restored.store;
  const int cf = store.ColumnFamily("s");
  EXPECT_EQ(store.num_puts(cf), 499);
  int n = 0;
  store.ForEach(cf, [&](int group, std::string_view key, std::string_view value) {
    const int i = std::stoi(std::string(key.substr(4)));
    EXPECT_EQ(group, i % 128);
    EXPECT_EQ(value, i >= 250 && i < 300 ? "v2" : "v1") << key;
    EXPECT_NE(i, 7);
    ++n;
  });
  EXPECT_EQ(n, 499);
  // The restored files are referenced by name: a checkpoint with one change uploads one file.
  PutKeys(store, cf, 0, 1, "v3");
  Checkpoint(storage, *restored.checkpoint, 3);
  std::set<std::string> before = Referenced(cp);
  std::set<std::string> after = Referenced(CheckpointStorage::Load(root_ / "chk-3", "job"));
  EXPECT_EQ(after.size(), before.size() + 1);
  for (const std::string& f : before) {
    EXPECT_EQ(after.count(f), 1u) << f;
  }
  EXPECT_EQ(SharedFiles(), after);
}

TEST_F(RocksDbNativeCheckpointTest, AnotherKeyGroupRangeIsRefusedWithASavepointHint) {
  CheckpointStorage storage(root_, "job", 1);
  RocksDbKeyedStore store(StoreOptions("rescale"));
  PutKeys(store, store.ColumnFamily("s"), 0, 10, "v");
  RocksDbNativeCheckpoint native(store);
  Checkpoint(storage, native, 1);
  const CompletedCheckpoint cp = CheckpointStorage::Load(root_ / "chk-1", "job");
  StateReader r(*cp.Find("op", 0));
  try {
    (void)RocksDbNativeCheckpoint::Restore(r, root_, StoreOptions("rescale-b"),
                                           KeyGroupRange{0, 63}, "windows");
    FAIL() << "restored at another key-group range";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "operator \"windows\": its state is an incremental RocksDB checkpoint of key groups "
              "0..127, and this subtask owns key groups 0..63: an incremental checkpoint restores "
              "only at the parallelism it was taken at; to change the parallelism, restore from a "
              "savepoint (tidemark savepoint, or stop --savepoint), which is canonical and "
              "redistributable");
  }
}

TEST_F(RocksDbNativeCheckpointTest, ACheckpointWithAMissingSharedFileIsSkipped) {
  CheckpointStorage storage(root_, "job", 2);
  RocksDbKeyedStore store(StoreOptions("missing"));
  const int cf = store.ColumnFamily("s");
  RocksDbNativeCheckpoint native(store);
  PutKeys(store, cf, 0, 100, "v1");
  Checkpoint(storage, native, 1);
  PutKeys(store, cf, 0, 10, "v2");
  Checkpoint(storage, native, 2);
  // Checkpoint 2's own new file goes missing (a crash before it reached the disk, say).
  std::set<std::string> only2 = Referenced(CheckpointStorage::Load(root_ / "chk-2", "job"));
  for (const std::string& f : Referenced(CheckpointStorage::Load(root_ / "chk-1", "job"))) {
    only2.erase(f);
  }
  ASSERT_EQ(only2.size(), 1u);
  std::filesystem::remove(root_ / *only2.begin());
  std::vector<std::string> skipped;
  std::optional<CompletedCheckpoint> cp = storage.LoadLatest(&skipped);
  ASSERT_TRUE(cp.has_value());
  EXPECT_EQ(cp->id, 1);
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0], "skipping checkpoint " + (root_ / "chk-2").string() + ": shared file " +
                            *only2.begin() + " is missing");
}

// tester-repro 16: the uploaded SST files were 0644 under the usual umask while the
// checkpoint's other state files are 0600.
TEST_F(RocksDbNativeCheckpointTest, SharedFilesAreTheOwnersOnly) {
  const mode_t old_umask = ::umask(022);
  CheckpointStorage storage(root_, "job", 1);
  RocksDbKeyedStore store(StoreOptions("perms"));
  const int cf = store.ColumnFamily("s");
  RocksDbNativeCheckpoint native(store);
  PutKeys(store, cf, 0, 100, "v");
  Checkpoint(storage, native, 1);
  ::umask(old_umask);
  const std::set<std::string> shared = SharedFiles();
  ASSERT_EQ(shared.size(), 1u);
  EXPECT_EQ(std::filesystem::status(root_ / *shared.begin()).permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

}  // namespace
}  // namespace tidemark
