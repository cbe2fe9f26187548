#include "sources/kafka/kafka_source.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "runtime/core/logging.h"
#include "sources/kafka/kafka_mock_load.h"
#include "sources/text_input.h"

namespace tidemark {
namespace {

constexpr std::string_view kSplitSection = "kafka-split";
constexpr uint32_t kSplitVersion = 1;
constexpr int kLookupTimeoutMs = 10000;
// The Kafka Java client's `default.api.timeout.ms` (what Flink's KafkaSource gives its
// AdminClient for partition discovery through `properties`): librdkafka has no such property, so
// the source takes it out of `properties` and bounds each discovery round with it.
constexpr std::string_view kApiTimeoutProperty = "default.api.timeout.ms";
constexpr int64_t kDefaultApiTimeoutMs = 60000;  // the Java client's default

// `default.api.timeout.ms` of `properties` (removed from them), or the default. Throws
// InvalidArgument for a value that is not a whole number of milliseconds >= 1.
int64_t TakeApiTimeout(std::map<std::string, std::string>& properties) {
  auto it = properties.find(std::string(kApiTimeoutProperty));
  if (it == properties.end()) {
    return kDefaultApiTimeoutMs;
  }
  const std::string text = it->second;
  properties.erase(it);
  size_t used = 0;
  int64_t ms = 0;
  try {
    ms = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || ms < 1 || ms > INT32_MAX) {
    throw InvalidArgument(fmt::format(
        "Kafka property '{}': expected milliseconds as a whole number from 1 to {}, got \"{}\"",
        kApiTimeoutProperty, INT32_MAX, text));
  }
  return ms;
}
constexpr size_t kBatch = 1024;  // messages taken from a partition queue at once

// How long an assigned partition may be reported missing (unknown topic or partition) before the
// job fails: librdkafka's `topic.metadata.propagation.max.ms` (its default), the window librdkafka
// 2.10+ itself allows an existing topic before it reports it missing (#4970). 2.0.2 reports it on
// the first metadata answer without it, which a lagging broker can give for a healthy topic.
constexpr std::string_view kMissingGraceProperty = "topic.metadata.propagation.max.ms";
constexpr int64_t kDefaultMissingGraceMs = 30000;
constexpr int kCheckTimeoutMs = 5000;  // one metadata look-up of the missing-topic checker
// How long a reader's Close waits for its consumer's close (commits in flight), and the source's
// destructor for every consumer still closing, before leaving them to a detached thread.
constexpr std::chrono::milliseconds kDefaultCloseTimeout{5000};

std::atomic<int64_t> leaked_consumers{0};

// librdkafka hands the errors it puts into a partition's queue (RD_KAFKA_OP_ERR: "topic does not
// exist", "desired partition is no longer available") to the error callback from inside
// rd_kafka_consume_batch_queue, never as messages; without a callback it only logs them. Fill
// points this at a vector while it drains a queue on the task thread, so they reach the reader.
thread_local std::vector<std::pair<rd_kafka_resp_err_t, std::string>>* tls_queue_errors = nullptr;
thread_local bool tls_closing = false;  // a closer thread: errors met while closing are dropped

void OnKafkaError(rd_kafka_t* rk, int err, const char* reason, void* /*opaque*/) {
  if (tls_queue_errors != nullptr) {
    tls_queue_errors->emplace_back(static_cast<rd_kafka_resp_err_t>(err), reason);
    return;
  }
  if (!tls_closing) {  // what librdkafka logs when there is no error callback
    GetLogger("task")->error("kafka source: {}: {}", rd_kafka_name(rk), reason);
  }
}

// The errors by which librdkafka says an assigned partition, or its topic, is gone.
bool IsUnknownPartition(rd_kafka_resp_err_t err) {
  return err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART ||
         err == RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION || err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC;
}

// Empties a partition queue of what librdkafka left in it (messages fetched past a split's end,
// error ops). A queued op holds a reference on its partition, and a partition no longer in its
// topic (deleted) is purged by nobody else: rd_kafka_destroy would wait for ever for the broker
// thread that partition still references.
void DrainQueue(rd_kafka_queue_t* queue) {
  std::vector<rd_kafka_message_t*> batch(256, nullptr);
  while (true) {
    const ssize_t got = rd_kafka_consume_batch_queue(queue, 0, batch.data(), batch.size());
    if (got <= 0) {
      return;
    }
    for (ssize_t i = 0; i < got; ++i) {
      rd_kafka_message_destroy(batch[static_cast<size_t>(i)]);
    }
  }
}

int64_t MissingGraceMs(const std::map<std::string, std::string>& properties) {
  auto it = properties.find(std::string(kMissingGraceProperty));
  if (it == properties.end()) {
    return kDefaultMissingGraceMs;
  }
  try {
    return std::max<int64_t>(0, std::stoll(it->second));  // librdkafka validated it
  } catch (const std::exception&) {
    return kDefaultMissingGraceMs;
  }
}

int64_t DefaultTimestampLookup(rd_kafka_t* rk, const std::string& topic, int32_t partition,
                               int64_t timestamp_ms) {
  KafkaPartitionList list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition)->offset = timestamp_ms;
  if (rd_kafka_offsets_for_times(rk, list.get(), kLookupTimeoutMs) != RD_KAFKA_RESP_ERR_NO_ERROR ||
      list->elems[0].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return -1;
  }
  return list->elems[0].offset;
}

// What the reader's task thread and its discovery thread share, and what librdkafka's queue
// callbacks signal. Lives (shared_ptr) until the last of them is done with it.
struct Shared {
  std::mutex mu;
  std::condition_variable cv;                      // data arrived / discovery posted / stop
  uint64_t events = 0;                             // bumped on every signal (guarded by mu)
  std::vector<KafkaPartitionPosition> discovered;  // not yet taken by the task thread
  bool discovery_done = false;  // no more partitions will be posted (bounded / once)
  int64_t rounds = 0;           // discovery rounds that succeeded
  std::string error;            // a discovery failure that fails the job
  bool stop = false;
  // The missing-partition checker: topics to look up (task thread → checker), and the latest
  // answer for each (checker → task thread), numbered by `check_seq`.
  struct TopicCheck {
    uint64_t seq = 0;
    bool found = false;            // listed without a topic error
    std::set<int32_t> partitions;  // its partitions, when found
  };
  std::set<std::string> check_topics;
  bool check_now = false;  // a new topic to look up: do not wait for the interval
  std::map<std::string, TopicCheck> checks;
  uint64_t check_seq = 0;
  std::function<void()> notify;  // wakes the task (thread-safe), may be empty

