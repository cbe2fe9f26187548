#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "operators/json_row_formatter.h"
#include "runtime/graph/job_resources.h"
#include "runtime/io/kafka_client.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// The Kafka sink: `type: kafka`. Mirrors Flink's `KafkaSink` (a `TwoPhaseCommittingSink` whose
/// `KafkaWriter` and `KafkaCommitter` run as one operator, as Flink chains them).
///
/// Each record becomes one Kafka message on `topic`: value = the row as JSON (JsonRowFormatter,
/// byte for byte `Schema::RowToJson`), key = the `key-field` value as text (strings as they are,
/// numbers in decimal, bools true/false; NULL: no key), partition = the `partition-field` int64
/// value (NULL or no field: librdkafka's partitioner), timestamp = the record's event timestamp
/// (CreateTime; none: the producer's clock).
///
/// `delivery-guarantee` (Flink's `DeliveryGuarantee`):
///   none           produce; nothing waited for at a checkpoint (records in flight may be lost);
///   at-least-once  at every checkpoint barrier the producer is flushed — every delivery report
///                  received — before the snapshot is acknowledged; a restore replays what came
///                  after, so records may repeat, never vanish;
///   exactly-once   one Kafka transaction per checkpoint interval (see below).
/// Under every guarantee a failed delivery (a delivery report with an error, or a flush not done
/// within `timeout`) fails the task with the Kafka error as cause; nothing is dropped silently.
/// On that error path only, a cause that does not say why (a timeout, an unknown partition) gets
/// the answer of one metadata request (all topics): "topic 'x' does not exist on the broker
/// (deleted?)"; INVALID_TIMESTAMP names the broker's timestamp bounds, _FENCED the two producers
/// that can have taken the transactional id (a restored run, or a job sharing the prefix).
///
/// Exactly-once. Transaction k (k = 0, 1, ... per subtask; transactional id
/// `<transactional-id-prefix>-<subtask>-<k>`, one producer per transaction) begins at the first
/// record after a barrier; the barrier of checkpoint n pre-commits it (flush: every record
/// acknowledged by its partition leader) and records it, with its records (a write-ahead copy),
/// in n's state; `NotifyCheckpointComplete(n)` commits every pre-committed transaction of
/// checkpoints <= n (an aborted checkpoint's transaction commits with the next completed one) and
/// writes two lines per commit to `commit-log` (each fsynced): `"state":"committing"` before the
/// commit request goes to Kafka, `"state":"committed"` once Kafka confirmed it. Intervals without
/// records open no transaction (as Flink's KafkaWriter).
/// librdkafka cannot resume another producer's transaction (Flink does, by producer id and
/// epoch), so a restore from checkpoint n re-sends instead: every transaction pre-committed in n
/// whose id the commit log does not list is sent again, under the same transactional id (whose
/// `init_transactions` fences the crashed producer and aborts what it left open), and committed.
/// One the log lists as committing only (a crash while its commit was under way) is fenced first,
/// then asked of Kafka: a `read_committed` consumer reads the partition of its first acknowledged
/// record from that offset; the record there means the commit went through (logged committed,
/// not re-sent), a later offset or the partition's end past it means it was aborted (re-sent);
/// no answer within `timeout` fails the restore (retried by the restart strategy), never guesses.
/// The transaction open after the barrier (id k = the restored next number) and the one after it
/// are fenced and aborted the same way; the new run continues at k. A fresh start continues past
/// the highest transaction number of this prefix and subtask in the commit log.
/// librdkafka's mock cluster writes no transaction markers (its read_committed consumers see
/// aborted records), so there only the committed side of that question is observable.
/// End of input: `Finish` pre-commits the open transaction; with checkpointing the final
/// checkpoint commits it, without `checkpointing:` `Finish` commits it.
///
/// Threading: mailbox thread only. librdkafka's own threads do the network I/O; the task thread
/// calls only non-blocking produce/poll per record, and bounded (`timeout`) flush, init, commit
/// and abort at barriers, checkpoint completion, restore and end of input. Delivery reports run
/// on the task thread (from poll/flush). Errors: `IoError` for Kafka failures (the task fails),
/// `InvalidArgument` for bad properties, `StateCorrupt` for unreadable state.
class KafkaSinkOperator : public StreamOperator {
 public:
  /// `checkpointing`: whether the job checkpoints (decides who commits at end of input).
  KafkaSinkOperator(SinkSpec spec, Schema schema, std::shared_ptr<SinkResult> result,
                    int subtask_index, bool checkpointing);
  ~KafkaSinkOperator() override;

