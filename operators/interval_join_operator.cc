#include "operators/interval_join_operator.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "runtime/core/time_format.h"
#include "runtime/state/key_groups.h"
#include "runtime/state/rocksdb_snapshot_stream.h"
#include "runtime/state/state_codec.h"

namespace tidemark {

namespace {
constexpr int kLeft = 0;
}  // namespace

IntervalJoinOperator::IntervalJoinOperator(Options options, JoinFunction join)
    : options_(std::move(options)), join_(std::move(join)) {
  lower_ = options_.lower_inclusive ? options_.lower_bound_ms : options_.lower_bound_ms + 1;
  upper_ = options_.upper_inclusive ? options_.upper_bound_ms : options_.upper_bound_ms - 1;
  if (lower_ > upper_) {
    throw InvalidArgument(fmt::format(
        "interval join bounds must satisfy lowerBound <= upperBound (inclusive: {} > {})", lower_,
        upper_));
  }
  if (options_.left_key_slots.size() != options_.right_key_slots.size()) {
    throw InvalidArgument("interval join: left and right keys have different arity");
  }
}

void IntervalJoinOperator::ConcatRows(const Row& left, const Row& right, std::vector<Row>& out) {
  if (left.layout_ptr() != joined_left_ || right.layout_ptr() != joined_right_) {
    joined_left_ = left.layout_ptr();
    joined_right_ = right.layout_ptr();
    joined_ = RowLayout::Extend(joined_left_, joined_right_->types());
  }
  Row& row = out.emplace_back(joined_);
  for (size_t i = 0; i < left.size(); ++i) {
    row.CopyCell(i, left, i);
  }
  for (size_t i = 0; i < right.size(); ++i) {
    row.CopyCell(left.size() + i, right, i);
  }
}

IntervalJoinOperator::~IntervalJoinOperator() = default;

void IntervalJoinOperator::Open(const OperatorContext& context) {
  StreamOperator::Open(context);
  timer_service_ = std::make_unique<InternalTimerService<int>>(processing_time(), *this, *this);
  OpenRocksDb();
}

void IntervalJoinOperator::Close() {
  timer_service_.reset();
  rocks_.reset();
}

void IntervalJoinOperator::ProcessElement(StreamRecord& record, int input) {
  const bool is_left = input == kLeft;
  if (!record.has_timestamp || record.timestamp == kMinTimestamp) {
    throw NoTimestamp(
        "Long.MIN_VALUE timestamp: elements used in interval stream joins need meaningful "
        "timestamps");
  }
  const Timestamp ts = record.timestamp;
  if (ts < timer_service_->CurrentWatermark()) {
    const std::string& tag =
        is_left ? options_.left_late_output_tag : options_.right_late_output_tag;
    if (tag.empty()) {
      if (!first_late_dropped_) {
        first_late_dropped_ = {ts, timer_service_->CurrentWatermark()};
      }
      ++num_late_records_dropped_;
    } else {
      output().CollectSide(tag, record);
    }
    return;
  }
  const std::vector<int>& slots = is_left ? options_.left_key_slots : options_.right_key_slots;
  Key key;
  key.reserve(slots.size());
  for (int s : slots) {
    key.push_back(record.row.Get(static_cast<size_t>(s)));
  }
  SetCurrentKey(key);
  FaultInCurrentKey();
  KeyState& ks = state_[key];
  Buffer& ours = is_left ? ks.left : ks.right;
  const Buffer& other = is_left ? ks.right : ks.left;
  // The right side sees the mirrored interval.
  const int64_t rel_lower = is_left ? lower_ : -upper_;
  const int64_t rel_upper = is_left ? upper_ : -lower_;

  ours[ts].push_back(record.row);
  const Timestamp from = SaturatingAdd(ts, rel_lower);
  const Timestamp to = SaturatingAdd(ts, rel_upper);
  for (auto it = other.lower_bound(from); it != other.end() && it->first <= to; ++it) {
    for (const Row& o : it->second) {
      results_.clear();
      const Timestamp lt = is_left ? ts : it->first;
      const Timestamp rt = is_left ? it->first : ts;
      const Row& l = is_left ? record.row : o;
      const Row& r = is_left ? o : record.row;
      if (join_) {
        join_(l, r, lt, rt, results_);
      } else {
        ConcatRows(l, r, results_);
      }
      for (Row& row : results_) {
        StreamRecord out(std::move(row), std::max(lt, rt));
        output().Collect(out);
      }
    }
  }
  const Timestamp cleanup = rel_upper > 0 ? SaturatingAdd(ts, rel_upper) : ts;
  timer_service_->RegisterEventTimeTimer(input, cleanup);
  MaybeSpill();
}

void IntervalJoinOperator::ProcessWatermark(Watermark watermark, int input) {
  Timestamp& w = input_watermarks_[input == kLeft ? 0 : 1];
  w = std::max(w, watermark.timestamp);
  const Timestamp combined = std::min(input_watermarks_[0], input_watermarks_[1]);
  if (combined > combined_watermark_) {
    combined_watermark_ = combined;
    timer_service_->AdvanceWatermark(combined);
    output().EmitWatermark(Watermark{combined});
  }
}

void IntervalJoinOperator::OnEventTime(const InternalTimer<int>& timer) {
  FaultInCurrentKey();  // the timer service made the timer's key current
  auto it = state_.find(timer.key);
  if (it == state_.end()) {
    return;
  }
  if (timer.ns == kLeft) {
    it->second.left.erase(upper_ <= 0 ? timer.timestamp : timer.timestamp - upper_);
  } else {
    it->second.right.erase(lower_ <= 0 ? timer.timestamp + lower_ : timer.timestamp);
  }
  if (it->second.left.empty() && it->second.right.empty()) {
    state_.erase(it);
  }
  MaybeSpill();
}

namespace {

void WriteBuffer(StateWriter& w, const std::map<Timestamp, std::vector<Row>>& buffer) {
  w.WriteU32(static_cast<uint32_t>(buffer.size()));
  for (const auto& [ts, rows] : buffer) {
    w.WriteI64(ts);
    w.WriteU32(static_cast<uint32_t>(rows.size()));
    for (const Row& row : rows) {
      w.WriteRow(row);
    }
  }
}

void ReadBuffer(StateReader& r, std::map<Timestamp, std::vector<Row>>& buffer,
                const RowLayout* layout) {
  const uint32_t n = r.ReadU32();
  for (uint32_t i = 0; i < n; ++i) {
    std::vector<Row>& rows = buffer[r.ReadI64()];
    const uint32_t m = r.ReadU32();
    if (m > 0 && layout == nullptr) {
      throw StateCorrupt(
          "interval join snapshot: buffered rows, but the operator knows no input schema");
    }
    for (uint32_t j = 0; j < m; ++j) {
      rows.push_back(r.ReadRow(layout));
    }
  }
}

void WriteSide(StateWriter& w, const int& side) {
  w.WriteU8(static_cast<uint8_t>(side));
}
int ReadSide(StateReader& r) {
  const uint8_t side = r.ReadU8();
  if (side > 1) {
    throw StateCorrupt("interval join snapshot: a timer of input " + std::to_string(side));
  }
  return side;
}

}  // namespace

void IntervalJoinOperator::SnapshotState(StateSnapshotContext& context) {
  StateWriter& w = context.writer;
  w.BeginSection("interval-join", 1);
  w.WriteI64(input_watermarks_[0]);
  w.WriteI64(input_watermarks_[1]);
  w.WriteI64(combined_watermark_);
  w.WriteI64(num_late_records_dropped_);
  // On RocksDB the spilled keys are read from the store one key group at a time and written
  // from their stored values (the snapshot's bytes of their buffers), never read into the cache:
  // both backends write the same bytes, and the heap holds at most one key group's spilled keys
  // more.
  NotePeakCachedKeys();
  std::vector<Key> keys;
  for (const auto& [k, ks] : state_) {
    if (!ks.left.empty() || !ks.right.empty()) {  // an empty entry: the cache's "resident" mark
      keys.push_back(k);
    }
  }
  const TimersByKey<int> timers(timer_service_->EventTimeTimers());
  timers.AppendKeys(keys);
  const StreamedSnapshotStats stats = WriteKeyGroupsFromStore(
      w, context_.max_parallelism, std::move(keys), rocks_has_keys() ? rocks_.get() : nullptr,
      rocks_cf_, [&](const Key& key, const std::string* spilled) {
        if (spilled != nullptr) {  // the stored value is what the snapshot writes
          StateReader r(*spilled);
          KeyState ks;
          ReadBuffer(r, ks.left, options_.left_layout);
          ReadBuffer(r, ks.right, options_.right_layout);
          WriteBuffer(w, ks.left);
          WriteBuffer(w, ks.right);
        } else {
          auto it = state_.find(key);
          static const KeyState kEmpty;
          const KeyState& ks = it == state_.end() ? kEmpty : it->second;
          WriteBuffer(w, ks.left);
          WriteBuffer(w, ks.right);
        }
        timers.Write(w, key, WriteSide);
      });
  rocks_snapshot_peak_group_keys_ =
      std::max(rocks_snapshot_peak_group_keys_, stats.peak_group_spilled_keys);
  w.EndSection();
}

void IntervalJoinOperator::InitializeState(StateInitializationContext& context) {
  if (!context.is_restored()) {
    return;
  }
  StateReader& r = *context.reader;
  r.BeginSection("interval-join", 1);
  input_watermarks_[0] = r.ReadI64();
  input_watermarks_[1] = r.ReadI64();
  combined_watermark_ = r.ReadI64();
  timer_service_->RestoreWatermark(combined_watermark_);
  num_late_records_dropped_ = r.ReadI64();
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
                  KeyState ks;
                  ReadBuffer(r, ks.left, options_.left_layout);
                  ReadBuffer(r, ks.right, options_.right_layout);
                  if (!ks.left.empty() || !ks.right.empty()) {
                    if (sink && state_.size() >= rocks_cache_keys_) {
                      StateWriter vw;
                      WriteBuffer(vw, ks.left);
                      WriteBuffer(vw, ks.right);
                      sink->Put(key, vw.bytes());
                    } else {
                      state_[key] = std::move(ks);
                    }
                  }
                  ReadKeyTimers(r, key, *timer_service_, false, ReadSide);
                });
  if (sink) {
    sink->Finish();
  }
  NotePeakCachedKeys();
  r.EndSection();
}

