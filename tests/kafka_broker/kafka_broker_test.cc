// The Kafka source and sink against a real Apache Kafka broker (issue 40): one KRaft node started
// for the whole ctest run by tools/dev/kafka-broker.sh (fixture `kafka_broker`, label
// `kafka_broker`). What librdkafka's mock cluster cannot show (shared/notes/kafka-mock.md):
// transaction markers (read_committed skips aborted records), producer epochs (a zombie is
// fenced) and consumer-group offsets committed on checkpoints. Each test uses its own topics
// (UniqueTopic), so the tests of one run share the broker and may run in parallel; the outage
// test starts a broker of its own.
//
// The jobs whose result depends on timing run on the virtual clock (the experiment); the
// exactly-once jobs take event times from a paced datagen source, so their windows do not depend
// on the machine's speed, and are compared with an uninterrupted run of the same job.
#include "tests/testing/kafka_broker.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <signal.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/job_loader.h"
#include "operators/kafka_sink/kafka_sink_operator.h"
#include "runtime/io/kafka_client.h"
#include "sources/kafka/kafka_mock_load.h"
#include "tests/testing/daemon_harness.h"
#include "tests/testing/kafka_read_back.h"
#include "tests/testing/live_job.h"
#include "tools/daemon/daemon_client.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::KafkaRecord;
using testing::ReadFile;

// ---- the two-split experiment through a two-partition topic ----

// jobs/<name>.yaml with its mock-cluster block replaced by the broker and `topic`.
std::string ExperimentOnBroker(const std::string& name, const std::string& bootstrap,
                               const std::string& topic) {
  std::istringstream in(ReadFile("jobs/" + name + ".yaml"));
  std::string out;
  bool in_mock = false;
  for (std::string line; std::getline(in, line);) {
    if (line.find("topics: [two-splits]") != std::string::npos) {
      out += fmt::format("      topics: [{}]\n      bootstrap-servers: \"{}\"\n", topic, bootstrap);
      continue;
    }
    if (line.find("mock-cluster:") != std::string::npos) {
      in_mock = true;
      continue;
    }
    if (in_mock && line.rfind("        ", 0) == 0) {
      continue;  // the mock block's keys
    }
    in_mock = false;
    out += line + "\n";
  }
  return out;
}

class KafkaBrokerExperimentTest : public ::testing::TestWithParam<std::string> {};

// The seed's 400 records (jobs/data/two_splits_kafka.jsonl: fast split in partition 0, slow in
// 1) produced into a two-partition topic with their CreateTimes; `tidemark run` of the experiment
// job prints exactly what it prints on the mock (tests/golden/<name>.expected), the seed's lines.
TEST_P(KafkaBrokerExperimentTest, PrintsTheSeedsLines) {
  const std::string bootstrap = testing::SharedKafkaBroker();
  ASSERT_FALSE(bootstrap.empty());
  const std::string topic = testing::UniqueTopic("two-splits");
  testing::CreateTopic(bootstrap, topic, 2);
  KafkaLoadOptions load;
  load.topic = topic;
  load.path = "jobs/data/two_splits_kafka.jsonl";
  load.partitions = 2;
  load.partition_field = "partition";
  load.timestamp_field = "ts";
  ASSERT_EQ(LoadJsonLinesIntoTopic(bootstrap, load), 400);
  testing::TempDir tmp;
  const fs::path job = fs::path(tmp.path()) / "job.yaml";
  std::ofstream(job) << ExperimentOnBroker(GetParam(), bootstrap, topic);
  const pid_t pid = testing::SpawnTidemark({"run", job.string()}, fs::path(tmp.path()) / "out",
                                           fs::path(tmp.path()) / "err");
  ASSERT_EQ(testing::WaitExit(pid), 0) << ReadFile(tmp.path() + "/err");
  const std::string out = ReadFile(tmp.path() + "/out");
  EXPECT_EQ(out, ReadFile("tests/golden/" + GetParam() + ".expected"));
  std::cout << out.substr(out.rfind(">>> mode="));
}

INSTANTIATE_TEST_SUITE_P(BothModes, KafkaBrokerExperimentTest,
                         ::testing::Values("two_splits_kafka_split", "two_splits_kafka_operator"));

// ---- exactly-once: datagen -> keyed tumbling counts -> exactly-once Kafka sink ----

