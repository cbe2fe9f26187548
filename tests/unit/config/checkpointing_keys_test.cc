// The `checkpointing:` and `restart-strategy:` blocks and `pipeline.state-backend` /
// `pipeline.rocksdb` (issue 45): Flink's leaf names and defaults, and file:line:column errors for
// every key that is unknown, misplaced or out of range.
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "config/rocksdb_local_dir_check.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

constexpr const char* kFile = "jobs/ckpt.yaml";

constexpr const char* kOperators = R"(operators:
  - id: src
    type: source
    source:
      type: sequence
      splits:
        - {id: a, start: 0ms, step: 1s, count: 3}
)";

JobSpec Load(const std::string& blocks) {
  return LoadJobSpecString("name: t\n" + blocks + kOperators, kFile);
}

std::string ErrorOf(const std::string& blocks) {
  try {
    Load(blocks);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

TEST(CheckpointingKeysTest, AbsentBlocksMeanNoCheckpointsAndNoRestarts) {
  JobSpec job = Load("");
  EXPECT_FALSE(job.checkpointing.has_value());
  EXPECT_FALSE(job.restart_strategy.has_value());
  EXPECT_EQ(EffectiveRestartStrategy(job).type, "none");
}

TEST(CheckpointingKeysTest, OnlyTheIntervalGivenTakesFlinksDefaults) {
  JobSpec job = Load("checkpointing:\n  interval: 100ms\n");
  ASSERT_TRUE(job.checkpointing.has_value());
  const CheckpointingSpec& c = *job.checkpointing;
  EXPECT_EQ(c.interval_ms, 100);
  EXPECT_EQ(c.mode, "exactly-once");
  EXPECT_EQ(c.timeout_ms, 600000);
  EXPECT_EQ(c.min_pause_ms, 0);
  EXPECT_EQ(c.max_concurrent_checkpoints, 1);
  EXPECT_EQ(c.tolerable_failed_checkpoints, 0);
  EXPECT_EQ(c.num_retained, 1);
  EXPECT_EQ(c.dir, "");
  EXPECT_EQ(c.location.line, 3);
  // Flink 1.19+: a checkpointing job without a restart strategy restarts with exponential delay.
  RestartStrategySpec r = EffectiveRestartStrategy(job);
  EXPECT_EQ(r.type, "exponential-delay");
  EXPECT_EQ(r.initial_backoff_ms, 1000);
  EXPECT_EQ(r.max_backoff_ms, 60000);
  EXPECT_DOUBLE_EQ(r.backoff_multiplier, 1.5);
  EXPECT_EQ(r.reset_backoff_threshold_ms, 3600000);
  EXPECT_DOUBLE_EQ(r.jitter_factor, 0.1);
}

TEST(CheckpointingKeysTest, EveryKeyIsRead) {
  JobSpec job = Load(R"(checkpointing:
  interval: 1s
  mode: at-least-once
  timeout: 30s
  min-pause: 250ms
  max-concurrent-checkpoints: 2
  tolerable-failed-checkpoints: 3
  num-retained: 4
  dir: ckpts/here
  restore-watermarks: true
restart-strategy:
  type: fixed-delay
  attempts: 5
  delay: 2s
)");
  const CheckpointingSpec& c = *job.checkpointing;
  EXPECT_EQ(c.interval_ms, 1000);
  EXPECT_EQ(c.mode, "at-least-once");
  EXPECT_EQ(c.timeout_ms, 30000);
  EXPECT_EQ(c.min_pause_ms, 250);
  EXPECT_EQ(c.max_concurrent_checkpoints, 2);
  EXPECT_EQ(c.tolerable_failed_checkpoints, 3);
  EXPECT_EQ(c.num_retained, 4);
  EXPECT_EQ(c.dir, "ckpts/here");
  EXPECT_EQ(c.key_locations.Of("dir", {}).line, 10);
  EXPECT_TRUE(c.restore_watermarks);
  EXPECT_FALSE(Load("checkpointing: {interval: 1s}\n").checkpointing->restore_watermarks);
  EXPECT_EQ(ErrorOf("checkpointing: {interval: 1s, restore-watermarks: yes please}\n")
                .rfind("jobs/ckpt.yaml:2:51: error: checkpointing.restore-watermarks:", 0),
            0u)
      << ErrorOf("checkpointing: {interval: 1s, restore-watermarks: yes please}\n");
  const RestartStrategySpec& r = *job.restart_strategy;
  EXPECT_EQ(r.type, "fixed-delay");
  EXPECT_EQ(r.attempts, 5);
  EXPECT_EQ(r.delay_ms, 2000);
  EXPECT_EQ(EffectiveRestartStrategy(job).type, "fixed-delay");
}

TEST(CheckpointingKeysTest, RestartStrategyDefaultsPerType) {
  RestartStrategySpec fixed = *Load("restart-strategy: {type: fixed-delay}\n").restart_strategy;
  EXPECT_EQ(fixed.attempts, 1);
  EXPECT_EQ(fixed.delay_ms, 1000);
  RestartStrategySpec rate = *Load("restart-strategy: {type: failure-rate}\n").restart_strategy;
  EXPECT_EQ(rate.max_failures_per_interval, 1);
  EXPECT_EQ(rate.failure_rate_interval_ms, 60000);
  EXPECT_EQ(rate.delay_ms, 1000);
  RestartStrategySpec exp = *Load(R"(restart-strategy:
  type: exponential-delay
  initial-backoff: 10ms
  max-backoff: 2s
  backoff-multiplier: 2
  reset-backoff-threshold: 5m
  jitter-factor: 0.25
)")
                                 .restart_strategy;
  EXPECT_EQ(exp.initial_backoff_ms, 10);
  EXPECT_EQ(exp.max_backoff_ms, 2000);
  EXPECT_DOUBLE_EQ(exp.backoff_multiplier, 2.0);
  EXPECT_EQ(exp.reset_backoff_threshold_ms, 300000);
  EXPECT_DOUBLE_EQ(exp.jitter_factor, 0.25);
  // An explicit `none` wins over the checkpointing default.
  JobSpec none = Load("checkpointing: {interval: 1s}\nrestart-strategy: {type: none}\n");
  EXPECT_EQ(EffectiveRestartStrategy(none).type, "none");
}

TEST(CheckpointingKeysTest, IncrementalIsFlinksBooleanAndOffByDefault) {
  EXPECT_FALSE(Load("checkpointing: {interval: 1s}\n").checkpointing->incremental);
  EXPECT_TRUE(
      Load("checkpointing: {interval: 1s, incremental: true}\n").checkpointing->incremental);
  EXPECT_EQ(ErrorOf("checkpointing: {interval: 1s, incremental: yes please}\n"),
            "jobs/ckpt.yaml:2:44: error: checkpointing.incremental: expected true or false, got "
            "\"yes please\"");
}

TEST(CheckpointingKeysTest, ErrorsNameFileLineColumnAndKey) {
  EXPECT_EQ(
      ErrorOf("checkpointing:\n  interval: 1s\n  intervall: 2s\n"),
      "jobs/ckpt.yaml:4:3: error: checkpointing.intervall: unknown key \"intervall\" (did you "
      "mean \"interval\"?); allowed keys: interval, mode, timeout, min-pause, "
      "max-concurrent-checkpoints, tolerable-failed-checkpoints, num-retained, dir, "
      "restore-watermarks, incremental");
  EXPECT_EQ(ErrorOf("checkpointing:\n  mode: exactly-once\n"),
            "jobs/ckpt.yaml:3:3: error: checkpointing.interval: missing required key");
  EXPECT_EQ(ErrorOf("checkpointing: {interval: 5ms}\n"),
            "jobs/ckpt.yaml:2:27: error: checkpointing.interval: must be at least 10ms, got 5ms");
  EXPECT_EQ(ErrorOf("checkpointing: {interval: 1s, mode: exactly_once}\n"),
            "jobs/ckpt.yaml:2:37: error: checkpointing.mode: unknown value \"exactly_once\" (did "
            "you mean \"exactly-once\"?); allowed: exactly-once | at-least-once");
  EXPECT_EQ(ErrorOf("checkpointing: {interval: 1s, num-retained: 0}\n"),
            "jobs/ckpt.yaml:2:45: error: checkpointing.num-retained: must be at least 1, got 0");
  EXPECT_EQ(ErrorOf("checkpointing: 100ms\n"),
            "jobs/ckpt.yaml:2:16: error: checkpointing: expected a mapping, got \"100ms\"");
  EXPECT_EQ(ErrorOf("restart-strategy: {type: fixed-delay, jitter-factor: 0.5}\n"),
            "jobs/ckpt.yaml:2:39: error: restart-strategy.jitter-factor: does not apply to restart "
            "strategy fixed-delay; allowed keys: type, attempts, delay");
  EXPECT_EQ(ErrorOf("restart-strategy: {type: exponential, delay: 1s}\n"),
            "jobs/ckpt.yaml:2:26: error: restart-strategy.type: unknown value \"exponential\"; "
            "allowed: none | fixed-delay | exponential-delay "
            "| failure-rate");
  EXPECT_EQ(ErrorOf("restart-strategy: {type: exponential-delay, jitter-factor: 1.5}\n"),
            "jobs/ckpt.yaml:2:60: error: restart-strategy.jitter-factor: must be between 0 and 1, "
            "got 1.5");
  EXPECT_EQ(ErrorOf("restart-strategy: {type: exponential-delay, backoff-multiplier: 0.5}\n"),
            "jobs/ckpt.yaml:2:65: error: restart-strategy.backoff-multiplier: must be at least 1 "
            "(and at most 1e6), got 0.5");
  EXPECT_EQ(ErrorOf("restart-strategy: {type: exponential-delay, initial-backoff: 2s, "
                    "max-backoff: 1s}\n"),
            "jobs/ckpt.yaml:2:79: error: restart-strategy.max-backoff: must be at least "
            "initial-backoff (2000ms), got 1000ms");
  EXPECT_EQ(ErrorOf("restart-strategy: {attempts: 3}\n"),
            "jobs/ckpt.yaml:2:19: error: restart-strategy.type: missing required key");
  EXPECT_EQ(ErrorOf("restart-strategy: {type: fixed-delay, delay: 3}\n"),
            "jobs/ckpt.yaml:2:46: error: restart-strategy.delay: expected a duration like \"5s\", "
            "got 3");
}

TEST(CheckpointingKeysTest, StateBackendIsHeapByDefaultAndRocksDbTakesFlinksDefaults) {
  EXPECT_EQ(Load("").pipeline.state_backend, "heap");
  // Flink's name for the heap backend (state.backend.type: hashmap).
  EXPECT_EQ(Load("pipeline: {state-backend: hashmap}\n").pipeline.state_backend, "heap");
  // Flink's value for timers on the heap, in either case.
  EXPECT_EQ(Load("pipeline:\n  state-backend: rocksdb\n  rocksdb: {timer-service.factory: HEAP}\n")
                .pipeline.state_backend,
            "rocksdb");
  EXPECT_EQ(Load("pipeline:\n  state-backend: rocksdb\n  rocksdb: {timer-service.factory: heap}\n")
                .pipeline.state_backend,
            "rocksdb");
  JobSpec rocks = Load("pipeline: {state-backend: rocksdb}\n");
  EXPECT_EQ(rocks.pipeline.state_backend, "rocksdb");
  EXPECT_EQ(rocks.pipeline.rocksdb.localdir, "");
  EXPECT_EQ(rocks.pipeline.rocksdb.memory_fixed_per_slot, int64_t{64} << 20);
  EXPECT_EQ(rocks.pipeline.rocksdb.write_buffer_ratio, 0.5);
  JobSpec job = Load(
      "pipeline:\n"
      "  state-backend: rocksdb\n"
      "  rocksdb:\n"
      "    localdir: /var/tmp/tm\n"
      "    memory.fixed-per-slot: 256mb\n"
      "    memory.write-buffer-ratio: 0.25\n");
  EXPECT_EQ(job.pipeline.rocksdb.localdir, "/var/tmp/tm");
  EXPECT_EQ(job.pipeline.rocksdb.memory_fixed_per_slot, int64_t{256} << 20);
  EXPECT_EQ(job.pipeline.rocksdb.write_buffer_ratio, 0.25);
  EXPECT_TRUE(job.pipeline.rocksdb.memory_managed);  // Flink's default
  const JobSpec unmanaged =
      Load("pipeline:\n  state-backend: rocksdb\n  rocksdb: {memory.managed: false}\n");
  EXPECT_FALSE(unmanaged.pipeline.rocksdb.memory_managed);
  EXPECT_EQ(unmanaged.pipeline.rocksdb.memory_fixed_per_slot, int64_t{64} << 20);
}

TEST(CheckpointingKeysTest, StateBackendErrorsNameFileLineColumnAndKey) {
  EXPECT_EQ(ErrorOf("pipeline: {state-backend: filesystem}\n"),
            "jobs/ckpt.yaml:2:27: error: pipeline.state-backend: unknown value \"filesystem\"; "
            "allowed: heap | hashmap | rocksdb");
  EXPECT_EQ(ErrorOf("pipeline:\n  state-backend: rocksdb\n"
                    "  rocksdb: {timer-service.factory: ROCKSDB}\n"),
            "jobs/ckpt.yaml:4:36: error: pipeline.rocksdb.timer-service.factory: timers are kept "
            "on the heap with either state backend (Flink's HEAP); timers in RocksDB are not "
            "supported, so write HEAP or leave the key out");
  EXPECT_EQ(ErrorOf("pipeline:\n  state-backend: rocksdb\n"
                    "  rocksdb: {timer-service.factory: [HEAP]}\n"),
            "jobs/ckpt.yaml:4:36: error: pipeline.rocksdb.timer-service.factory: expected HEAP "
            "(Flink's HEAP | ROCKSDB), got a list");
  EXPECT_EQ(ErrorOf("pipeline: {rocksdb: {localdir: /tmp}}\n"),
            "jobs/ckpt.yaml:2:12: error: pipeline.rocksdb: only with state-backend: rocksdb");
  EXPECT_EQ(
      ErrorOf("pipeline:\n  state-backend: rocksdb\n  rocksdb: {memory.fixed-per-slot: 512kb}\n"),
      "jobs/ckpt.yaml:4:36: error: pipeline.rocksdb.memory.fixed-per-slot: must be at least 1mb");
  // A bare number is bytes, as in Flink.
  EXPECT_EQ(
      ErrorOf("pipeline:\n  state-backend: rocksdb\n  rocksdb: {memory.fixed-per-slot: 64}\n"),
      "jobs/ckpt.yaml:4:36: error: pipeline.rocksdb.memory.fixed-per-slot: must be at least 1mb");
  // Flink's MemorySize knows no "mib": the message lists exactly the units it knows.
  EXPECT_EQ(
      ErrorOf("pipeline:\n  state-backend: rocksdb\n  rocksdb: {memory.fixed-per-slot: 64mib}\n"),
      "jobs/ckpt.yaml:4:36: error: pipeline.rocksdb.memory.fixed-per-slot: expected a memory size "
      "like \"128mb\" (a whole number of bytes, or one followed by a unit, in any case: b|bytes, "
      "k|kb|kibibytes, m|mb|mebibytes, g|gb|gibibytes, t|tb|tebibytes; 1024-based), got "
      "\"64mib\"");
  EXPECT_EQ(
      ErrorOf("pipeline:\n  state-backend: rocksdb\n  rocksdb: {memory.write-buffer-ratio: 1.5}\n"),
      "jobs/ckpt.yaml:4:40: error: pipeline.rocksdb.memory.write-buffer-ratio: must be between 0 "
      "and 1 (exclusive)");
  EXPECT_EQ(ErrorOf("pipeline:\n  state-backend: rocksdb\n  rocksdb: {memory.managd: true}\n"),
            "jobs/ckpt.yaml:4:13: error: pipeline.rocksdb.memory.managd: unknown key "
            "\"memory.managd\" (did you mean \"memory.managed\"?); allowed keys: localdir, "
            "memory.fixed-per-slot, memory.managed, memory.write-buffer-ratio, "
            "timer-service.factory");
  // #45: Flink's state.backend.rocksdb.memory.managed is a boolean.
  EXPECT_EQ(ErrorOf("pipeline:\n  state-backend: rocksdb\n  rocksdb: {memory.managed: yes}\n"),
            "jobs/ckpt.yaml:4:29: error: pipeline.rocksdb.memory.managed: expected true or false, "
            "got \"yes\"");
}

// tester-repro 02: `memory.fixed-per-slot: 1000000tb` was accepted. A budget above the machine's
// physical memory bounds nothing: an error at the value.
TEST(CheckpointingKeysTest, AFixedPerSlotAboveThePhysicalMemoryIsAnErrorAtItsValue) {
  const std::optional<int64_t> physical = PhysicalMemoryBytes();
  ASSERT_TRUE(physical.has_value());
  EXPECT_EQ(ErrorOf("pipeline:\n  state-backend: rocksdb\n  rocksdb: {memory.fixed-per-slot: "
                    "1000000tb}\n"),
            "jobs/ckpt.yaml:4:36: error: pipeline.rocksdb.memory.fixed-per-slot: must not exceed "
            "the machine's physical memory of " +
                std::to_string(*physical >> 20) +
                " MiB (a budget above it bounds nothing), got \"1000000tb\"");
  // The whole of the physical memory is still a budget (if a silly one).
  const JobSpec job =
      Load("pipeline:\n  state-backend: rocksdb\n  rocksdb: {memory.fixed-per-slot: " +
           std::to_string(*physical) + "b}\n");
  EXPECT_EQ(job.pipeline.rocksdb.memory_fixed_per_slot, *physical);
}

// Issue 45: a `localdir` that cannot hold RocksDB's instance directories failed only when a task
// opened its store, without the key's place in the file. An absolute path is judged when the job
// is loaded; a relative one means the running process's working directory and is judged there.
TEST(CheckpointingKeysTest, ALocalDirThatCannotHoldInstancesIsAnErrorAtItsValue) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tidemark-localdir-keys-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "file").string();
  std::ofstream(file) << "x";
  auto with_localdir = [](const std::string& localdir) {
    return "pipeline:\n  state-backend: rocksdb\n  rocksdb: {localdir: " + localdir + "}\n";
  };
  EXPECT_EQ(ErrorOf(with_localdir(file)),
            "jobs/ckpt.yaml:4:23: error: pipeline.rocksdb.localdir: '" + file +
                "' exists and is not a directory; RocksDB makes each subtask's instance "
                "directory in it, so choose a writable directory");
  EXPECT_EQ(ErrorOf(with_localdir(file + "/rocks")),
            "jobs/ckpt.yaml:4:23: error: pipeline.rocksdb.localdir: '" + file +
                "/rocks' cannot be created: " + file +
                " exists and is not a directory; RocksDB makes each subtask's instance "
                "directory in it, so choose a writable directory");
  EXPECT_EQ(ErrorOf(with_localdir("/proc/rocks")),
            "jobs/ckpt.yaml:4:23: error: pipeline.rocksdb.localdir: '/proc/rocks' is on the "
            "proc/sys pseudo file system (/proc); RocksDB makes each subtask's instance "
            "directory in it, so choose a writable directory");
  // A directory to be made, and a relative path (judged when the job starts), load.
  EXPECT_EQ(Load(with_localdir((dir / "new" / "rocks").string())).pipeline.rocksdb.localdir,
            (dir / "new" / "rocks").string());
  EXPECT_FALSE(std::filesystem::exists(dir / "new"));  // loading makes nothing
  EXPECT_EQ(Load(with_localdir("file/rocks")).pipeline.rocksdb.localdir, "file/rocks");
  std::filesystem::remove_all(dir);
}

