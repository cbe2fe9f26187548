// The Kafka sink operator against librdkafka's mock cluster: what each delivery guarantee puts in
// the topic and when, one transaction per checkpoint committed only on checkpoint-complete, the
// restore (re-send of an unconfirmed transaction, fencing of the crashed producer), a produce
// error failing the task with its cause. The mock writes no transaction markers, so what
// committed is read from the sink's commit log (shared/notes/kafka-mock.md).
#include "operators/kafka_sink/kafka_sink_operator.h"

#include <filesystem>
#include <fstream>
#include <stdlib.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/core/errors.h"
#include "runtime/state/state_serializer.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"
#include "tests/testing/kafka_read_back.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using testing::KafkaRecord;
using testing::ReadTopic;

Schema TestSchema() {
  return Schema({{"n", FieldType::kInt64}, {"user", FieldType::kString}, {"p", FieldType::kInt64}});
}

struct Sink {
  std::unique_ptr<ManualProcessingTimeService> clock;
  testing::CollectingOutput out;
  std::shared_ptr<SinkResult> result;
  std::unique_ptr<KafkaSinkOperator> op;

  Sink(const SinkSpec& spec, bool checkpointing, int subtask = 0)
      : clock(std::make_unique<ManualProcessingTimeService>(0)),
        result(std::make_shared<SinkResult>(TestSchema(), false)),
        op(std::make_unique<KafkaSinkOperator>(spec, TestSchema(), result, subtask,
                                               checkpointing)) {
    OperatorContext ctx;
    ctx.name = "out";
    ctx.subtask_index = subtask;
    ctx.output = &out;
    ctx.processing_time = clock.get();
    op->Open(ctx);
  }
  void Restore(const std::string* snapshot, int64_t id = 1) {
    std::optional<StateReader> reader;
    StateInitializationContext ctx;
    if (snapshot != nullptr) {
      reader.emplace(*snapshot);
      ctx.reader = &*reader;
      ctx.restored_checkpoint_id = id;
    }
    op->InitializeState(ctx);
  }
  void Write(int64_t n, int64_t partition = 0) {
    StreamRecord r(Row{Value{n}, Value{fmt::format("u{}", n % 3)}, Value{partition}}, 1000 + n);
    op->ProcessElement(r, 0);
  }
  std::string Snapshot(int64_t id) {
    StateWriter writer;
    StateSnapshotContext ctx{id, 0, writer};
    op->SnapshotState(ctx);
    return writer.Release();
  }
  void Crash() { op.reset(); }
};

std::string Value(int64_t n, int64_t p = 0) {
  return fmt::format("{{\"n\":{},\"user\":\"u{}\",\"p\":{}}}", n, n % 3, p);
}

std::vector<std::string> Values(const std::vector<KafkaRecord>& records) {
  std::vector<std::string> v;
  for (const KafkaRecord& r : records) {
    v.push_back(r.value);
  }
  return v;
}

class KafkaSinkOperatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.CreateTopic("out", 2);
    char tmpl[] = "/tmp/tm_kafka_sink_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
  }
  void TearDown() override { fs::remove_all(root_); }

  SinkSpec Spec(const std::string& guarantee) const {
    SinkSpec s;
    s.type = "kafka";
    s.bootstrap_servers = cluster_.bootstrap_servers();
    s.topic = "out";
    s.delivery_guarantee = guarantee;
    s.partition_field = "p";
    s.key_field = "user";
    s.kafka_timeout_ms = 10000;
    if (guarantee == "exactly-once") {
      s.transactional_id_prefix = "job";
      s.commit_log = (root_ / "commits.jsonl").string();
    }
    return s;
  }
  /// The committed lines of the commit log.
  std::vector<nlohmann::json> CommitLog() const {
    return testing::CommittedLines(root_ / "commits.jsonl");
  }
  /// Every line: `committing` and `committed`.
  std::vector<nlohmann::json> CommitLogLines() const {
    std::vector<nlohmann::json> lines;
    std::ifstream in(root_ / "commits.jsonl");
    for (std::string l; std::getline(in, l);) {
      lines.push_back(nlohmann::json::parse(l));
    }
    return lines;
  }
  std::vector<KafkaRecord> Topic(const std::string& isolation = "read_committed") const {
    return ReadTopic(cluster_.bootstrap_servers(), "out", 2, isolation);
  }

  KafkaMockCluster cluster_{1};
  fs::path root_;
};