std::string EoJob(const std::string& bootstrap, const std::string& topic, const fs::path& dir,
                  const std::string& interval = "100ms", const std::string& top_extra = "") {
  return testing::ExactlyOnceCountsJob("kafka-broker-eo", bootstrap, topic, dir, interval,
                                       top_extra);
}

constexpr int kPartitions = 2;
constexpr size_t kWindowResults = 800;

std::vector<std::string> SortedValues(const std::vector<KafkaRecord>& records) {
  std::vector<std::string> v;
  for (const KafkaRecord& r : records) {
    v.push_back(r.value);
  }
  std::sort(v.begin(), v.end());
  return v;
}

/// The exactly-once tests: the broker, a scratch folder, and the uninterrupted run's output.
class KafkaBrokerExactlyOnceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bootstrap_ = testing::SharedKafkaBroker();
    ASSERT_FALSE(bootstrap_.empty());
    topic_ = testing::UniqueTopic("eo");
    ref_topic_ = topic_ + "-ref";
    testing::CreateTopic(bootstrap_, topic_, kPartitions);
    testing::CreateTopic(bootstrap_, ref_topic_, kPartitions);
  }
  fs::path Dir(const std::string& name) {
    fs::path d = fs::path(tmp_.path()) / name;
    fs::create_directories(d);
    return d;
  }
  /// The uninterrupted run, sorted (read_committed).
  std::vector<std::string> Reference() {
    const fs::path dir = Dir("ref");
    std::ofstream(dir / "job.yaml") << EoJob(bootstrap_, ref_topic_, dir);
    const pid_t pid =
        testing::SpawnTidemark({"run", (dir / "job.yaml").string()}, dir / "out", dir / "err");
    EXPECT_EQ(testing::WaitExit(pid), 0) << ReadFile((dir / "err").string());
    std::vector<std::string> ref =
        SortedValues(testing::ReadTopic(bootstrap_, ref_topic_, kPartitions));
    EXPECT_EQ(ref.size(), kWindowResults)
        << "read_uncommitted: "
        << testing::ReadTopic(bootstrap_, ref_topic_, kPartitions, "read_uncommitted").size()
        << "\ncommit log:\n"
        << ReadFile((dir / "commits.jsonl").string()) << "\nstderr:\n"
        << ReadFile((dir / "err").string());
    EXPECT_EQ(std::adjacent_find(ref.begin(), ref.end()), ref.end())
        << "a duplicate in the reference";
    return ref;
  }
  /// Whether a transaction with records is open on some partition (its last stable offset is
  /// behind its high watermark).
  bool OpenTransaction(const std::string& topic) {
    for (int p = 0; p < kPartitions; ++p) {
      const int64_t lso = testing::EndOffset(bootstrap_, topic, p, "read_committed");
      const int64_t hw = testing::EndOffset(bootstrap_, topic, p, "read_uncommitted");
      if (lso >= 0 && hw > lso) {
        return true;
      }
    }
    return false;
  }
  /// Starts the job on topic_ in `dir`; waits until it completed `checkpoints` checkpoints and
  /// one transaction committed.
  pid_t StartAndWait(const fs::path& dir, int64_t checkpoints, const std::string& job) {
    std::ofstream(dir / "job.yaml") << job;
    const pid_t pid =
        testing::SpawnTidemark({"run", (dir / "job.yaml").string()}, dir / "out1", dir / "err1");
    const bool reached = testing::Eventually(
        [&] {
          return testing::LatestCheckpoint(dir / "chk") >= checkpoints &&
                 !testing::CommittedLines(dir / "commits.jsonl").empty();
        },
        60s);
    EXPECT_TRUE(reached) << "the job did not reach " << checkpoints << " checkpoints";
    return pid;
  }
  /// Starts `job` (on topic_, in `dir`) with the sink's test stop
  /// (KafkaSinkOperator::kStopAtTransactionEnvForTesting) at transaction kStopAt and waits until
  /// the process stopped itself there: the first record of transaction kStopAt acknowledged by
  /// the broker, that transaction open, no commit under way. Transactions 0 and 1 were
  /// pre-committed by two earlier barriers, so by then a checkpoint completed and transaction 0
  /// committed; both are asserted. The caller kills or continues the stopped process. -1 (with
  /// gtest failures; no process left) when it ended instead or an assertion failed.
  pid_t StartStoppedInTransaction(const fs::path& dir, const std::string& job) {
    std::ofstream(dir / "job.yaml") << job;
    const pid_t pid = testing::SpawnTidemark(
        {"run", (dir / "job.yaml").string()}, dir / "out1", dir / "err1",
        {fmt::format("{}={}", KafkaSinkOperator::kStopAtTransactionEnvForTesting, kStopAt)});
    if (!testing::WaitStopped(pid)) {
      ADD_FAILURE() << "it did not stop in transaction " << kStopAt << "; stderr:\n"
                    << ReadFile((dir / "err1").string());
      return -1;
    }
    const int64_t checkpoint = testing::LatestCheckpoint(dir / "chk");
    const size_t commits = testing::CommittedLines(dir / "commits.jsonl").size();
    const bool open = OpenTransaction(topic_);
    EXPECT_GE(checkpoint, 1);
    EXPECT_GE(commits, 1u) << ReadFile((dir / "commits.jsonl").string());
    EXPECT_TRUE(open) << "no transaction open at the broker";
    if (checkpoint < 1 || commits < 1 || !open) {
      ::kill(pid, SIGKILL);
      testing::WaitExit(pid);
      return -1;
    }
    return pid;
  }
  static constexpr int kStopAt = 2;
  /// `tidemark run JOB --from-checkpoint dir/chk` to its end; JOB: `job` (default dir/job.yaml).
  int Restore(const fs::path& dir, const fs::path& job = {}) {
    const pid_t again =
        testing::SpawnTidemark({"run", (job.empty() ? dir / "job.yaml" : job).string(),
                                "--from-checkpoint", (dir / "chk").string()},
                               dir / "out2", dir / "err2");
    const int rc = testing::WaitExit(again);
    EXPECT_EQ(rc, 0) << ReadFile((dir / "err2").string());
    return rc;
  }

  testing::TempDir tmp_;
  std::string bootstrap_;
  std::string topic_;
  std::string ref_topic_;
};