  void Signal() {
    {
      std::lock_guard<std::mutex> lock(mu);
      ++events;
    }
    cv.notify_all();
    if (notify) {
      notify();
    }
  }
};

// librdkafka's queue callback: a partition queue became non-empty (librdkafka thread).
void OnQueueEvent(rd_kafka_t* /*rk*/, void* opaque) {
  static_cast<Shared*>(opaque)->Signal();
}

int32_t JavaStringHash(const std::string& s) {
  uint32_t h = 0;
  for (unsigned char c : s) {
    h = 31 * h + c;
  }
  return static_cast<int32_t>(h);
}

class KafkaReader : public SplitReaderBase {
 public:
  explicit KafkaReader(const KafkaSource& source)
      : source_(source),
        spec_(source.spec().kafka),
        raw_(spec_.format == "raw"),
        layout_(source.schema().layout()),
        decoder_(LineDecoder::Format::kJson, source.value_schema(), ',', layout_),
        shared_(std::make_shared<Shared>()) {}

  ~KafkaReader() override { Close(); }

  void Start(SourceReaderContext& context) override {
    context_ = &context;
    start_time_ = context.processing_time().GetCurrentProcessingTime();
    shared_->notify = context.AvailabilityNotifier();
  }

  void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) override {
    std::vector<KafkaPartitionPosition> positions;
    for (auto& s : splits) {
      const auto* split = dynamic_cast<const KafkaSplit*>(s.get());
      if (split == nullptr) {
        throw tidemark::Error(fmt::format("split {} is not a Kafka split", s->SplitId()));
      }
      positions.push_back(split->position());
    }
    if (consumer_) {
      Assign(std::move(positions));
    } else {
      restored_.insert(restored_.end(), positions.begin(), positions.end());
    }
  }

  InputStatus PollNext(ReaderOutput& output) override {
    if (!consumer_) {
      Connect();
    }
    if (missing_ > 0) {
      CheckMissing();  // fails the job once a missing partition stayed missing long enough
    }
    // Discovery results and commit events: every 256 polls while records flow, at every poll
    // while there is nothing to emit (a lock and a librdkafka poll per record would cost more
    // than the record).
    if (!discovered_once_ || starved_ || outputs_pending_ || (++polls_ & 255) == 0) {
      TakeDiscovered(output);
      ServeCallbacks();
      if ((polls_ & 0xFFFF) == 0) {
        UnassignFinished();  // records flow without a pause: still not fetched on for long
      }
    }
    starved_ = false;
    if (!discovered_once_) {
      return WaitOrNothing(/*know_more_is_coming=*/true);
    }
    // The next unfinished, unpaused partition, round-robin (the sequence source's order).
    const size_t n = parts_.size();
    bool any_open = false;
    size_t picked = n;
    for (size_t i = 0; i < n; ++i) {
      Part& p = *parts_[(next_ + i) % n];
      if (p.done) {
        continue;
      }
      any_open = true;
      if (AnyPaused() && IsPaused(p.pos.SplitId())) {  // (no split id built per record)
        continue;  // alignment: not drained, what librdkafka fetched stays in its queue
      }
      if (deterministic_) {
        picked = (next_ + i) % n;
        break;
      }
      if (Fill(p)) {
        picked = (next_ + i) % n;
        break;
      }
      if (p.pos.next_offset >= p.pos.stopping_offset) {  // drained to its end (see Fill)
        Finish(p, output);
        return InputStatus::kMoreAvailable;
      }
    }
    if (picked == n) {
      if (!any_open && bounded() && discovery_done_) {
        return InputStatus::kEndOfInput;
      }
      return WaitOrNothing(false);
    }
    const int64_t pacing = source_.spec().pacing_ms;
    if (pacing > 0) {
      const Timestamp due = start_time_ + emitted_total_ * pacing;
      if (context_->processing_time().GetCurrentProcessingTime() < due) {
        context_->WakeUpAt(due);
        return InputStatus::kNothingAvailable;
      }
    }
    Part& p = *parts_[picked];
    if (!Fill(p)) {
      if (p.pos.next_offset >= p.pos.stopping_offset) {  // drained to its end (see Fill)
        Finish(p, output);
        return InputStatus::kMoreAvailable;
      }
      // Deterministic mode: its records are on their way (the partition is not at its end),
      // unless it is reported missing: then time passes (the grace counts on the task's clock).
      return WaitOrNothing(p.missing_since < 0);
    }
    rd_kafka_message_t* m = p.batch[p.batch_pos];
    p.batch[p.batch_pos++] = nullptr;
    const KafkaMessage owned(m);
    if (m->offset < p.pos.next_offset && p.pos.next_offset >= 0) {
      return InputStatus::kMoreAvailable;  // before the position (a re-fetch): already emitted
    }
    if (m->offset >= p.pos.stopping_offset) {
      Finish(p, output);
      return InputStatus::kMoreAvailable;
    }
    p.pos.next_offset = m->offset + 1;
    Emit(p, *m, output);
    ++emitted_total_;
    // Deterministic: one record per partition, round-robin. Otherwise the rest of the
    // partition's fetched batch is emitted as a run (the order across partitions is the fetch
    // timing's anyway, and each partition keeps its own watermark): its messages are read one
    // after another where librdkafka put them, instead of hopping between as many fetch buffers,
    // watermark generators and split outputs as there are partitions at every record.
    next_ = !deterministic_ && p.batch_pos < p.batch_len ? picked : (picked + 1) % n;
    if (p.pos.next_offset >= p.pos.stopping_offset) {
      Finish(p, output);
    }
    return InputStatus::kMoreAvailable;
  }

  std::vector<std::unique_ptr<SourceSplit>> SnapshotState(int64_t checkpoint_id) override {
    std::vector<std::unique_ptr<SourceSplit>> out;
    std::vector<std::pair<KafkaPartitionPosition, int64_t>> commit;
    const size_t n = parts_.size();
    for (size_t k = 0; k < n; ++k) {
      const Part& p = *parts_[(next_ + k) % n];
      out.push_back(std::make_unique<KafkaSplit>(p.pos));
      if (p.pos.next_offset >= 0) {
        commit.emplace_back(p.pos, p.pos.next_offset);
      }
    }
    // Splits restored but not assigned yet (no poll since the restore) keep their positions.
    for (const KafkaPartitionPosition& r : restored_) {
      out.push_back(std::make_unique<KafkaSplit>(r));
    }
    pending_commits_[checkpoint_id] = std::move(commit);
    return out;
  }

