#include "operators/kafka_sink/kafka_sink_operator.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <optional>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/core/errors.h"
#include "runtime/core/logging.h"

namespace tidemark {
namespace {

constexpr std::string_view kStateSection = "kafka-sink";
// 2: each pre-committed transaction keeps the offsets its records were acknowledged at.
constexpr uint32_t kStateVersion = 2;

// "reason (NAME)", and for a fenced producer what that means to the user: the newer producer is
// a restored run of this job, or another job (or another run of this one) whose sink has the same
// `transactional-id-prefix` on these brokers (Flink: KafkaSink's setTransactionalIdPrefix must be
// unique per job); the task fails and restarts as its restart strategy says.
std::string ErrorText(const char* reason, rd_kafka_resp_err_t code, const std::string& prefix) {
  return fmt::format("{} ({}{})", reason, rd_kafka_err2name(code),
                     code == RD_KAFKA_RESP_ERR__FENCED
                         ? fmt::format(": a newer producer with the same transactional id has "
                                       "taken over: a restored run of this job, or another job "
                                       "or run whose Kafka sink uses the same "
                                       "transactional-id-prefix '{}' on these brokers; if it is "
                                       "another job, give each job its own "
                                       "`transactional-id-prefix`",
                                       prefix)
                         : "");
}

// A producer that hit a fatal error (fenced by a newer instance, ...) purges what it had queued
// and refuses new records: the cause to report is the fatal error, not "Purged in queue". Empty
// when there is none.
std::string FatalError(rd_kafka_t* rk, const std::string& prefix) {
  char reason[512];
  const rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(rk, reason, sizeof reason);
  return fatal == RD_KAFKA_RESP_ERR_NO_ERROR ? "" : ErrorText(reason, fatal, prefix);
}

std::string TopicMissingText(std::string_view topic) {
  return fmt::format("topic '{}' does not exist on the broker (deleted?)", topic);
}

// What a failed delivery's error means where Kafka's own words do not say it.
std::string DeliveryHint(const rd_kafka_message_t* m) {
  switch (m->err) {
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:
      return "; " + TopicMissingText(rd_kafka_topic_name(m->rkt));
    case RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP:
      return "; the broker accepts record timestamps only within its "
             "`log.message.timestamp.before.max.ms` / `log.message.timestamp.after.max.ms` of its "
             "own clock (Kafka 4's default: at most 1 h ahead), and the sink writes each record's "
             "event time as its Kafka timestamp";
    default:
      return "";
  }
}

extern "C" void OnDelivery(rd_kafka_t* rk, const rd_kafka_message_t* m, void* opaque) {
  auto* d = static_cast<KafkaSinkOperator::Deliveries*>(opaque);
  --d->outstanding;
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (d->first_error.empty()) {
      const std::string fatal = FatalError(rk, d->transactional_id_prefix);
      d->first_error_code = m->err;
      d->first_error = !fatal.empty()
                           ? fatal
                           : fmt::format("{} (partition {}, {}){}", rd_kafka_err2str(m->err),
                                         m->partition, rd_kafka_err2name(m->err), DeliveryHint(m));
    }
    return;
  }
  ++d->delivered;
  KafkaSinkOperator::PartitionRange& r = d->partitions[m->partition];
  if (r.records == 0 || m->offset < r.first_offset) {
    r.first_offset = m->offset;
  }
  r.last_offset = std::max(r.last_offset, m->offset);
  ++r.records;
}

/// librdkafka's error object to text, and frees it.
std::string TakeError(rd_kafka_error_t* error, const std::string& prefix) {
  std::string text = ErrorText(rd_kafka_error_string(error), rd_kafka_error_code(error), prefix);
  rd_kafka_error_destroy(error);
  return text;
}

// The message key of a non-NULL cell: a string's bytes, an integer's decimal digits, a bool's
// word, a double as JSON writes it.
std::string KeyText(const Row& row, size_t slot) {
  switch (row.type(slot)) {
    case FieldType::kString:
      return std::string(row.GetString(slot));
    case FieldType::kInt64:
    case FieldType::kTimestamp:
      return std::to_string(row.GetInt64(slot));
    case FieldType::kBool:
      return row.GetBool(slot) ? "true" : "false";
    case FieldType::kDouble:
      break;
  }
  return ValueToJson(row.Get(slot));
}

}  // namespace