std::vector<Timestamp> IntervalJoinOperator::BufferedTimestamps(const Key& key, int input) const {
  std::vector<Timestamp> out;
  auto it = state_.find(key);
  if (it != state_.end()) {
    for (const auto& [ts, rows] : input == kLeft ? it->second.left : it->second.right) {
      out.push_back(ts);
    }
  }
  return out;
}

void IntervalJoinOperator::CollectMetrics(MetricsWriter& out) const {
  out.Gauge("numLateRecordsDropped", num_late_records_dropped_);
  if (first_late_dropped_) {
    out.Note("firstLateRecordDropped", fmt::format("event time {} behind watermark {}",
                                                   FormatEventTime(first_late_dropped_->first),
                                                   FormatEventTime(first_late_dropped_->second)));
  }
}

// ---- RocksDB state backend (`pipeline.state-backend: rocksdb`) ----
//
// A key's buffers are one RocksDB entry: the key (`StateWriter::WriteKey`) under its key group,
// and as value both sides' buffers as the snapshot writes them.

namespace {
// A key's in-memory footprint for sizing the cache: the hash-table node, the key and two small
// maps of buffered rows.
constexpr int64_t kJoinCachedKeyBytes = 512;
}  // namespace

void IntervalJoinOperator::OpenRocksDb() {
  // Without the inputs' layouts spilled rows could not be read back: such an operator (built by
  // hand) keeps its buffers on the heap.
  if (rocks_ || context().state_backend != "rocksdb" || options_.left_layout == nullptr ||
      options_.right_layout == nullptr) {
    return;
  }
  const RocksDbSpec& spec = context().rocksdb;
  rocks_ = std::make_unique<RocksDbKeyedStore>(
      RocksDbKeyedStore::OperatorOptions(spec, context().name, context().subtask_index));
  rocks_cf_ = rocks_->ColumnFamily("interval-join-buffers");
  rocks_cache_keys_ = RocksDbKeyedStore::CachedKeys(spec, kJoinCachedKeyBytes);
}

