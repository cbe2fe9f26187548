#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "runtime/io/kafka_client.h"
#include "sources/source_reader.h"

namespace tidemark {

/// Stopping offset of an unbounded partition (Flink's KafkaPartitionSplit.NO_STOPPING_OFFSET).
inline constexpr int64_t kKafkaNoStoppingOffset = INT64_MAX;

/// Where a reader's split of a Kafka topic-partition stands (Flink's `KafkaPartitionSplit`):
/// `next_offset` is the offset of the next record to emit — before the first one possibly a
/// librdkafka logical offset (RD_KAFKA_OFFSET_BEGINNING / _END); `stopping_offset` is the offset
/// to stop before (kKafkaNoStoppingOffset: unbounded). The split id is `topic-partition`.
struct KafkaPartitionPosition {
  std::string topic;
  int32_t partition = 0;
  int64_t next_offset = RD_KAFKA_OFFSET_BEGINNING;
  int64_t stopping_offset = kKafkaNoStoppingOffset;
  int64_t records = 0;  ///< records emitted from this partition
  std::string SplitId() const { return topic + "-" + std::to_string(partition); }
};

/// Gives the offset of the first record of `topic`/`partition` with a timestamp at or after
/// `timestamp_ms`, or -1 when there is none (then the partition starts at its end, as Flink's
/// `OffsetsInitializer.timestamp`). Called on the reader's discovery thread; may block. The
/// default asks the broker (rd_kafka_offsets_for_times); librdkafka's mock cluster cannot answer
/// it, so tests replace it (`KafkaSource::SetTimestampLookup`).
using KafkaTimestampLookup = std::function<int64_t(rd_kafka_t* consumer, const std::string& topic,
                                                   int32_t partition, int64_t timestamp_ms)>;

/// `source.type: kafka` — Flink's FLIP-27 `KafkaSource` on librdkafka (docs/job-reference.md: the
/// keys). Each topic-partition is a split (id `topic-partition`), with its own watermark
/// generator, idleness and alignment pausing through the SourceOperator's split outputs.
///
/// - **Partitions.** There is no split enumerator thread: each reader discovers the partitions
///   of `topics` / `topic-pattern` itself, on its own discovery thread (metadata look-ups block
///   there, never on the task thread), and keeps those Flink's KafkaSourceEnumerator would give
///   its subtask: `((hash(topic) * 31 & 0x7fffffff) % parallelism + partition) % parallelism`
///   (Java's String hash, over the topic's bytes). Discovery repeats every
///   `partition-discovery-interval` (default 5 min; 0: once); a bounded source discovers once.
///   A round whose look-ups get no answer for `properties.default.api.timeout.ms` (default
///   60000, the Kafka Java client's; taken out of the properties, librdkafka has no such key)
///   fails the job naming the brokers, as Flink's KafkaSourceEnumerator fails with "Failed to
///   list subscribed topic partitions" when its AdminClient times out.
/// - **Starting offsets** are resolved on the discovery thread: earliest, latest, committed (of
///   `group-id`, else `starting-offsets-reset`), timestamp (`KafkaTimestampLookup`), specific.
///   **Bounded** (`bounded: latest` — the high watermark when the partition was discovered — or
///   `bounded: specific`): a partition ends at its stopping offset; once every partition ended
///   the input ends (the task sends MAX). A reader that owns no partition ends at once when
///   bounded; unbounded it stays idle (both sides of its output start idle), taking no part in
///   alignment. Under `isolation.level: read_committed` a partition's last offsets may be
///   transaction markers or aborted records that are never delivered: once its queue is drained
///   the position moves up to the end the last end-of-partition event reported
///   (enable.partition.eof is always on), so a bounded partition still ends.
/// - **No polling on the task thread.** librdkafka fetches on its own threads into one queue per
///   partition (`rd_kafka_queue_get_partition`, forwarded nowhere); a queue's event callback
///   wakes the task (`SourceReaderContext::AvailabilityNotifier`). `PollNext` takes what is
///   already queued (never waits on the network, up to 1024 messages of a partition at once)
///   and emits one record; partitions take turns by fetched batch: the rest of a partition's
///   batch is emitted as a run before the next partition's turn (one record a turn in the
///   deterministic mode below). Each partition keeps its own watermark, so the interleaving
///   makes no record late.
///   A partition paused for watermark alignment is simply not drained: what librdkafka fetched
///   stays queued (rd_kafka_pause_partitions would purge it).
/// - **Virtual clock, bounded.** The order is fixed: round-robin over the unfinished, unpaused
///   partitions, exactly as the sequence source; when the partition whose turn it is has records
///   left but none fetched yet, the reader waits for them (a few ms per poll, returning
///   kMoreAvailable so no processing time passes), so runs are identical whatever the fetch
///   timing. Unbounded under the virtual clock the reader cannot know what is coming: it lets
///   time pass (100 ms steps) while nothing is fetched.
/// - **Values.** `format: json`: the value is decoded with the file source's JSON rules
///   (sources/text_input.h LineDecoder); a bad value (and a null value, a tombstone) becomes a
///   row of side output `errors` (split id, the record's offset as `line`, reason, text), never
///   fails the job. `format: raw`: one string field `value` (NULL for a tombstone). `key-field`
///   appends the record key as a string field. The source timestamp is the record's timestamp
///   (CreateTime or LogAppendTime); a field instead: `watermarks: {timestamp-field: ...}`.
/// - **Checkpoints.** `SnapshotState` gives every split the reader holds, finished ones too (so
///   a restored reader does not discover them again — Flink keeps them in its enumerator's
///   state), with the offset after the last record emitted; restore reads from there, not from
///   the committed offsets. The offsets of checkpoint n are committed to `group-id` (async) when
///   n completes (`NotifyCheckpointComplete`), never otherwise (enable.auto.commit is off); a
///   failed commit counts `commitsFailed` and changes nothing else.
/// - **A deleted topic.** librdkafka reports an assigned partition whose topic is gone
///   (RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, _UNKNOWN_PARTITION) through the error callback
///   while its queue is drained. 2.0.2 does so on a single metadata answer, which a lagging
///   broker can give for a healthy topic, so the report starts a grace of
///   `topic.metadata.propagation.max.ms` (default 30000) on the task's clock, and a checker
///   thread asks the brokers for the topic's metadata (at most every second): listed again, or
///   records from the partition again, settle it; still unlisted once the grace has passed fails
///   the job ("Kafka topic 'T' partition P no longer exists at ... (deleted?)"). A split that
///   had reached its stopping offset is finished and not concerned. Under the virtual clock a
///   bounded reader lets time pass while its partition is reported missing.
/// - **Close never hangs.** The consumer is closed on a thread of its own (CloseInBackground),
///   which drains every partition queue after rd_kafka_consumer_close; the task waits for it
///   only while commits are in flight, and never longer than close_timeout().
/// - **Metrics** (Flink's KafkaSourceReader names): per split `split.<id>.records`,
///   `split.<id>.currentOffset`, `split.<id>.committedOffset`, `split.<id>.pendingRecords`
///   (high watermark − next offset, from librdkafka's cached watermarks); per reader
///   `commitsSucceeded`, `commitsFailed`, `pendingRecords`, and `partitionsMissing` (tidemark's:
///   partitions reported unknown, not settled yet).
///
/// With `mock-cluster`, construction starts librdkafka's in-process mock cluster, creates the
/// topic and loads the file into it (sources/kafka/kafka_mock_load.h); the cluster lives as long
/// as the source. Immutable after construction (but for `SetTimestampLookup`, before any reader).
class KafkaSource : public Source {
 public:
  /// `spec.kafka.mock->load` must already be resolved. Throws InvalidArgument (bad schema,
  /// a Kafka property librdkafka rejects) or IoError (the mock cluster or its loading failed).
  explicit KafkaSource(const SourceSpec& spec);
  ~KafkaSource() override;