KafkaSinkOperator::KafkaSinkOperator(SinkSpec spec, Schema schema,
                                     std::shared_ptr<SinkResult> result, int subtask_index,
                                     bool checkpointing)
    : spec_(std::move(spec)),
      schema_(std::move(schema)),
      result_(std::move(result)),
      subtask_index_(subtask_index),
      checkpointing_(checkpointing),
      json_(schema_) {
  if (!spec_.key_field.empty()) {
    key_slot_ = schema_.IndexOf(spec_.key_field);
  }
  if (!spec_.partition_field.empty()) {
    partition_slot_ = schema_.IndexOf(spec_.partition_field);
  }
}

// Destroyed without Close: a crash path; producers go without waiting for anything.
KafkaSinkOperator::~KafkaSinkOperator() {
  Close();
}

std::string KafkaSinkOperator::TransactionalId(int64_t number) const {
  return fmt::format("{}-{}-{}", spec_.transactional_id_prefix, subtask_index_, number);
}

std::unique_ptr<KafkaSinkOperator::Producer> KafkaSinkOperator::MakeProducer(
    const std::string& transactional_id) {
  std::map<std::string, std::string> props = spec_.kafka_properties;
  props["bootstrap.servers"] = spec_.bootstrap_servers;
  if (!transactional_id.empty()) {
    props["transactional.id"] = transactional_id;
    // Flink's default transaction.timeout.ms for the KafkaSink (1 h) exceeds the broker's
    // default maximum (15 min); keep Kafka's producer default unless the job sets one.
  }
  props.try_emplace("log_level", "3");  // errors only, unless the job sets it
  KafkaConf conf = MakeKafkaConf(props);
  auto p = std::make_unique<Producer>();
  p->deliveries = std::make_unique<Deliveries>();
  p->deliveries->transactional_id_prefix = spec_.transactional_id_prefix;
  rd_kafka_conf_set_dr_msg_cb(conf.get(), &OnDelivery);
  rd_kafka_conf_set_opaque(conf.get(), p->deliveries.get());
  p->handle = MakeKafkaHandle(RD_KAFKA_PRODUCER, std::move(conf));
  if (!transactional_id.empty()) {
    if (rd_kafka_error_t* e =
            rd_kafka_init_transactions(p->handle.get(), static_cast<int>(spec_.kafka_timeout_ms))) {
      throw IoError(
          fmt::format("kafka sink {}#{}: cannot initialise transactions for "
                      "transactional id '{}' on {}: {}",
                      context_.name, subtask_index_, transactional_id, spec_.bootstrap_servers,
                      TakeError(e, spec_.transactional_id_prefix)));
    }
  }
  return p;
}

void KafkaSinkOperator::Open(const OperatorContext& context) {
  StreamOperator::Open(context);
  if (!exactly_once()) {
    plain_ = MakeProducer("");
    return;
  }
  // Tests only (see the header): read here once, never per record.
  // NOLINTNEXTLINE(concurrency-mt-unsafe): nothing in tidemark sets the environment.
  if (const char* stop = std::getenv(kStopAtTransactionEnvForTesting); stop != nullptr) {
    const std::string_view text(stop);
    int64_t number = -1;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
    if (ec != std::errc() || ptr != text.data() + text.size() || number < 0) {
      throw InvalidArgument(fmt::format("kafka sink {}#{}: {}='{}' is not a transaction number",
                                        context_.name, subtask_index_,
                                        kStopAtTransactionEnvForTesting, text));
    }
    stop_at_transaction_for_testing_ = number;
  }
}

void KafkaSinkOperator::StopForTesting() {
  stop_at_transaction_for_testing_ = -1;  // once
  Flush(*current_->producer, "the test stop");
  GetLogger("task")->warn(
      "kafka sink {}#{}: stopping the process (SIGSTOP) in open transaction '{}' with {} "
      "acknowledged record(s), as {} asks (tests only)",
      context_.name, subtask_index_, current_->id, current_->producer->deliveries->delivered,
      kStopAtTransactionEnvForTesting);
  ::raise(SIGSTOP);
}