TEST_F(KafkaSinkOperatorTest, AtLeastOnceHasEveryRecordAcknowledgedWhenTheSnapshotReturns) {
  Sink sink(Spec("at-least-once"), true);
  sink.Restore(nullptr);
  for (int64_t n = 0; n < 5; ++n) {
    sink.Write(n, n % 2);
  }
  sink.Snapshot(1);  // flushes: no delivery report outstanding
  std::vector<KafkaRecord> got = Topic();
  ASSERT_EQ(got.size(), 5u);
  // partition 0: 0, 2, 4; partition 1: 1, 3 — key = user, value = the row as JSON, CreateTime.
  EXPECT_EQ(Values(got), (std::vector<std::string>{Value(0, 0), Value(2, 0), Value(4, 0),
                                                   Value(1, 1), Value(3, 1)}));
  EXPECT_EQ(got[0].partition, 0);
  EXPECT_EQ(got[3].partition, 1);
  EXPECT_EQ(got[1].key, "u2");
  EXPECT_EQ(got[4].timestamp_ms, 1003);
  EXPECT_EQ(sink.op->num_records_sent(), 5);
  sink.op->Finish();
  sink.op->Close();
}

TEST_F(KafkaSinkOperatorTest, NoneDeliversEverythingByEndOfInput) {
  SinkSpec spec = Spec("none");
  spec.key_field.clear();
  Sink sink(spec, false);
  sink.Restore(nullptr);
  for (int64_t n = 0; n < 4; ++n) {
    sink.Write(n, 1);
  }
  sink.op->Finish();
  sink.op->Close();
  std::vector<KafkaRecord> got = Topic();
  EXPECT_EQ(Values(got),
            (std::vector<std::string>{Value(0, 1), Value(1, 1), Value(2, 1), Value(3, 1)}));
  EXPECT_FALSE(got[0].has_key);
}

TEST_F(KafkaSinkOperatorTest, ExactlyOnceCommitsOneTransactionPerCheckpointOnlyWhenItCompletes) {
  Sink sink(Spec("exactly-once"), true);
  sink.Restore(nullptr);
  for (int64_t n = 0; n < 3; ++n) {
    sink.Write(n);
  }
  sink.Snapshot(1);
  sink.Write(3, 1);
  sink.Write(4, 1);
  sink.Snapshot(2);
  EXPECT_TRUE(CommitLog().empty());  // pre-committed only
  EXPECT_EQ(sink.op->num_pending_transactions(), 2u);
  sink.op->NotifyCheckpointComplete(1);
  ASSERT_EQ(CommitLog().size(), 1u);
  sink.Snapshot(3);                      // no records since checkpoint 2: no transaction
  sink.op->NotifyCheckpointComplete(3);  // 2 is committed with 3 (its notification was lost)
  std::vector<nlohmann::json> log = CommitLog();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["transactional-id"], "job-0-0");
  EXPECT_EQ(log[0]["checkpoint"], 1);
  EXPECT_EQ(log[0]["first-record"], 0);
  EXPECT_EQ(log[0]["end-record"], 3);
  EXPECT_EQ(log[0]["records"], 3);
  EXPECT_EQ(log[0]["partitions"]["0"]["first-offset"], 0);
  EXPECT_EQ(log[0]["partitions"]["0"]["last-offset"], 2);
  EXPECT_EQ(log[1]["transactional-id"], "job-0-1");
  EXPECT_EQ(log[1]["checkpoint"], 2);
  EXPECT_EQ(log[1]["first-record"], 3);
  EXPECT_EQ(log[1]["end-record"], 5);
  EXPECT_EQ(log[1]["partitions"]["1"]["records"], 2);
  EXPECT_EQ(log[1]["resent"], false);
  EXPECT_EQ(sink.op->num_transactions_committed(), 2);
  EXPECT_EQ(Values(Topic()),
            (std::vector<std::string>{Value(0), Value(1), Value(2), Value(3, 1), Value(4, 1)}));
  sink.op->Finish();
  sink.op->Close();
}

TEST_F(KafkaSinkOperatorTest, WithoutCheckpointingEndOfInputCommits) {
  Sink sink(Spec("exactly-once"), false);
  sink.Restore(nullptr);
  sink.Write(0);
  sink.Write(1);
  EXPECT_TRUE(CommitLog().empty());
  sink.op->Finish();
  std::vector<nlohmann::json> log = CommitLog();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_TRUE(log[0]["checkpoint"].is_null());
  EXPECT_EQ(log[0]["records"], 2);
  sink.op->Close();
}

