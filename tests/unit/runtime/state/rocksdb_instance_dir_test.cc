// A RocksDB instance directory (tester-repro 13 and 16): it is the owner's only (0700), and it is
// removed when opening the instance fails, not left on a full local directory.

#include <filesystem>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/state/rocksdb_keyed_store.h"

namespace tidemark {
namespace {

std::string TestDir(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tm_rocks_instance_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(RocksDbInstanceDirTest, TheInstanceDirectoryIsTheOwnersOnly) {
  RocksDbKeyedStore::Options o;
  o.dir = TestDir("perms");
  {
    RocksDbKeyedStore store(o);
    EXPECT_EQ(std::filesystem::status(o.dir).permissions(), std::filesystem::perms::owner_all);
  }
  EXPECT_FALSE(std::filesystem::exists(o.dir));
}

TEST(RocksDbInstanceDirTest, AFailedOpenRemovesTheInstanceDirectory) {
  // Opening an existing instance where there is none fails (no CURRENT file) after the
  // directory was made, as an open on a full local directory does.
  RocksDbKeyedStore::Options o;
  o.dir = TestDir("failed_open");
  o.open_existing = true;
  std::filesystem::remove_all(o.dir);
  std::string error;
  try {
    RocksDbKeyedStore store(o);
  } catch (const Error& e) {
    error = e.what();
  }
  // The failure came from RocksDB, after the directory was made.
  EXPECT_EQ(error.rfind("rocksdb state backend: list column families in " + o.dir + ": ", 0), 0u)
      << error;
  EXPECT_FALSE(std::filesystem::exists(o.dir));
}

}  // namespace
}  // namespace tidemark