// `kill -9` of `tidemark run` after >= 3 checkpoints and a commit, then `--from-checkpoint`: what
// a read_committed consumer reads equals the uninterrupted run, record for record, none twice.
TEST_F(KafkaBrokerExactlyOnceTest, KillNineOfTidemarkRunRestoresTheUninterruptedOutput) {
  const std::vector<std::string> ref = Reference();
  const fs::path dir = Dir("run");
  const pid_t pid = StartAndWait(dir, 3, EoJob(bootstrap_, topic_, dir));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_EQ(testing::WaitExit(pid), 128 + SIGKILL) << "the job ended before it was killed";
  ASSERT_EQ(Restore(dir), 0);
  const std::vector<std::string> got =
      SortedValues(testing::ReadTopic(bootstrap_, topic_, kPartitions));
  EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "a record committed twice";
  EXPECT_EQ(got, ref);
}

// Killed while a transaction with records is open (its records at the broker, its commit not
// done: the sink stopped itself at the first acknowledged record of its transaction 2, after
// transaction 0 committed and transaction 1 was pre-committed), then restored: the restore fences
// the transactional ids and Kafka aborts the killed transactions. read_committed reads exactly the
// uninterrupted output; read_uncommitted reads the aborted records too, each of them also committed
// once (re-sent or replayed by the restore).
TEST_F(KafkaBrokerExactlyOnceTest, AnAbortedTransactionIsInvisibleToReadCommittedOnly) {
  const std::vector<std::string> ref = Reference();
  const fs::path dir = Dir("run");
  const pid_t pid = StartStoppedInTransaction(dir, EoJob(bootstrap_, topic_, dir, "400ms"));
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_EQ(testing::WaitExit(pid), 128 + SIGKILL) << "the job ended before it was killed";
  // Only the killed producer's open transaction is left, with its records.
  ASSERT_TRUE(OpenTransaction(topic_));
  ASSERT_EQ(Restore(dir), 0);
  const std::vector<std::string> committed =
      SortedValues(testing::ReadTopic(bootstrap_, topic_, kPartitions, "read_committed"));
  const std::vector<std::string> all =
      SortedValues(testing::ReadTopic(bootstrap_, topic_, kPartitions, "read_uncommitted"));
  EXPECT_EQ(committed, ref);
  std::vector<std::string> aborted;
  std::set_difference(all.begin(), all.end(), committed.begin(), committed.end(),
                      std::back_inserter(aborted));
  EXPECT_GT(aborted.size(), 0u);
  EXPECT_EQ(all.size(), committed.size() + aborted.size());
  for (const std::string& a : aborted) {
    EXPECT_TRUE(std::binary_search(committed.begin(), committed.end(), a)) << a;
  }
  std::cout << fmt::format(
      "read_committed: {} records; read_uncommitted: {} records ({} aborted)\n", committed.size(),
      all.size(), aborted.size());
}