void KafkaSinkOperator::ThrowIfFailed(const Producer& p) const {
  if (!p.deliveries->first_error.empty()) {
    // A message that timed out (or failed otherwise) may not say why; a topic deleted under the
    // sink is the usual reason, asked of the broker here (the error path only) unless the error
    // already named it or said something else about the record.
    const rd_kafka_resp_err_t code = p.deliveries->first_error_code;
    const bool ask = code != RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART &&
                     code != RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC &&
                     code != RD_KAFKA_RESP_ERR_INVALID_TIMESTAMP &&
                     rd_kafka_fatal_error(p.handle.get(), nullptr, 0) == RD_KAFKA_RESP_ERR_NO_ERROR;
    throw IoError(fmt::format("kafka sink {}#{}: delivery to topic '{}' failed: {}{}",
                              context_.name, subtask_index_, spec_.topic, p.deliveries->first_error,
                              ask && TopicMissing(p) ? "; " + TopicMissingText(spec_.topic) : ""));
  }
}

bool KafkaSinkOperator::TopicMissing(const Producer& p) const {
  // All topics, not this one by name: a producer's request naming it would have the broker create
  // it again where `auto.create.topics.enable` is on.
  const rd_kafka_metadata_t* md = nullptr;
  const int timeout_ms = static_cast<int>(std::min<int64_t>(spec_.kafka_timeout_ms, 10000));
  if (rd_kafka_metadata(p.handle.get(), /*all_topics=*/1, nullptr, &md, timeout_ms) !=
      RD_KAFKA_RESP_ERR_NO_ERROR) {
    return false;  // no answer: nothing to add to the cause
  }
  bool missing = true;
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (spec_.topic == md->topics[i].topic) {
      missing = md->topics[i].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
      break;
    }
  }
  rd_kafka_metadata_destroy(md);
  return missing;
}

void KafkaSinkOperator::Poll(Producer& p, int timeout_ms) {
  rd_kafka_poll(p.handle.get(), timeout_ms);
  if (!p.deliveries->first_error.empty()) {
    ++num_send_errors_;
  }
  ThrowIfFailed(p);
}

void KafkaSinkOperator::Produce(Producer& p, const Message& m) {
  int waited_ms = 0;
  for (;;) {
    // librdkafka's RD_KAFKA_V_* macros type-check each argument in a GNU statement expression;
    // clang's -Wpedantic reports it where the macro is expanded, i.e. here.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wgnu-statement-expression"
#endif
    const rd_kafka_resp_err_t err = rd_kafka_producev(
        p.handle.get(), RD_KAFKA_V_TOPIC(spec_.topic.c_str()),
        RD_KAFKA_V_PARTITION(m.partition < 0 ? RD_KAFKA_PARTITION_UA : m.partition),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_VALUE(const_cast<char*>(m.value.data()), m.value.size()),
        RD_KAFKA_V_KEY(m.has_key ? m.key.data() : nullptr, m.has_key ? m.key.size() : 0),
        RD_KAFKA_V_TIMESTAMP(m.timestamp_ms), RD_KAFKA_V_END);
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++p.deliveries->outstanding;
      return;
    }
    if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL || waited_ms >= spec_.kafka_timeout_ms) {
      ++num_send_errors_;
      throw IoError(fmt::format("kafka sink {}#{}: cannot produce to topic '{}'{}: {}",
                                context_.name, subtask_index_, spec_.topic,
                                m.partition >= 0 ? fmt::format(" partition {}", m.partition) : "",
                                err == RD_KAFKA_RESP_ERR__FATAL
                                    ? FatalError(p.handle.get(), spec_.transactional_id_prefix)
                                    : rd_kafka_err2str(err)));
    }
    // The local queue is full: serve delivery reports until there is room (bounded).
    Poll(p, 10);
    waited_ms += 10;
  }
}

void KafkaSinkOperator::Flush(Producer& p, const char* why) {
  const rd_kafka_resp_err_t err =
      rd_kafka_flush(p.handle.get(), static_cast<int>(spec_.kafka_timeout_ms));
  if (!p.deliveries->first_error.empty()) {
    ++num_send_errors_;
  }
  ThrowIfFailed(p);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR || p.deliveries->outstanding != 0) {
    throw IoError(fmt::format(
        "kafka sink {}#{}: {} records to topic '{}' not acknowledged within {} ms at {} ({}){}",
        context_.name, subtask_index_, p.deliveries->outstanding, spec_.topic,
        spec_.kafka_timeout_ms, why, rd_kafka_err2str(err),
        TopicMissing(p) ? "; " + TopicMissingText(spec_.topic) : ""));
  }
}

void KafkaSinkOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  Message m;
  json_.Append(record.row, m.value);
  if (key_slot_ >= 0 && key_slot_ < static_cast<int>(record.row.size()) &&
      !record.row.IsNull(static_cast<size_t>(key_slot_))) {
    m.has_key = true;
    m.key = KeyText(record.row, static_cast<size_t>(key_slot_));
  }
  if (partition_slot_ >= 0 && partition_slot_ < static_cast<int>(record.row.size())) {
    if (std::optional<int64_t> part =
            AsInt64(record.row.Get(static_cast<size_t>(partition_slot_)))) {
      if (*part < 0 || *part > INT32_MAX) {
        throw IoError(fmt::format("kafka sink {}#{}: partition-field '{}' is {}, not a partition",
                                  context_.name, subtask_index_, spec_.partition_field, *part));
      }
      m.partition = static_cast<int32_t>(*part);
    }
  }
  if (record.has_timestamp && record.timestamp > 0) {
    m.timestamp_ms = record.timestamp;
  }
  if (!exactly_once()) {
    Produce(*plain_, m);
    Poll(*plain_, 0);
  } else {
    bool stop_for_testing = false;
    if (current_ == nullptr) {
      auto t = std::make_unique<Transaction>();
      t->number = next_transaction_++;
      t->id = TransactionalId(t->number);
      t->first_record = next_record_;
      t->producer = MakeProducer(t->id);
      if (rd_kafka_error_t* e = rd_kafka_begin_transaction(t->producer->handle.get())) {
        throw IoError(fmt::format("kafka sink {}#{}: cannot begin transaction '{}': {}",
                                  context_.name, subtask_index_, t->id,
                                  TakeError(e, spec_.transactional_id_prefix)));
      }
      stop_for_testing = t->number == stop_at_transaction_for_testing_;
      current_ = std::move(t);
    }
    Produce(*current_->producer, m);
    Poll(*current_->producer, 0);
    current_->messages.push_back(std::move(m));
    current_->end_record = next_record_ + 1;
    if (stop_for_testing) {
      StopForTesting();
    }
  }
  ++next_record_;
  ++num_sent_;
  result_->Add(record);
}

void KafkaSinkOperator::ProcessWatermark(Watermark watermark, int /*input*/) {
  watermark_ = watermark.timestamp;
}

void KafkaSinkOperator::SnapshotState(StateSnapshotContext& context) {
  if (!exactly_once()) {
    if (spec_.delivery_guarantee == "at-least-once") {
      Flush(*plain_, fmt::format("checkpoint {}", context.checkpoint_id).c_str());
    } else {
      Poll(*plain_, 0);
    }
    return;
  }
  // Pre-commit: the open transaction's records are all acknowledged; it belongs to this
  // checkpoint and commits when it completes.
  if (current_ != nullptr) {
    Flush(*current_->producer, fmt::format("checkpoint {}", context.checkpoint_id).c_str());
    current_->acknowledged = current_->producer->deliveries->partitions;
    pending_.push_back(std::move(*current_));
    current_.reset();
  }
  for (Transaction& t : pending_) {
    if (t.checkpoint_id == kUnassigned) {
      t.checkpoint_id = context.checkpoint_id;
    }
  }
  StateWriter& w = context.writer;
  w.BeginSection(kStateSection, kStateVersion);
  w.WriteU32(static_cast<uint32_t>(subtask_index_));
  w.WriteString(spec_.transactional_id_prefix);
  w.WriteI64(next_transaction_);
  w.WriteI64(next_record_);
  w.WriteU32(static_cast<uint32_t>(pending_.size()));
  for (const Transaction& t : pending_) {
    w.WriteI64(t.number);
    w.WriteI64(t.checkpoint_id);
    w.WriteI64(t.first_record);
    w.WriteI64(t.end_record);
    w.WriteU32(static_cast<uint32_t>(t.messages.size()));
    for (const Message& m : t.messages) {
      w.WriteBool(m.has_key);
      w.WriteString(m.key);
      w.WriteString(m.value);
      w.WriteI64(m.partition);
      w.WriteI64(m.timestamp_ms);
    }
    w.WriteU32(static_cast<uint32_t>(t.acknowledged.size()));
    for (const auto& [partition, range] : t.acknowledged) {
      w.WriteI64(partition);
      w.WriteI64(range.first_offset);
      w.WriteI64(range.last_offset);
      w.WriteI64(range.records);
    }
  }
  w.EndSection();
}