// A crash after checkpoint 1 completed but before its commit: the restore re-sends transaction
// job-0-0 from the checkpoint's copy and commits it, once; the transaction open at the crash is
// never committed, and the restored run continues with its id.
TEST_F(KafkaSinkOperatorTest, RestoreCommitsTheUnconfirmedTransactionOfTheCheckpointOnce) {
  std::string snapshot;
  {
    Sink sink(Spec("exactly-once"), true);
    sink.Restore(nullptr);
    sink.Write(0);
    sink.Write(1);
    snapshot = sink.Snapshot(1);
    sink.Write(2);  // transaction job-0-1, open at the crash
    sink.Crash();
  }
  EXPECT_TRUE(CommitLog().empty());
  Sink restored(Spec("exactly-once"), true);
  restored.Restore(&snapshot, 1);
  EXPECT_EQ(restored.op->num_transactions_resent(), 1);
  std::vector<nlohmann::json> log = CommitLog();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["transactional-id"], "job-0-0");
  EXPECT_EQ(log[0]["resent"], true);
  EXPECT_EQ(log[0]["first-record"], 0);
  EXPECT_EQ(log[0]["end-record"], 2);
  // The replayed input continues at record 2 in transaction job-0-1.
  restored.Write(2);
  restored.Snapshot(2);
  restored.op->NotifyCheckpointComplete(2);
  log = CommitLog();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1]["transactional-id"], "job-0-1");
  EXPECT_EQ(log[1]["first-record"], 2);
  EXPECT_EQ(log[1]["end-record"], 3);
  // Restoring the same checkpoint again (a second failure) re-sends nothing: the log lists it.
  restored.Crash();
  Sink again(Spec("exactly-once"), true);
  again.Restore(&snapshot, 1);
  EXPECT_EQ(again.op->num_transactions_resent(), 0);
  EXPECT_EQ(CommitLog().size(), 2u);
  again.op->Close();
}

// Each commit is logged twice: "committing" before the request, "committed" after Kafka's answer.
TEST_F(KafkaSinkOperatorTest, EachCommitIsLoggedBeforeAndAfterKafkasAnswer) {
  Sink sink(Spec("exactly-once"), true);
  sink.Restore(nullptr);
  sink.Write(0);
  sink.Write(1, 1);
  sink.Snapshot(1);
  sink.op->NotifyCheckpointComplete(1);
  const std::vector<nlohmann::json> lines = CommitLogLines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["state"], "committing");
  EXPECT_EQ(lines[1]["state"], "committed");
  for (const nlohmann::json& l : lines) {
    EXPECT_EQ(l["transactional-id"], "job-0-0");
    EXPECT_EQ(l["records"], 2);
    EXPECT_EQ(l["partitions"]["0"]["first-offset"], 0);
    EXPECT_EQ(l["partitions"]["1"]["first-offset"], 0);
  }
  sink.op->Close();
}

// A crash after Kafka committed job-0-0 and before its "committed" line: the restore finds the
// commit in Kafka (the record at the transaction's first acknowledged offset is there) and logs
// it, instead of re-sending it: every record once. (Before, this window wrote it twice.)
TEST_F(KafkaSinkOperatorTest, ACrashBetweenKafkasCommitAndItsLogLineWritesNothingTwice) {
  std::string snapshot;
  {
    Sink sink(Spec("exactly-once"), true);
    sink.Restore(nullptr);
    sink.Write(0);
    sink.Write(1, 1);
    sink.Write(2);
    snapshot = sink.Snapshot(1);
    sink.op->SetAfterKafkaCommitHookForTesting(
        [](const std::string& id) { throw IoError("crash after committing " + id); });
    EXPECT_THROW(sink.op->NotifyCheckpointComplete(1), IoError);
    sink.Crash();
  }
  ASSERT_EQ(CommitLogLines().size(), 1u);
  EXPECT_EQ(CommitLogLines()[0]["state"], "committing");
  EXPECT_TRUE(CommitLog().empty());
  EXPECT_EQ(Values(Topic()), (std::vector<std::string>{Value(0), Value(2), Value(1, 1)}));

  Sink restored(Spec("exactly-once"), true);
  restored.Restore(&snapshot, 1);
  EXPECT_EQ(restored.op->num_transactions_resent(), 0);
  EXPECT_EQ(restored.op->num_transactions_recovered(), 1);
  std::vector<nlohmann::json> log = CommitLog();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0]["transactional-id"], "job-0-0");
  EXPECT_EQ(log[0]["resent"], false);
  EXPECT_EQ(log[0]["records"], 3);
  EXPECT_EQ(Values(Topic()), (std::vector<std::string>{Value(0), Value(2), Value(1, 1)}));
  // The run goes on with the next transaction; a second restore of checkpoint 1 finds it logged.
  restored.Write(3);
  restored.Snapshot(2);
  restored.op->NotifyCheckpointComplete(2);
  restored.Crash();
  Sink again(Spec("exactly-once"), true);
  again.Restore(&snapshot, 1);
  EXPECT_EQ(again.op->num_transactions_resent(), 0);
  EXPECT_EQ(again.op->num_transactions_recovered(), 0);
  EXPECT_EQ(Values(Topic()), (std::vector<std::string>{Value(0), Value(2), Value(3), Value(1, 1)}));
  again.op->Close();
}

