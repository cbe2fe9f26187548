// WindowOperator's sliced path (see the class comment in window_operator.h): per key, one
// accumulator per non-empty slice of gcd(size, slide) ms and one timer.
//
// Why it gives the per-window path's output exactly: a window w only ever receives records
// while it is not late (cleanup(w) > watermark), and once late it never fires again. So at any
// firing of w, the records in w's slices are exactly the records added to w, and merging
// the slices' accumulators (CanPreAggregate) equals w's own accumulator. A window covering a
// non-empty slice when the watermark passes its max timestamp is exactly a window that got a
// record before, i.e. one the per-window path fires by timer.

#include <algorithm>
#include <array>
#include <numeric>
#include <set>
#include <type_traits>
#include <typeinfo>

#include "operators/window/sliced_store.h"
#include "operators/window/window_operator.h"
#include "operators/window/window_tables.h"
#include "runtime/core/errors.h"

namespace tidemark {

void WindowOperator::InitSlicing() {
  const Trigger& trigger = *trigger_;
  const WindowFunction& function = *function_;
  const WindowAssigner& assigner = *assigner_;
  if (!assigner.IsEventTime() || typeid(trigger) != typeid(EventTimeTrigger) ||
      typeid(function) != typeid(AggregatingWindowFunction)) {
    return;
  }
  const auto& aggregating = static_cast<const AggregatingWindowFunction&>(function);
  if (!aggregating.CanPreAggregate()) {
    return;
  }
  int64_t size = 0;
  int64_t slide = 0;
  int64_t offset = 0;
  if (typeid(assigner) == typeid(TumblingWindows)) {
    const auto& tumbling = static_cast<const TumblingWindows&>(assigner);
    if (tumbling.stagger() != WindowStagger::kAligned) {
      return;
    }
    size = tumbling.size_ms();
    slide = size;
    offset = tumbling.offset_ms() % size;
  } else if (typeid(assigner) == typeid(SlidingWindows)) {
    const auto& sliding = static_cast<const SlidingWindows&>(assigner);
    size = sliding.size_ms();
    slide = sliding.slide_ms();
    offset = sliding.offset_ms();
  } else {
    return;
  }
  // slide > size leaves gaps (records in no window): not worth a special case.
  if (size <= 0 || slide <= 0 || slide > size || size > kMaxSlicedParameter ||
      options_.allowed_lateness_ms > kMaxSlicedParameter) {
    return;
  }
  sliced_ = true;
  aggregating_ = &aggregating;
  size_ = size;
  slide_ = slide;
  offset_ = offset;
  slice_ = std::gcd(size, slide);
  num_accs_ = aggregating.aggregates().size();
  slice_aggs_ = SliceAggregates(aggregating.aggregates());
  slice_words_ = slice_aggs_.words();
  // A tumbling window is one slice; for counts and int64 sums merging that slice into empty
  // accumulators gives the slice's own accumulators bit for bit, so a firing reads them directly.
  one_slice_windows_ =
      slice_ == size_ &&
      std::all_of(aggregating.aggregates().begin(), aggregating.aggregates().end(),
                  [](const ResolvedAggregate& a) {
                    return a.kind == AggregateKind::kCount ||
                           (a.kind == AggregateKind::kSum && a.output_type == FieldType::kInt64);
                  });
  // Per-window tables: aligned tumbling windows (one slice each) without lateness, whose
  // accumulators fit a table slot's four words and hold no strings (on RocksDB too, as its
  // cache within the budget: see tables_budget_).
  window_tables_ = slice_ == size_ && slide_ == size_ && options_.allowed_lateness_ms == 0 &&
                   slice_words_ >= 1 && slice_words_ <= 4 && !slice_aggs_.has_strings();
}

Timestamp WindowOperator::LastStart(Timestamp t) const {
  return TimeWindow::GetWindowStartWithOffset(t, offset_, slide_);
}

Timestamp WindowOperator::FirstStartContaining(Timestamp t) const {
  return LastStart(t - size_) + slide_;
}

Timestamp WindowOperator::SliceDropTime(Timestamp slice_start) const {
  // The cleanup time of the last window containing the slice. A slice start is aligned to the
  // slice with the windows' offset, so when the slice is the slide (tumbling windows, or a size
  // that is a multiple of the slide) it is its last window's start: no division, which the
  // timer check of every record of a key holding older slices would otherwise pay.
  const Timestamp last_start = slice_ == slide_ ? slice_start : LastStart(slice_start);
  return last_start + size_ - 1 + options_.allowed_lateness_ms;
}

const WindowOperator::SliceCache& WindowOperator::SliceOf(Timestamp t) {
  SliceCache& c = slice_cache_;
  if (t < c.lo || t >= c.hi) {
    c.lo = TimeWindow::GetWindowStartWithOffset(t, offset_, slice_);
    c.hi = c.lo + slice_;
    c.last_start = LastStart(t);
    c.first_start = FirstStartContaining(t);
    c.drop = SliceDropTime(c.lo);
  }
  return c;
}

KeyGroupRange WindowOperator::OwnedKeyGroups() const {
  const OperatorContext& c = context();
  return KeyGroupRangeForOperator(c.max_parallelism, c.parallelism, c.subtask_index);
}

size_t WindowOperator::NumSlices() const {
  size_t n = 0;
  auto add = [&n](int, const auto&, const SlicedKeyState& ks) {
    n += ks.starts.size();
  };
  if (tables_) {
    n += tables_->NumPanes();
  }
  if (int_store_) {
    int_store_->keys.ForEach(add);
  }
  if (key_store_) {
    key_store_->keys.ForEach(add);
  }
  return n;
}

const SlicedKeyState* WindowOperator::FindSlicedKey(const Key& key) const {
  if (int_store_) {
    const int64_t* v = key.size() == 1 ? std::get_if<int64_t>(&key[0]) : nullptr;
    return v == nullptr ? nullptr : int_store_->keys.Find(*v);
  }
  return key_store_ ? key_store_->keys.Find(KeyProbe::Of(key)) : nullptr;
}

void WindowOperator::MigrateToKeyStore() {
  // A key that is not a single non-NULL int64 arrived: every key becomes a `Key`. Its timer
  // entries are re-added (their order among equal times is the `Key` order, which for int64
  // values is the int64 order).
  UnspillAll();
  if (!key_store_) {
    key_store_ = std::make_unique<SlicedStore<KeyRef>>(context().max_parallelism, OwnedKeyGroups());
  }
  if (!int_store_) {
    return;
  }
  int_store_->keys.ForEach([this](int, int64_t k, SlicedKeyState& ks) {
    const Key key{Value(k)};
    auto [ref, state] = key_store_->keys.Emplace(KeyProbe::Of(key));
    if (ks.timer != kMinTimestamp) {
      key_store_->timers.Add(ks.timer, *ref);
    }
    *state = std::move(ks);
  });
  for (auto& [k, firings] : int_store_->firings) {
    key_store_->firings[key_store_->keys.arena().Make(Key{Value(k)})] = std::move(firings);
  }
  int_store_.reset();
}

namespace {
// A key's accumulator buffer beyond its inline capacity goes to `spares` when the key is done
// and comes back for a key that outgrows the inline space: no allocation per window in steady
// state. One rule for the per-window accumulators and the sliced words.
template <typename Vector>
void Recycle(Vector& accs, size_t inline_capacity, std::vector<Vector>& spares) {
  if (accs.capacity() > inline_capacity) {
    accs.erase(accs.begin(), accs.end());  // keeps the heap buffer (clear() frees it)
    spares.push_back(std::move(accs));
  }
}

template <typename Vector>
void Reuse(Vector& accs, size_t inline_capacity, std::vector<Vector>& spares) {
  if (!spares.empty() && accs.capacity() <= inline_capacity) {
    accs = std::move(spares.back());
    spares.pop_back();
    // New keys take buffers one record after another, freed long before (at a window end):
    // the next one is requested now, so its key's first add finds it cached.
    if (!spares.empty()) {
      __builtin_prefetch(spares.back().data());
    }
  }
}
}  // namespace

void WindowOperator::RecycleAccumulators(AccumulatorVector& accs) {
  Recycle(accs, kInlineAccumulators, spare_accs_);
}

void WindowOperator::ReuseAccumulators(AccumulatorVector& accs) {
  Reuse(accs, kInlineAccumulators, spare_accs_);
}

void WindowOperator::RecycleAccumulators(SliceWords& accs) {
  Recycle(accs, kInlineSliceWords, spare_words_);
}

void WindowOperator::ReuseAccumulators(SliceWords& accs) {
  Reuse(accs, kInlineSliceWords, spare_words_);
}

void WindowOperator::RecycleSliceStarts(SliceStarts& starts) {
  Recycle(starts, kInlineSliceStarts, spare_starts_);
}

void WindowOperator::ReuseSliceStarts(SliceStarts& starts) {
  Reuse(starts, kInlineSliceStarts, spare_starts_);
}

uint64_t* WindowOperator::FindOrAddSlice(SlicedKeyState& ks, Timestamp start) {
  const size_t n = slice_words_;
  if (ks.starts.empty() || ks.starts.back() < start) {
    ks.starts.push_back(start);
    ks.accs.resize(ks.accs.size() + n, uint64_t{0});
    return ks.accs.data() + (ks.accs.size() - n);
  }
  if (ks.starts.back() == start) {
    return ks.accs.data() + (ks.accs.size() - n);
  }
  auto pos = std::lower_bound(ks.starts.begin(), ks.starts.end(), start);
  const size_t i = static_cast<size_t>(pos - ks.starts.begin());
  if (*pos != start) {
    ks.starts.insert(pos, start);
    ks.accs.insert(ks.accs.begin() + static_cast<std::ptrdiff_t>(i * n), n, uint64_t{0});
  }
  return ks.accs.data() + i * n;
}

void WindowOperator::DropSlices(SlicedKeyState& ks, size_t n) {
  if (slice_aggs_.has_strings()) {
    for (size_t i = 0; i < n; ++i) {
      slice_aggs_.Release(ks.accs.data() + i * slice_words_, slice_strings_);
    }
  }
  ks.starts.erase(ks.starts.begin(), ks.starts.begin() + static_cast<std::ptrdiff_t>(n));
  ks.accs.erase(ks.accs.begin(), ks.accs.begin() + static_cast<std::ptrdiff_t>(n * slice_words_));
}

void WindowOperator::MergeSlices(const SlicedKeyState& ks, Timestamp start, Timestamp end) const {
  // Merged in the narrow form, expanded once.
  const size_t n = slice_words_;
  scratch_words_.assign(n, uint64_t{0});
  auto lo = std::lower_bound(ks.starts.begin(), ks.starts.end(), start);
  for (size_t i = static_cast<size_t>(lo - ks.starts.begin());
       i < ks.starts.size() && ks.starts[i] < end; ++i) {
    slice_aggs_.Merge(scratch_words_.data(), ks.accs.data() + i * n, slice_strings_);
  }
  ExpandScratchWords();
}

void WindowOperator::ExpandScratchWords() const {
  scratch_accs_.resize(num_accs_);
  slice_aggs_.Expand(scratch_words_.data(), scratch_accs_.data(), slice_strings_);
  slice_aggs_.Release(scratch_words_.data(), slice_strings_);
}

template <typename K>
SlicedFirings* WindowOperator::FiringsOf(SlicedStore<K>& store, const K& key) {
  if (!options_.emit_firing || options_.allowed_lateness_ms == 0) {
    return nullptr;
  }
  return &store.firings[key];
}

void WindowOperator::FireSlicedWindow(const Key& key, SlicedKeyState& ks, Timestamp start,
                                      SlicedFirings* firings, const KeyRef* short_key) {
  const uint64_t* slice_words = nullptr;  // the window's one slice, when it is one
  if (one_slice_windows_) {
    auto pos = std::lower_bound(ks.starts.begin(), ks.starts.end(), start);
    if (pos != ks.starts.end() && *pos == start) {
      slice_words = ks.accs.data() + static_cast<size_t>(pos - ks.starts.begin()) * slice_words_;
    }
  }
  if (slice_words == nullptr) {
    MergeSlices(ks, start, start + size_);
  }
  std::string_view short_string;
  if (short_key != nullptr) {
    short_string = short_key->ShortString();
  }
  EmitSlicedResult(key, start, slice_words, firings,
                   short_key != nullptr ? &short_string : nullptr);
}

void WindowOperator::FireTableWindow(const Key& key, const uint64_t* words, Timestamp start,
                                     const std::string_view* short_string) {
  if (!one_slice_windows_) {
    // The window's one slice merged into empty accumulators, as MergeSlices does.
    scratch_words_.assign(slice_words_, uint64_t{0});
    slice_aggs_.Merge(scratch_words_.data(), words, slice_strings_);
    ExpandScratchWords();
    words = nullptr;
  }
  EmitSlicedResult(key, start, words, nullptr, short_string);
}

void WindowOperator::EmitSlicedResult(const Key& key, Timestamp start, const uint64_t* words,
                                      SlicedFirings* firings,
                                      const std::string_view* short_string) {
  const Timestamp end = start + size_;
  const Window w(TimeWindow(start, end));
  const WindowFunction::Context ctx{key, w, timer_service_->CurrentWatermark(),
                                    timer_service_->processing_time_service()};
  const uint64_t* slice_words = words;
  Row& row = FiringRow();
  if (slice_words != nullptr) {
    // Counts and int64 sums (one_slice_windows_) go from the slice's words into the row: the
    // cells Expand + FillResultRow would write, without the accumulators in between.
    const size_t at = short_string != nullptr
                          ? aggregating_->FillResultKeyAndWindow(ctx, *short_string, row)
                          : aggregating_->FillResultKeyAndWindow(ctx, row);
    slice_aggs_.WriteCountsAndInt64Sums(slice_words, row, at);
  } else {
    aggregating_->FillResultRow(ctx, scratch_accs_.data(), row);
  }
  ++num_windows_fired_;
  if (options_.emit_firing) {
    // Without lateness a window fires exactly once (at its max timestamp, which is also its
    // cleanup time), so its number is always 0.
    int64_t firing = 0;
    if (firings != nullptr) {
      auto it = std::lower_bound(
          firings->begin(), firings->end(), end,
          [](const std::pair<Timestamp, int64_t>& f, Timestamp e) { return f.first < e; });
      if (it != firings->end() && it->first == end) {
        firing = it->second++;
      } else {
        firings->insert(it, {end, 1});
      }
    }
    SetFiring(row, firing);
  }
  EmitFiring(end - 1);
}

void WindowOperator::EmitRecycled(Timestamp timestamp) {
  StreamRecord out(std::move(result_row_), timestamp);
  output().Collect(out);
  // The row comes back unless the output kept it (moved out, it is empty): a chained sink that
  // only reads it costs no row allocation per firing.
  result_row_ = std::move(out.row);
}

Row& WindowOperator::FiringRow() {
  if (!fired_batching_) {
    return result_row_;
  }
  if (fired_size_ == fired_.size()) {
    fired_.emplace_back();
  }
  return fired_[fired_size_].row;
}

void WindowOperator::EmitFiring(Timestamp timestamp) {
  if (!fired_batching_) {
    EmitRecycled(timestamp);
    return;
  }
  fired_[fired_size_].SetTimestamp(timestamp);
  if (++fired_size_ == kFiredBatch) {
    FlushFired();
  }
}

void WindowOperator::FlushFired() {
  const size_t n = fired_size_;
  if (n == 0) {
    return;
  }
  fired_size_ = 0;
  fired_ptrs_.resize(n);
  for (size_t i = 0; i < n; ++i) {
    fired_ptrs_[i] = &fired_[i];
  }
  RecordBatch batch{fired_ptrs_.data(), n, nullptr};
  output().CollectBatch(batch);
}

template <typename K>
[[gnu::always_inline]] inline void WindowOperator::UpdateSlicedTimer(SlicedStore<K>& store,
                                                                     const K& key,
                                                                     SlicedKeyState& ks) {
  Timestamp want = ks.next_fire;
  if (!ks.starts.empty()) {
    const Timestamp front = ks.starts.front();
    const Timestamp drop = front == slice_cache_.lo ? slice_cache_.drop : SliceDropTime(front);
    if (want == kMinTimestamp || drop < want) {
      want = drop;
    }
  }
  if (want == ks.timer) {
    return;
  }
  // One live timer per key: an entry at another time than `ks.timer` is ignored when it fires,
  // so moving the timer only adds the new entry.
  if (want != kMinTimestamp) {
    store.timers.Add(want, key);
  }
  ks.timer = want;
}

void WindowOperator::SlicedProcessElement(StreamRecord& record) {
  if (options_.key_slots.size() == 1 && !key_store_) {
    if (IsInt64Key(record.row)) {
      if (!int_store_) {
        int_store_ =
            std::make_unique<SlicedStore<int64_t>>(context().max_parallelism, OwnedKeyGroups());
      }
      SlicedAdd(*int_store_, record.row.GetInt64(static_cast<size_t>(options_.key_slots[0])),
                record);
      return;
    }
    MigrateToKeyStore();
  }
  if (!key_store_) {
    key_store_ = std::make_unique<SlicedStore<KeyRef>>(context().max_parallelism, OwnedKeyGroups());
  }
  // No `Key` is built: the record's key fields are looked up in place and copied into the
  // backend's key pool only for a key it does not hold.
  SlicedAdd(*key_store_, KeyProbe::Of(record.row, options_.key_slots), record);
}

// Not inlined: its batch loops call it after every record that did not take the short path,
// and inlined into them it costs tumbling_keys_1e3 more instructions per record than the call.
[[gnu::noinline]] WindowOperator::ShortSlice WindowOperator::SlicedShortSlice() const {
  const SliceCache& c = slice_cache_;
  if (!sliced_ || key_store_ || !int_store_ || c.lo > c.hi) {
    return {};
  }
  const Timestamp wm = timer_service_->CurrentWatermark();
  const Timestamp first_max = c.first_start + size_ - 1;
  if (c.last_start + size_ - 1 + options_.allowed_lateness_ms <= wm || first_max <= wm) {
    return {};  // late, or a window of the slice fires at once (SlicedAdd's two cases)
  }
  return {c.lo, c.hi, first_max};
}

[[gnu::always_inline]] inline bool WindowOperator::SlicedAddShort(SlicedKeyState& ks,
                                                                  const StreamRecord& record,
                                                                  const ShortSlice& slice) {
  // SlicedAdd's steps for this record: not late, the key held with its last slice the
  // record's, no window to fire, next_fire (set, at most first_max) and with it the timer kept.
  if (!record.has_timestamp || record.timestamp < slice.lo || record.timestamp >= slice.hi ||
      ks.starts.empty() || ks.starts.back() != slice.lo || ks.next_fire == kMinTimestamp ||
      ks.next_fire > slice.first_max) {
    return false;
  }
  ++records_since_state_sample_;
  slice_aggs_.Add(ks.accs.data() + (ks.accs.size() - slice_words_), record.row,
                  aggregating_->NextArrival(), slice_strings_);
  return true;
}

void WindowOperator::SlicedInt64Batch(RecordBatch& records, int input) {
  // A small table on the heap backend is read through its RecentKeyStates (see
  // SlicedInt64BatchRecent); this loop is the one for every other table.
  if (int_store_ && !rocks_ && !int_store_->recent.churn &&
      int_store_->keys.size() <= kRecentMaxKeys) {
    SlicedInt64BatchRecent(records, input);
    return;
  }
  // Each record's key is hashed once, kHashAt records before its turn, to request its table's
  // control bytes; kSlotAt records before its turn its slot (the control bytes read); its turn
  // looks the slot up with the same hash.
  const uint64_t epoch_before = int_store_ ? int_store_->recent.epoch : 0;
  constexpr size_t kRing = 16;
  constexpr size_t kHashAt = 12;
  constexpr size_t kSlotAt = 6;
  const size_t n = records.size;
  const int slot = options_.key_slots[0];
  const auto uslot = static_cast<size_t>(slot);
  std::array<uint64_t, kRing> hashes{};
  std::array<bool, kRing> int_keys{};
  auto hash_ahead = [&](size_t j) __attribute__((always_inline)) {
    const Row& row = records[j].row;
    const bool int_key = IsInt64Slot(row, slot) && !row.IsNull(uslot);
    int_keys[j % kRing] = int_key;
    if (int_key) {
      const int64_t k = row.GetInt64(uslot);
      const uint64_t hash = Int64KeyHash64(k);
      hashes[j % kRing] = hash;
      if (int_store_) {
        int_store_->keys.PrefetchHashed(k, hash);
      }
    }
  };
  // Slots are requested only once the table outgrows the L2 cache (8192 keys are ~600 KB of
  // slots): below that a slot is a cache hit anyway, and the extra probe per record costs
  // tumbling_keys_1e3 (1e3 keys) more than it saves.
  constexpr size_t kTouchMinKeys = 8192;
  const bool touch = int_store_ && int_store_->keys.size() > kTouchMinKeys;
  auto touch_slot = [&](size_t j) {
    // int_store_ is re-checked: a record of the batch may move its keys to the interned store
    // or the operator off the sliced path, either of which destroys it.
    if (touch && int_keys[j % kRing] && int_store_) {
      int_store_->keys.Touch(records[j].row.GetInt64(uslot), hashes[j % kRing], SlotTouch::kSlot);
    }
  };
  // RocksDB backend: the batch's keys missing from the store are read back with one MultiGet
  // first, so a key still missing below is a new one.
  FaultInBatch(records);
  struct ResolvedReset {
    bool& flag;
    ~ResolvedReset() { flag = false; }
  } resolved_reset{rocks_batch_resolved_};
  // The heap backend's common record goes to SlicedAddShort (see the loop); `slice` is refreshed
  // after every record that did not.
  const bool short_path = int_store_ && !rocks_;
  ShortSlice slice = short_path ? SlicedShortSlice() : ShortSlice{};
  for (size_t j = 0; j < kHashAt && j < n; ++j) {
    hash_ahead(j);
    if (j < kSlotAt) {
      touch_slot(j);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const bool int_key = int_keys[i % kRing];
    const uint64_t hash = hashes[i % kRing];
    if (i + kHashAt < n) {
      hash_ahead(i + kHashAt);
    }
    if (i + kSlotAt < n) {
      touch_slot(i + kSlotAt);
    }
    StreamRecord& record = records[i];
    // A record in the short path's slice (on the heap backend) looks its key up here: a held
    // key goes to SlicedAddShort, and to SlicedAdd (not looked up again) when that declines.
    SlicedKeyState* held = nullptr;
    if (int_key && short_path && record.has_timestamp && record.timestamp >= slice.lo &&
        record.timestamp < slice.hi) {
      held = int_store_->keys.FindHashed(record.row.GetInt64(uslot), hash);
      if (held != nullptr && SlicedAddShort(*held, record, slice)) {
        continue;
      }
    }
    // The path is re-checked per record: a record may move the operator off it (a key of
    // another type moves the keys to the interned store, a timestamp out of range off slicing).
    if (int_key && sliced_ && !key_store_ && InSlicedRange(record)) {
      if (!int_store_) {
        int_store_ =
            std::make_unique<SlicedStore<int64_t>>(context().max_parallelism, OwnedKeyGroups());
      }
      ++records_since_state_sample_;
      SlicedAdd(*int_store_, HashedInt64Key{record.row.GetInt64(uslot), hash}, record, held);
    } else {
      ProcessElement(record, input);
    }
    if (short_path) {
      slice = SlicedShortSlice();
    }
  }
  if (int_store_) {
    int_store_->recent.churn = (int_store_->recent.epoch - epoch_before) * 8 >= n;
  }
}

void WindowOperator::SlicedInt64BatchRecent(RecordBatch& records, int input) {
  // SlicedInt64Batch through the store's RecentKeyStates (the caller checked when it may).
  // Each record's key is hashed once, kHashAt records before its turn, to request its table's
  // control bytes; kSlotAt records before its turn its slot (the control bytes read); its turn
  // looks the slot up with the same hash.
  constexpr size_t kRing = 16;
  constexpr size_t kHashAt = 12;
  constexpr size_t kSlotAt = 6;
  const size_t n = records.size;
  const int slot = options_.key_slots[0];
  const auto uslot = static_cast<size_t>(slot);
  std::array<uint64_t, kRing> hashes{};
  std::array<bool, kRing> int_keys{};
  // Slots are requested only once the table outgrows the L2 cache (8192 keys are ~600 KB of
  // slots): below that a slot is a cache hit anyway, and the extra probe per record costs
  // tumbling_keys_1e3 (1e3 keys) more than it saves.
  constexpr size_t kTouchMinKeys = 8192;
  const bool touch = int_store_ && int_store_->keys.size() > kTouchMinKeys;
  // A small table (below kTouchMinKeys, on the heap backend) is read through its
  // RecentKeyStates: a record's entry is requested when its key is hashed, read kFindAt records
  // before its turn, and the state found has the key's slices held off its slot requested (at
  // 1e3 keys all 20 windows of the input are open at once, past the slot's inline room: two heap
  // lines per record, each otherwise a cache miss); at its turn the add starts from that state
  // unless a key was inserted or erased in between. Above kTouchMinKeys keys come and go with
  // their windows too often for the cache to hold them; so they do in a small table that is
  // filling up (a window's first records at 1e5 keys insert a key each and invalidate the cache
  // at every record): the cache is skipped for a batch after one that inserted a key per 8
  // records or more.
  constexpr size_t kFindAt = 4;
  const bool recent = int_store_ && !touch && !rocks_ && !int_store_->recent.churn;
  const uint64_t epoch_before = int_store_ ? int_store_->recent.epoch : 0;
  if (recent && int_store_->recent.entries.empty()) {
    int_store_->recent.entries.resize(RecentKeyStates::kEntries);
  }
  auto hash_ahead = [&](size_t j) __attribute__((always_inline)) {
    const Row& row = records[j].row;
    const bool int_key = IsInt64Slot(row, slot) && !row.IsNull(uslot);
    int_keys[j % kRing] = int_key;
    if (int_key) {
      const int64_t k = row.GetInt64(uslot);
      const uint64_t hash = Int64KeyHash64(k);
      hashes[j % kRing] = hash;
      if (recent && int_store_) {
        int_store_->recent.Prefetch(hash);  // (the table is in the L2 cache)
      } else if (int_store_) {
        int_store_->keys.PrefetchHashed(k, hash);
      }
    }
  };
  auto touch_slot = [&](size_t j) {
    // int_store_ is re-checked: a record of the batch may move its keys to the interned store
    // or the operator off the sliced path, either of which destroys it.
    if (touch && int_keys[j % kRing] && int_store_) {
      int_store_->keys.Touch(records[j].row.GetInt64(uslot), hashes[j % kRing], SlotTouch::kSlot);
    }
  };
  std::array<SlicedKeyState*, kRing> found{};
  std::array<uint64_t, kRing> found_at{};  // the cache's epoch when found
  auto find_ahead = [&](size_t j) __attribute__((always_inline)) {
    SlicedKeyState* ks = nullptr;
    // int_store_ is re-checked (see touch_slot); the found state is used only while the
    // epoch is unchanged.
    if (int_keys[j % kRing] && int_store_) {
      ks = int_store_->recent.Find(records[j].row.GetInt64(uslot), hashes[j % kRing]);
      if (ks != nullptr) {
        PrefetchOutOfLine(*ks);
      }
      found_at[j % kRing] = int_store_->recent.epoch;
    }
    found[j % kRing] = ks;
  };
  // The common record's key state is found in the cache and given to SlicedAddShort; `slice`
  // and `slice_epoch` (the cache's) are refreshed after every record that took another path
  // (the only ones that may move the slice, insert or erase a key, or leave the path).
  ShortSlice slice;
  uint64_t slice_epoch = 0;  // RecentKeyStates' epochs start at 1
  auto refresh_slice = [&] {
    slice = SlicedShortSlice();
    slice_epoch = int_store_ ? int_store_->recent.epoch : 0;
  };
  refresh_slice();
  // RocksDB backend: the batch's keys missing from the store are read back with one MultiGet
  // first, so a key still missing below is a new one.
  FaultInBatch(records);
  struct ResolvedReset {
    bool& flag;
    ~ResolvedReset() { flag = false; }
  } resolved_reset{rocks_batch_resolved_};
  for (size_t j = 0; j < kHashAt && j < n; ++j) {
    hash_ahead(j);
    if (j < kSlotAt) {
      touch_slot(j);
    }
    if (recent && j < kFindAt) {
      find_ahead(j);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const bool int_key = int_keys[i % kRing];
    const uint64_t hash = hashes[i % kRing];
    if (i + kHashAt < n) {
      hash_ahead(i + kHashAt);
    }
    if (i + kSlotAt < n) {
      touch_slot(i + kSlotAt);
    }
    SlicedKeyState* held = found[i % kRing];
    const uint64_t held_at = found_at[i % kRing];
    if (recent && i + kFindAt < n) {
      find_ahead(i + kFindAt);
    }
    StreamRecord& record = records[i];
    if (held != nullptr && held_at == slice_epoch && recent &&
        SlicedAddShort(*held, record, slice)) {
      continue;
    }
    // The path is re-checked per record: a record may move the operator off it (a key of
    // another type moves the keys to the interned store, a timestamp out of range off slicing).
    if (int_key && sliced_ && !key_store_ && InSlicedRange(record)) {
      if (!int_store_) {
        int_store_ =
            std::make_unique<SlicedStore<int64_t>>(context().max_parallelism, OwnedKeyGroups());
      }
      ++records_since_state_sample_;
      const int64_t k = record.row.GetInt64(uslot);
      if (!recent) {
        SlicedAdd(*int_store_, HashedInt64Key{k, hash}, record);
        continue;
      }
      RecentKeyStates& cache = int_store_->recent;
      if (held_at != cache.epoch) {
        held = nullptr;
      }
      SlicedKeyState* state = SlicedAdd(*int_store_, HashedInt64Key{k, hash}, record, held);
      if (held == nullptr && state != nullptr && int_store_) {
        int_store_->recent.Put(k, hash, state);
      }
    } else {
      ProcessElement(record, input);
    }
    refresh_slice();
  }
  // Inserts only (a batch erases nothing); int_store_ may be gone (the keys moved off it).
  if (int_store_) {
    int_store_->recent.churn = (int_store_->recent.epoch - epoch_before) * 8 >= n;
  }
}

void WindowOperator::SlicedAddInterned(StreamRecord& record, uint64_t key_hash) {
  SlicedAdd(*key_store_, KeyProbe{&record.row, &options_.key_slots, nullptr, key_hash}, record);
}

template <typename K, typename Src>
SlicedKeyState* WindowOperator::SlicedAdd(SlicedStore<K>& store, const Src& src,
                                          StreamRecord& record, SlicedKeyState* held) {
  const Timestamp t = record.timestamp;
  const Timestamp wm = timer_service_->CurrentWatermark();
  const int64_t lateness = options_.allowed_lateness_ms;
  const SliceCache& slice = SliceOf(t);
  const Timestamp last_start = slice.last_start;
  const Timestamp last_max = last_start + size_ - 1;
  if (last_max + lateness <= wm) {
    // Every window of the record is past its cleanup time (so is the record itself).
    HandleLateElement(record, assigner_->AssignWindows(record, *this));
    return nullptr;
  }
  SlicedKeyState* state = held;
  const K key = [&] {
    if constexpr (std::is_same_v<Src, HashedInt64Key>) {
      if (held != nullptr) {
        return src.key;
      }
    }
    auto [key_in_table, s] = EmplaceKey(store.keys, src);
    state = s;
    return *key_in_table;  // a copy (a count for a KeyRef): firing emits downstream
  }();
  SlicedKeyState& ks = *state;
  if (ks.starts.empty()) {
    store.recent.Invalidate();   // an insert may move every state
    ReuseAccumulators(ks.accs);  // a new key (every held key has a slice)
    ReuseSliceStarts(ks.starts);
  }
  if (rocks_has_keys() && (rocks_merge_ ? slice.first_start + size_ - 1 <= wm
                                        : ks.starts.empty() && !rocks_batch_resolved_)) {
    // A key spilled to RocksDB (else a new key); with rocks_merge_ read only when this record
    // fires a window at once (else the record goes to the key's partial state).
    FaultIn(store, key, ks);
  }
  const Timestamp slice_start = slice.lo;
  // In-order records go to the key's last slice; then the earliest slice, and with it the
  // key's timer, stays as it was unless the next window to fire moves.
  const bool last_slice = !ks.starts.empty() && ks.starts.back() == slice_start;
  const Timestamp next_fire_before = ks.next_fire;
  uint64_t* accs = last_slice ? ks.accs.data() + (ks.accs.size() - slice_words_)
                              : FindOrAddSlice(ks, slice_start);
  slice_aggs_.Add(accs, record.row, aggregating_->NextArrival(), slice_strings_);

  const Timestamp first_start = slice.first_start;
  const Timestamp first_max = first_start + size_ - 1;
  if (first_max <= wm) {
    // Windows already complete but not cleaned up fire at once (EventTimeTrigger), in the
    // assigner's order (latest start first).
    const Key& k = KeyTraits<K>::ToKey(key, current_key_);
    for (Timestamp s = wm >= last_max ? last_start : LastStart(wm + 1 - size_);
         s >= first_start && s + size_ - 1 + lateness > wm; s -= slide_) {
      FireSlicedWindow(k, ks, s, FiringsOf(store, key));
    }
  }
  if (wm < last_max) {
    // The earliest of the record's windows still to complete fires by timer.
    const Timestamp next =
        first_max > wm ? first_max : LastStart(wm + 1 - size_) + slide_ + size_ - 1;
    if (ks.next_fire == kMinTimestamp || next < ks.next_fire) {
      ks.next_fire = next;
    }
  }
  // Every key's timer is where UpdateSlicedTimer put it after its last change (its records',
  // its firings', a restore's), and that depends only on the first slice and next_fire.
  if (!last_slice || ks.next_fire != next_fire_before) {
    UpdateSlicedTimer(store, key, ks);
  }
  return &ks;
}

void WindowOperator::FireSlicedTimers(Timestamp watermark) {
  if (tables_) {
    tables_->Fire(watermark);
    // (RocksDB holds no key while the tables are its cache; copies written once they are left
    // belong to windows after this watermark.)
    rocks_dead_through_ = std::max(rocks_dead_through_, watermark);
    return;
  }
  if (int_store_) {
    FireSlicedTimers(*int_store_, watermark);
  } else if (key_store_) {
    FireSlicedTimers(*key_store_, watermark);
  }
}

namespace {
// Requests every cache line of `v`'s elements.
template <typename Vector>
[[gnu::always_inline]] inline void PrefetchAll(const Vector& v) {
  PrefetchLines(v.data(), v.size() * sizeof(typename Vector::value_type));
}
}  // namespace

template <typename K>
void WindowOperator::FireSlicedTimers(SlicedStore<K>& store, Timestamp watermark) {
  // Time by time, each time's keys in key order: the order of the per-key timers this replaces
  // ((time, key) in the timer service); on RocksDB, once it holds keys, in RocksDB's order.
  Timestamp time = kMinTimestamp;
  // How far ahead a key's state is looked up (and its accumulator buffer, beyond the slot's
  // inline words, requested): the lookup of key i + kLookAhead lands on the slot requested 8
  // keys before it (its control bytes 12 before), and its words are in cache by the time key
  // i + kLookAhead fires.
  constexpr size_t kLookAhead = 4;
  std::array<SlicedKeyState*, kLookAhead> ahead{};
  std::vector<K> all_due;
  while (store.timers.PopDue(watermark, &time, store.due)) {
    if (!rocks_has_keys()) {
      FireDueKeys(store, time, ahead);
      continue;
    }
    // RocksDB backend: the keys of this time are read back a chunk at a time, fired, their
    // deletes written, and the cache trimmed, so a window end of many keys stays in budget. They
    // go in RocksDB's order (key group, then key bytes), not key order: each chunk is then one
    // range of RocksDB's keys, read with one iterator pass (a timer of a key fired and erased
    // before finds nothing), and the window end reads each data block once instead of once per
    // chunk. The order of a window end's keys is the one thing this changes (Flink defines none
    // for timers of equal time; docs/checkpoints.md).
    all_due.swap(store.due);
    if (rocks_has_keys()) {
      SortInRocksDbOrder(store, all_due);
    }
    const size_t chunk = std::max<size_t>(std::min<size_t>(rocks_cache_keys_ / 2, 65536), 1);
    std::vector<K> missing;
    // After the last watermark nothing is added: copies stay, dead (IsDeadCopy).
    rocks_delete_dead_ = watermark != kMaxTimestamp;
    for (size_t from = 0; from < all_due.size(); from += chunk) {
      store.due.assign(
          all_due.begin() + static_cast<std::ptrdiff_t>(from),
          all_due.begin() + static_cast<std::ptrdiff_t>(std::min(all_due.size(), from + chunk)));
      if (rocks_has_keys()) {
        missing.assign(store.due.begin(), store.due.end());
        FaultInMissing(store, missing, /*in_rocksdb_order=*/true);
      }
      // The chunk's key groups, ascending (RocksDB's order); the last may go on in the next chunk.
      const int first_group = store.keys.KeyGroupOf(store.due.front());
      const int last_group = store.keys.KeyGroupOf(store.due.back());
      FireDueKeys(store, time, ahead);
      RocksDbAfterFiring(store, missing);
      ShrinkFiredGroups(store, first_group,
                        from + chunk >= all_due.size() ? last_group : last_group - 1);
      MaybeSpill();
    }
    store.due.clear();
    all_due.clear();
    rocks_dead_through_ = time;
  }
  rocks_dead_through_ = std::max(rocks_dead_through_, watermark);
  // The filters of the copies just made dead go now, not at the next look-up (the next window
  // end's, with partial states): a window's filter is ~1.7-5 B a key written (170 MB at the
  // 3e7-key check), held through the whole next window beside that window's own and charged to
  // the cache only down to half of it.
  rocks_written_.DropThrough(rocks_dead_through_);
}

template <typename K>
void WindowOperator::FireDueKeys(SlicedStore<K>& store, Timestamp time,
                                 std::array<SlicedKeyState*, 4>& ahead) {
  constexpr size_t kLookAhead = 4;
  // The keys' result rows go downstream kFiredBatch at a time, in firing order (nothing else is
  // emitted while a time's keys fire); the last ones at the end of the loop.
  const FiredBatching batching(fired_batching_);
  // The heap backend reads the due keys no more once fired (RocksDbAfterFiring does).
  const bool release_keys = !rocks_has_keys();
  {
    // 10^5 keys per window end: their slots (and, for KeyRef keys, their values, which the
    // result rows copy) are loaded ahead, not one cache miss after another.
    const size_t n = store.due.size();
    // The slots looked up: a key done with its last window is erased at its slot, not probed
    // for again.
    using Slot = typename KeyedStateBackend<K, SlicedKeyState>::Slot;
    std::array<Slot, kLookAhead> slots{};
    auto look_up = [&](size_t j) {
      const Slot slot = store.keys.FindSlot(store.due[j]);
      SlicedKeyState* ks = slot.table != nullptr ? &slot.value() : nullptr;
      slots[j % kLookAhead] = slot;
      if (ks != nullptr && !ks->accs.empty()) {
        // A firing searches the starts, reads the words and moves both down past the dropped
        // slices: every line of both is requested (a key holding 20 slices has 8).
        PrefetchAll(ks->starts);
        PrefetchAll(ks->accs);
      }
      ahead[j % kLookAhead] = ks;
    };
    for (size_t j = 0; j < kLookAhead && j < n; ++j) {
      look_up(j);
    }
    for (size_t i = 0; i < n; ++i) {
      if (i + 12 < n) {
        store.keys.Prefetch(store.due[i + 12]);  // its control bytes
      }
      if (i + 8 < n) {
        const K& k = store.due[i + 8];
        store.keys.Touch(k, KeyTraits<K>::Hash64(k), SlotTouch::kSlot);
      }
      if constexpr (std::is_same_v<K, KeyRef>) {
        if (i + 12 < n) {
          store.due[i + 12].PrefetchEntry();
        }
        if (i + 6 < n) {
          store.due[i + 6].PrefetchValues();
        }
      }
      // Looked up kLookAhead keys before: erasing other keys (firing them) does not move a
      // slot of the table, and nothing is inserted while the keys of one time fire.
      SlicedKeyState* ks = ahead[i % kLookAhead];
      const Slot slot = slots[i % kLookAhead];
      if (i + kLookAhead < n) {
        look_up(i + kLookAhead);
      }
      K& key = store.due[i];
      if (ks != nullptr && ks->timer == time) {  // else a moved or deleted timer
        if (OnSlicedTimer(store, key, *ks, time)) {
          store.recent.Invalidate();
          store.keys.EraseSlot(slot);
        }
      }
      if constexpr (std::is_same_v<K, KeyRef>) {
        if (release_keys) {
          // The due list's ref is most often the key's last one: dropped now, while its entry
          // is cached, not by the next window end's PopDue (a cache miss per key).
          key = K();
        }
      }
    }
  }
  FlushFired();
}

template <typename K>
bool WindowOperator::OnSlicedTimer(SlicedStore<K>& store, const K& key, SlicedKeyState& ks,
                                   Timestamp time) {
  ks.timer = kMinTimestamp;
  if (ks.next_fire == time) {
    const KeyRef* short_key = nullptr;
    if constexpr (std::is_same_v<K, KeyRef>) {
      short_key = key.IsShortString() ? &key : nullptr;
    }
    FireSlicedWindow(KeyTraits<K>::ToKey(key, current_key_), ks, time + 1 - size_,
                     FiringsOf(store, key), short_key);
    // The next window to fire: the first later window covering a non-empty slice.
    const Timestamp next_start = time + 1 - size_ + slide_;
    auto pos = std::lower_bound(ks.starts.begin(), ks.starts.end(), next_start);
    if (pos == ks.starts.end()) {
      ks.next_fire = kMinTimestamp;
    } else {
      ks.next_fire = std::max(FirstStartContaining(*pos), next_start) + size_ - 1;
    }
  }
  // Slices whose last window is cleaned up; their windows can never fire again.
  size_t dropped = 0;
  while (dropped < ks.starts.size() && SliceDropTime(ks.starts[dropped]) <= time) {
    ++dropped;
  }
  // Every slice dropped (the common end of a key: its one window fired) goes with the key below,
  // its buffers recycled whole, without moving the (no) remaining slices down first.
  const bool key_done = dropped == ks.starts.size();
  if (dropped > 0 && !key_done) {
    DropSlices(ks, dropped);
  }
  const int64_t lateness = options_.allowed_lateness_ms;
  if (!store.firings.empty()) {
    if (auto f = store.firings.find(key); f != store.firings.end()) {
      std::erase_if(f->second, [&](const std::pair<Timestamp, int64_t>& e) {
        return e.first - 1 + lateness <= time;
      });
      if (f->second.empty() || key_done) {
        store.firings.erase(f);
      }
    }
  }
  if (key_done) {
    TM_CHECK(ks.next_fire == kMinTimestamp, "sliced window state: a firing without slices");
    if (slice_aggs_.has_strings()) {
      for (size_t i = 0; i < dropped; ++i) {
        slice_aggs_.Release(ks.accs.data() + i * slice_words_, slice_strings_);
      }
    }
    RecycleAccumulators(ks.accs);
    RecycleSliceStarts(ks.starts);
    return true;
  }
  UpdateSlicedTimer(store, key, ks);
  return false;
}

std::string_view WindowOperator::window_table_keys() const {
  return tables_ ? tables_->KeyForm() : "";
}

WindowOperator::TableKeys WindowOperator::TableKeysOf(const Row& row) const {
  if (IsInt64Key(row)) {
    return TableKeys::kInt64;
  }
  if (options_.key_slots.size() == 1) {
    const auto slot = static_cast<size_t>(options_.key_slots[0]);
    if (row.type(slot) == FieldType::kString && !row.IsNull(slot) &&
        ShortStringKey::Fits(row.GetString(slot).size())) {
      return TableKeys::kShortString;
    }
  }
  return TableKeys::kInterned;
}

namespace {
// Per-window tables of keys `K` whose slots hold `words` accumulator words (1, 2 or 4).
template <typename K>
std::unique_ptr<WindowTablesBase> MakeTables(WindowOperator& op, size_t words) {
  if (words == 1) {
    return std::make_unique<WindowTables<K, 1>>(op);
  }
  if (words == 2) {
    return std::make_unique<WindowTables<K, 2>>(op);
  }
  return std::make_unique<WindowTables<K, 4>>(op);
}
}  // namespace

void WindowOperator::MakeWindowTables(TableKeys keys) {
  // The narrow accumulators in a slot of 1, 2 or 4 words.
  const size_t words = slice_words_ <= 2 ? slice_words_ : 4;
  switch (keys) {
    case TableKeys::kInt64:
      tables_ = MakeTables<int64_t>(*this, words);
      break;
    case TableKeys::kShortString:
      tables_ = MakeTables<ShortStringKey>(*this, words);
      break;
    case TableKeys::kInterned:
      tables_ = MakeTables<KeyRef>(*this, words);
      break;
  }
}

void WindowOperator::LeaveWindowTables() {
  if (rocks_) {
    tables_->MoveToStore();  // spilling as it goes: within the budget
  } else {
    tables_->CopyToStore();
  }
  tables_.reset();
  window_tables_ = false;
}

bool WindowOperator::TablesOverBudget(size_t n) {
  if (tables_budget_ == 0 || tables_->PeakBytesAfter(n) <= tables_budget_) {
    return false;
  }
  LeaveWindowTables();
  return true;
}

bool WindowOperator::WidenWindowTables() {
  std::unique_ptr<WindowTablesBase> wide = tables_->Widen();
  if (!wide) {
    return false;
  }
  tables_ = std::move(wide);
  return !TablesOverBudget(0);
}

bool WindowOperator::AdoptStoreIntoTables() {
  // Interned keys that are all one short string go into short-string tables (which check).
  bool adopted = false;
  if (key_store_ && options_.key_slots.size() == 1) {
    MakeWindowTables(TableKeys::kShortString);
    adopted = tables_->AdoptStore();
  }
  if (!adopted) {
    MakeWindowTables(int_store_ != nullptr ? TableKeys::kInt64 : TableKeys::kInterned);
    adopted = tables_->AdoptStore();
  }
  if (!adopted) {
    tables_.reset();
    return false;
  }
  // On RocksDB a restored store larger than the budget goes back into the store, spilled.
  TablesOverBudget(0);
  return window_tables_;
}

void WindowOperator::LeaveSlicedPath() {
  UnspillAll();
  rocks_.reset();
  sliced_ = false;
  if (int_store_) {
    RebuildWindowsFromSlices(*int_store_);
  } else if (key_store_) {
    RebuildWindowsFromSlices(*key_store_);
  }
  int_store_.reset();
  key_store_.reset();
  slice_strings_.Clear();
}

template <typename K>
void WindowOperator::RebuildWindowsFromSlices(SlicedStore<K>& store) {
  // Rebuild what the per-window path would hold now: a state for every window that covers a
  // non-empty slice and is not cleaned up, its trigger timer when not fired yet, its cleanup
  // timer and its firing count.
  const Timestamp wm = timer_service_->CurrentWatermark();
  store.keys.ForEach([&](int, const K& k, const SlicedKeyState& ks) {
    SetCurrentKey(KeyTraits<K>::ToKey(k, current_key_));
    const Key key = current_key_;
    std::set<Timestamp> window_starts;
    for (Timestamp a : ks.starts) {
      for (Timestamp s = LastStart(a); s > a - size_; s -= slide_) {
        window_starts.insert(s);
      }
    }
    for (Timestamp s : window_starts) {
      const Window w(TimeWindow(s, s + size_));
      if (CleanupTime(w) <= wm) {
        continue;
      }
      MergeSlices(ks, s, s + size_);
      panes_[key][w] = aggregating_->CreateStateFrom(scratch_accs_.data());
      trigger_context_->set_window(w);
      if (w.MaxTimestamp() > wm) {
        trigger_context_->RegisterEventTimeTimer(w.MaxTimestamp());
      }
      RegisterCleanupTimer(w);
      if (options_.emit_firing) {
        auto f = store.firings.find(k);
        for (const auto& [end, count] : f == store.firings.end() ? SlicedFirings{} : f->second) {
          if (end == s + size_) {
            firings_[key][w] = count;
          }
        }
      }
    }
  });
}

}  // namespace tidemark