  void Open(const OperatorContext& context) override;
  void ProcessElement(StreamRecord& record, int input) override;
  void ProcessWatermark(Watermark watermark, int input) override;
  void ProcessWatermarkStatus(WatermarkStatus, int) override {}
  void Finish() override;
  void Close() override;

  void SnapshotState(StateSnapshotContext& context) override;
  void InitializeState(StateInitializationContext& context) override;
  void NotifyCheckpointComplete(int64_t checkpoint_id) override;

  /// Flink's KafkaSink writer metrics (`numRecordsSend`, `numRecordsSendErrors`) and
  /// `numTransactionsCommitted` / `numTransactionsResent` / `numTransactionsRecovered`
  /// (exactly-once; recovered: found committed in Kafka after a crash mid-commit).
  void CollectMetrics(MetricsWriter& out) const override;

  int64_t num_transactions_committed() const { return num_committed_; }
  int64_t num_transactions_resent() const { return num_resent_; }
  int64_t num_transactions_recovered() const { return num_recovered_; }
  /// Tests only: runs right after Kafka confirmed the commit of `transactional_id`, before its
  /// `committed` line is written (a throw there is a crash between the two). Mailbox thread.
  void SetAfterKafkaCommitHookForTesting(
      std::function<void(const std::string& transactional_id)> hook) {
    after_kafka_commit_hook_ = std::move(hook);
  }
  /// Tests only: the environment variable TM_TEST_KAFKA_SINK_STOP_AT_TRANSACTION, read once in
  /// `Open` (nothing per record; unset in production, where it costs one branch per transaction).
  /// Set to a transaction number k (decimal, >= 0), an exactly-once sink subtask stops its whole
  /// process with SIGSTOP (`raise`) once the first record of its transaction k is acknowledged by
  /// the partition leader, before anything else happens to that transaction: a transaction is
  /// then certainly open at the broker, with a record, and not pre-committed, and no commit is
  /// under way (commits run on this thread). It logs one line at `warn` first. A parent sees the
  /// stop with `waitpid(WUNTRACED)` and then kills or continues the process (the kafka_broker
  /// tests' crash and zombie cases). Once per subtask and process; with parallelism > 1 each
  /// subtask stops at its own transaction k. Not a number: `Open` fails with InvalidArgument.
  static constexpr const char* kStopAtTransactionEnvForTesting =
      "TM_TEST_KAFKA_SINK_STOP_AT_TRANSACTION";
  size_t num_pending_transactions() const { return pending_.size(); }
  int64_t num_records_sent() const { return num_sent_; }

  /// One message as produced (the write-ahead copy of an exactly-once transaction).
  struct Message {
    bool has_key = false;
    std::string key;
    std::string value;
    int32_t partition = -1;    ///< RD_KAFKA_PARTITION_UA when -1
    int64_t timestamp_ms = 0;  ///< 0: the producer's clock
  };
  /// What the delivery reports of one producer said, per partition.
  struct PartitionRange {
    int64_t first_offset = -1;
    int64_t last_offset = -1;
    int64_t records = 0;
  };
  struct Deliveries {
    int64_t outstanding = 0;  ///< produced, no report yet
    int64_t delivered = 0;
    std::string first_error;  ///< empty: none
    rd_kafka_resp_err_t first_error_code = RD_KAFKA_RESP_ERR_NO_ERROR;
    std::map<int32_t, PartitionRange> partitions;
    std::string transactional_id_prefix;  ///< the sink's, for the text of a fenced producer
  };