// The commit log is opened (its directory created) when the sink starts, before any record goes
// out: a path that cannot hold it fails the task there, not at the first commit.
TEST_F(KafkaSinkOperatorTest, ACommitLogPathThatCannotHoldItFailsBeforeAnyRecord) {
  SinkSpec nested = Spec("exactly-once");
  nested.commit_log = (root_ / "a" / "b" / "commits.jsonl").string();
  Sink ok(nested, true);
  ok.Restore(nullptr);
  EXPECT_TRUE(fs::is_regular_file(nested.commit_log));
  ok.op->Close();

  SinkSpec dir = Spec("exactly-once");
  dir.commit_log = root_.string();  // a directory
  Sink bad(dir, true);
  try {
    bad.Restore(nullptr);
    ADD_FAILURE() << "a directory was accepted as the commit log";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "kafka sink out#0: cannot open commit log '" + root_.string() + "': Is a directory");
  }
  EXPECT_EQ(bad.op->num_records_sent(), 0);
  bad.op->Close();
}

TEST_F(KafkaSinkOperatorTest, AFailureAbortsTheOpenTransactionAndCommitsNothing) {
  Sink sink(Spec("exactly-once"), true);
  sink.Restore(nullptr);
  sink.Write(0);
  sink.Snapshot(1);
  sink.Write(1);
  sink.op->Close();  // a failure: no Finish, checkpoint 1 never completed here
  EXPECT_TRUE(CommitLog().empty());
  EXPECT_EQ(sink.op->num_transactions_committed(), 0);
}

// The restore reuses the transactional ids of the restored checkpoint's transaction and of the
// one open at the crash (init_transactions on them is what fences a zombie and aborts its open
// transaction on a broker; the mock does not enforce producer epochs, so only the reuse of the ids
// is observable here): the restored run's next transaction is job-0-1 again, not a new id.
TEST_F(KafkaSinkOperatorTest, TheRestoreReusesTheOpenTransactionsId) {
  Sink zombie(Spec("exactly-once"), true);
  zombie.Restore(nullptr);
  zombie.Write(0);
  const std::string snapshot = zombie.Snapshot(1);
  zombie.Write(1);  // job-0-1, open
  Sink restored(Spec("exactly-once"), true);
  restored.Restore(&snapshot, 1);
  restored.Write(1);
  restored.op->Finish();
  restored.Snapshot(2);
  restored.op->NotifyCheckpointComplete(2);
  std::vector<nlohmann::json> log = CommitLog();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["transactional-id"], "job-0-0");
  EXPECT_EQ(log[1]["transactional-id"], "job-0-1");
  EXPECT_EQ(log[1]["first-record"], 1);
  zombie.op->Close();
  restored.op->Close();
}

TEST_F(KafkaSinkOperatorTest, AFreshStartContinuesPastTheCommitLog) {
  {
    Sink first(Spec("exactly-once"), false);
    first.Restore(nullptr);
    first.Write(0);
    first.op->Finish();
    first.op->Close();
  }
  Sink second(Spec("exactly-once"), false);
  second.Restore(nullptr);
  second.Write(0);
  second.op->Finish();
  second.op->Close();
  std::vector<nlohmann::json> log = CommitLog();
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[0]["transactional-id"], "job-0-0");
  EXPECT_EQ(log[1]["transactional-id"], "job-0-1");
}