  const Schema& schema() const override { return schema_; }
  /// None: readers discover their partitions (see class comment).
  std::vector<std::unique_ptr<SourceSplit>> CreateSplits() const override { return {}; }
  std::unique_ptr<SourceReader> CreateReader(int subtask_index) const override;
  /// Section `kafka-split` v1: topic, partition, next offset, stopping offset, records.
  /// Throws StateCorrupt for a truncated or impossible split.
  std::unique_ptr<SourceSplit> RestoreSplit(StateReader& reader) const override;

  const SourceSpec& spec() const { return spec_; }
  /// `bootstrap-servers`, or the mock cluster's address.
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }
  /// The mock cluster of `mock-cluster` (null without).
  KafkaMockCluster* mock_cluster() const { return mock_.get(); }
  /// The value's schema (without the key field).
  const Schema& value_schema() const { return value_schema_; }
  const KafkaTimestampLookup& timestamp_lookup() const { return timestamp_lookup_; }
  /// Replaces the look-up of `starting-offsets: timestamp`. Before any reader is created.
  void SetTimestampLookup(KafkaTimestampLookup lookup) { timestamp_lookup_ = std::move(lookup); }

  /// The subtask Flink's KafkaSourceEnumerator assigns `topic`/`partition` to.
  static int OwnerOf(const std::string& topic, int32_t partition, int parallelism);

