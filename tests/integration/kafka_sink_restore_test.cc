// Exactly-once Kafka output across kill -9 (issue 13, Done-when "Restore"): this test process owns
// librdkafka's mock cluster; `tidemark run` of a paced job (datagen -> keyed tumbling count ->
// exactly-once Kafka sink, a checkpoint every 100 ms) runs as a child, is SIGKILLed after at least
// 3 completed checkpoints and a committed transaction, and is run again with --from-checkpoint.
// The committed output equals an uninterrupted run's, record for record, none twice.
//
// The mock writes no transaction markers (a read_committed consumer sees aborted records too;
// shared/notes/kafka-mock.md), so "committed output" is the records at the offsets the sink's
// commit log lists for its committed transactions; the test checks that those offsets are
// exactly the records each transaction sent (contiguous, counts equal).
#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/job_loader.h"
#include "runtime/io/kafka_client.h"
#include "tests/testing/daemon_harness.h"
#include "tests/testing/kafka_broker.h"
#include "tests/testing/kafka_read_back.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using testing::KafkaRecord;

constexpr int kPartitions = 2;

std::string Job(const std::string& bootstrap, const std::string& topic, const fs::path& dir) {
  return testing::ExactlyOnceCountsJob("kafka-sink-restore", bootstrap, topic, dir);
}

pid_t Spawn(const std::vector<std::string>& args, const fs::path& log) {
  return testing::SpawnTidemark(args, log, log);
}

using testing::LatestCheckpoint;
using testing::WaitExit;

std::vector<nlohmann::json> CommitLog(const fs::path& file) {
  return testing::CommittedLines(file);
}

/// The committed output: the records at the offsets of every committed transaction. Checks that
/// each transaction's offsets hold exactly its record count, and that no offset is listed twice.
std::vector<std::string> CommittedValues(const std::vector<KafkaRecord>& topic,
                                         const std::vector<nlohmann::json>& log) {
  std::map<std::pair<int32_t, int64_t>, const KafkaRecord*> by_offset;
  for (const KafkaRecord& r : topic) {
    by_offset[{r.partition, r.offset}] = &r;
  }
  std::vector<std::string> values;
  std::set<std::pair<int32_t, int64_t>> seen;
  for (const nlohmann::json& line : log) {
    int64_t total = 0;
    for (const auto& [p, range] : line["partitions"].items()) {
      const int32_t partition = std::stoi(p);
      const int64_t first = range["first-offset"];
      const int64_t last = range["last-offset"];
      EXPECT_EQ(last - first + 1, range["records"].get<int64_t>()) << line.dump();
      for (int64_t o = first; o <= last; ++o) {
        EXPECT_TRUE(seen.insert({partition, o}).second) << "offset listed twice: " << line.dump();
        auto it = by_offset.find({partition, o});
        if (it != by_offset.end()) {
          values.push_back(it->second->value);
        } else {
          ADD_FAILURE() << "no record at partition " << partition << " offset " << o;
        }
      }
      total += range["records"].get<int64_t>();
    }
    EXPECT_EQ(total, line["end-record"].get<int64_t>() - line["first-record"].get<int64_t>())
        << line.dump();
  }
  return values;
}