// Tester 28/10 h05, h06: a path the kernel refuses (ENAMETOOLONG) is an error at its value, and
// the message shows the path abbreviated, not all of its 100 KB.
TEST(CheckpointingKeysTest, ALocalDirTooLongForTheSystemIsAnErrorAtItsValue) {
  auto with_localdir = [](const std::string& localdir) {
    return "pipeline:\n  state-backend: rocksdb\n  rocksdb: {localdir: " + localdir + "}\n";
  };
  const std::string huge = "/tmp/" + std::string(100000, 'd');
  EXPECT_EQ(ErrorOf(with_localdir(huge)),
            "jobs/ckpt.yaml:4:23: error: pipeline.rocksdb.localdir: '/tmp/" + std::string(75, 'd') +
                "...(100005 bytes)..." + std::string(80, 'd') +
                "' is 100005 bytes long, more than the system's limit of 4095 for a path; RocksDB "
                "makes each subtask's instance directory in it, so choose a writable directory");
  const std::string long_name = "/tmp/" + std::string(256, 'e') + "/rocks";
  EXPECT_EQ(ErrorOf(with_localdir(long_name)),
            "jobs/ckpt.yaml:4:23: error: pipeline.rocksdb.localdir: '" +
                AbbreviatedPath(long_name) +
                "' has a name of 256 bytes, more than the system's limit of 255; RocksDB makes "
                "each subtask's instance directory in it, so choose a writable directory");
}

