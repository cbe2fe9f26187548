// `tidemark run` of a job with `checkpointing.dir` holds a lock on that directory for as long as
// its process lives (tools/tidemark/main.cc, LockCheckpointDirectory): a second run writing the
// same checkpoints cannot start beside it, stopped or running (a zombie that could commit again,
// docs/kafka.md), and the lock goes with the process, even after kill -9.
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/testing/daemon_harness.h"
#include "tests/testing/kafka_broker.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::ReadFile;

// Runs for about 1000 s unless stopped: 1000 records a second, checkpoints into `dir`/chk.
std::string SlowJob(const fs::path& dir) {
  return fmt::format(R"(name: run-lock
checkpointing:
  interval: 100ms
  dir: {}/chk
operators:
  - id: source
    type: source
    source: {{type: datagen, splits: 1, count: 1000000, rate: 1000, keys: 4, seed: 7}}
  - id: out
    type: sink
    input: source
    sink: {{type: print, format: json}}
)",
                     dir.string());
}

// Waits until `pid` holds the lock of `dir`/chk (its pid is in the lock file).
bool Holds(const fs::path& dir, pid_t pid) {
  return testing::Eventually(
      [&] {
        return ReadFile((dir / "chk" / "tidemark-run.lock").string()) == fmt::format("{}\n", pid);
      },
      30s);
}

TEST(CliRunLockTest, ASecondRunOfTheSameCheckpointDirectoryIsRefusedUntilTheFirstEnds) {
  testing::TempDir tmp;
  const fs::path dir(tmp.path());
  std::ofstream(dir / "job.yaml") << SlowJob(dir);
  const std::string job = (dir / "job.yaml").string();
  const pid_t first = testing::SpawnTidemark({"run", job}, dir / "out1", dir / "err1");
  ASSERT_TRUE(Holds(dir, first)) << ReadFile((dir / "err1").string());

  // Beside it, running and stopped: refused with exit 2, the directory and the holder named, and
  // nothing started (no output).
  for (const int sig : {0, SIGSTOP}) {
    if (sig != 0) {
      ASSERT_EQ(::kill(first, sig), 0);
    }
    const pid_t second = testing::SpawnTidemark(
        {"run", job, "--from-checkpoint", (dir / "chk").string()}, dir / "out2", dir / "err2");
    EXPECT_EQ(testing::WaitExit(second), 2);
    EXPECT_EQ(ReadFile((dir / "err2").string()),
              fmt::format("tidemark run: checkpoint directory '{}/chk' is in use by pid {}: "
                          "another run of a job checkpointing there (stopped or running); end it "
                          "first, or give this run another checkpointing.dir\n",
                          dir.string(), first));
    EXPECT_EQ(ReadFile((dir / "out2").string()), "");
  }

  // kill -9 releases it: the next run takes it over.
  ASSERT_EQ(::kill(first, SIGKILL), 0);
  EXPECT_EQ(testing::WaitExit(first), 128 + SIGKILL);
  const pid_t third = testing::SpawnTidemark({"run", job}, dir / "out3", dir / "err3");
  EXPECT_TRUE(Holds(dir, third)) << ReadFile((dir / "err3").string());
  // (It may not have its Ctrl-C handler yet: the lock is taken before the job is built.)
  ASSERT_EQ(::kill(third, SIGKILL), 0);
  EXPECT_EQ(testing::WaitExit(third), 128 + SIGKILL) << ReadFile((dir / "err3").string());
}

}  // namespace
}  // namespace tidemark