  void NotifyCheckpointComplete(int64_t checkpoint_id) override {
    auto it = pending_commits_.find(checkpoint_id);
    if (it == pending_commits_.end()) {
      return;
    }
    std::vector<std::pair<KafkaPartitionPosition, int64_t>> offsets = std::move(it->second);
    pending_commits_.erase(pending_commits_.begin(), std::next(it));
    if (spec_.group_id.empty() || !consumer_ || offsets.empty()) {
      return;  // Flink commits only with a group id
    }
    KafkaPartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
    for (const auto& [pos, offset] : offsets) {
      rd_kafka_topic_partition_list_add(list.get(), pos.topic.c_str(), pos.partition)->offset =
          offset;
    }
    const rd_kafka_resp_err_t err =
        rd_kafka_commit_queue(consumer_.get(), list.get(), commit_queue_.get(), nullptr, nullptr);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++commits_failed_;
    } else {
      ++commits_in_flight_;
    }
  }

  void Close() override {
    if (discovery_.joinable() || checker_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(shared_->mu);
        shared_->stop = true;
      }
      shared_->cv.notify_all();
      if (discovery_.joinable()) {
        discovery_.join();
      }
      if (checker_.joinable()) {
        checker_.join();
      }
    }
    // Every partition queue goes to the closer, finished partitions' too (see DrainQueue).
    std::vector<KafkaQueue> queues;
    for (auto& p : parts_) {
      ReleaseQueue(*p);
      if (p->queue) {
        queues.push_back(std::move(p->queue));
      }
    }
    parts_.clear();
    missing_ = 0;
    if (consumer_) {
      ServeCallbacks();  // commit results that arrived
      // Closed and destroyed on another thread. The source commits nothing on close (offsets
      // live in checkpoints; commits follow completed checkpoints), so nothing the job's finish
      // promises waits for it, but a commit in flight: rd_kafka_consumer_close lets it land, and
      // the reader waits for that, within the close timeout (the task never hangs on librdkafka).
      const bool wait = commits_in_flight_ > 0;
      std::shared_future<void> closed = source_.CloseInBackground(
          std::move(consumer_), std::move(commit_queue_), std::move(queues));
      if (wait && closed.wait_for(source_.close_timeout()) != std::future_status::ready) {
        GetLogger("task")->warn(
            "kafka source: the consumer's close (a commit in flight) did not end within {} ms; "
            "it goes on in the background",
            source_.close_timeout().count());
      }
    }
    commit_queue_.reset();
    consumer_.reset();
  }

  void CollectMetrics(MetricsWriter& out) const override {
    int64_t pending_total = 0;
    for (const auto& p : parts_) {
      const std::string id = p->pos.SplitId();
      out.Gauge("split." + id + ".records", p->pos.records);
      out.Gauge("split." + id + ".currentOffset", p->pos.next_offset);
      out.Gauge("split." + id + ".committedOffset", p->committed);
      int64_t lo = 0;
      int64_t hi = 0;
      int64_t pending = 0;
      if (consumer_ && p->pos.next_offset >= 0 &&
          rd_kafka_get_watermark_offsets(consumer_.get(), p->pos.topic.c_str(), p->pos.partition,
                                         &lo, &hi) == RD_KAFKA_RESP_ERR_NO_ERROR &&
          hi >= 0) {
        pending = std::max<int64_t>(0, std::min(hi, p->pos.stopping_offset) - p->pos.next_offset);
      }
      out.Gauge("split." + id + ".pendingRecords", pending);
      pending_total += pending;
    }
    out.Gauge("commitsSucceeded", commits_succeeded_);
    out.Gauge("commitsFailed", commits_failed_);
    out.Gauge("pendingRecords", pending_total);
    out.Gauge("partitionsMissing", missing_);
  }

  // A record without a usable timestamp is reported by the SourceOperator inside Collect: it
  // names the partition (the split) and this offset, not a line.
  RecordPosition CurrentRecordPosition() override {
    return {0, current_offset_, OffsetUnit::kRecord};
  }

 private:
  struct Part {
    KafkaPartitionPosition pos;
    KafkaQueue queue;
    std::vector<rd_kafka_message_t*> batch = std::vector<rd_kafka_message_t*>(kBatch, nullptr);
    size_t batch_pos = 0;
    size_t batch_len = 0;
    SourceOutput* output = nullptr;
    int64_t committed = -1;
    bool done = false;
    /// The end offset of the last end-of-partition event (-1: none yet). Every record before it
    /// was queued before the event; with read_committed, aborted records and transaction markers
    /// below it are never delivered, so the position moves up to it once the queue is drained.
    int64_t end_seen = -1;
    /// Task time at which librdkafka first reported the partition or its topic unknown, since
    /// it was last seen present (-1: not reported); the report's text; the checker's answers
    /// numbered up to `missing_check` came before the report and do not count.
    Timestamp missing_since = -1;
    std::string missing_reason;
    uint64_t missing_check = 0;
  };

  bool bounded() const { return !spec_.bounded.empty(); }

  void Connect() {
    std::map<std::string, std::string> props = spec_.properties;
    api_timeout_ms_ = TakeApiTimeout(props);
    props["bootstrap.servers"] = source_.bootstrap_servers();
    props["group.id"] = spec_.group_id.empty() ? "tidemark-kafka-source" : spec_.group_id;
    props["enable.auto.commit"] = "false";
    props["enable.auto.offset.store"] = "false";
    // End-of-partition events carry the end offset (the last stable offset under read_committed):
    // a bounded partition whose last offsets are transaction markers or aborted records ends there.
    props["enable.partition.eof"] = "true";
    props.emplace("log_level", "3");
    missing_grace_ms_ = MissingGraceMs(props);
    KafkaConf conf = MakeKafkaConf(props);
    rd_kafka_conf_set_error_cb(conf.get(), OnKafkaError);
    consumer_ = MakeKafkaHandle(RD_KAFKA_CONSUMER, std::move(conf));
    commit_queue_.reset(rd_kafka_queue_new(consumer_.get()));
    deterministic_ = context_->virtual_clock() && bounded();
    // Restored splits are ours from the start; discovery adds only partitions it has not seen.
    std::set<std::string> known;
    for (const KafkaPartitionPosition& r : restored_) {
      known.insert(r.SplitId());
    }
    std::vector<KafkaPartitionPosition> restored = std::move(restored_);
    restored_.clear();
    Assign(std::move(restored));
    const int subtask = context_->subtask_index();
    const int parallelism = context_->parallelism();
    discovery_ = std::thread([this, known = std::move(known), subtask, parallelism]() mutable {
      DiscoveryLoop(std::move(known), subtask, parallelism);
    });
  }

  // ---- discovery thread ----
  void DiscoveryLoop(std::set<std::string> known, int subtask, int parallelism) {
    const std::shared_ptr<Shared> shared = shared_;
    const std::regex pattern(spec_.topic_pattern.empty() ? std::string(".*") : spec_.topic_pattern);
    bool first = true;
    // A round that gets no answer for default.api.timeout.ms fails the job, as Flink's enumerator
    // fails when its AdminClient's describeTopics times out; each look-up waits at most what is
    // left of the round.
    auto round_start = std::chrono::steady_clock::now();
    auto left_ms = [&] {
      const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - round_start)
                             .count();
      return api_timeout_ms_ - spent;
    };
    while (true) {
      std::vector<KafkaPartitionPosition> found;
      std::string error;
      lookup_timeout_ms_ = static_cast<int>(std::clamp<int64_t>(left_ms(), 1, kLookupTimeoutMs));
      const bool ok = DiscoverOnce(known, subtask, parallelism, pattern, first, found, error);
      if (!ok && error.empty() && left_ms() <= 0) {
        error = fmt::format(
            "Failed to list subscribed topic partitions: no answer from the Kafka brokers at {} "
            "within {} ms ({})",
            source_.bootstrap_servers(), api_timeout_ms_, kApiTimeoutProperty);
      }
      bool done = false;
      {
        std::lock_guard<std::mutex> lock(shared->mu);
        if (shared->stop) {
          return;
        }
        if (ok) {
          for (auto& f : found) {
            known.insert(f.SplitId());
            shared->discovered.push_back(std::move(f));
          }
          done = bounded() || spec_.discovery_interval_ms == 0;
          shared->discovery_done = done;
          ++shared->rounds;
          ++shared->events;
        } else if (!error.empty()) {
          shared->error = error;
          done = true;
        }
      }
      if (ok || !error.empty()) {
        shared->cv.notify_all();
        if (shared->notify) {
          shared->notify();
        }
      }
      if (done) {
        return;
      }
      first = first && !ok;
      // Next round: the interval after a success, 1 s after a failed look-up (broker down; never
      // past the round's timeout).
      const auto wait = std::chrono::milliseconds(ok ? spec_.discovery_interval_ms
                                                     : std::clamp<int64_t>(left_ms(), 0, 1000));
      {
        std::unique_lock<std::mutex> lock(shared->mu);
        if (shared->cv.wait_for(lock, wait, [&] { return shared->stop; })) {
          return;
        }
      }
      if (ok) {
        round_start = std::chrono::steady_clock::now();
      }
    }
  }

  // One discovery round. False with `error` empty: a look-up failed (retry); with `error`: the
  // job cannot go on (a listed topic does not exist, no offset and reset none).
  bool DiscoverOnce(const std::set<std::string>& known, int subtask, int parallelism,
                    const std::regex& pattern, bool first,
                    std::vector<KafkaPartitionPosition>& found, std::string& error) {
    rd_kafka_t* rk = consumer_.get();
    const rd_kafka_metadata_t* md = nullptr;
    if (rd_kafka_metadata(rk, 1, nullptr, &md, lookup_timeout_ms_) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return false;
    }
    std::vector<std::pair<std::string, int32_t>> mine;
    std::set<std::string> topics_seen;
    for (int t = 0; t < md->topic_cnt; ++t) {
      const rd_kafka_metadata_topic_t& topic = md->topics[t];
      if (topic.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        continue;
      }
      const std::string name = topic.topic;
      const bool wanted =
          spec_.topic_pattern.empty()
              ? std::find(spec_.topics.begin(), spec_.topics.end(), name) != spec_.topics.end()
              : std::regex_match(name, pattern);
      if (!wanted) {
        continue;
      }
      topics_seen.insert(name);
      for (int p = 0; p < topic.partition_cnt; ++p) {
        const int32_t id = topic.partitions[p].id;
        if (KafkaSource::OwnerOf(name, id, parallelism) == subtask &&
            known.count(name + "-" + std::to_string(id)) == 0) {
          mine.emplace_back(name, id);
        }
      }
    }
    rd_kafka_metadata_destroy(md);
    if (first && spec_.topic_pattern.empty()) {
      for (const std::string& t : spec_.topics) {
        if (topics_seen.count(t) == 0) {
          error =
              fmt::format("Kafka topic '{}' does not exist at {}", t, source_.bootstrap_servers());
          return false;
        }
      }
    }
    std::sort(mine.begin(), mine.end());
    for (const auto& [topic, partition] : mine) {
      KafkaPartitionPosition pos;
      pos.topic = topic;
      pos.partition = partition;
      if (!ResolveOffsets(pos, error)) {
        return false;
      }
      found.push_back(std::move(pos));
    }
    return !bounded() || ResolveBounds(found);
  }

  // The earliest (`which` RD_KAFKA_OFFSET_BEGINNING) or latest (RD_KAFKA_OFFSET_END: the high
  // watermark, the last stable offset under read_committed, as rd_kafka_query_watermark_offsets
  // gives) offset of every partition of `positions`, in `out` (same order): one ListOffsets
  // request per leader for all of them, where a look-up per partition paid a round trip each.
  // Thread-safe (a temporary queue per call). False if any look-up failed (the round is retried).
  bool ListOffsets(const std::vector<KafkaPartitionPosition>& positions, int64_t which,
                   std::vector<int64_t>& out) const {
    KafkaPartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(positions.size())));
    for (const KafkaPartitionPosition& pos : positions) {
      // ListOffsets reads a timestamp of -2 as "earliest" and -1 as "latest".
      rd_kafka_topic_partition_list_add(list.get(), pos.topic.c_str(), pos.partition)->offset =
          which;
    }
    if (rd_kafka_offsets_for_times(consumer_.get(), list.get(), lookup_timeout_ms_) !=
        RD_KAFKA_RESP_ERR_NO_ERROR) {
      return false;
    }
    out.clear();
    for (const KafkaPartitionPosition& pos : positions) {
      const rd_kafka_topic_partition_t* e =
          rd_kafka_topic_partition_list_find(list.get(), pos.topic.c_str(), pos.partition);
      if (e == nullptr || e->err != RD_KAFKA_RESP_ERR_NO_ERROR || e->offset < 0) {
        return false;
      }
      out.push_back(e->offset);
    }
    return true;
  }

  // Bounded: every position numeric, so "at the end" is known before any fetch. The earliest
  // offsets (needed only for positions at RD_KAFKA_OFFSET_BEGINNING) are looked up on a second
  // thread while this one looks up the latest: the round waits for one round trip, not two.
  bool ResolveBounds(std::vector<KafkaPartitionPosition>& positions) {
    if (positions.empty()) {
      return true;
    }
    const bool want_earliest =
        std::any_of(positions.begin(), positions.end(), [](const KafkaPartitionPosition& pos) {
          return pos.next_offset == RD_KAFKA_OFFSET_BEGINNING;
        });
    std::vector<int64_t> lo;
    std::future<bool> earliest;
    if (want_earliest) {
      earliest = std::async(std::launch::async,
                            [&] { return ListOffsets(positions, RD_KAFKA_OFFSET_BEGINNING, lo); });
    }
    std::vector<int64_t> hi;
    const bool latest_ok = ListOffsets(positions, RD_KAFKA_OFFSET_END, hi);
    if (want_earliest && !earliest.get()) {
      return false;
    }
    if (!latest_ok) {
      return false;
    }
    for (size_t i = 0; i < positions.size(); ++i) {
      KafkaPartitionPosition& pos = positions[i];
      if (pos.next_offset == RD_KAFKA_OFFSET_BEGINNING) {
        pos.next_offset = lo[i];
      } else if (pos.next_offset == RD_KAFKA_OFFSET_END) {
        pos.next_offset = hi[i];
      }
      if (spec_.bounded == "latest") {
        pos.stopping_offset = hi[i];
      } else {
        auto it = spec_.bounded_specific.find(pos.SplitId());
        pos.stopping_offset = it != spec_.bounded_specific.end() ? it->second : pos.next_offset;
      }
    }
    return true;
  }

  bool ResolveOffsets(KafkaPartitionPosition& pos, std::string& error) {
    const std::string id = pos.SplitId();
    auto reset = [&]() -> bool {
      if (spec_.offset_reset == "none") {
        error =
            fmt::format("Kafka partition {} has no {} offset and starting-offsets-reset is none",
                        id, spec_.starting_offsets == "committed" ? "committed" : "given");
        return false;
      }
      pos.next_offset =
          spec_.offset_reset == "latest" ? RD_KAFKA_OFFSET_END : RD_KAFKA_OFFSET_BEGINNING;
      return true;
    };
    const std::string& mode = spec_.starting_offsets;
    if (mode == "earliest") {
      pos.next_offset = RD_KAFKA_OFFSET_BEGINNING;
    } else if (mode == "latest") {
      pos.next_offset = RD_KAFKA_OFFSET_END;
    } else if (mode == "specific") {
      auto it = spec_.starting_specific.find(id);
      if (it != spec_.starting_specific.end()) {
        pos.next_offset = it->second;
      } else if (!reset()) {
        return false;
      }
    } else if (mode == "timestamp") {
      const int64_t offset = source_.timestamp_lookup()(consumer_.get(), pos.topic, pos.partition,
                                                        spec_.starting_timestamp_ms);
      pos.next_offset = offset >= 0 ? offset : RD_KAFKA_OFFSET_END;
    } else {  // committed
      KafkaPartitionList list(rd_kafka_topic_partition_list_new(1));
      rd_kafka_topic_partition_list_add(list.get(), pos.topic.c_str(), pos.partition);
      if (rd_kafka_committed(consumer_.get(), list.get(), lookup_timeout_ms_) !=
          RD_KAFKA_RESP_ERR_NO_ERROR) {
        return false;  // retried
      }
      const int64_t committed = list->elems[0].offset;
      list.reset();
      if (committed >= 0) {
        pos.next_offset = committed;
      } else if (!reset()) {
        return false;
      }
    }
    return true;  // a bounded source's positions are made numeric by ResolveBounds
  }

  // ---- task thread ----
  void TakeDiscovered(ReaderOutput& output) {
    std::vector<KafkaPartitionPosition> found;
    {
      std::lock_guard<std::mutex> lock(shared_->mu);
      if (!shared_->error.empty()) {
        throw IoError(shared_->error);
      }
      found.swap(shared_->discovered);
      // The first round posted (possibly nothing: no partition is ours).
      discovered_once_ = shared_->rounds > 0;
      discovery_done_ = shared_->discovery_done;
    }
    Assign(std::move(found));
    if (!outputs_pending_) {
      return;
    }
    outputs_pending_ = false;
    for (auto& p : parts_) {
      if (p->output == nullptr && !p->done) {
        p->output = &output.CreateOutputForSplit(p->pos.SplitId());
        if (p->pos.next_offset >= p->pos.stopping_offset) {
          Finish(*p, output);
        }
      }
    }
  }

  void Assign(std::vector<KafkaPartitionPosition> positions) {
    if (positions.empty()) {
      return;
    }
    KafkaPartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(positions.size())));
    for (KafkaPartitionPosition& pos : positions) {
      auto part = std::make_unique<Part>();
      part->pos = std::move(pos);
      // Its own queue, forwarded nowhere: records wait there until this reader takes them.
      part->queue.reset(rd_kafka_queue_get_partition(consumer_.get(), part->pos.topic.c_str(),
                                                     part->pos.partition));
      rd_kafka_queue_forward(part->queue.get(), nullptr);
      rd_kafka_queue_cb_event_enable(part->queue.get(), OnQueueEvent, shared_.get());
      if (part->pos.next_offset < part->pos.stopping_offset) {
        rd_kafka_topic_partition_list_add(list.get(), part->pos.topic.c_str(), part->pos.partition)
            ->offset = part->pos.next_offset;
      }
      parts_.push_back(std::move(part));
    }
    outputs_pending_ = true;
    if (list->cnt > 0) {
      rd_kafka_error_t* err = rd_kafka_incremental_assign(consumer_.get(), list.get());
      if (err != nullptr) {
        const std::string reason = rd_kafka_error_string(err);
        rd_kafka_error_destroy(err);
        throw IoError(fmt::format("cannot assign Kafka partitions: {}", reason));
      }
    }
  }

  // Makes p.batch hold at least one message, from what librdkafka already queued. Never waits.
  bool Fill(Part& p) {
    if (p.batch_pos < p.batch_len) {
      return true;
    }
    p.batch_pos = 0;
    p.batch_len = 0;
    while (true) {
      tls_queue_errors = &queue_errors_;
      const ssize_t got = rd_kafka_consume_batch_queue(p.queue.get(), 0, p.batch.data(), kBatch);
      tls_queue_errors = nullptr;
      if (!queue_errors_.empty()) {
        QueueErrors(p);
      }
      if (got <= 0) {
        // Drained: everything before the last end event was emitted; what is missing below it
        // (transaction markers, aborted records under read_committed) will never come.
        if (p.end_seen > p.pos.next_offset && p.pos.next_offset >= 0) {
          p.pos.next_offset = p.end_seen;
        }
        return false;
      }
      // Error events in the partition's queue: end-of-partition and transient ones pass, others
      // (an offset out of range without a reset policy, ...) fail the job as Flink's fetcher does.
      size_t keep = 0;
      for (ssize_t i = 0; i < got; ++i) {
        rd_kafka_message_t* m = p.batch[static_cast<size_t>(i)];
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
          p.batch[keep++] = m;
          continue;
        }
        const rd_kafka_resp_err_t err = m->err;
        if (err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
          p.end_seen = std::max(p.end_seen, m->offset);
        }
        if (IsUnknownPartition(err)) {  // as a consumer error: the same as an error op
          MarkMissing(p, rd_kafka_message_errstr(m));
          rd_kafka_message_destroy(m);
          continue;
        }
        rd_kafka_message_destroy(m);
        if (err != RD_KAFKA_RESP_ERR__PARTITION_EOF && err != RD_KAFKA_RESP_ERR__TRANSPORT &&
            err != RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN && err != RD_KAFKA_RESP_ERR__TIMED_OUT) {
          for (ssize_t j = i + 1; j < got; ++j) {
            rd_kafka_message_destroy(p.batch[static_cast<size_t>(j)]);
          }
          throw IoError(
              fmt::format("Kafka partition {}: {}", p.pos.SplitId(), rd_kafka_err2str(err)));
        }
      }
      if (keep > 0) {
        if (p.missing_since >= 0) {
          ClearMissing(p, "records arrive again");
        }
        p.batch_len = keep;
        return true;
      }
    }
  }

  void Emit(Part& p, const rd_kafka_message_t& m, ReaderOutput& output) {
    rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
    const int64_t ts = rd_kafka_message_timestamp(&m, &type);
    const std::string_view value(static_cast<const char*>(m.payload), m.payload ? m.len : 0);
    if (raw_) {
      row_.Reset(layout_);  // the value's bytes from the start of the buffer again
      if (m.payload != nullptr) {
        row_.SetString(0, value);
      } else {
        row_.SetNull(0);
      }
    } else {
      std::string reason;
      if (m.payload == nullptr) {
        output.EmitError(SourceError{p.pos.SplitId(), 0, "record has no value (a tombstone)", "",
                                     m.offset, OffsetUnit::kRecord});
        return;
      }
      if (!decoder_.Decode(value, row_, &reason)) {
        output.EmitError(SourceError{p.pos.SplitId(), 0, reason, std::string(value.substr(0, 200)),
                                     m.offset, OffsetUnit::kRecord});
        return;
      }
    }
    if (!spec_.key_field.empty()) {
      const size_t key_slot = row_.size() - 1;  // the source schema's last field
      if (m.key != nullptr) {
        row_.SetString(key_slot, std::string_view(static_cast<const char*>(m.key), m.key_len));
      } else {
        row_.SetNull(key_slot);
      }
    }
    ++p.pos.records;
    current_offset_ = m.offset;  // for CurrentRecordPosition, inside Collect
    if (ts >= 0) {
      p.output->CollectReusing(row_, ts);
    } else {
      p.output->Collect(Row(row_));
    }
  }

  void Finish(Part& p, ReaderOutput& output) {
    p.done = true;
    if (p.output != nullptr) {
      output.ReleaseOutputForSplit(p.pos.SplitId());
      p.output = nullptr;
    }
    ReleaseQueue(p);
    finished_assigned_.emplace_back(p.pos.topic, p.pos.partition);  // see UnassignFinished
  }

  // Stops fetching the finished partitions, all in one unassign. An unassign (and a pause alike)
  // waits for librdkafka's main thread: one per partition as it finished cost 0.4-73 ms between
  // the first and the last record of a kafka_scan run (20 partitions) on a loaded host. So it is
  // done when the reader has nothing to emit anyway, or every 65,536 polls while records flow,
  // never at the end: the consumer's close unassigns what is left. Until then librdkafka may
  // fetch past a finished partition's end into its queue, which nothing reads.
  void UnassignFinished() {
    if (finished_assigned_.empty()) {
      return;
    }
    KafkaPartitionList list(
        rd_kafka_topic_partition_list_new(static_cast<int>(finished_assigned_.size())));
    for (const auto& [topic, partition] : finished_assigned_) {
      rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
    }
    finished_assigned_.clear();
    if (rd_kafka_error_t* err = rd_kafka_incremental_unassign(consumer_.get(), list.get())) {
      rd_kafka_error_destroy(err);  // it stops fetching at worst a little later
    }
  }

  // Drops what was taken from the queue and not emitted, and the queue's wake-ups. The queue
  // itself stays until Close hands it to the closer, which drains it after the consumer's close
  // (DrainQueue): librdkafka may still put messages or errors into it until then.
  void ReleaseQueue(Part& p) {
    for (size_t i = p.batch_pos; i < p.batch_len; ++i) {
      rd_kafka_message_destroy(p.batch[i]);
    }
    p.batch_pos = p.batch_len = 0;
    if (p.queue) {
      rd_kafka_queue_cb_event_enable(p.queue.get(), nullptr, nullptr);
    }
    if (p.missing_since >= 0) {
      p.missing_since = -1;
      --missing_;
    }
  }

  // ---- a partition reported missing (its topic deleted?) ----
  //
  // librdkafka 2.0.2 reports an assigned partition unknown
  // (RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART, _UNKNOWN_PARTITION) on the first metadata answer that
  // does not list its topic, and such an answer can come from a broker whose metadata lags behind
  // (librdkafka #3513, #4401; 2.10 waits topic.metadata.propagation.max.ms first, #4970). So a
  // report starts a grace period on the task's clock, and a checker thread asks the brokers for the
  // topic's metadata until the report is settled: the partition listed again, or records from it,
  // clear it; still unlisted when the grace has passed fails the job. Without answers (brokers
  // down) nothing fails here.

  void QueueErrors(Part& p) {
    for (const auto& [err, reason] : queue_errors_) {
      if (IsUnknownPartition(err)) {
        MarkMissing(p, reason);
      } else {
        GetLogger("task")->error("kafka source: partition {}: {}", p.pos.SplitId(), reason);
      }
    }
    queue_errors_.clear();
  }

  void MarkMissing(Part& p, const std::string& reason) {
    if (p.missing_since >= 0 || p.done) {
      return;
    }
    p.missing_since = context_->processing_time().GetCurrentProcessingTime();
    p.missing_reason = reason;
    ++missing_;
    {
      std::lock_guard<std::mutex> lock(shared_->mu);
      p.missing_check = shared_->check_seq;
      shared_->check_topics.insert(p.pos.topic);
      shared_->check_now = true;
    }
    shared_->cv.notify_all();
    if (!checker_.joinable()) {
      checker_ = std::thread([this] { CheckLoop(); });
    }
    GetLogger("task")->warn(
        "kafka source: partition {}: {}; the job fails if the brokers' metadata does not list it "
        "again within {} ms ({})",
        p.pos.SplitId(), reason, missing_grace_ms_, kMissingGraceProperty);
  }

  void ClearMissing(Part& p, const char* why) {
    p.missing_since = -1;
    --missing_;
    GetLogger("task")->info("kafka source: partition {} is back ({})", p.pos.SplitId(), why);
  }

  // Task thread, while a partition is reported missing: settles the reports the checker answered.
  void CheckMissing() {
    const Timestamp now = context_->processing_time().GetCurrentProcessingTime();
    std::lock_guard<std::mutex> lock(shared_->mu);
    std::set<std::string> still;
    for (auto& part : parts_) {
      Part& p = *part;
      if (p.done || p.missing_since < 0) {
        continue;
      }
      auto it = shared_->checks.find(p.pos.topic);
      if (it != shared_->checks.end() && it->second.seq > p.missing_check) {
        const Shared::TopicCheck& c = it->second;
        if (c.found && c.partitions.count(p.pos.partition) > 0) {
          ClearMissing(p, "listed in the brokers' metadata");
          continue;
        }
        if (now - p.missing_since >= missing_grace_ms_) {
          throw IoError(fmt::format(
              "Kafka topic '{}' partition {} no longer exists at {} (deleted?): librdkafka "
              "reported \"{}\" and the brokers' metadata has not listed it for {} ms ({}); "
              "{} records of it were read, up to offset {}",
              p.pos.topic, p.pos.partition, source_.bootstrap_servers(), p.missing_reason,
              now - p.missing_since, kMissingGraceProperty, p.pos.records,
              p.pos.next_offset >= 0 ? std::to_string(p.pos.next_offset - 1) : "none"));
        }
      }
      still.insert(p.pos.topic);
    }
    shared_->check_topics.swap(still);
  }

  // The checker thread (started at the first report, until Close): looks up the metadata of the
  // topics with a missing partition, at most every second, and posts the answers.
  void CheckLoop() {
    const std::shared_ptr<Shared> shared = shared_;
    const auto interval =
        std::chrono::milliseconds(std::clamp<int64_t>(missing_grace_ms_ / 4, 50, 1000));
    while (true) {
      std::set<std::string> topics;
      {
        std::unique_lock<std::mutex> lock(shared->mu);
        shared->cv.wait_for(lock, interval, [&] { return shared->stop || shared->check_now; });
        if (shared->stop) {
          return;
        }
        shared->check_now = false;
        topics = shared->check_topics;
      }
      if (topics.empty()) {
        continue;
      }
      const rd_kafka_metadata_t* md = nullptr;
      if (rd_kafka_metadata(consumer_.get(), 1, nullptr, &md, kCheckTimeoutMs) !=
          RD_KAFKA_RESP_ERR_NO_ERROR) {
        continue;  // no answer: nothing settled
      }
      std::map<std::string, Shared::TopicCheck> found;
      for (int t = 0; t < md->topic_cnt; ++t) {
        const rd_kafka_metadata_topic_t& topic = md->topics[t];
        if (topics.count(topic.topic) == 0 || topic.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          continue;
        }
        Shared::TopicCheck& c = found[topic.topic];
        c.found = true;
        for (int i = 0; i < topic.partition_cnt; ++i) {
          c.partitions.insert(topic.partitions[i].id);
        }
      }
      rd_kafka_metadata_destroy(md);
      {
        std::lock_guard<std::mutex> lock(shared->mu);
        for (const std::string& topic : topics) {
          Shared::TopicCheck& c = shared->checks[topic];
          c = found[topic];  // absent: not found
          c.seq = ++shared->check_seq;
        }
        ++shared->events;
      }
      shared->cv.notify_all();
      if (shared->notify) {
        shared->notify();
      }
    }
  }

  // Commit results and librdkafka's callbacks: never blocks.
  void ServeCallbacks() {
    rd_kafka_poll(consumer_.get(), 0);
    while (rd_kafka_event_t* ev = rd_kafka_queue_poll(commit_queue_.get(), 0)) {
      if (rd_kafka_event_type(ev) == RD_KAFKA_EVENT_OFFSET_COMMIT) {
        commits_in_flight_ = std::max<int64_t>(0, commits_in_flight_ - 1);
        const rd_kafka_topic_partition_list_t* list = rd_kafka_event_topic_partition_list(ev);
        bool failed = rd_kafka_event_error(ev) != RD_KAFKA_RESP_ERR_NO_ERROR;
        for (int i = 0; list != nullptr && i < list->cnt; ++i) {
          failed = failed || list->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR;
        }
        if (failed) {
          ++commits_failed_;
        } else {
          ++commits_succeeded_;
          for (int i = 0; list != nullptr && i < list->cnt; ++i) {
            for (auto& p : parts_) {
              if (p->pos.partition == list->elems[i].partition &&
                  p->pos.topic == list->elems[i].topic) {
                p->committed = list->elems[i].offset;
              }
            }
          }
        }
      }
      rd_kafka_event_destroy(ev);
    }
  }

  // Nothing to emit now. Under the virtual clock with records known to be on their way: wait a
  // little for them and keep time still (kMoreAvailable). Otherwise sleep until a queue callback
  // (or, under the virtual clock, 100 ms of processing time) wakes the task.
  InputStatus WaitOrNothing(bool know_more_is_coming) {
    starved_ = true;
    UnassignFinished();
    if (context_->virtual_clock() && (deterministic_ || !discovered_once_) && know_more_is_coming) {
      std::unique_lock<std::mutex> lock(shared_->mu);
      const uint64_t seen = shared_->events;
      shared_->cv.wait_for(lock, std::chrono::milliseconds(5),
                           [&] { return shared_->events != seen || !shared_->error.empty(); });
      return InputStatus::kMoreAvailable;
    }
    if (context_->virtual_clock()) {
      context_->WakeUpAt(context_->processing_time().GetCurrentProcessingTime() + 100);
    }
    return InputStatus::kNothingAvailable;
  }

  const KafkaSource& source_;
  const KafkaSourceSpec& spec_;
  const bool raw_;
  const RowLayout* layout_;  // the source schema's: the value's fields, then the key field
  LineDecoder decoder_;
  Row row_;
  int64_t current_offset_ = -1;  // of the record being emitted (CurrentRecordPosition)
  SourceReaderContext* context_ = nullptr;
  std::shared_ptr<Shared> shared_;
  KafkaHandle consumer_;
  KafkaQueue commit_queue_;
  std::thread discovery_;
  std::thread checker_;  // the missing-partition checker, started at the first report
  std::vector<std::unique_ptr<Part>> parts_;
  std::vector<std::pair<rd_kafka_resp_err_t, std::string>> queue_errors_;  // see OnKafkaError
  int64_t missing_ = 0;  // partitions reported missing, not settled yet
  int64_t missing_grace_ms_ = kDefaultMissingGraceMs;  // set before any checker starts
  std::vector<KafkaPartitionPosition> restored_;       // added before the consumer exists
  std::vector<std::pair<std::string, int32_t>> finished_assigned_;  // finished, still assigned
  std::map<int64_t, std::vector<std::pair<KafkaPartitionPosition, int64_t>>> pending_commits_;
  size_t next_ = 0;
  int64_t emitted_total_ = 0;
  Timestamp start_time_ = 0;
  bool deterministic_ = false;
  bool discovered_once_ = false;
  bool discovery_done_ = false;
  bool outputs_pending_ = false;  // parts assigned whose outputs are not created yet
  bool starved_ = false;          // the last poll had nothing to emit
  uint32_t polls_ = 0;
  int64_t commits_succeeded_ = 0;
  int64_t commits_failed_ = 0;
  int64_t commits_in_flight_ = 0;                  // committed, no OFFSET_COMMIT event seen yet
  int64_t api_timeout_ms_ = kDefaultApiTimeoutMs;  // set before the discovery thread starts
  int lookup_timeout_ms_ = kLookupTimeoutMs;       // discovery thread only
};

}  // namespace