 private:
  struct Producer {
    // Declared first, destroyed last: the handle (its threads, any delivery report it still
    // serves) goes before the callback's opaque.
    std::unique_ptr<Deliveries> deliveries;  // the dr callback's opaque: stable address
    KafkaHandle handle;
  };
  struct Transaction {
    int64_t number = 0;
    std::string id;
    int64_t checkpoint_id = kUnassigned;
    int64_t first_record = 0;  ///< this subtask's record sequence numbers [first, end)
    int64_t end_record = 0;
    std::vector<Message> messages;  ///< write-ahead copy
    /// Per partition, what the pre-commit's delivery reports acknowledged (offsets in Kafka).
    std::map<int32_t, PartitionRange> acknowledged;
    std::unique_ptr<Producer> producer;  ///< null for a restored transaction
  };
  static constexpr int64_t kUnassigned = INT64_MAX;

  bool exactly_once() const { return spec_.delivery_guarantee == "exactly-once"; }
  std::string TransactionalId(int64_t number) const;
  /// A producer; `transactional_id` empty: a plain one. Transactional: init_transactions done.
  std::unique_ptr<Producer> MakeProducer(const std::string& transactional_id);
  /// Non-blocking produce of `m` (waits, bounded, only while librdkafka's local queue is full).
  void Produce(Producer& p, const Message& m);
  /// Serves delivery reports (`timeout_ms` 0: non-blocking); throws the first delivery error.
  void Poll(Producer& p, int timeout_ms);
  /// Waits (bounded) until every message of `p` is acknowledged; throws on error or timeout.
  void Flush(Producer& p, const char* why);
  /// Throws the first delivery error, if any (for a timed-out message, with whether the topic
  /// still exists).
  void ThrowIfFailed(const Producer& p) const;
  /// Error path only: whether the cluster's metadata (all topics, one request bounded by
  /// `timeout` and 10 s) lacks `topic`; false when it cannot be had.
  bool TopicMissing(const Producer& p) const;
  /// Commits `t` (its producer's transaction) and records it in the commit log.
  void CommitTransaction(Transaction& t, bool resent);
  void CommitUpTo(int64_t checkpoint_id);
  /// init_transactions under transaction number `number`'s id, then closes: fences the producer
  /// that used it and aborts its open transaction.
  void FenceTransaction(int64_t number);
  /// Re-sends a restored pre-committed transaction in a fresh producer and commits it.
  void ResendTransaction(Transaction& t);
  /// What the commit log says of this prefix and subtask's transactions.
  struct CommitLogState {
    std::set<std::string> committed;   ///< a `committed` line (or a line of the first format)
    std::set<std::string> committing;  ///< only a `committing` line: the outcome is Kafka's
    int64_t max_number = -1;           ///< highest transaction number in any line (-1: none)
  };
  CommitLogState ReadCommitLog() const;
  /// Opens `commit-log` for appending (creating it and its directory) unless open; `IoError`.
  void OpenCommitLog();
  void AppendCommitLog(const Transaction& t, const char* state, bool resent);
  /// After a crash mid-commit: whether Kafka committed `t` (see the class comment). Fences first.
  bool CommittedInKafka(const Transaction& t);
  void DestroyProducer(std::unique_ptr<Producer>& p, bool abort);
  /// Flushes the open transaction, logs, raises SIGSTOP (kStopAtTransactionEnvForTesting).
  void StopForTesting();

  SinkSpec spec_;
  Schema schema_;
  std::shared_ptr<SinkResult> result_;
  int subtask_index_;
  bool checkpointing_;
  JsonRowFormatter json_;
  int key_slot_ = -1;
  int partition_slot_ = -1;

  std::unique_ptr<Producer> plain_;       ///< none / at-least-once
  std::unique_ptr<Transaction> current_;  ///< exactly-once: the open transaction
  std::vector<Transaction> pending_;      ///< exactly-once: pre-committed, not yet committed
  int64_t next_transaction_ = 0;
  int64_t next_record_ = 0;
  int commit_log_fd_ = -1;

  Timestamp watermark_ = kMinTimestamp;
  int64_t num_sent_ = 0;
  int64_t num_send_errors_ = 0;
  int64_t num_committed_ = 0;
  int64_t num_resent_ = 0;
  int64_t num_recovered_ = 0;
  std::function<void(const std::string&)> after_kafka_commit_hook_;
  int64_t stop_at_transaction_for_testing_ = -1;  ///< -1: never (kStopAtTransactionEnvForTesting)
  bool finished_ = false;
};

}  // namespace tidemark