// A zombie: the first `tidemark run` stops itself (SIGSTOP, the sink's test stop) with its
// transaction 2 open and transaction 1 pre-committed, a second run
// restores from its checkpoint (into a checkpoint directory of its own: the zombie locks its own)
// and finishes; when the zombie wakes up its producer has been fenced
// by the restore (same transactional id, newer epoch): it fails with that cause, and the committed
// output is still the uninterrupted run's. (Frozen with no transaction of its own open, a zombie
// that wakes after its successor finished would start a new transactional id nobody fenced: the
// run lock on the checkpoint directory keeps a successor from writing the same checkpoints, the
// daemon's run lock from running a job twice; a successor in another directory is the user's
// doing.)
TEST_F(KafkaBrokerExactlyOnceTest, AZombieIsFencedAfterARestore) {
  const std::vector<std::string> ref = Reference();
  const fs::path dir = Dir("run");
  const std::string no_restart = "restart-strategy: {type: none}\n";
  const pid_t zombie =
      StartStoppedInTransaction(dir, EoJob(bootstrap_, topic_, dir, "400ms", no_restart));
  ASSERT_GT(zombie, 0);
  // The successor restores the zombie's latest checkpoint into a checkpoint directory of its
  // own: the zombie's stays locked by the zombie (tidemark run's run lock) while it lives.
  std::string successor = EoJob(bootstrap_, topic_, dir, "400ms", no_restart);
  const std::string chk = fmt::format("  dir: {}/chk\n", dir.string());
  ASSERT_NE(successor.find(chk), std::string::npos);
  successor.replace(successor.find(chk), chk.size(),
                    fmt::format("  dir: {}/chk-successor\n", dir.string()));
  std::ofstream(dir / "successor.yaml") << successor;
  ASSERT_EQ(Restore(dir, dir / "successor.yaml"), 0);
  ASSERT_EQ(::kill(zombie, SIGCONT), 0);
  EXPECT_EQ(testing::WaitExit(zombie), 1);
  const std::string err = ReadFile((dir / "err1").string());
  std::string last = err.substr(0, err.find_last_not_of('\n') + 1);
  last = last.substr(last.rfind('\n') + 1);
  // Which request of the woken zombie meets the fence first is timing: the commit of its
  // pre-committed transaction 1 ("cannot commit transaction"), or a Produce or AddPartitions of
  // its open transaction 2 ("cannot produce to topic", "delivery to topic ... failed"); librdkafka
  // words each differently. The failing operator, the error code and tidemark's explanation are
  // the same.
  EXPECT_TRUE(
      last.starts_with("job 'kafka-broker-eo' FAILED: task windows -> sink#0: operator "
                       "'sink' failed: kafka sink sink#0: "))
      << err;
  EXPECT_TRUE(
      last.ends_with(" (_FENCED: a newer producer with the same transactional id has taken over: "
                     "a restored run of this job, or another job or run whose Kafka sink uses the "
                     "same transactional-id-prefix '" +
                     topic_ +
                     "' on these brokers; if it is another job, give each job its own "
                     "`transactional-id-prefix`)"))
      << err;
  std::cout << "the zombie's stderr:\n" << err;
  const std::vector<std::string> got =
      SortedValues(testing::ReadTopic(bootstrap_, topic_, kPartitions));
  EXPECT_EQ(got, ref);
}