void KafkaSinkOperator::NotifyCheckpointComplete(int64_t checkpoint_id) {
  if (exactly_once()) {
    CommitUpTo(checkpoint_id);
  }
}

void KafkaSinkOperator::CommitUpTo(int64_t checkpoint_id) {
  auto it = pending_.begin();
  for (; it != pending_.end() && it->checkpoint_id <= checkpoint_id; ++it) {
    CommitTransaction(*it, /*resent=*/false);
  }
  pending_.erase(pending_.begin(), it);
}

void KafkaSinkOperator::CommitTransaction(Transaction& t, bool resent) {
  if (t.producer == nullptr) {  // restored: its producer is gone with the crashed run
    ResendTransaction(t);
    return;
  }
  // Durable before the request: a crash from here on leaves the outcome to ask Kafka for.
  AppendCommitLog(t, "committing", resent);
  if (rd_kafka_error_t* e = rd_kafka_commit_transaction(t.producer->handle.get(),
                                                        static_cast<int>(spec_.kafka_timeout_ms))) {
    throw IoError(fmt::format(
        "kafka sink {}#{}: cannot commit transaction '{}' of checkpoint {}: {}", context_.name,
        subtask_index_, t.id, t.checkpoint_id, TakeError(e, spec_.transactional_id_prefix)));
  }
  ++num_committed_;
  if (after_kafka_commit_hook_) {
    after_kafka_commit_hook_(t.id);
  }
  AppendCommitLog(t, "committed", resent);
  GetLogger("task")->debug(
      "kafka sink {}#{}: committed transaction '{}' (checkpoint {}, records "
      "[{}, {}))",
      context_.name, subtask_index_, t.id, t.checkpoint_id, t.first_record, t.end_record);
  DestroyProducer(t.producer, /*abort=*/false);
}

void KafkaSinkOperator::ResendTransaction(Transaction& t) {
  // A fresh producer under the same transactional id: init_transactions fences the crashed
  // producer and aborts its transaction; the write-ahead copy goes again, in one transaction.
  t.producer = MakeProducer(t.id);
  if (rd_kafka_error_t* e = rd_kafka_begin_transaction(t.producer->handle.get())) {
    throw IoError(fmt::format("kafka sink {}#{}: cannot begin transaction '{}': {}", context_.name,
                              subtask_index_, t.id, TakeError(e, spec_.transactional_id_prefix)));
  }
  for (const Message& m : t.messages) {
    Produce(*t.producer, m);
    Poll(*t.producer, 0);
  }
  Flush(*t.producer, "restore");
  t.acknowledged = t.producer->deliveries->partitions;
  ++num_resent_;
  GetLogger("task")->info(
      "kafka sink {}#{}: re-sent transaction '{}' of checkpoint {} ({} "
      "records) after restore",
      context_.name, subtask_index_, t.id, t.checkpoint_id, t.messages.size());
  CommitTransaction(t, /*resent=*/true);
}

void KafkaSinkOperator::FenceTransaction(int64_t number) {
  std::unique_ptr<Producer> p = MakeProducer(TransactionalId(number));
  DestroyProducer(p, /*abort=*/false);
}