// Tester 28/05 c13, c26, c27, c33: a relative localdir or checkpointing.dir naming a file, and an
// absolute checkpointing.dir that is a file or /dev/null, are errors at their values (`run` and
// `validate` judge relative paths from their working directory; the loader absolute ones).
TEST(CheckpointingKeysTest, DirectoriesThatAreFilesAreErrorsAtTheirValues) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("tidemark-workdir-keys-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "afile") << "x";
  EXPECT_EQ(ErrorOf("checkpointing: {interval: 1s, dir: /dev/null}\n"),
            "jobs/ckpt.yaml:2:36: error: checkpointing.dir: '/dev/null' exists and is not a "
            "directory; checkpoints are written into it, so choose a writable directory");
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const JobSpec spec = Load(
      "pipeline:\n  state-backend: rocksdb\n  rocksdb: {localdir: afile}\n"
      "checkpointing: {interval: 1s, dir: afile/ckpt}\n");
  const std::vector<Diagnostic> problems = WorkingDirectoryProblems(spec);
  std::filesystem::current_path(cwd);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].ToString(),
            "jobs/ckpt.yaml:4:23: error: pipeline.rocksdb.localdir: 'afile' exists and is not a "
            "directory; RocksDB makes each subtask's instance directory in it, so choose a "
            "writable directory");
  EXPECT_EQ(problems[1].ToString(),
            "jobs/ckpt.yaml:5:36: error: checkpointing.dir: 'afile/ckpt' cannot be created: " +
                (dir / "afile").string() +
                " exists and is not a directory; checkpoints are written into it, so choose a "
                "writable directory");
  // Elsewhere the same relative paths are fine (a daemon's worker judges them at the start).
  EXPECT_TRUE(WorkingDirectoryProblems(spec).empty());
  std::filesystem::remove_all(dir);
}

