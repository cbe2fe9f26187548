// Issue 45: RocksDB instance directories a killed process left under `pipeline.rocksdb.localdir`
// are removed at the next job's start, but only those tidemark made (the marker) for a process
// that is gone; and a local directory that cannot hold instances fails the job once, naming the
// key and the path.
#include "runtime/state/rocksdb_local_dir.h"

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "runtime/core/non_recoverable_error.h"
#include "runtime/state/rocksdb_keyed_store.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

class RocksDbLocalDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("tidemark-localdir-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  /// An instance directory `name` with a marker holding `marker` (none when empty).
  fs::path Instance(const std::string& name, const std::string& marker) {
    const fs::path dir = root_ / name;
    fs::create_directories(dir);
    std::ofstream(dir / "CURRENT") << "MANIFEST-000001\n";
    if (!marker.empty()) {
      std::ofstream(dir / kRocksDbInstanceMarker) << marker;
    }
    return dir;
  }

  fs::path root_;
};

std::string Marker(int pid) {
  return RocksDbInstanceMarkerText(pid);
}

TEST_F(RocksDbLocalDirTest, RemovesOnlyMarkedDirectoriesOfDeadProcesses) {
  constexpr int kDead = 4000001;  // pids the fake liveness check calls dead
  constexpr int kLive = 4000002;
  const fs::path dead = Instance("tidemark-rocksdb-4000001-windows-0-0", Marker(kDead));
  const fs::path dead_other_op = Instance("tidemark-rocksdb-4000001-a-b-c-1-7", Marker(kDead));
  const fs::path live = Instance("tidemark-rocksdb-4000002-windows-0-1", Marker(kLive));
  const fs::path unmarked = Instance("tidemark-rocksdb-4000001-windows-0-2", "");
  const fs::path other_pid = Instance("tidemark-rocksdb-4000001-windows-0-3", Marker(kLive));
  const fs::path own =
      Instance("tidemark-rocksdb-" + std::to_string(::getpid()) + "-w-0-4", Marker(::getpid()));
  const fs::path not_ours = Instance("data-4000001", Marker(kDead));
  // Written for the same pid on another host or in another pid namespace (a shared directory).
  const fs::path elsewhere = Instance("tidemark-rocksdb-4000001-w-0-8",
                                      "tidemark rocksdb instance\npid 4000001\nhost elsewhere\n"
                                      "pidns pid:[1]\n");
  const fs::path bad_name = Instance("tidemark-rocksdb-x4000001-w-0-5", Marker(kDead));
  // A marker that is a directory, and a symlink named like an instance (to a marked directory).
  const fs::path marker_dir = root_ / "tidemark-rocksdb-4000001-w-0-6";
  fs::create_directories(marker_dir / kRocksDbInstanceMarker);
  const fs::path target = Instance("elsewhere", Marker(kDead));
  fs::create_directory_symlink(target, root_ / "tidemark-rocksdb-4000001-link-0-0");
  std::ofstream(root_ / "tidemark-rocksdb-4000001-file-0-0") << Marker(kDead);

  std::vector<int> asked;
  const std::vector<fs::path> removed = CollectDeadRocksDbInstanceDirs(root_, [&](pid_t pid) {
    asked.push_back(pid);
    return pid != kDead;
  });
  std::vector<fs::path> sorted = removed;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, (std::vector<fs::path>{dead_other_op, dead}));
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_FALSE(fs::exists(dead_other_op));
  for (const fs::path& kept :
       {live, unmarked, other_pid, own, not_ours, elsewhere, bad_name, marker_dir, target,
        root_ / "tidemark-rocksdb-4000001-link-0-0", root_ / "tidemark-rocksdb-4000001-file-0-0"}) {
    EXPECT_TRUE(fs::exists(fs::symlink_status(kept))) << kept;
  }
  EXPECT_TRUE(fs::exists(target / kRocksDbInstanceMarker));
  // Liveness is asked only for marked directories of another process: the two dead ones and live.
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(asked, (std::vector<int>{kDead, kDead, kLive}));
  // A missing root is nothing to collect.
  EXPECT_TRUE(
      CollectDeadRocksDbInstanceDirs(root_ / "missing", [](pid_t) { return false; }).empty());
}