  /// Closes and destroys a reader's `consumer` on a thread of its own, so a reader's Close (and
  /// the job's finish) does not wait for it: 0.5-14 ms in kafka_scan. In order: `hook` (tests;
  /// may be empty), rd_kafka_consumer_close (unassigns, lets commits in flight land), then each
  /// of `partition_queues` (the reader's rd_kafka_queue_get_partition queues, every partition it
  /// was assigned) drained and destroyed, `commit_queue` (may be null) destroyed, and
  /// rd_kafka_destroy. The drain matters: an op left in the queue of a partition whose topic was
  /// deleted keeps that partition, and so its broker thread, alive, and rd_kafka_destroy waits
  /// for that thread for ever. The returned future is ready once all is done. The source's
  /// destructor waits for every consumer handed here, before the mock cluster stops, but all
  /// within `close_timeout()`: one not closed by then is left to its (detached) thread, logged
  /// and counted (LeakedConsumers). Thread-safe (readers of several subtasks).
  std::shared_future<void> CloseInBackground(KafkaHandle consumer, KafkaQueue commit_queue,
                                             std::vector<KafkaQueue> partition_queues,
                                             std::function<void()> hook = {}) const;
  /// How long a reader's Close waits for its consumer's close when commits are in flight, and
  /// the source's destructor for all consumers still closing (default 5 s; the daemon kills a
  /// worker 30 s after a cancel).
  std::chrono::milliseconds close_timeout() const;
  /// Replaces close_timeout(). Before any reader is closed.
  void SetCloseTimeoutForTesting(std::chrono::milliseconds timeout);
  /// Consumers of this process whose close did not end within the close timeout (their threads
  /// were detached).
  static int64_t LeakedConsumers();

 private:
  SourceSpec spec_;
  Schema value_schema_;
  Schema schema_;
  std::shared_ptr<KafkaMockCluster> mock_;
  std::string bootstrap_servers_;
  KafkaTimestampLookup timestamp_lookup_;
  struct Closers;
  std::unique_ptr<Closers> closers_;  // after mock_: joined before the cluster stops
};

/// A split of a KafkaSource.
class KafkaSplit : public SourceSplit {
 public:
  explicit KafkaSplit(KafkaPartitionPosition position) : position_(std::move(position)) {}
  std::string SplitId() const override { return position_.SplitId(); }
  void WriteTo(StateWriter& writer) const override;
  const KafkaPartitionPosition& position() const { return position_; }

 private:
  KafkaPartitionPosition position_;
};

}  // namespace tidemark