TEST(KafkaSinkRestoreTest, KillNineAndRestoreCommitsExactlyTheUninterruptedOutput) {
  KafkaMockCluster cluster(1);
  cluster.CreateTopic("ref", kPartitions);
  cluster.CreateTopic("out", kPartitions);
  testing::TempDir tmp;
  const fs::path ref_dir = fs::path(tmp.path()) / "ref";
  const fs::path run_dir = fs::path(tmp.path()) / "run";
  fs::create_directories(ref_dir);
  fs::create_directories(run_dir);

  // Uninterrupted.
  {
    std::ofstream(ref_dir / "job.yaml") << Job(cluster.bootstrap_servers(), "ref", ref_dir);
    const pid_t pid = Spawn({"run", (ref_dir / "job.yaml").string()}, ref_dir / "log");
    ASSERT_EQ(WaitExit(pid), 0) << std::ifstream(ref_dir / "log").rdbuf();
  }

  // Killed after >= 3 checkpoints and >= 1 commit, then restored from the latest checkpoint.
  std::ofstream(run_dir / "job.yaml") << Job(cluster.bootstrap_servers(), "out", run_dir);
  const pid_t pid = Spawn({"run", (run_dir / "job.yaml").string()}, run_dir / "log1");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((LatestCheckpoint(run_dir / "chk") < 3 || CommitLog(run_dir / "commits.jsonl").empty()) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_EQ(WaitExit(pid), 128 + SIGKILL) << "the job ended before it was killed; make it longer";
  const int64_t killed_at = LatestCheckpoint(run_dir / "chk");
  ASSERT_GE(killed_at, 3);
  const size_t commits_before = CommitLog(run_dir / "commits.jsonl").size();
  {
    const pid_t again = Spawn(
        {"run", (run_dir / "job.yaml").string(), "--from-checkpoint", (run_dir / "chk").string()},
        run_dir / "log2");
    ASSERT_EQ(WaitExit(again), 0) << std::ifstream(run_dir / "log2").rdbuf();
  }

  const std::vector<nlohmann::json> ref_log = CommitLog(ref_dir / "commits.jsonl");
  const std::vector<nlohmann::json> run_log = CommitLog(run_dir / "commits.jsonl");
  ASSERT_GT(run_log.size(), commits_before);
  // The last commit before the kill and the first after the restore, for the reader of the log.
  std::cout << "commit log around the kill (checkpoint " << killed_at << "):\n"
            << run_log[commits_before - 1].dump() << "\n"
            << run_log[commits_before].dump() << "\n";
  std::vector<std::string> ref =
      CommittedValues(testing::ReadTopic(cluster.bootstrap_servers(), "ref", kPartitions), ref_log);
  std::vector<std::string> got =
      CommittedValues(testing::ReadTopic(cluster.bootstrap_servers(), "out", kPartitions), run_log);
  // The whole output: 40 keys x 20 windows of 100 ms, each counting 2 splits x 20,000 / 20 / 40...
  EXPECT_EQ(ref.size(), 800u);
  std::sort(ref.begin(), ref.end());
  std::sort(got.begin(), got.end());
  EXPECT_EQ(std::adjacent_find(ref.begin(), ref.end()), ref.end())
      << "a duplicate in the reference";
  EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "a committed duplicate";
  EXPECT_EQ(got, ref);
  // Every committed transaction id is distinct (the restore reused none that had committed).
  std::set<std::string> ids;
  for (const nlohmann::json& l : run_log) {
    EXPECT_TRUE(ids.insert(l["transactional-id"].get<std::string>()).second) << l.dump();
  }
}

/// The first error line of loading and compiling `sink` (a sink block on line 8) after a sequence
/// source of {user string, ts timestamp, amount int64}.
std::string CompileError(const std::string& sink) {
  const std::string yaml =
      "name: bad\n"
      "operators:\n"
      "  - id: source\n"
      "    type: source\n"
      "    source: {type: sequence, splits: [{id: a, start: 0s, step: 1s, count: 3, fields: {user: "
      "x, amount: 5}}]}\n"
      "  - id: out\n"
      "    type: sink\n"
      "    input: source\n"
      "    sink: " +
      sink + "\n";
  try {
    auto job = LocalJob::Create(LoadJobSpecString(yaml, "bad.yaml"));
  } catch (const std::exception& e) {
    std::string what = e.what();
    return what.substr(0, what.find('\n'));
  }
  return "";
}

TEST(KafkaSinkJobTest, KeyAndPartitionFieldsAreCheckedAgainstTheInput) {
  EXPECT_EQ(CompileError("{type: kafka, bootstrap-servers: 'h:1', topic: t, key-field: usr}"),
            "bad.yaml:9:72: error: operators[1].sink.key-field: unknown field 'usr' (input fields: "
            "ts, user, amount)");
  EXPECT_EQ(
      CompileError("{type: kafka, bootstrap-servers: 'h:1', topic: t, partition-field: user}"),
      "bad.yaml:9:78: error: operators[1].sink.partition-field: field 'user' is string; a "
      "partition is an int64 field");
  EXPECT_EQ(
      CompileError("{type: kafka, bootstrap-servers: 'h:1', topic: t, properties: {acks: maybe}}"),
      "bad.yaml:9:80: error: operators[1].sink.properties.acks: Kafka property 'acks': Invalid "
      "value for configuration property \"request.required.acks\"");
  EXPECT_EQ(
      CompileError("{type: kafka, bootstrap-servers: 'h:1', topic: t, partition-field: amount}"),
      "");
}

}  // namespace
}  // namespace tidemark