// `kill -9` of the daemon (its worker dies with it) after >= 3 checkpoints; the restarted daemon
// resumes the job from its latest checkpoint; the committed output is the uninterrupted run's.
TEST_F(KafkaBrokerExactlyOnceTest, KillNineOfTheDaemonRestoresTheUninterruptedOutput) {
  const std::vector<std::string> ref = Reference();
  const fs::path dir = Dir("daemon");
  const std::string socket = (dir / "d.sock").string();
  const std::string state = (dir / "state").string();
  const std::vector<std::string> args = {"--socket", socket, "--state-dir", state,
                                         "--no-self-check"};
  auto client = [&] {
    return DaemonClient(DaemonEndpoint{socket, "", ""});
  };
  auto job = [&](const std::string& id) {
    auto r = client().Request("GET", "/jobs/" + id);
    return nlohmann::json::parse(r.body, nullptr, false);
  };
  std::string id;
  {
    testing::DaemonProcess daemon(args);
    ASSERT_TRUE(daemon.ready()) << daemon.ready_line();
    auto r = client().Request("POST", "/jobs?file=eo.yaml", EoJob(bootstrap_, topic_, dir));
    ASSERT_EQ(r.status, 202) << r.body;
    id = nlohmann::json::parse(r.body).at("jid").get<std::string>();
    ASSERT_TRUE(testing::Eventually(
        [&] {
          const nlohmann::json j = job(id);
          return j.is_object() && j.contains("checkpoints") &&
                 j["checkpoints"]["completed"].get<int64_t>() >= 3 &&
                 !testing::CommittedLines(dir / "commits.jsonl").empty();
        },
        60s))
        << job(id).dump();
    const int status = daemon.Kill(SIGKILL);
    ASSERT_TRUE(WIFSIGNALED(status));
  }
  testing::DaemonProcess daemon(args);
  ASSERT_TRUE(daemon.ready()) << daemon.ready_line();
  ASSERT_TRUE(testing::Eventually([&] { return job(id).value("state", "") == "FINISHED"; }, 90s))
      << job(id).dump();
  const std::vector<std::string> got =
      SortedValues(testing::ReadTopic(bootstrap_, topic_, kPartitions));
  EXPECT_EQ(std::adjacent_find(got.begin(), got.end()), got.end()) << "a record committed twice";
  EXPECT_EQ(got, ref);
}

// ---- the source: committed offsets, partition discovery ----

std::string RecordsJob(const std::string& bootstrap, const std::string& source_extra,
                       const std::string& top_extra = "") {
  return testing::KafkaRecordsJob(bootstrap, source_extra, top_extra);
}

// Flink's "offsets for monitoring": the offsets of each completed checkpoint are committed to the
// group; while the job runs the group's offset moves up, and at the end it is each partition's
// end (the final checkpoint's).
TEST(KafkaBrokerSourceTest, CheckpointsCommitTheGroupsOffsets) {
  const std::string bootstrap = testing::SharedKafkaBroker();
  ASSERT_FALSE(bootstrap.empty());
  const std::string topic = testing::UniqueTopic("offsets");
  const std::string group = topic + "-group";
  testing::CreateTopic(bootstrap, topic, 2);
  testing::ProduceSeries(bootstrap, topic, 0, 0, 300, 1000, 10);
  testing::ProduceSeries(bootstrap, topic, 1, 1000, 200, 1000, 10);
  testing::LiveJob job(RecordsJob(bootstrap,
                                  fmt::format("      topics: [{}]\n      group-id: {}\n"
                                              "      bounded: latest\n      pacing: 4ms",
                                              topic, group),
                                  "checkpointing: {interval: 100ms}\n"));
  // While running: a committed offset strictly inside partition 0.
  int64_t seen = -1;
  const bool moving = testing::Eventually(
      [&] {
        seen = testing::CommittedOffset(bootstrap, group, topic, 0);
        return seen > 0 && seen < 300;
      },
      30s);
  EXPECT_TRUE(moving) << "last committed offset of partition 0: " << seen;
  EXPECT_EQ(job.job().execution().Wait(), JobState::kFinished)
      << job.job().execution().failure_cause();
  EXPECT_EQ(job.Lines().size(), 500u);
  EXPECT_EQ(testing::CommittedOffset(bootstrap, group, topic, 0), 300);
  EXPECT_EQ(testing::CommittedOffset(bootstrap, group, topic, 1), 200);
}