void IntervalJoinOperator::FaultInCurrentKey() {
  if (!rocks_has_keys() || state_.contains(current_key_)) {
    return;
  }
  StateWriter kw;
  kw.WriteKey(current_key_);
  const int group = KeyGroupForHash(KeyHash64(current_key_), context_.max_parallelism);
  KeyState& ks = state_[current_key_];
  if (!rocks_->Get(rocks_cf_, group, kw.bytes(), &rocks_value_)) {
    return;  // the empty entry marks the key resident: no second read at its next element
  }
  rocks_->Delete(rocks_cf_, group, kw.bytes());
  ++rocks_keys_read_;
  StateReader r(rocks_value_);
  ReadBuffer(r, ks.left, options_.left_layout);
  ReadBuffer(r, ks.right, options_.right_layout);
}

void IntervalJoinOperator::NotePeakCachedKeys() {
  rocks_peak_cached_keys_ = std::max(rocks_peak_cached_keys_, static_cast<int64_t>(state_.size()));
}

void IntervalJoinOperator::MaybeSpill() {
  if (!rocks_ || state_.size() <= rocks_cache_keys_) {
    return;
  }
  NotePeakCachedKeys();
  for (const auto& [key, ks] : state_) {
    if (ks.left.empty() && ks.right.empty()) {
      continue;
    }
    StateWriter kw;
    kw.WriteKey(key);
    StateWriter vw;
    WriteBuffer(vw, ks.left);
    WriteBuffer(vw, ks.right);
    rocks_->StagePut(rocks_cf_, KeyGroupForHash(KeyHash64(key), context_.max_parallelism),
                     kw.bytes(), vw.bytes());
  }
  rocks_->Commit();
  state_.clear();
  ++rocks_spills_;
}

}  // namespace tidemark