void KafkaSinkOperator::DestroyProducer(std::unique_ptr<Producer>& p, bool abort) {
  if (p == nullptr) {
    return;
  }
  if (abort) {
    if (rd_kafka_error_t* e =
            rd_kafka_abort_transaction(p->handle.get(), static_cast<int>(spec_.kafka_timeout_ms))) {
      // The restore fences it anyway; the task is failing already.
      GetLogger("task")->warn("kafka sink {}#{}: abort failed: {}", context_.name, subtask_index_,
                              TakeError(e, spec_.transactional_id_prefix));
    }
  }
  // Nothing left to wait for: purge so that destroy does not wait on in-flight messages.
  rd_kafka_purge(p->handle.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  rd_kafka_poll(p->handle.get(), 0);
  p.reset();
}

void KafkaSinkOperator::Finish() {
  finished_ = true;
  if (!exactly_once()) {
    Flush(*plain_, "end of input");
    return;
  }
  if (current_ != nullptr) {
    Flush(*current_->producer, "end of input");
    current_->acknowledged = current_->producer->deliveries->partitions;
    pending_.push_back(std::move(*current_));
    current_.reset();
  }
  if (!checkpointing_) {
    CommitUpTo(kUnassigned);
  }
}

void KafkaSinkOperator::Close() {
  if (current_ != nullptr) {
    DestroyProducer(current_->producer, /*abort=*/true);
    current_.reset();
  }
  for (Transaction& t : pending_) {
    DestroyProducer(t.producer, /*abort=*/false);  // pre-committed: the restore commits it
  }
  pending_.clear();
  DestroyProducer(plain_, /*abort=*/false);
  if (commit_log_fd_ >= 0) {
    ::close(commit_log_fd_);
    commit_log_fd_ = -1;
  }
}

void KafkaSinkOperator::InitializeState(StateInitializationContext& context) {
  if (!exactly_once()) {
    return;  // none / at-least-once: nothing kept; the replay re-sends
  }
  // Opened (its directory created) before any record goes out: a path that cannot hold it fails
  // the task here, not at the first commit after records were sent.
  OpenCommitLog();
  const CommitLogState log = ReadCommitLog();
  const int64_t max_logged = log.max_number;
  if (!context.is_restored()) {
    // A fresh start, or a restart before any checkpoint completed: continue past what this
    // prefix and subtask committed before, and fence what an earlier attempt left open there.
    next_transaction_ = max_logged + 1;
    FenceTransaction(next_transaction_);
    FenceTransaction(next_transaction_ + 1);
    return;
  }
  StateReader& r = *context.reader;
  const uint32_t version = r.BeginSection(kStateSection, kStateVersion);
  const uint32_t subtask = r.ReadU32();
  if (subtask != static_cast<uint32_t>(subtask_index_)) {
    throw StateCorrupt(fmt::format("kafka sink state of subtask {} restored into subtask {}",
                                   subtask, subtask_index_));
  }
  const std::string prefix = r.ReadString();
  if (prefix != spec_.transactional_id_prefix) {
    throw StateCorrupt(fmt::format(
        "kafka sink state was written with transactional-id-prefix '{}', the job now says '{}'",
        prefix, spec_.transactional_id_prefix));
  }
  next_transaction_ = r.ReadI64();
  next_record_ = r.ReadI64();
  const uint32_t n = r.ReadU32();
  if (n > r.remaining() || next_transaction_ < 0 || next_record_ < 0) {
    throw StateCorrupt("kafka sink state is inconsistent");
  }
  std::vector<Transaction> restored;
  for (uint32_t i = 0; i < n; ++i) {
    Transaction t;
    t.number = r.ReadI64();
    t.id = TransactionalId(t.number);
    t.checkpoint_id = r.ReadI64();
    t.first_record = r.ReadI64();
    t.end_record = r.ReadI64();
    const uint32_t count = r.ReadU32();
    if (count > r.remaining()) {
      throw StateCorrupt("kafka sink state lists more records than it holds");
    }
    t.messages.resize(count);
    for (Message& m : t.messages) {
      m.has_key = r.ReadBool();
      m.key = r.ReadString();
      m.value = r.ReadString();
      m.partition = static_cast<int32_t>(r.ReadI64());
      m.timestamp_ms = r.ReadI64();
    }
    if (version >= 2) {
      const uint32_t partitions = r.ReadU32();
      if (partitions > r.remaining()) {
        throw StateCorrupt("kafka sink state lists more partitions than it holds");
      }
      for (uint32_t p = 0; p < partitions; ++p) {
        const int64_t partition = r.ReadI64();
        PartitionRange range;
        range.first_offset = r.ReadI64();
        range.last_offset = r.ReadI64();
        range.records = r.ReadI64();
        if (partition < 0 || partition > INT32_MAX || range.first_offset < 0 ||
            range.last_offset < range.first_offset || range.records <= 0) {
          throw StateCorrupt("kafka sink state holds an impossible acknowledged offset range");
        }
        t.acknowledged[static_cast<int32_t>(partition)] = range;
      }
    }
    restored.push_back(std::move(t));
  }
  r.EndSection();

  // The restored checkpoint completed: its pre-committed transactions commit now, exactly once
  // (one the commit log lists committed before the crash is left as it is; one it lists as
  // committing is asked of Kafka).
  for (Transaction& t : restored) {
    if (log.committed.contains(t.id)) {
      continue;
    }
    if (log.committing.contains(t.id) && CommittedInKafka(t)) {
      ++num_recovered_;
      GetLogger("task")->info(
          "kafka sink {}#{}: transaction '{}' of checkpoint {} was committed "
          "before the crash (found in Kafka); not re-sent",
          context_.name, subtask_index_, t.id, t.checkpoint_id);
      AppendCommitLog(t, "committed", /*resent=*/false);
      continue;
    }
    ResendTransaction(t);
  }
  // The transaction open after the barrier, and the one after it: fenced and aborted. The next
  // transaction reuses the first id (its records are replayed from the checkpoint).
  FenceTransaction(next_transaction_);
  FenceTransaction(next_transaction_ + 1);
}

void KafkaSinkOperator::OpenCommitLog() {
  if (commit_log_fd_ >= 0) {
    return;
  }
  const std::filesystem::path parent = std::filesystem::path(spec_.commit_log).parent_path();
  std::error_code ec;
  if (!parent.empty()) {
    std::filesystem::create_directories(parent, ec);
  }
  commit_log_fd_ =
      ::open(spec_.commit_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (commit_log_fd_ < 0) {
    throw IoError(fmt::format("kafka sink {}#{}: cannot open commit log '{}': {}", context_.name,
                              subtask_index_, spec_.commit_log,
                              ec ? fmt::format("cannot create its directory: {}", ec.message())
                                 : std::string(std::generic_category().message(errno))));
  }
}

KafkaSinkOperator::CommitLogState KafkaSinkOperator::ReadCommitLog() const {
  CommitLogState log;
  std::ifstream in(spec_.commit_log);
  if (!in) {
    return log;  // no log yet: nothing committed
  }
  const std::string head = fmt::format("{}-{}-", spec_.transactional_id_prefix, subtask_index_);
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.empty()) {
      continue;
    }
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || !j.contains("transactional-id") ||
        !j["transactional-id"].is_string()) {
      // A torn last line (a crash mid-append) carries no completed commit.
      if (in.peek() == EOF) {
        break;
      }
      throw StateCorrupt(fmt::format("kafka sink commit log '{}' line {} is not a commit record",
                                     spec_.commit_log, line_no));
    }
    const std::string id = j["transactional-id"].get<std::string>();
    if (!id.starts_with(head)) {
      continue;
    }
    int64_t number = -1;
    const std::string_view rest = std::string_view(id).substr(head.size());
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), number);
    if (ec != std::errc() || ptr != rest.data() + rest.size()) {
      continue;
    }
    log.max_number = std::max(log.max_number, number);
    // Lines without "state" are of the first format, written once a commit was confirmed.
    const auto state = j.find("state");
    if (state != j.end() && *state == "committing") {
      log.committing.insert(id);
    } else if (state == j.end() || *state == "committed") {
      log.committed.insert(id);
    } else {
      throw StateCorrupt(fmt::format("kafka sink commit log '{}' line {}: unknown state {}",
                                     spec_.commit_log, line_no, state->dump()));
    }
  }
  return log;
}

