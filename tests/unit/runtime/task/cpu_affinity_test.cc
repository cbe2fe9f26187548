#include "runtime/task/cpu_affinity.h"

#include <thread>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "runtime/graph/job_execution.h"
#include "runtime/graph/job_resources.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

using Cpus = std::vector<int>;

TEST(CpuAffinityTest, OneAllowedCpuPinsNothing) {
  EXPECT_EQ(PlaceTasksOnCpus({3}, {true, false, false}), (Cpus{-1, -1, -1}));
  EXPECT_EQ(PlaceTasksOnCpus({}, {true, false}), (Cpus{-1, -1}));
  EXPECT_EQ(PlaceTasksOnCpus({0, 1}, {}), Cpus{});
}

TEST(CpuAffinityTest, TwoCpusPutSourcesOnTheFirstAndTheRestOnTheSecond) {
  // The latency job: source | op1 | op2 -> sink.
  EXPECT_EQ(PlaceTasksOnCpus({0, 1}, {true, false, false}), (Cpus{0, 1, 1}));
  // The allowed set, not the machine's CPUs: taskset -c 2,5.
  EXPECT_EQ(PlaceTasksOnCpus({2, 5}, {true, false, false}), (Cpus{2, 5, 5}));
  // More sources than the rest still leave one CPU to the downstream tasks.
  EXPECT_EQ(PlaceTasksOnCpus({0, 1}, {true, true, true, false}), (Cpus{0, 0, 0, 1}));
  // Only sources, or none: spread over every allowed CPU.
  EXPECT_EQ(PlaceTasksOnCpus({0, 1}, {true, true, true}), (Cpus{0, 1, 0}));
  EXPECT_EQ(PlaceTasksOnCpus({0, 1}, {false, false, false}), (Cpus{0, 1, 0}));
}

TEST(CpuAffinityTest, FourCpusSplitByTheSourcesShare) {
  // 1 source of 3 tasks: k = round(4/3) = 1; the two downstream tasks on CPUs 1 and 2.
  EXPECT_EQ(PlaceTasksOnCpus({0, 1, 2, 3}, {true, false, false}), (Cpus{0, 1, 2}));
  // 2 sources of 4: k = 2.
  EXPECT_EQ(PlaceTasksOnCpus({0, 1, 2, 3}, {true, false, true, false}), (Cpus{0, 2, 1, 3}));
  // 1 source of 8: k = round(0.5) = 1 (halves up); 7 downstream tasks over CPUs 1..3.
  EXPECT_EQ(PlaceTasksOnCpus({0, 1, 2, 3}, {true, false, false, false, false, false, false, false}),
            (Cpus{0, 1, 2, 3, 1, 2, 3, 1}));
  // 7 sources of 8: k = round(3.5) = 4, kept at n - 1 = 3.
  EXPECT_EQ(PlaceTasksOnCpus({4, 5, 6, 7}, {true, true, true, true, true, true, true, false}),
            (Cpus{4, 5, 6, 4, 5, 6, 4, 7}));
}

using Shares = std::vector<bool>;
using Channels = std::vector<std::pair<size_t, size_t>>;

TEST(CpuAffinityTest, ATaskSharesItsCpuWithAConsumerPinnedBesideIt) {
  // The latency job on 2 CPUs: op1 (task 1) sends to op2 -> sink (task 2), both on CPU 1.
  EXPECT_EQ(TasksSharingCpuWithConsumer({0, 1, 1}, Channels{{0, 1}, {1, 2}}),
            (Shares{false, true, false}));
  // One consumer of several beside it is enough; a consumer that sends back does not count
  // for its producer's CPU unless it is on it too.
  EXPECT_EQ(TasksSharingCpuWithConsumer({0, 1, 0}, Channels{{0, 1}, {0, 2}, {2, 1}}),
            (Shares{true, false, false}));
  // Every task on its own CPU.
  EXPECT_EQ(TasksSharingCpuWithConsumer({0, 1, 2}, Channels{{0, 1}, {1, 2}}),
            (Shares{false, false, false}));
}

TEST(CpuAffinityTest, UnpinnedSelfAndOutOfRangeChannelsShareNothing) {
  // cpu-affinity: none (or one CPU): nothing pinned, so no one knows who shares a CPU.
  EXPECT_EQ(TasksSharingCpuWithConsumer({-1, -1, -1}, Channels{{0, 1}, {1, 2}}),
            (Shares{false, false, false}));
  EXPECT_EQ(TasksSharingCpuWithConsumer({1, 1}, Channels{{0, 0}, {1, 7}, {7, 1}}),
            (Shares{false, false}));
  EXPECT_EQ(TasksSharingCpuWithConsumer({}, Channels{{0, 1}}), Shares{});
}

TEST(CpuAffinityTest, PinnedThreadReadsItsCpuBack) {
  const Cpus allowed = AllowedCpus();
  ASSERT_FALSE(allowed.empty());
  const int cpu = allowed.back();
  std::string error = "not run";
  int read_back = -2;
  std::thread([&] {
    error = PinCurrentThread(cpu);
    read_back = CurrentThreadPinnedCpu();
  }).join();
  EXPECT_EQ(error, "");
  EXPECT_EQ(read_back, cpu);
  EXPECT_EQ(PinCurrentThread(-1), "CPU -1 is out of range");
}

std::string LatencyJob(const std::string& affinity) {
  return R"(
name: pin
pipeline: {clock: system, cpu-affinity: )" +
         affinity + R"(}
operators:
  - id: source
    type: source
    source: {type: generator, count: 2000, keys: 10}
  - id: op1
    type: map
    input: {from: source, partition: rebalance}
    map: {field: value, multiply: 2}
  - id: op2
    type: filter
    input: {from: op1, partition: rebalance}
    filter: {field: value, op: gt, value: 0}
  - id: sink
    type: sink
    input: op2
    sink: {type: checksum}
)";
}

/// Runs the job and returns the CPU each task's thread read back after pinning.
Cpus RunAndReadPins(const std::string& affinity, std::vector<std::string>* names) {
  JobResources resources;
  resources.SetLineWriter([](const std::string&) {});
  JobExecution exec(CompileJobGraph(LoadJobSpecString(LatencyJob(affinity), "pin.yaml"),
                                    BuiltinRegistry(), resources));
  exec.Start();
  EXPECT_EQ(exec.Wait(), JobState::kFinished);
  *names = exec.TaskNames();
  return exec.PinnedCpus();
}

TEST(CpuAffinityTest, AutoPinsEachTaskThreadByTheRule) {
  std::vector<std::string> names;
  const Cpus pinned = RunAndReadPins("auto", &names);
  EXPECT_EQ(names, (std::vector<std::string>{"source#0", "op1#0", "op2 -> sink#0"}));
  const Cpus allowed = AllowedCpus();
  if (allowed.size() >= 2) {
    EXPECT_EQ(pinned, (Cpus{allowed[0], allowed[1], allowed[1]}));
  } else {
    EXPECT_EQ(pinned, (Cpus{-1, -1, -1}));
  }
}

TEST(CpuAffinityTest, NoneLeavesThreadsToTheKernel) {
  std::vector<std::string> names;
  EXPECT_EQ(RunAndReadPins("none", &names), (Cpus{-1, -1, -1}));
}

}  // namespace
}  // namespace tidemark