// Tester 28/10 h13, h16: YAML forbids NUL and the other C0 controls but tab, LF and CR (yaml-cpp
// turned "b\0ad" into "b\x07d"); a job name with a control character (an escape sequence) would
// act on every terminal that lists it.
TEST(CheckpointingKeysTest, ControlCharactersAreErrorsAtTheirPosition) {
  EXPECT_EQ(ErrorOf(std::string("pipeline: {parallelism: 1}\nx: b\0ad\n", 35)),
            "jobs/ckpt.yaml:3:5: error: YAML does not allow the control character \\x00 in a "
            "job file (only tab, line feed and carriage return); write it as an escape in a "
            "double-quoted string where a value needs it");
  try {
    LoadJobSpecString("name: \"a\\e[2Jb\"\n" + std::string(kOperators), kFile);
    ADD_FAILURE() << "loaded a name with an escape sequence";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "jobs/ckpt.yaml:1:7: error: name: a job name must not hold control characters; it "
              "holds \\x1b at byte 1");
  }
}

// Tester 28: a 10 MB job name loaded and was printed in full by validate, list and status. Names
// and ids up to 1024 bytes load; longer ones are errors that give the length, not the text.
TEST(CheckpointingKeysTest, JobNamesAndOperatorIdsAreAtMost1024Bytes) {
  const std::string ok(1024, 'n');
  EXPECT_EQ(LoadJobSpecString("name: " + ok + "\n" + std::string(kOperators), kFile).name, ok);
  try {
    LoadJobSpecString("name: " + std::string(10'000'000, 'n') + "\n" + std::string(kOperators),
                      kFile);
    ADD_FAILURE() << "loaded a 10 MB job name";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "jobs/ckpt.yaml:1:7: error: name: a job name is at most 1024 bytes; this one has "
              "10000000 bytes");
  }
  std::string ops(kOperators);
  ops.replace(ops.find("id: src"), 7, "id: " + std::string(1025, 'i'));
  try {
    LoadJobSpecString("name: t\n" + ops, kFile);
    ADD_FAILURE() << "loaded a 1025-byte operator id";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "jobs/ckpt.yaml:3:9: error: operators[0].id: an operator id is at most 1024 bytes; "
              "this one has 1025 bytes");
  }
  ops = kOperators;
  ops.replace(ops.find("id: src"), 7, "id: \"" + std::string(400, 'x') + "/\"");
  try {
    LoadJobSpecString("name: t\n" + ops, kFile);
    ADD_FAILURE() << "loaded an operator id with a slash";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "jobs/ckpt.yaml:3:9: error: operators[0].id: operator ids use letters, digits, '-', "
              "'_' and '.', got \"" +
                  std::string(80, 'x') + "...(401 bytes)..." + std::string(79, 'x') + "/\"");
  }
}

}  // namespace
}  // namespace tidemark