bool KafkaSinkOperator::CommittedInKafka(const Transaction& t) {
  // Fenced first: an open transaction of that id is aborted, so Kafka's answer is final.
  FenceTransaction(t.number);
  if (t.acknowledged.empty()) {
    return true;  // no record reached Kafka: nothing to re-send either way
  }
  const auto& [partition, range] = *t.acknowledged.begin();
  std::map<std::string, std::string> props = spec_.kafka_properties;
  props["bootstrap.servers"] = spec_.bootstrap_servers;
  props["group.id"] =
      spec_.transactional_id_prefix + "-commit-check";  // assign only, never commits
  props["enable.auto.commit"] = "false";
  props["enable.partition.eof"] = "true";
  props["isolation.level"] = "read_committed";
  props.try_emplace("log_level", "3");
  // Producer-only properties of the job are ignored by a consumer (librdkafka warns at most).
  for (const char* producer_only :
       {"transactional.id", "enable.idempotence", "acks", "transaction.timeout.ms", "linger.ms",
        "batch.size", "compression.type", "compression.codec"}) {
    props.erase(producer_only);
  }
  KafkaHandle consumer = MakeKafkaHandle(RD_KAFKA_CONSUMER, MakeKafkaConf(props));
  {
    KafkaPartitionList assignment(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(assignment.get(), spec_.topic.c_str(), partition)->offset =
        range.first_offset;
    if (const rd_kafka_resp_err_t err = rd_kafka_assign(consumer.get(), assignment.get())) {
      throw IoError(fmt::format(
          "kafka sink {}#{}: cannot read back topic '{}' partition {} to "
          "check transaction '{}': {}",
          context_.name, subtask_index_, spec_.topic, partition, t.id, rd_kafka_err2str(err)));
    }
  }
  std::optional<bool> committed;
  std::string last_error;
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(spec_.kafka_timeout_ms);
  while (!committed && std::chrono::steady_clock::now() < deadline) {
    KafkaMessage m(rd_kafka_consumer_poll(consumer.get(), 100));
    if (!m) {
      continue;
    }
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      // The end of what read_committed may see: past the first record without it, the
      // transaction was aborted; at or before it, its markers are not written yet: wait.
      if (m->offset > range.first_offset) {
        committed = false;
      }
    } else if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      last_error = rd_kafka_message_errstr(m.get());
    } else {
      committed = m->offset == range.first_offset;
    }
  }
  rd_kafka_assign(consumer.get(), nullptr);
  if (!committed) {
    throw IoError(fmt::format(
        "kafka sink {}#{}: transaction '{}' of checkpoint {} was being committed at the crash and "
        "Kafka did not say within {} ms whether it was (topic '{}' partition {} offset {}{}); the "
        "restore is retried",
        context_.name, subtask_index_, t.id, t.checkpoint_id, spec_.kafka_timeout_ms, spec_.topic,
        partition, range.first_offset, last_error.empty() ? "" : ": " + last_error));
  }
  return *committed;
}

