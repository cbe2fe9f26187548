// The exactly-once file sink end to end through LocalJob (what `tidemark run` runs): without
// `checkpointing:` its part files are finished at end of input, nothing hidden is left, and the
// lines are exactly those the plain file sink writes for the same job.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <stdlib.h>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ReadLines(const fs::path& file) {
  std::ifstream in(file);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    lines.push_back(l);
  }
  return lines;
}

void RunJob(const std::string& yaml) {
  auto job = LocalJob::Create(LoadJobSpecString(yaml, "<string>"));
  job->execution().Start();
  ASSERT_EQ(job->execution().Wait(), JobState::kFinished) << job->execution().failure_cause();
}

class ExactlyOnceFileSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tm_eo_sink_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  /// The example job with `count` records per split, without its checkpointing block, writing
  /// to `root_/name` with the given delivery guarantee.
  std::string ExampleJob(int count, const std::string& name, bool exactly_once) const {
    std::ifstream in("jobs/exactly_once_file_sink.yaml");
    std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto replace = [&](const std::string& from, const std::string& to) {
      const size_t at = yaml.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos) {
        yaml.replace(at, from.size(), to);
      }
    };
    replace("checkpointing:\n  interval: 100ms\n", "");
    replace("count: 500000", "count: " + std::to_string(count));
    replace("path: out/exactly_once_file_sink", "path: " + (root_ / name).string());
    if (!exactly_once) {
      const size_t at = yaml.find("      delivery-guarantee: exactly-once");
      yaml.resize(at);  // the plain file sink: path, create-dirs
    }
    return yaml;
  }

  fs::path root_;
};

TEST_F(ExactlyOnceFileSinkTest, WithoutCheckpointingTheFilesAreFinishedAtEndOfInput) {
  // 4 splits x 5,000 records at 50,000/s: record k of a split has event time floor(k / 50) ms,
  // 0..99 ms, so every record falls in window [0 s, 1 s); 1,000 keys.
  ASSERT_NO_FATAL_FAILURE(RunJob(ExampleJob(5000, "eo", true)));
  ASSERT_NO_FATAL_FAILURE(RunJob(ExampleJob(5000, "plain.jsonl", false)));
  std::vector<std::string> eo;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(root_ / "eo")) {
    names.push_back(e.path().filename().string());
    const std::vector<std::string> lines = ReadLines(e.path());
    eo.insert(eo.end(), lines.begin(), lines.end());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    EXPECT_NE(n.front(), '.') << "in-progress file left: " << n;
  }
  // Parallelism 2: subtasks 0 and 1 each wrote part files part-<subtask>-<counter>.jsonl.
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "part-0-0.jsonl");
  EXPECT_TRUE(std::find(names.begin(), names.end(), "part-1-0.jsonl") != names.end());
  std::vector<std::string> plain = ReadLines(root_ / "plain.jsonl.0");
  const std::vector<std::string> plain1 = ReadLines(root_ / "plain.jsonl.1");
  plain.insert(plain.end(), plain1.begin(), plain1.end());
  std::sort(eo.begin(), eo.end());
  std::sort(plain.begin(), plain.end());
  EXPECT_EQ(eo.size(), 1000u);  // one window per key: every key is drawn among 20,000 records
  EXPECT_EQ(eo, plain);
  EXPECT_TRUE(std::adjacent_find(eo.begin(), eo.end()) == eo.end());
}

TEST_F(ExactlyOnceFileSinkTest, ExistingFilesAreNeverOverwritten) {
  ASSERT_NO_FATAL_FAILURE(RunJob(ExampleJob(500, "eo", true)));
  size_t first = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(root_ / "eo")) {
    ++first;
  }
  ASSERT_NO_FATAL_FAILURE(RunJob(ExampleJob(500, "eo", true)));
  size_t second = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(root_ / "eo")) {
    ++second;
  }
  EXPECT_EQ(second, 2 * first);
}

}  // namespace
}  // namespace tidemark