TEST_F(RocksDbLocalDirTest, AStoreMarksItsDirectoryAndAKilledProcessesDirectoryIsCollected) {
  RocksDbSpec spec;
  spec.localdir = (root_ / "local").string();
  {
    RocksDbKeyedStore::Options options;
    options.dir = RocksDbKeyedStore::InstanceDir(spec, "windows", 0);
    options.memory_bytes = int64_t{1} << 20;
    RocksDbKeyedStore store(options);
    std::ifstream in(fs::path(options.dir) / kRocksDbInstanceMarker);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), Marker(::getpid()));
    // This process's own directory is never collected.
    EXPECT_TRUE(CollectDeadRocksDbInstanceDirs(spec.localdir, [](pid_t) { return false; }).empty());
    EXPECT_TRUE(fs::exists(options.dir));
  }
  // A child opens a store and is killed with SIGKILL: its close never runs.
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    RocksDbKeyedStore::Options options;
    options.dir = RocksDbKeyedStore::InstanceDir(spec, "windows", 0);
    options.memory_bytes = int64_t{1} << 20;
    auto* store = new RocksDbKeyedStore(options);  // never closed
    (void)store;
    ::raise(SIGKILL);
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  // Its instance directory (the name's last number is a process-wide counter the child
  // inherited) stayed behind.
  std::vector<fs::path> left;
  for (const auto& entry : fs::directory_iterator(spec.localdir)) {
    if (entry.path().filename().string().rfind(
            "tidemark-rocksdb-" + std::to_string(child) + "-windows-0-", 0) == 0) {
      left.push_back(entry.path());
    }
  }
  ASSERT_EQ(left.size(), 1u);
  ASSERT_TRUE(fs::exists(left[0] / "CURRENT"));  // a RocksDB database
  EXPECT_FALSE(ProcessIsAlive(child));
  EXPECT_TRUE(ProcessIsAlive(::getpid()));
  // The next job's start on this local directory removes it.
  EXPECT_EQ(PrepareRocksDbLocalDir(spec), fs::path(spec.localdir));
  EXPECT_FALSE(fs::exists(left[0]));
  EXPECT_TRUE(fs::is_empty(spec.localdir));
}

TEST_F(RocksDbLocalDirTest, ALocalDirThatCannotHoldInstancesFailsTheJobNamingKeyAndPath) {
  const fs::path file = root_ / "file";
  std::ofstream(file) << "x";
  auto error_of = [](const std::string& localdir) -> std::string {
    RocksDbSpec spec;
    spec.localdir = localdir;
    try {
      PrepareRocksDbLocalDir(spec);
    } catch (const NonRecoverableError& e) {
      return e.what();
    }
    return "<no error>";
  };
  EXPECT_EQ(error_of(file.string()),
            "pipeline.rocksdb.localdir (Flink's state.backend.rocksdb.localdir): '" +
                file.string() + "' exists and is not a directory; choose a writable directory");
  EXPECT_EQ(error_of((file / "sub").string()),
            "pipeline.rocksdb.localdir (Flink's state.backend.rocksdb.localdir): '" +
                (file / "sub").string() + "' cannot be created: " + file.string() +
                " exists and is not a directory; choose a writable directory");
  EXPECT_EQ(error_of("/proc/tidemark-rocksdb"),
            "pipeline.rocksdb.localdir (Flink's state.backend.rocksdb.localdir): "
            "'/proc/tidemark-rocksdb' is on the proc/sys pseudo file system (/proc); choose a "
            "writable directory");
  // A missing directory is made.
  EXPECT_EQ(error_of((root_ / "a" / "b").string()), "<no error>");
  EXPECT_TRUE(fs::is_directory(root_ / "a" / "b"));
}

}  // namespace
}  // namespace tidemark