// The source reads a topic written in transactions (committed, aborted, committed) with
// `properties: {isolation.level: ...}`, bounded at its latest offset: read_committed emits the
// committed records only and still ends (the transaction markers and aborted records at the end of
// the partition are never delivered), read_uncommitted emits all.
TEST(KafkaBrokerSourceTest, ReadCommittedSkipsAnAbortedTransactionAndEnds) {
  const std::string bootstrap = testing::SharedKafkaBroker();
  ASSERT_FALSE(bootstrap.empty());
  const std::string topic = testing::UniqueTopic("txn");
  testing::CreateTopic(bootstrap, topic, 1);
  {
    KafkaHandle p = MakeKafkaHandle(
        RD_KAFKA_PRODUCER,
        MakeKafkaConf(
            {{"bootstrap.servers", bootstrap}, {"transactional.id", topic}, {"log_level", "2"}}));
    auto check = [](rd_kafka_error_t* e) {
      EXPECT_EQ(e, nullptr) << (e != nullptr ? rd_kafka_error_string(e) : "");
      if (e != nullptr) {
        rd_kafka_error_destroy(e);
      }
    };
    check(rd_kafka_init_transactions(p.get(), 30000));
    // n 0-2 committed, 3-4 aborted, 5 committed, 6-7 aborted (the last thing in the partition).
    const std::vector<std::pair<std::vector<int>, bool>> transactions = {
        {{0, 1, 2}, true}, {{3, 4}, false}, {{5}, true}, {{6, 7}, false}};
    for (const auto& [ns, commit] : transactions) {
      check(rd_kafka_begin_transaction(p.get()));
      for (int n : ns) {
        const std::string v = fmt::format(R"({{"n":{},"p":0,"ts":{}}})", n, 1000 + n);
        ASSERT_EQ(
            rd_kafka_producev(p.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(0),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                              RD_KAFKA_V_VALUE(const_cast<char*>(v.data()), v.size()),
                              RD_KAFKA_V_TIMESTAMP(1000 + n), RD_KAFKA_V_END),
            RD_KAFKA_RESP_ERR_NO_ERROR);
      }
      ASSERT_EQ(rd_kafka_flush(p.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
      check(commit ? rd_kafka_commit_transaction(p.get(), 30000)
                   : rd_kafka_abort_transaction(p.get(), 30000));
    }
  }
  for (const auto& [isolation, want] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"read_committed", {0, 1, 2, 5}}, {"read_uncommitted", {0, 1, 2, 3, 4, 5, 6, 7}}}) {
    testing::LiveJob job(
        RecordsJob(bootstrap, fmt::format("      topics: [{}]\n      bounded: latest\n"
                                          "      properties: {{isolation.level: {}}}",
                                          topic, isolation)));
    EXPECT_EQ(job.job().execution().Wait(), JobState::kFinished)
        << job.job().execution().failure_cause();
    EXPECT_EQ(testing::Ns(job.Lines()), want) << isolation;
  }
}

// A topic created after the job started, matching `topic-pattern`, is found by partition discovery
// and read from its beginning.
TEST(KafkaBrokerSourceTest, ATopicCreatedAfterTheStartIsDiscovered) {
  const std::string bootstrap = testing::SharedKafkaBroker();
  ASSERT_FALSE(bootstrap.empty());
  const std::string base = testing::UniqueTopic("disc");
  testing::CreateTopic(bootstrap, base + "-a", 1);
  testing::ProduceSeries(bootstrap, base + "-a", 0, 0, 3, 1000, 10);
  testing::LiveJob job(RecordsJob(
      bootstrap,
      fmt::format("      topic-pattern: \"{}-.*\"\n      partition-discovery-interval: 200ms",
                  base)));
  ASSERT_TRUE(job.WaitFor([](const std::vector<std::string>& l) {
    return testing::Ns(l).size() == 3;
  })) << job.job().execution().failure_cause();
  testing::CreateTopic(bootstrap, base + "-b", 2);
  testing::ProduceSeries(bootstrap, base + "-b", 0, 100, 2, 1000, 10);
  testing::ProduceSeries(bootstrap, base + "-b", 1, 200, 2, 1000, 10);
  ASSERT_TRUE(job.WaitFor([](const std::vector<std::string>& l) {
    return testing::Ns(l).size() == 7;
  })) << fmt::format("{}", fmt::join(job.Lines(), "\n"));
  std::vector<int64_t> ns = testing::Ns(job.Lines());
  std::sort(ns.begin(), ns.end());
  EXPECT_EQ(ns, (std::vector<int64_t>{0, 1, 2, 100, 101, 200, 201}));
}