void KafkaSplit::WriteTo(StateWriter& w) const {
  w.BeginSection(kSplitSection, kSplitVersion);
  w.WriteString(position_.topic);
  w.WriteI64(position_.partition);
  w.WriteI64(position_.next_offset);
  w.WriteI64(position_.stopping_offset);
  w.WriteI64(position_.records);
  w.EndSection();
}

KafkaSource::KafkaSource(const SourceSpec& spec)
    : spec_(spec),
      value_schema_(),
      timestamp_lookup_(DefaultTimestampLookup),
      closers_(std::make_unique<Closers>()) {
  const KafkaSourceSpec& k = spec_.kafka;
  if (k.format == "raw") {
    value_schema_.Add("value", FieldType::kString);
  } else {
    value_schema_ = SchemaFromSpec(k.schema);
  }
  schema_ = value_schema_;
  if (!k.key_field.empty()) {
    schema_.Add(k.key_field, FieldType::kString);
  }
  {
    // Unknown or invalid properties are the job's error, now rather than in a task.
    std::map<std::string, std::string> props = k.properties;
    (void)TakeApiTimeout(props);
    (void)MakeKafkaConf(props);
  }
  if (k.mock) {
    mock_ = std::make_shared<KafkaMockCluster>(1);
    mock_->CreateTopic(k.topics.front(), static_cast<int>(k.mock->partitions));
    KafkaLoadOptions load;
    load.topic = k.topics.front();
    load.path = k.mock->load;
    load.partitions = static_cast<int>(k.mock->partitions);
    load.partition_field = k.mock->partition_field;
    load.timestamp_field = k.mock->timestamp_field;
    load.key_field = k.key_field;
    LoadJsonLinesIntoTopic(mock_->bootstrap_servers(), load);
    bootstrap_servers_ = mock_->bootstrap_servers();
  } else {
    bootstrap_servers_ = k.bootstrap_servers;
  }
}