// A produce request the broker refuses (mock request error on ApiKey 0, Produce) fails the task
// at the checkpoint with the broker's reason; the checkpoint is not acknowledged.
TEST_F(KafkaSinkOperatorTest, AProduceErrorFailsTheTaskWithItsCause) {
  SinkSpec spec = Spec("at-least-once");
  Sink sink(spec, true);
  sink.Restore(nullptr);
  sink.Write(0);
  sink.Snapshot(1);  // connected, metadata known
  rd_kafka_mock_push_request_errors(cluster_.raw(), 0 /* Produce */, 1,
                                    RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  sink.Write(1);
  try {
    sink.Snapshot(2);
    FAIL() << "the checkpoint was acknowledged";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("delivery to topic 'out' failed"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("TOPIC_AUTHORIZATION_FAILED"), std::string::npos)
        << e.what();
  }
  sink.op->Close();
}

// The broker refusing a record's timestamp (Kafka 4: more than 1 h ahead of its clock): the cause
// names the broker settings that bound it and the record's timestamp (its event time).
TEST_F(KafkaSinkOperatorTest, AnInvalidTimestampNamesTheBrokersBounds) {
  SinkSpec spec = Spec("at-least-once");
  Sink sink(spec, true);
  sink.Restore(nullptr);
  sink.Write(0);
  sink.Snapshot(1);
  rd_kafka_mock_push_request_errors(cluster_.raw(), 0 /* Produce */, 1,
                                    RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP);
  sink.Write(1);
  try {
    sink.Snapshot(2);
    FAIL() << "the checkpoint was acknowledged";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "kafka sink out#0: delivery to topic 'out' failed: Broker: Invalid timestamp "
              "(partition 0, INVALID_TIMESTAMP); the broker accepts record timestamps only within "
              "its `log.message.timestamp.before.max.ms` / `log.message.timestamp.after.max.ms` "
              "of its own clock (Kafka 4's default: at most 1 h ahead), and the sink writes each "
              "record's event time as its Kafka timestamp");
  }
  sink.op->Close();
}

// The output topic deleted under a running sink: whether its records time out or are refused as
// an unknown topic, the cause says the topic is gone (the mock's metadata then lists it with
// UNKNOWN_TOPIC_OR_PART, as a broker lists a deleted topic by not listing it).
TEST_F(KafkaSinkOperatorTest, ADeletedTopicIsNamedAsTheCause) {
  SinkSpec spec = Spec("at-least-once");
  // The first record must be delivered within its message timeout: 500 ms was too short for the
  // first connection on a loaded machine under ASan (once in ~20 runs the first snapshot failed,
  // the topic still there). The flush's bound is longer than the timeout, so the flush ends when
  // the refused record times out; nothing here waits for the flush's bound to pass.
  spec.kafka_timeout_ms = 20000;
  spec.kafka_properties["message.timeout.ms"] = "3000";
  Sink sink(spec, true);
  sink.Restore(nullptr);
  sink.Write(0);
  sink.Snapshot(1);
  rd_kafka_mock_topic_set_error(cluster_.raw(), "out", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  // The broker refuses every produce (librdkafka retries those, 100 ms apart by default, until
  // the message times out; more refusals than 3 s of retries).
  const std::vector<rd_kafka_resp_err_t> refusals(200, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  rd_kafka_mock_push_request_errors_array(cluster_.raw(), 0 /* Produce */, refusals.size(),
                                          refusals.data());
  sink.Write(1);
  try {
    sink.Snapshot(2);
    FAIL() << "the checkpoint was acknowledged";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what.ends_with("; topic 'out' does not exist on the broker (deleted?)")) << what;
    EXPECT_TRUE(what.starts_with("kafka sink out#0: delivery to topic 'out' failed: ") ||
                what.starts_with("kafka sink out#0: 1 records to topic 'out' not acknowledged"))
        << what;
  }
  sink.op->Close();
}

// A producer fenced at commit: the cause names both producers that can have taken its id, and the
// key to change when it is another job.
TEST_F(KafkaSinkOperatorTest, AFencedCommitNamesTheSharedPrefixAsAPossibleCause) {
  Sink sink(Spec("exactly-once"), true);
  sink.Restore(nullptr);
  sink.Write(0);
  sink.Snapshot(1);
  rd_kafka_mock_push_request_errors(cluster_.raw(), 26 /* EndTxn */, 1,
                                    RD_KAFKA_RESP_ERR_PRODUCER_FENCED);
  try {
    sink.op->NotifyCheckpointComplete(1);
    FAIL() << "the commit went through";
  } catch (const IoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot commit transaction 'job-0-0' of checkpoint 1: "), std::string::npos)
        << what;
    EXPECT_NE(what.find("(_FENCED: a newer producer with the same transactional id has taken "
                        "over: a restored run of this job, or another job or run whose Kafka sink "
                        "uses the same transactional-id-prefix 'job' on these brokers; if it is "
                        "another job, give each job its own `transactional-id-prefix`)"),
              std::string::npos)
        << what;
  }
  sink.op->Close();
}

TEST_F(KafkaSinkOperatorTest, AnUnknownPropertyIsAnErrorNamingIt) {
  SinkSpec spec = Spec("none");
  spec.kafka_properties["no.such.thing"] = "1";
  try {
    Sink sink(spec, false);
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'no.such.thing'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tidemark
