// Incremental checkpoints of the window operator on the RocksDB state backend (issue 45,
// `checkpointing.incremental: true`): the second of two checkpoints with few changed keys writes
// under 10% of the full checkpoint's bytes, counted file by file in the checkpoint directory.
// (A restore from an incremental checkpoint: window_rocksdb_test.cc.)

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "tests/testing/window_operator_runner.h"

namespace tidemark {
namespace {

using Step = testing::WindowStep;

// A count per int64 key in tumbling windows of an hour, on RocksDB with a 64 MiB budget.
class Runner : public testing::WindowOperatorRunner {
 public:
  Runner()
      : WindowOperatorRunner(Schema({{"k", FieldType::kInt64}, {"v", FieldType::kInt64}}),
                             CountSpec(), "windows", "rocksdb", int64_t{64} << 20) {}

 private:
  static WindowSpec CountSpec() {
    WindowSpec spec;
    spec.assigner = "tumbling";
    spec.size_ms = 3'600'000;
    AggregateSpec count;
    count.function = "count";
    count.as = std::string(1, 'n');  // (not = "n": a false -Wrestrict of g++ 12, GCC PR 105329)
    spec.aggregates = {count};
    return spec;
  }
};

std::filesystem::path TestDir() {
  return std::filesystem::temp_directory_path() /
         ("tm_rocks_incr_" + std::to_string(::getpid()) + "_" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name());
}

// Every regular file under `root` with its size.
std::map<std::string, uint64_t> Files(const std::filesystem::path& root) {
  std::map<std::string, uint64_t> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) {
      files[std::filesystem::relative(e.path(), root).string()] = e.file_size();
    }
  }
  return files;
}

TEST(WindowRocksDbIncrementalTest, SecondCheckpointWithFewChangedKeysWritesUnderTenPercent) {
  const std::filesystem::path root = TestDir();
  std::filesystem::remove_all(root);
  CheckpointStorage storage(root, "job", 2);
  // One window of an hour: nothing fires. 20000 keys fit the cache until the first checkpoint
  // flushes it into RocksDB.
  constexpr int64_t kMany = 20000;
  Runner rocks;
  ASSERT_TRUE(rocks.op().uses_rocksdb());
  std::vector<Step> steps(1);
  for (int64_t i = 0; i < kMany; ++i) {
    steps[0].records.emplace_back(Row{Value(i), int64_t{i % 7}}, i % 1000);
  }
  rocks.Run(steps, 0, 1);
  rocks.Checkpoint(storage, 1);
  const std::map<std::string, uint64_t> after1 = Files(root);
  // Few changed keys: 10 of the 20000.
  steps.assign(1, Step{});
  for (int64_t i = 0; i < 10; ++i) {
    steps[0].records.emplace_back(Row{Value(i * 1000), int64_t{1}}, 5);
  }
  rocks.Run(steps, 0, 1);
  rocks.Checkpoint(storage, 2);
  const std::map<std::string, uint64_t> after2 = Files(root);

  // What each checkpoint wrote: every file new in the checkpoint directory (its state file, its
  // _metadata, the SST files it uploaded to shared/). Its full size: its state file, its
  // _metadata and every shared file it references.
  uint64_t written1 = 0;
  for (const auto& [file, size] : after1) {
    written1 += size;
  }
  uint64_t written2 = 0;
  for (const auto& [file, size] : after2) {
    if (after1.count(file) == 0) {
      written2 += size;
    }
  }
  const CompletedCheckpoint cp2 = CheckpointStorage::Load(root / "chk-2", "job");
  uint64_t own2 = 0;  // chk-2/: the state file (heap part and handle) and _metadata
  for (const auto& [file, size] : after2) {
    if (file.rfind("chk-2/", 0) == 0) {
      own2 += size;
    }
  }
  uint64_t full2 = own2;
  uint64_t new_shared2 = 0;
  const CompletedCheckpoint cp1 = CheckpointStorage::Load(root / "chk-1", "job");
  const std::vector<SharedStateFile>& shared1 = cp1.shared.at({"windows", 0});
  for (const SharedStateFile& f : cp2.shared.at({"windows", 0})) {
    full2 += f.size;
    EXPECT_EQ(after2.at(f.path), f.size);
    if (std::find(shared1.begin(), shared1.end(), f) == shared1.end()) {
      new_shared2 += f.size;
    }
  }
  // Exact accounting: the bytes that appeared on disk are checkpoint 2's own files and the
  // shared files only it references; the rest of its full size was written by checkpoint 1.
  EXPECT_EQ(written2, own2 + new_shared2);
  uint64_t full1 = 0;
  for (const auto& [file, size] : after1) {
    full1 += file.rfind("chk-1/", 0) == 0 ? size : 0;
  }
  for (const SharedStateFile& f : shared1) {
    full1 += f.size;
  }
  EXPECT_EQ(written1, full1);  // the first checkpoint wrote all it holds
  EXPECT_EQ(shared1.size(), 1u);
  EXPECT_EQ(cp2.shared.at({"windows", 0}).size(), 2u);
  EXPECT_LT(written2 * 10, full2) << "checkpoint 2 wrote " << written2 << " of " << full2;
  std::cout << "checkpoint 1 wrote " << written1 << " bytes; checkpoint 2 wrote " << written2
            << " bytes of its full " << full2 << " bytes\n";
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace tidemark