void KafkaSinkOperator::AppendCommitLog(const Transaction& t, const char* state, bool resent) {
  OpenCommitLog();
  nlohmann::json parts = nlohmann::json::object();
  int64_t records = 0;
  for (const auto& [partition, range] : t.acknowledged) {
    records += range.records;
    parts[std::to_string(partition)] = {{"first-offset", range.first_offset},
                                        {"last-offset", range.last_offset},
                                        {"records", range.records}};
  }
  nlohmann::json j = {{"transactional-id", t.id},
                      {"subtask", subtask_index_},
                      {"transaction", t.number},
                      {"checkpoint", t.checkpoint_id},
                      {"first-record", t.first_record},
                      {"end-record", t.end_record},
                      {"records", records},
                      {"resent", resent},
                      {"partitions", parts},
                      {"state", state}};
  if (t.checkpoint_id == kUnassigned) {
    j["checkpoint"] = nullptr;  // committed at end of input without checkpointing
  }
  const std::string line = j.dump() + "\n";
  // One write per line (O_APPEND: lines of several subtasks never interleave), then fsync.
  if (::write(commit_log_fd_, line.data(), line.size()) != static_cast<ssize_t>(line.size()) ||
      ::fsync(commit_log_fd_) != 0) {
    throw IoError(fmt::format("kafka sink {}#{}: cannot append to commit log '{}': {}",
                              context_.name, subtask_index_, spec_.commit_log,
                              std::generic_category().message(errno)));
  }
}

void KafkaSinkOperator::CollectMetrics(MetricsWriter& out) const {
  out.Gauge("currentInputWatermark", watermark_);
  out.Gauge("numRecordsSend", num_sent_);
  out.Gauge("numRecordsSendErrors", num_send_errors_);
  if (exactly_once()) {
    out.Gauge("numTransactionsCommitted", num_committed_);
    out.Gauge("numTransactionsResent", num_resent_);
    out.Gauge("numTransactionsRecovered", num_recovered_);
  }
}

}  // namespace tidemark