struct KafkaSource::Closers {
  struct Closing {
    std::thread thread;
    std::shared_future<void> done;
  };
  std::mutex mu;
  std::vector<Closing> closing;  // guarded by mu
  std::chrono::milliseconds timeout = kDefaultCloseTimeout;

  // Waits for every consumer still closing, all within one `timeout`; one that is still not
  // closed then (librdkafka's termination waits on a broker that does not answer, or on a
  // reference it never drops) is left to its thread, detached, and counted: the job ends.
  ~Closers() {
    std::vector<Closing> all;
    {
      std::lock_guard<std::mutex> lock(mu);
      all.swap(closing);
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (Closing& c : all) {
      if (c.done.wait_until(deadline) == std::future_status::ready) {
        c.thread.join();
      } else {
        c.thread.detach();
        const int64_t leaked = leaked_consumers.fetch_add(1) + 1;
        GetLogger("task")->warn(
            "kafka source: a consumer's close did not end within {} ms; left to a detached "
            "thread, with its librdkafka threads and memory ({} such consumer(s) in this process)",
            timeout.count(), leaked);
      }
    }
  }
};

KafkaSource::~KafkaSource() = default;

std::chrono::milliseconds KafkaSource::close_timeout() const {
  return closers_->timeout;
}

void KafkaSource::SetCloseTimeoutForTesting(std::chrono::milliseconds timeout) {
  closers_->timeout = timeout;
}

int64_t KafkaSource::LeakedConsumers() {
  return leaked_consumers.load();
}

std::shared_future<void> KafkaSource::CloseInBackground(KafkaHandle consumer,
                                                        KafkaQueue commit_queue,
                                                        std::vector<KafkaQueue> partition_queues,
                                                        std::function<void()> hook) const {
  std::lock_guard<std::mutex> lock(closers_->mu);
  // Closers that are done are joined here, so a source whose readers are replaced again and
  // again (restores) keeps only the ones still closing.
  auto& closing = closers_->closing;
  for (auto it = closing.begin(); it != closing.end();) {
    if (it->done.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      it->thread.join();
      it = closing.erase(it);
    } else {
      ++it;
    }
  }
  std::promise<void> promise;
  std::shared_future<void> done = promise.get_future().share();
  closing.push_back({std::thread([c = std::move(consumer), cq = std::move(commit_queue),
                                  queues = std::move(partition_queues), hook = std::move(hook),
                                  promise = std::move(promise)]() mutable {
                       tls_closing = true;
                       if (hook) {
                         hook();
                       }
                       // Unassigns everything and lets commits in flight land: after it no
                       // partition is desired, so librdkafka puts nothing more into the partition
                       // queues.
                       rd_kafka_consumer_close(c.get());
                       for (KafkaQueue& q : queues) {
                         DrainQueue(q.get());
                       }
                       queues.clear();
                       cq.reset();
                       rd_kafka_destroy_flags(c.release(), RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
                       promise.set_value();
                     }),
                     done});
  return done;
}

std::unique_ptr<SourceReader> KafkaSource::CreateReader(int /*subtask_index*/) const {
  return std::make_unique<KafkaReader>(*this);
}

std::unique_ptr<SourceSplit> KafkaSource::RestoreSplit(StateReader& r) const {
  r.BeginSection(kSplitSection, kSplitVersion);
  KafkaPartitionPosition p;
  p.topic = r.ReadString();
  const int64_t partition = r.ReadI64();
  p.next_offset = r.ReadI64();
  p.stopping_offset = r.ReadI64();
  p.records = r.ReadI64();
  r.EndSection();
  if (p.topic.empty() || partition < 0 || partition > INT32_MAX || p.records < 0 ||
      p.next_offset < RD_KAFKA_OFFSET_TAIL_BASE || p.stopping_offset < 0) {
    throw StateCorrupt(
        fmt::format("kafka split '{}-{}': impossible position (next offset {}, "
                    "stopping offset {}, records {})",
                    p.topic, partition, p.next_offset, p.stopping_offset, p.records));
  }
  p.partition = static_cast<int32_t>(partition);
  return std::make_unique<KafkaSplit>(std::move(p));
}

int KafkaSource::OwnerOf(const std::string& topic, int32_t partition, int parallelism) {
  const int64_t start =
      (static_cast<int64_t>(static_cast<uint32_t>(JavaStringHash(topic)) * 31u) & 0x7FFFFFFF) %
      parallelism;
  return static_cast<int>((start + partition) % parallelism);
}

}  // namespace tidemark
