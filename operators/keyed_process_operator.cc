#include "operators/keyed_process_operator.h"

#include <algorithm>
#include <optional>
#include <utility>

#include <fmt/ostream.h>

#include "runtime/core/errors.h"
#include "runtime/state/key_groups.h"
#include "runtime/state/rocksdb_snapshot_stream.h"
#include "runtime/state/state_codec.h"

namespace tidemark {
namespace {
using NamedValues = std::map<std::string, Value, std::less<>>;

// A key's named values (and the broadcast state) as snapshots and the RocksDB store both keep
// them: their count, then each name and value.
void WriteNamedValues(StateWriter& w, const NamedValues& values) {
  w.WriteU32(static_cast<uint32_t>(values.size()));
  for (const auto& [name, value] : values) {
    w.WriteString(name);
    w.WriteValue(value);
  }
}
// The `n` pairs that follow a count already read, into `values`.
void ReadNamedValues(StateReader& r, uint32_t n, NamedValues& values) {
  for (uint32_t i = 0; i < n; ++i) {
    std::string name = r.ReadString();
    values.insert_or_assign(std::move(name), r.ReadValue());
  }
}
// The count `n` (already read) and its `n` pairs, from `r` to `w`.
void CopyNamedValues(StateReader& r, uint32_t n, StateWriter& w) {
  w.WriteU32(n);
  for (uint32_t i = 0; i < n; ++i) {
    w.WriteString(r.ReadString());
    w.WriteValue(r.ReadValue());
  }
}
}  // namespace

const Key& ProcessContext::current_key() const {
  return op_.current_key_;
}
Timestamp ProcessContext::CurrentWatermark() const {
  return op_.timer_service_->CurrentWatermark();
}
Timestamp ProcessContext::CurrentProcessingTime() const {
  return op_.timer_service_->CurrentProcessingTime();
}
void ProcessContext::RegisterEventTimeTimer(Timestamp time) {
  op_.timer_service_->RegisterEventTimeTimer(VoidNamespace{}, time);
}
void ProcessContext::RegisterProcessingTimeTimer(Timestamp time) {
  op_.timer_service_->RegisterProcessingTimeTimer(VoidNamespace{}, time);
}
void ProcessContext::DeleteEventTimeTimer(Timestamp time) {
  op_.timer_service_->DeleteEventTimeTimer(VoidNamespace{}, time);
}
void ProcessContext::DeleteProcessingTimeTimer(Timestamp time) {
  op_.timer_service_->DeleteProcessingTimeTimer(VoidNamespace{}, time);
}

const Value* ProcessContext::State(std::string_view name) const {
  auto k = op_.state_.find(op_.current_key_);
  if (k == op_.state_.end()) {
    return nullptr;
  }
  auto it = k->second.find(name);
  return it == k->second.end() ? nullptr : &it->second;
}

void ProcessContext::SetState(std::string_view name, Value value) {
  op_.state_[op_.current_key_].insert_or_assign(std::string(name), std::move(value));
}

const Value* ProcessContext::BroadcastState(std::string_view name) const {
  auto it = op_.broadcast_state_.find(name);
  return it == op_.broadcast_state_.end() ? nullptr : &it->second;
}

void ProcessContext::SetBroadcastState(std::string_view name, Value value) {
  if (op_.options_.broadcast_input < 0 || input_ != op_.options_.broadcast_input) {
    throw InvalidArgument("broadcast state may only be written by the broadcast input's elements");
  }
  op_.broadcast_state_.insert_or_assign(std::string(name), std::move(value));
}

void ProcessContext::ClearState(std::string_view name) {
  auto k = op_.state_.find(op_.current_key_);
  if (k == op_.state_.end()) {
    return;
  }
  if (auto it = k->second.find(name); it != k->second.end()) {
    k->second.erase(it);
  }
  if (k->second.empty()) {
    op_.state_.erase(k);
  }
}

void ProcessContext::Collect(Row row, Timestamp timestamp) {
  op_.FitOutput(row);
  StreamRecord out(std::move(row), timestamp);
  op_.output().Collect(out);
}

void ProcessContext::Collect(Row row) {
  op_.FitOutput(row);
  StreamRecord out(std::move(row));
  op_.output().Collect(out);
}

const RowLayout* ProcessContext::output_layout() const {
  return op_.options_.output_layout;
}

void KeyedProcessOperator::FitOutput(Row& row) const {
  const RowLayout* want = options_.output_layout;
  if (want == nullptr || row.layout_ptr() == want || want->StoresAs(row.layout())) {
    return;
  }
  // Downstream reads every field by its declared type: a row of other types is converted here,
  // or refused with both shapes named, rather than misread there.
  auto describe = [](const RowLayout& layout) {
    std::string out;
    for (FieldType t : layout.types()) {
      out += fmt::format("{}{}", out.empty() ? "" : ", ", ToString(t));
    }
    return out;
  };
  if (row.size() == want->size()) {
    try {
      row = Row::Of(want, row.ToValues());
      return;
    } catch (const InvalidArgument&) {
      // reported below
    }
  }
  throw Error(
      fmt::format("operator '{}': the process function emitted a row {} of ({}), which "
                  "does not fit the operator's output schema ({})",
                  context().name, fmt::streamed(row), describe(row.layout()), describe(*want)));
}

void ProcessContext::CollectSide(std::string_view tag, Row row, Timestamp timestamp) {
  StreamRecord out(std::move(row), timestamp);
  op_.output().CollectSide(tag, out);
}

KeyedProcessOperator::KeyedProcessOperator(std::unique_ptr<KeyedProcessFunction> function,
                                           Options options)
    : function_(std::move(function)), options_(std::move(options)), ctx_(*this) {
  TM_CHECK(function_ != nullptr, "keyed process operator needs a function");
}

KeyedProcessOperator::KeyedProcessOperator(std::unique_ptr<KeyedCoProcessFunction> function,
                                           Options options)
    : co_function_(std::move(function)), options_(std::move(options)), ctx_(*this) {
  TM_CHECK(co_function_ != nullptr, "keyed co-process operator needs a function");
}

KeyedProcessOperator::~KeyedProcessOperator() = default;

void KeyedProcessOperator::Open(const OperatorContext& context) {
  StreamOperator::Open(context);
  timer_service_ =
      std::make_unique<InternalTimerService<VoidNamespace>>(processing_time(), *this, *this);
  OpenRocksDb();
  if (function_) {
    function_->Open(context);
  } else {
    co_function_->Open(context);
  }
}

void KeyedProcessOperator::Close() {
  timer_service_.reset();
  rocks_.reset();
}

void KeyedProcessOperator::ProcessElement(StreamRecord& record, int input) {
  const int in = input == 1 && co_function_ ? 1 : 0;
  Key key;
  key.reserve(options_.key_slots[in].size());
  for (int slot : options_.key_slots[in]) {
    key.push_back(record.row.Get(static_cast<size_t>(slot)));
  }
  current_key_ = std::move(key);
  ctx_.timestamp_ = record.has_timestamp ? record.timestamp : kMinTimestamp;
  ctx_.input_ = in;
  FaultInCurrentKey();
  if (function_) {
    function_->ProcessElement(record, ctx_);
  } else if (in == 0) {
    co_function_->ProcessElement1(record, ctx_);
  } else {
    co_function_->ProcessElement2(record, ctx_);
  }
  MaybeSpill();
}

void KeyedProcessOperator::ProcessWatermark(Watermark watermark, int input) {
  if (!co_function_) {
    if (watermark.timestamp > combined_watermark_) {
      combined_watermark_ = watermark.timestamp;
      timer_service_->AdvanceWatermark(watermark.timestamp);
      output().EmitWatermark(watermark);
    }
    return;
  }
  // Flink's CombinedWatermarkStatus.PartialWatermark#setWatermark: the input's watermark only
  // moves forward, and a watermark makes the input active (its valve sent ACTIVE before it).
  const int in = input == 1 ? 1 : 0;
  input_watermarks_[in] = std::max(input_watermarks_[in], watermark.timestamp);
  input_idle_[in] = false;
  UpdateCombinedWatermark();
}

void KeyedProcessOperator::ProcessWatermarkStatus(WatermarkStatus status, int input) {
  if (!co_function_) {
    output().EmitWatermarkStatus(status);
    return;
  }
  input_idle_[input == 1 ? 1 : 0] = status == WatermarkStatus::kIdle;
  UpdateCombinedWatermark();
}

void KeyedProcessOperator::UpdateCombinedWatermark() {
  const bool finished_leaves_min = !context_.finished_input_counts_as_max;
  const bool all_max =
      input_watermarks_[0] == kMaxTimestamp && input_watermarks_[1] == kMaxTimestamp;
  Timestamp min_active = kMaxTimestamp;
  Timestamp max_all = kMinTimestamp;
  bool any_participant = false;
  bool all_idle = true;
  for (int i = 0; i < 2; ++i) {
    const bool finished = input_watermarks_[i] == kMaxTimestamp;
    if (options_.excluded_from_min[i] || (finished && finished_leaves_min)) {
      continue;
    }
    any_participant = true;
    max_all = std::max(max_all, input_watermarks_[i]);
    if (!input_idle_[i]) {
      all_idle = false;
      min_active = std::min(min_active, input_watermarks_[i]);
    }
  }
  Timestamp next = kMinTimestamp;
  WatermarkStatus next_status = status_;
  if (all_max) {
    next = kMaxTimestamp;
    next_status = WatermarkStatus::kActive;
  } else if (any_participant) {
    next = all_idle ? max_all : min_active;
    next_status = all_idle ? WatermarkStatus::kIdle : WatermarkStatus::kActive;
    const bool excluded_unfinished =
        (options_.excluded_from_min[0] && input_watermarks_[0] != kMaxTimestamp) ||
        (options_.excluded_from_min[1] && input_watermarks_[1] != kMaxTimestamp);
    if (next == kMaxTimestamp && excluded_unfinished) {
      next = combined_watermark_;  // an excluded (broadcast) input must still finish first
    }
  }
  // Leaving IDLE comes before the watermark it lets through (a downstream valve drops watermarks
  // on an idle channel); entering IDLE after the watermark it flushed (Flink's order).
  if (next_status == WatermarkStatus::kActive && status_ == WatermarkStatus::kIdle) {
    status_ = next_status;
    output().EmitWatermarkStatus(status_);
  }
  if (next > combined_watermark_) {
    combined_watermark_ = next;
    timer_service_->AdvanceWatermark(next);
    output().EmitWatermark(Watermark{next});
  }
  if (next_status != status_) {
    status_ = next_status;
    output().EmitWatermarkStatus(status_);
  }
}

namespace {
void WriteVoid(StateWriter&, const VoidNamespace&) {}
VoidNamespace ReadVoid(StateReader&) {
  return {};
}
}  // namespace

void KeyedProcessOperator::SnapshotState(StateSnapshotContext& context) {
  StateWriter& w = context.writer;
  w.BeginSection("keyed-process", 1);
  w.WriteI64(input_watermarks_[0]);
  w.WriteI64(input_watermarks_[1]);
  w.WriteI64(combined_watermark_);
  w.WriteI64(timer_service_->CurrentWatermark());
  w.WriteBool(input_idle_[0]);
  w.WriteBool(input_idle_[1]);
  w.WriteBool(status_ == WatermarkStatus::kIdle);
  // On RocksDB the spilled keys are read from the store one key group at a time and written
  // from their stored values (the snapshot's bytes of their state), never read into the cache: both
  // backends write the same bytes, and the heap holds at most one key group's spilled keys more.
  NotePeakCachedKeys();
  std::vector<Key> keys;
  for (const auto& [k, values] : state_) {
    if (!values.empty()) {  // an empty entry is only the RocksDB cache's "resident" mark
      keys.push_back(k);
    }
  }
  const TimersByKey<VoidNamespace> event_timers(timer_service_->EventTimeTimers());
  const TimersByKey<VoidNamespace> processing_timers(timer_service_->ProcessingTimeTimers());
  event_timers.AppendKeys(keys);
  processing_timers.AppendKeys(keys);
  const StreamedSnapshotStats stats = WriteKeyGroupsFromStore(
      w, context_.max_parallelism, std::move(keys), rocks_has_keys() ? rocks_.get() : nullptr,
      rocks_cf_, [&](const Key& key, const std::string* spilled) {
        if (spilled != nullptr) {  // the stored value is what the snapshot writes
          StateReader r(*spilled);
          CopyNamedValues(r, r.ReadU32(), w);
        } else if (auto it = state_.find(key); it != state_.end()) {
          WriteNamedValues(w, it->second);
        } else {
          w.WriteU32(0);
        }
        event_timers.Write(w, key, WriteVoid);
        processing_timers.Write(w, key, WriteVoid);
      });
  rocks_snapshot_peak_group_keys_ =
      std::max(rocks_snapshot_peak_group_keys_, stats.peak_group_spilled_keys);
  w.EndSection();
  if (options_.broadcast_input >= 0) {
    w.BeginSection("broadcast-state", 1);
    WriteNamedValues(w, broadcast_state_);
    w.EndSection();
  }
}

void KeyedProcessOperator::InitializeState(StateInitializationContext& context) {
  if (!context.is_restored()) {
    return;
  }
  StateReader& r = *context.reader;
  r.BeginSection("keyed-process", 1);
  const Timestamp input0 = r.ReadI64();
  const Timestamp input1 = r.ReadI64();
  const Timestamp combined = r.ReadI64();
  const Timestamp timers = r.ReadI64();
  const bool idle0 = r.ReadBool();
  const bool idle1 = r.ReadBool();
  const bool idle = r.ReadBool();
  // Flink: event time starts again at Long.MIN after a restore, every input active;
  // checkpointing.restore-watermarks keeps the checkpointed watermarks and statuses.
  if (context.restore_watermarks) {
    input_watermarks_[0] = input0;
    input_watermarks_[1] = input1;
    combined_watermark_ = combined;
    timer_service_->RestoreWatermark(timers);
    input_idle_[0] = idle0;
    input_idle_[1] = idle1;
    status_ = idle ? WatermarkStatus::kIdle : WatermarkStatus::kActive;
  }
  const OperatorContext& c = context_;
  // On RocksDB the keys go into the cache until its budget, the rest straight into the store in
  // write batches: the heap never holds more keys than the cache's budget.
  std::optional<RocksDbRestoreSink> sink;
  if (rocks_) {
    sink.emplace(*rocks_, rocks_cf_, c.max_parallelism);
  }
  ReadKeyGroups(r, c.max_parallelism,
                KeyGroupRangeForOperator(c.max_parallelism, c.parallelism, c.subtask_index),
                [&](const Key& key) {
                  const uint32_t n = r.ReadU32();
                  if (n > 0 && sink && state_.size() >= rocks_cache_keys_) {
                    StateWriter vw;
                    CopyNamedValues(r, n, vw);
                    sink->Put(key, vw.bytes());
                  } else if (n > 0) {
                    ReadNamedValues(r, n, state_[key]);
                  }
                  ReadKeyTimers(r, key, *timer_service_, false, ReadVoid);
                  ReadKeyTimers(r, key, *timer_service_, true, ReadVoid);
                });
  if (sink) {
    sink->Finish();
  }
  NotePeakCachedKeys();
  r.EndSection();
  if (options_.broadcast_input >= 0) {
    r.BeginSection("broadcast-state", 1);
    ReadNamedValues(r, r.ReadU32(), broadcast_state_);
    r.EndSection();
  }
  MaybeSpill();
}

void KeyedProcessOperator::FireTimer(const InternalTimer<VoidNamespace>& timer, TimeDomain domain) {
  ctx_.timestamp_ = timer.timestamp;
  ctx_.domain_ = domain;
  ctx_.input_ = -1;
  FaultInCurrentKey();
  if (function_) {
    function_->OnTimer(timer.timestamp, ctx_);
  } else {
    co_function_->OnTimer(timer.timestamp, ctx_);
  }
  MaybeSpill();
}

void KeyedProcessOperator::OnEventTime(const InternalTimer<VoidNamespace>& timer) {
  FireTimer(timer, TimeDomain::kEventTime);
}

void KeyedProcessOperator::OnProcessingTime(const InternalTimer<VoidNamespace>& timer) {
  FireTimer(timer, TimeDomain::kProcessingTime);
}

// ---- RocksDB state backend (`pipeline.state-backend: rocksdb`) ----
//
// A key's named values are one RocksDB entry: the key (`StateWriter::WriteKey`, so a spilled key
// reads back without a second decoder) under its key group, and as value the `U32` number of
// values and each name and value, as the snapshot writes them. One column family holds them all:
// a function may name its values at run time (timer-probe's `registered@<t>`), so a column family
// per name would grow without bound.

namespace {
// A key's in-memory footprint for sizing the cache from the memory budget: the hash-table node,
// the key's vector and a small map of one or two named values.
constexpr int64_t kCachedKeyBytes = 256;
}  // namespace

void KeyedProcessOperator::OpenRocksDb() {
  if (rocks_ || context().state_backend != "rocksdb") {
    return;
  }
  const RocksDbSpec& spec = context().rocksdb;
  rocks_ = std::make_unique<RocksDbKeyedStore>(
      RocksDbKeyedStore::OperatorOptions(spec, context().name, context().subtask_index));
  rocks_cf_ = rocks_->ColumnFamily("process-state");
  rocks_cache_keys_ = RocksDbKeyedStore::CachedKeys(spec, kCachedKeyBytes);
}

void KeyedProcessOperator::FaultInCurrentKey() {
  if (!rocks_has_keys() || state_.contains(current_key_)) {
    return;
  }
  StateWriter kw;
  kw.WriteKey(current_key_);
  rocks_key_ = kw.Release();
  const int group = KeyGroupForHash(KeyHash64(current_key_), context_.max_parallelism);
  auto& values = state_[current_key_];
  if (!rocks_->Get(rocks_cf_, group, rocks_key_, &rocks_value_)) {
    return;  // the empty entry marks the key resident: no second read at its next record
  }
  rocks_->Delete(rocks_cf_, group, rocks_key_);
  ++rocks_keys_read_;
  StateReader r(rocks_value_);
  ReadNamedValues(r, r.ReadU32(), values);
}

void KeyedProcessOperator::NotePeakCachedKeys() {
  rocks_peak_cached_keys_ = std::max(rocks_peak_cached_keys_, static_cast<int64_t>(state_.size()));
}

void KeyedProcessOperator::MaybeSpill() {
  if (!rocks_ || state_.size() <= rocks_cache_keys_) {
    return;
  }
  NotePeakCachedKeys();
  for (const auto& [key, values] : state_) {
    if (values.empty()) {
      continue;
    }
    StateWriter kw;
    kw.WriteKey(key);
    StateWriter vw;
    WriteNamedValues(vw, values);
    rocks_->StagePut(rocks_cf_, KeyGroupForHash(KeyHash64(key), context_.max_parallelism),
                     kw.bytes(), vw.bytes());
  }
  rocks_->Commit();
  state_.clear();
  ++rocks_spills_;
}

}  // namespace tidemark
