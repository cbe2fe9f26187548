#pragma once

// Helpers for the kafka_broker tests (tests/kafka_broker/): a real Apache Kafka broker started by
// tools/dev/kafka-broker.sh (the ctest fixture `kafka_broker`, or a test's own), topics on it,
// offsets, and the built `tidemark` CLI as a child process. Test-only, single-threaded; failures
// are gtest failures.

#include <cstdint>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

namespace tidemark::testing {

/// The bootstrap address of the broker of this ctest run: the `bootstrap` file in the folder named
/// by the environment variable TM_KAFKA_BROKER_STATE (set by tests/CMakeLists.txt). Empty, with a
/// gtest failure, when there is none (the fixture `kafka_broker_start` did not run or failed).
std::string SharedKafkaBroker();

/// A topic name no earlier run on the same broker used: `base-<pid>-<counter>-<ns>`.
std::string UniqueTopic(const std::string& base);

/// Creates `topic` with `partitions` partitions (replication factor 1) through the admin API and
/// waits (<= 30 s) until every partition has a leader. gtest failure on an error.
void CreateTopic(const std::string& bootstrap, const std::string& topic, int partitions);

/// Deletes `topic` through the admin API (the controller's answer; the brokers' metadata follows
/// shortly after). gtest failure on an error.
void DeleteTopic(const std::string& bootstrap, const std::string& topic);

/// Produces `values` (value, CreateTime ms) into one partition and waits for the acknowledgements.
void Produce(const std::string& bootstrap, const std::string& topic, int32_t partition,
             const std::vector<std::pair<std::string, int64_t>>& values);

/// `count` records {"n": first + k, "p": partition, "ts": ts0 + k * step} into `partition`, with
/// CreateTime ts0 + k * step (ts0 > 0: librdkafka takes a timestamp of 0 for "now").
void ProduceSeries(const std::string& bootstrap, const std::string& topic, int32_t partition,
                   int first, int count, int64_t ts0, int64_t step);

/// High watermark (isolation "read_uncommitted") or last stable offset ("read_committed") of a
/// partition; -1 with a gtest failure when the broker does not answer within 10 s.
int64_t EndOffset(const std::string& bootstrap, const std::string& topic, int32_t partition,
                  const std::string& isolation_level);

/// The offset `group` committed for `topic`/`partition` (-1001 = none).
int64_t CommittedOffset(const std::string& bootstrap, const std::string& group,
                        const std::string& topic, int32_t partition);

/// A broker of the test's own (tools/dev/kafka-broker.sh with KAFKA_BROKER_STATE = a temporary
/// folder), for tests that stop it; stopped and removed by the destructor.
class PrivateKafkaBroker {
 public:
  PrivateKafkaBroker();
  ~PrivateKafkaBroker();
  PrivateKafkaBroker(const PrivateKafkaBroker&) = delete;
  PrivateKafkaBroker& operator=(const PrivateKafkaBroker&) = delete;

  const std::string& bootstrap() const { return bootstrap_; }
  /// Stops the broker's process (an outage: connections refused), keeping its data and ports.
  void Halt();
  /// Starts it again on the same data, ports and cluster id; returns once it answers.
  void Resume();

 private:
  int Script(const std::string& command) const;
  std::filesystem::path state_;
  std::string bootstrap_;
};

/// A job printing every record of a Kafka source with the value schema {n, p, ts} (the records
/// of ProduceSeries) as JSON. `source_extra`: more lines of the source block (6 spaces indented);
/// `top_extra`: top-level lines before `operators:` (e.g. a pipeline or checkpointing block).
std::string KafkaRecordsJob(const std::string& bootstrap, const std::string& source_extra,
                            const std::string& top_extra = "");

/// The exactly-once counting job of the sink's restore tests: 2 datagen splits x 40,000 records at
/// 20,000 records/s (about 2 s), 100 ms tumbling counts over 40 keys (800 results whatever the
/// machine's speed), an exactly-once Kafka sink to `topic` (transactional-id-prefix `topic`,
/// commit log `dir`/commits.jsonl), checkpoints every `interval` into `dir`/chk. `top_extra`:
/// top-level lines before `operators:` (e.g. a restart-strategy).
std::string ExactlyOnceCountsJob(const std::string& name, const std::string& bootstrap,
                                 const std::string& topic, const std::filesystem::path& dir,
                                 const std::string& interval = "100ms",
                                 const std::string& top_extra = "");

/// `tidemark ARGS...` (the built CLI) as a child process with stdout to `out` and stderr to `err`
/// (one file for both when they are equal), in this process's environment plus `env`
/// ("NAME=value" each).
pid_t SpawnTidemark(const std::vector<std::string>& args, const std::filesystem::path& out,
                    const std::filesystem::path& err, const std::vector<std::string>& env = {});

/// Waits for `pid`; its exit code, or 128 + the signal that killed it.
int WaitExit(pid_t pid);

/// Waits until the child `pid` stops (SIGSTOP; e.g. the Kafka sink's test stop,
/// KafkaSinkOperator::kStopAtTransactionEnvForTesting): true. False, with a gtest failure naming
/// how it ended, when it ended instead (it is then reaped: do not WaitExit it).
bool WaitStopped(pid_t pid);

/// Highest completed checkpoint id under `dir` (a chk-<id> with its _metadata), 0 if none.
int64_t LatestCheckpoint(const std::filesystem::path& dir);

}  // namespace tidemark::testing