// ---- the input topic deleted mid-job ----

std::vector<std::string> FileLines(const fs::path& path) {
  std::istringstream in(ReadFile(path.string()));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

// `tidemark run` of a checkpointed job reading `in` (2 partitions x 50 records, bounded beyond
// them, so it waits for more) with `extra` top-level lines and a grace of `grace_ms`
// (topic.metadata.propagation.max.ms); started in `dir`, waiting until every record was printed
// and a checkpoint completed.
pid_t StartReadingATopicToDelete(const std::string& bootstrap, const std::string& in,
                                 const fs::path& dir, int64_t grace_ms, const std::string& extra) {
  testing::CreateTopic(bootstrap, in, 2);
  testing::ProduceSeries(bootstrap, in, 0, 0, 50, 1000, 10);
  testing::ProduceSeries(bootstrap, in, 1, 100, 50, 1000, 10);
  std::ofstream(dir / "job.yaml") << RecordsJob(
      bootstrap,
      fmt::format("      topics: [{in}]\n      group-id: {in}-group\n      bounded: specific\n"
                  "      bounded-specific-offsets: {{{in}-0: 100, {in}-1: 100}}\n"
                  "      properties: {{topic.metadata.propagation.max.ms: \"{grace}\"}}",
                  fmt::arg("in", in), fmt::arg("grace", grace_ms)),
      fmt::format("checkpointing: {{interval: 200ms, dir: {}}}\n{}", (dir / "chk").string(),
                  extra));
  const pid_t pid =
      testing::SpawnTidemark({"run", (dir / "job.yaml").string()}, dir / "out", dir / "err");
  const bool reading = testing::Eventually(
      [&] {
        return testing::Ns(FileLines(dir / "out")).size() == 100 &&
               testing::LatestCheckpoint(dir / "chk") >= 1;
      },
      60s);
  EXPECT_TRUE(reading) << ReadFile((dir / "err").string());
  return pid;
}

// The input topic deleted while the job waits for more of it: the job fails naming the topic and
// partition once the brokers have not listed it for the grace, the restart strategy restarts it
// once, the restart finds the topic missing at its start, and `tidemark run` exits 1.
TEST(KafkaBrokerSourceTest, ADeletedInputTopicFailsTheJobAndTheRestartFindsItMissing) {
  const std::string bootstrap = testing::SharedKafkaBroker();
  ASSERT_FALSE(bootstrap.empty());
  const std::string in = testing::UniqueTopic("deleted");
  testing::TempDir tmp;
  const fs::path dir(tmp.path());
  const pid_t pid = StartReadingATopicToDelete(
      bootstrap, in, dir, 2000,
      "restart-strategy: {type: fixed-delay, attempts: 1, delay: 100ms}\n");
  testing::DeleteTopic(bootstrap, in);
  EXPECT_EQ(testing::WaitExit(pid), 1);
  const std::string err = ReadFile((dir / "err").string());
  EXPECT_TRUE(std::regex_search(
      err, std::regex(fmt::format("restarts \\(1\\) from checkpoint [0-9]+: task .*Kafka topic "
                                  "'{}' partition [01] no longer exists at {} \\(deleted\\?\\)",
                                  in, bootstrap))))
      << err;
  EXPECT_NE(err.find(fmt::format("FAILED: task source -> out#0: operator 'source' failed: Kafka "
                                 "topic '{}' does not exist at {}",
                                 in, bootstrap)),
            std::string::npos)
      << err;
  EXPECT_EQ(err.find("left to a detached thread"), std::string::npos) << err;
  EXPECT_EQ(testing::Ns(FileLines(dir / "out")).size(), 100u);
}

// Ctrl-C of a job whose input topic was deleted (and reported missing: librdkafka's error ops
// are in the reader's partition queues): the job ends CANCELED. Before the fix both source
// threads hung in rd_kafka_destroy for ever.
TEST(KafkaBrokerSourceTest, SigintEndsAJobWhoseInputTopicWasDeleted) {
  const std::string bootstrap = testing::SharedKafkaBroker();
  ASSERT_FALSE(bootstrap.empty());
  const std::string in = testing::UniqueTopic("deleted-sigint");
  testing::TempDir tmp;
  const fs::path dir(tmp.path());
  const pid_t pid = StartReadingATopicToDelete(bootstrap, in, dir, 600000, "");
  testing::DeleteTopic(bootstrap, in);
  const bool reported = testing::Eventually(
      [&] {
        return ReadFile((dir / "err").string()).find("the job fails if the brokers' metadata") !=
               std::string::npos;
      },
      60s);
  EXPECT_TRUE(reported) << ReadFile((dir / "err").string());
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  EXPECT_EQ(testing::WaitExit(pid), 1);
  std::cout << "ended "
            << std::chrono::duration_cast<std::chrono::milliseconds>(
                   std::chrono::steady_clock::now() - sent)
                   .count()
            << " ms after SIGINT\n";
  const std::string err = ReadFile((dir / "err").string());
  EXPECT_NE(err.find("CANCELED"), std::string::npos) << err;
  EXPECT_EQ(err.find("left to a detached thread"), std::string::npos) << err;
}

// ---- the broker stopped for 10 s mid-job ----

// Source and exactly-once sink on a broker of the test's own. 50 records are read and committed,
// the broker is stopped for 10 s (connections refused), nothing is read and the job keeps running;
// the broker is started again, 50 more records arrive: the source resumes where it was, the sink's
// next transaction goes through, and the output topic holds the 100 records once each.
TEST(KafkaBrokerOutageTest, ABrokerStoppedForTenSecondsMidJob) {
  testing::PrivateKafkaBroker broker;
  ASSERT_FALSE(broker.bootstrap().empty());
  const std::string in = testing::UniqueTopic("outage-in");
  const std::string out = testing::UniqueTopic("outage-out");
  testing::CreateTopic(broker.bootstrap(), in, 1);
  testing::CreateTopic(broker.bootstrap(), out, 1);
  testing::ProduceSeries(broker.bootstrap(), in, 0, 0, 50, 1000, 10);
  testing::TempDir tmp;
  const std::string yaml =
      fmt::format(R"(name: kafka-broker-outage
checkpointing: {{interval: 200ms}}
operators:
  - id: source
    type: source
    source:
      type: kafka
      bootstrap-servers: "{bootstrap}"
      topics: [{in}]
      schema: {{n: int64, p: int64, ts: timestamp}}
      bounded: specific
      bounded-specific-offsets: {{{in}-0: 100}}
      properties: {{fetch.wait.max.ms: "50", reconnect.backoff.max.ms: "500"}}
  - id: sink
    type: sink
    input: source
    sink:
      type: kafka
      bootstrap-servers: "{bootstrap}"
      topic: {out}
      delivery-guarantee: exactly-once
      transactional-id-prefix: {out}
      commit-log: {dir}/commits.jsonl
)",
                  fmt::arg("bootstrap", broker.bootstrap()), fmt::arg("in", in),
                  fmt::arg("out", out), fmt::arg("dir", tmp.path()));
  testing::LiveJob job(yaml);
  auto committed_records = [&] {
    int64_t n = 0;
    for (const nlohmann::json& l :
         testing::CommittedLines(fs::path(tmp.path()) / "commits.jsonl")) {
      n += l["end-record"].get<int64_t>() - l["first-record"].get<int64_t>();
    }
    return n;
  };
  ASSERT_TRUE(testing::Eventually([&] { return committed_records() == 50; }, 30s))
      << job.job().execution().failure_cause();
  broker.Halt();
  std::this_thread::sleep_for(10s);  // the outage itself
  EXPECT_EQ(job.job().execution().state(), JobState::kRunning)
      << job.job().execution().failure_cause();
  EXPECT_EQ(committed_records(), 50);
  broker.Resume();
  testing::ProduceSeries(broker.bootstrap(), in, 0, 50, 50, 2000, 10);
  EXPECT_EQ(job.job().execution().Wait(), JobState::kFinished)
      << job.job().execution().failure_cause();
  std::vector<int64_t> ns;
  for (const KafkaRecord& r : testing::ReadTopic(broker.bootstrap(), out, 1)) {
    ns.push_back(nlohmann::json::parse(r.value)["n"].get<int64_t>());
  }
  std::vector<int64_t> want(100);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(ns, want);
}

}  // namespace
}  // namespace tidemark
