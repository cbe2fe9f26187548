#include "operators/window/window_operator.h"

#include <algorithm>
#include <array>
#include <set>
#include <typeinfo>
#include <utility>

#include <fmt/format.h>

#include "operators/window/session_store.h"
#include "operators/window/sliced_store.h"
#include "operators/window/window_aggregates.h"
#include "operators/window/window_tables.h"
#include "runtime/core/errors.h"
#include "runtime/core/logging.h"
#include "runtime/core/mutex.h"
#include "runtime/core/time_format.h"

namespace tidemark {

WindowOperator::WindowOperator(std::unique_ptr<WindowAssigner> assigner,
                               std::unique_ptr<Trigger> trigger,
                               std::unique_ptr<WindowFunction> function, Options options)
    : assigner_(std::move(assigner)),
      trigger_(std::move(trigger)),
      function_(std::move(function)),
      options_(std::move(options)) {
  TM_CHECK(assigner_ != nullptr && function_ != nullptr, "window operator needs assigner+function");
  if (!trigger_) {
    trigger_ = assigner_->GetDefaultTrigger();
  }
  if (options_.allowed_lateness_ms < 0) {
    throw InvalidArgument(
        fmt::format("allowed lateness must be >= 0, got {}ms", options_.allowed_lateness_ms));
  }
  if (assigner_->IsMerging() && !trigger_->CanMerge()) {
    throw InvalidArgument(
        fmt::format("a merging window assigner ({}) needs a trigger that can "
                    "merge; {} cannot",
                    assigner_->ToString(), trigger_->ToString()));
  }
  if (const auto* agg = dynamic_cast<const AggregatingWindowFunction*>(function_.get())) {
    function_fills_firing_ = agg->has_firing_slot(options_.key_slots.size());
  }
  InitSlicing();
  InitSessions();
}

WindowOperator::~WindowOperator() = default;

namespace {
/// True the first time `op` asks in this process: the heap-fallback warning is logged once per
/// operator, not again for each subtask or restart.
bool FirstHeapFallbackOf(const std::string& op) {
  static Mutex mu;
  static std::set<std::string> warned;
  MutexLock lock(mu);
  return warned.insert(op).second;
}
}  // namespace

void WindowOperator::Open(const OperatorContext& context) {
  StreamOperator::Open(context);
  timer_service_ = std::make_unique<InternalTimerService<Window>>(processing_time(), *this, *this);
  trigger_context_ = std::make_unique<TriggerContext>(*timer_service_, *this, trigger_state_);
  if (sliced_) {
    OpenRocksDb();
  }
  window_tables_ = window_tables_ && sliced_;
  if (flat_sessions_) {
    OpenSessionRocksDb();
  }
  if (context.state_backend == "rocksdb" && !uses_rocksdb()) {
    heap_state_reason_ = HeapStateReason();
    if (context.subtask_index == 0 && FirstHeapFallbackOf(context.name)) {
      GetLogger("task")->warn(
          "window operator '{}': its keyed state stays on the heap although "
          "pipeline.state-backend is rocksdb: {}",
          EscapeControlCharacters(context.name), heap_state_reason_);
    }
  }
}

std::string WindowOperator::HeapStateReason() const {
  // The reasons InitSlicing / InitSessions leave the sliced path, most specific first.
  if (!assigner_->IsEventTime()) {
    return "processing-time windows keep per-window state on the heap";
  }
  if (typeid(*trigger_) != typeid(EventTimeTrigger)) {
    return fmt::format("the trigger {} keeps per-window state on the heap", trigger_->ToString());
  }
  const auto* aggregating = dynamic_cast<const AggregatingWindowFunction*>(function_.get());
  if (aggregating == nullptr) {
    return "a window function that buffers its records keeps per-window state on the heap";
  }
  for (const ResolvedAggregate& a : aggregating->aggregates()) {
    if (!AggregatingWindowFunction::CanPreAggregate(a)) {
      return fmt::format(
          "aggregate '{}' has no RocksDB form (a double sum, double min/max, avg, "
          "first-value/last-value or a percentile/listagg keeps per-window state on the heap)",
          a.name);
    }
  }
  if (assigner_->IsMerging()) {
    if (options_.allowed_lateness_ms != 0) {
      return "session windows with allowed-lateness keep per-window state on the heap";
    }
    return "session windows with a dynamic gap, or a gap above the flat session path's limit, "
           "keep per-window state on the heap";
  }
  return "this window shape (a staggered tumbling window, a slide above the size, or a size or "
         "allowed lateness above the sliced path's limit) keeps per-window state on the heap";
}

void WindowOperator::Close() {
  // The timer service cancels its processing-time wake-up; nothing may call back afterwards.
  trigger_context_.reset();
  timer_service_.reset();
  rocks_.reset();  // closes the instance and removes its directory
}

void WindowOperator::ExtractKeyInto(const Row& row, Key& key) const {
  // Assigns in place: no allocation when the previous key had the same shape.
  key.resize(options_.key_slots.size());
  for (size_t i = 0; i < options_.key_slots.size(); ++i) {
    const auto slot = static_cast<size_t>(options_.key_slots[i]);
    int64_t* dst = std::get_if<int64_t>(&key[i]);
    if (dst != nullptr && IsInt64Slot(row, static_cast<int>(slot)) && !row.IsNull(slot)) {
      *dst = row.GetInt64(slot);  // the common int64 key without building a Value
    } else {
      key[i] = row.Get(slot);
    }
  }
}

void WindowOperator::SetFiring(Row& row, int64_t firing) const {
  if (!function_fills_firing_) {
    row.Widen(RowLayout::Extend(row.layout_ptr(), {FieldType::kInt64}));
  }
  row.SetInt64(row.size() - 1, firing);
}

Timestamp WindowOperator::CleanupTime(const Window& w) const {
  if (assigner_->IsEventTime()) {
    // Overflow means "never": no cleanup timer (Flink's cleanupTime).
    Timestamp cleanup = 0;
    if (__builtin_add_overflow(w.MaxTimestamp(), options_.allowed_lateness_ms, &cleanup)) {
      return kMaxTimestamp;
    }
    return cleanup;
  }
  return w.MaxTimestamp();
}

bool WindowOperator::IsWindowLate(const Window& w) const {
  return assigner_->IsEventTime() && CleanupTime(w) <= timer_service_->CurrentWatermark();
}

bool WindowOperator::IsElementLate(const StreamRecord& record) const {
  return assigner_->IsEventTime() &&
         SaturatingAdd(record.timestamp, options_.allowed_lateness_ms) <=
             timer_service_->CurrentWatermark();
}

void WindowOperator::RegisterCleanupTimer(const Window& w) {
  const Timestamp cleanup = CleanupTime(w);
  if (cleanup == kMaxTimestamp) {
    return;  // "end of time": the window is never cleaned up
  }
  trigger_context_->set_window(w);
  if (assigner_->IsEventTime()) {
    trigger_context_->RegisterEventTimeTimer(cleanup);
  } else {
    trigger_context_->RegisterProcessingTimeTimer(cleanup);
  }
}

void WindowOperator::DeleteCleanupTimer(const Window& w) {
  const Timestamp cleanup = CleanupTime(w);
  if (cleanup == kMaxTimestamp) {
    return;
  }
  trigger_context_->set_window(w);
  if (assigner_->IsEventTime()) {
    trigger_context_->DeleteEventTimeTimer(cleanup);
  } else {
    trigger_context_->DeleteProcessingTimeTimer(cleanup);
  }
}

WindowState* WindowOperator::FindState(const Key& key, const Window& state_window) {
  auto k = panes_.find(key);
  if (k == panes_.end()) {
    return nullptr;
  }
  auto it = k->second.find(state_window);
  return it == k->second.end() ? nullptr : it->second.get();
}

const WindowState* WindowOperator::GetWindowState(const Key& key,
                                                  const Window& state_window) const {
  if (tables_) {
    const Timestamp start = state_window.is_global() ? 0 : state_window.start();
    const uint64_t* words = state_window.is_global() || state_window.end() != start + size_
                                ? nullptr
                                : tables_->Find(key, start);
    if (words == nullptr) {
      return nullptr;
    }
    scratch_words_.assign(slice_words_, uint64_t{0});
    slice_aggs_.Merge(scratch_words_.data(), words, slice_strings_);
    ExpandScratchWords();
    introspected_ = aggregating_->CreateStateFrom(scratch_accs_.data());
    return introspected_.get();
  }
  if (sliced_) {
    const SlicedKeyState* found = FindSlicedKey(key);
    if (found == nullptr || state_window.is_global()) {
      return nullptr;
    }
    const SlicedKeyState& ks = *found;
    auto lo = std::lower_bound(ks.starts.begin(), ks.starts.end(), state_window.start());
    if (lo == ks.starts.end() || *lo >= state_window.end()) {
      return nullptr;
    }
    MergeSlices(ks, state_window.start(), state_window.end());
    introspected_ = aggregating_->CreateStateFrom(scratch_accs_.data());
    return introspected_.get();
  }
  if (flat_sessions_) {
    const SessionKeyState* ks = FindSessionKey(key);
    for (size_t i = 0; ks != nullptr && !state_window.is_global() && i < ks->sessions.size(); ++i) {
      const FlatSession& s = ks->sessions[i];
      if (s.state_start == state_window.start() && s.state_end == state_window.end()) {
        scratch_accs_.resize(session_accs_);
        slice_aggs_.Expand(ks->accs.data() + i * slice_words_, scratch_accs_.data(),
                           slice_strings_);
        introspected_ = aggregating_->CreateStateFrom(scratch_accs_.data());
        return introspected_.get();
      }
    }
    return nullptr;
  }
  return const_cast<WindowOperator*>(this)->FindState(key, state_window);
}

const MergingWindowSet* WindowOperator::GetMergingWindowSet(const Key& key) const {
  if (flat_sessions_) {
    const SessionKeyState* ks = FindSessionKey(key);
    if (ks == nullptr) {
      return nullptr;
    }
    introspected_sessions_ = MergingWindowSet();
    for (const FlatSession& s : ks->sessions) {
      introspected_sessions_.RestoreWindow(Window(TimeWindow(s.start, s.end)),
                                           Window(TimeWindow(s.state_start, s.state_end)));
    }
    return &introspected_sessions_;
  }
  auto it = merging_sets_.find(key);
  return it == merging_sets_.end() ? nullptr : &it->second;
}

void WindowOperator::AddToState(const Key& key, const Window& state_window,
                                const StreamRecord& record) {
  std::unique_ptr<WindowState>& state = panes_[key][state_window];
  if (!state) {
    state = function_->CreateState();
  }
  state->Add(record);
}

void WindowOperator::ClearState(const Key& key, const Window& state_window) {
  auto k = panes_.find(key);
  if (k == panes_.end()) {
    return;
  }
  k->second.erase(state_window);
  if (k->second.empty()) {
    panes_.erase(k);
  }
}

void WindowOperator::MergeStates(const Key& key, const Window& target,
                                 const std::vector<Window>& sources) {
  for (const Window& source : sources) {
    WindowState* from = FindState(key, source);
    if (from == nullptr) {
      continue;
    }
    std::unique_ptr<WindowState>& into = panes_[key][target];
    if (!into) {
      into = function_->CreateState();
    }
    into->MergeFrom(*from);
    ClearState(key, source);
  }
}

void WindowOperator::EmitWindowContents(const Window& w, const WindowState& state) {
  results_.clear();
  const WindowFunction::Context ctx{current_key_, w, timer_service_->CurrentWatermark(),
                                    timer_service_->processing_time_service()};
  function_->Process(ctx, state, results_);
  ++num_windows_fired_;
  if (options_.emit_firing) {
    const int64_t firing = firings_[current_key_][w]++;
    for (Row& row : results_) {
      SetFiring(row, firing);
    }
  }
  for (Row& row : results_) {
    StreamRecord out(std::move(row), w.MaxTimestamp());
    output().Collect(out);
  }
}

void WindowOperator::ProcessBatch(RecordBatch& records, int input) {
  MaybeSpill();
  if (flat_sessions_ && rocks_session_cf_ >= 0) {
    SessionFaultInBatch(records);  // (RocksDB) the batch's evicted int64 keys in one MultiGet
  }
  if (window_tables_) {
    if (records.size == 0) {
      return;
    }
    if (!tables_) {
      MakeWindowTables(TableKeysOf(records[0].row));
    }
    if (TablesOverBudget(records.size)) {
      ProcessBatch(records, input);  // on in the sliced store
      return;
    }
    const size_t taken = tables_->AddBatch(records);
    if (taken == records.size) {
      return;
    }
    // A record the tables cannot take: short-string tables are widened to interned keys, which
    // it and the rest then go to; other tables are left, and it and the rest go on in the
    // sliced store.
    if (!WidenWindowTables() && tables_) {
      LeaveWindowTables();
    }
    RecordBatch rest{records.records + taken, records.size - taken, nullptr};
    ProcessBatch(rest, input);
    return;
  }
  // How far ahead a record's table slot is requested: enough to cover a memory access with the
  // work of the records between, few enough that the lines are still cached when used.
  constexpr size_t kPrefetchDistance = 8;
  const size_t n = records.size;
  if (n <= kPrefetchDistance) {
    StreamOperator::ProcessBatch(records, input);
    return;
  }
  if (sliced_ && key_store_) {
    // Interned keys (strings, several fields): a lookup reads the table's control bytes, the
    // slot, the key's pool entry and the key's values, each from memory the one before points
    // at (four misses in a row for 10^5 users). A record's key hash is computed 12 records
    // ahead, with its control bytes requested; 9 ahead its slot, 6 ahead (slot read) its pool
    // entry, 3 ahead (entry read) its values, so its own lookup finds all four cached. The
    // row itself, written on the reader's core, is requested 16 ahead, before the hash reads it.
    constexpr size_t kRing = 16;
    constexpr size_t kRowAt = 16;
    constexpr size_t kHashAt = 12;
    constexpr size_t kSlotAt = 9;
    constexpr size_t kEntryAt = 6;
    constexpr size_t kValuesAt = 3;
    std::array<uint64_t, kRing> hashes{};
    // Whether the record's key may be in the table (a stage found a candidate slot): a new key
    // (most records when keys come and go with their windows) skips the later stages.
    std::array<bool, kRing> maybe_held{};
    // Whether the record's key is one short string, which a held key's pool entry holds itself
    // (`KeyRef::IsShortString`): its lookup reads no values, so they are not requested.
    std::array<bool, kRing> short_key{};
    const bool one_key_field = options_.key_slots.size() == 1;
    const auto key_slot =
        static_cast<size_t>(options_.key_slots.empty() ? 0 : options_.key_slots[0]);
    // The store is re-read at every use: a record of the batch may move the operator off the
    // sliced path, which destroys it.
    auto hash_ahead = [&](size_t j) {
      const Row& row = records[j].row;
      const KeyProbe probe = KeyProbe::Of(row, options_.key_slots);
      hashes[j % kRing] = probe.hash64;
      maybe_held[j % kRing] = true;
      short_key[j % kRing] = one_key_field && row.type(key_slot) == FieldType::kString &&
                             !row.IsNull(key_slot) &&
                             row.GetString(key_slot).size() <= KeyEntryShortBytes();
      if (key_store_) {
        key_store_->keys.Prefetch(probe);
      }
    };
    auto touch = [&](size_t j, SlotTouch::Stage stage) {
      if (key_store_ && maybe_held[j % kRing]) {
        const uint64_t hash = hashes[j % kRing];
        maybe_held[j % kRing] = key_store_->keys.Touch(
            KeyProbe{&records[j].row, &options_.key_slots, nullptr, hash}, hash, stage);
      }
    };
    for (size_t j = 0; j < kRowAt && j < n; ++j) {
      records[j].row.PrefetchValues();
    }
    for (size_t j = 0; j < kHashAt && j < n; ++j) {
      hash_ahead(j);
      if (j < kSlotAt) {
        touch(j, SlotTouch::kSlot);
      }
    }
    for (size_t i = 0; i < n; ++i) {
      if (i + kRowAt < n) {
        records[i + kRowAt].row.PrefetchValues();
      }
      if (i + kHashAt < n) {
        hash_ahead(i + kHashAt);
      }
      if (i + kSlotAt < n) {
        touch(i + kSlotAt, SlotTouch::kSlot);
      }
      if (i + kEntryAt < n) {
        touch(i + kEntryAt, SlotTouch::kEntry);
      }
      if (i + kValuesAt < n && !short_key[(i + kValuesAt) % kRing]) {
        touch(i + kValuesAt, SlotTouch::kValues);
      }
      const uint64_t hash = hashes[i % kRing];
      StreamRecord& record = records[i];
      // The path is re-checked per record (a record may move the operator off it).
      if (sliced_ && key_store_ && InSlicedRange(record)) {
        ++records_since_state_sample_;
        SlicedAddInterned(record, hash);
      } else {
        ProcessElement(record, input);
      }
    }
    return;
  }
  if (options_.key_slots.size() != 1) {
    StreamOperator::ProcessBatch(records, input);
    return;
  }
  if (sliced_ && !key_store_) {
    SlicedInt64Batch(records, input);
    return;
  }
  const auto slot = static_cast<size_t>(options_.key_slots[0]);
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) {
      const Row& ahead = records[i + kPrefetchDistance].row;
      // The stores are re-checked per record: a record may move the operator off its path.
      if (IsInt64Slot(ahead, static_cast<int>(slot)) && !ahead.IsNull(slot)) {
        if (flat_sessions_ && int_sessions_) {
          int_sessions_->keys.Prefetch(ahead.GetInt64(slot));
        }
      }
    }
    ProcessElement(records[i], input);
  }
}

void WindowOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  ++records_since_state_sample_;
  if (window_tables_) {
    if (!tables_) {
      MakeWindowTables(TableKeysOf(record.row));
    }
    if (!TablesOverBudget(1)) {
      if (tables_->Add(record)) {
        return;
      }
      if (WidenWindowTables() && tables_->Add(record)) {
        return;
      }
      if (tables_) {
        LeaveWindowTables();  // the record goes on in the sliced store
      }
    }
  }
  if (sliced_) {
    if (InSlicedRange(record)) {
      SlicedProcessElement(record);
      return;
    }
    LeaveSlicedPath();
  }
  if (flat_sessions_) {
    if (InSlicedRange(record)) {
      SessionProcessElement(record);
      return;
    }
    LeaveSessionPath();
  }
  ExtractKeyInto(record.row, current_key_);
  const Key& key = current_key_;
  const std::vector<Window> windows = assigner_->AssignWindows(record, *this);
  const Timestamp element_ts = record.has_timestamp ? record.timestamp : kMinTimestamp;
  TriggerContext& ctx = *trigger_context_;
  bool skipped = true;

  if (assigner_->IsMerging()) {
    MergingWindowSet& sessions = merging_sets_[key];
    for (const Window& window : windows) {
      const Window actual = sessions.AddWindow(
          window, *assigner_,
          [&](const Window& merge_result, const std::vector<Window>& merged_windows,
              const Window& state_window_result, const std::vector<Window>& merged_state_windows) {
            if (assigner_->IsEventTime() &&
                SaturatingAdd(merge_result.MaxTimestamp(), options_.allowed_lateness_ms) <=
                    timer_service_->CurrentWatermark()) {
              throw Error(fmt::format(
                  "The end timestamp of an event-time window cannot become earlier than the "
                  "current watermark by merging. Current watermark: {} window: {}",
                  timer_service_->CurrentWatermark(), merge_result.ToString()));
            }
            if (!assigner_->IsEventTime() &&
                merge_result.MaxTimestamp() <= timer_service_->CurrentProcessingTime()) {
              throw Error(fmt::format(
                  "The end timestamp of a processing-time window cannot become earlier than the "
                  "current processing time by merging. Current processing time: {} window: {}",
                  timer_service_->CurrentProcessingTime(), merge_result.ToString()));
            }
            ctx.set_window(merge_result);
            ctx.set_merged_windows(merged_windows);
            trigger_->OnMerge(merge_result, ctx);
            ctx.set_merged_windows({});
            for (const Window& m : merged_windows) {
              ctx.set_window(m);
              trigger_->Clear(m, ctx);
              DeleteCleanupTimer(m);
              if (options_.emit_firing && !(m == merge_result)) {
                if (auto f = firings_.find(key); f != firings_.end()) {
                  f->second.erase(m);
                }
              }
            }
            MergeStates(key, state_window_result, merged_state_windows);
          });

      if (IsWindowLate(actual)) {
        sessions.RetireWindow(actual);
        continue;
      }
      skipped = false;
      const Window* state_window_ptr = sessions.GetStateWindow(actual);
      TM_CHECK(state_window_ptr != nullptr, "window {} is not in the in-flight window set",
               actual.ToString());
      const Window state_window = *state_window_ptr;
      AddToState(key, state_window, record);

      ctx.set_window(actual);
      const TriggerResult result = trigger_->OnElement(record, element_ts, actual, ctx);
      if (IsFire(result)) {
        if (const WindowState* contents = FindState(key, state_window)) {
          EmitWindowContents(actual, *contents);
        }
      }
      if (IsPurge(result)) {
        ClearState(key, state_window);
      }
      RegisterCleanupTimer(actual);
    }
    if (sessions.empty()) {
      merging_sets_.erase(key);
    }
  } else {
    for (const Window& window : windows) {
      if (IsWindowLate(window)) {
        continue;
      }
      skipped = false;
      AddToState(key, window, record);
      ctx.set_window(window);
      const TriggerResult result = trigger_->OnElement(record, element_ts, window, ctx);
      if (IsFire(result)) {
        const WindowState* contents = FindState(key, window);
        if (contents == nullptr) {
          continue;
        }
        EmitWindowContents(window, *contents);
      }
      if (IsPurge(result)) {
        ClearState(key, window);
      }
      RegisterCleanupTimer(window);
    }
  }

  if (skipped && IsElementLate(record)) {
    HandleLateElement(record, windows);
  }
}

void WindowOperator::HandleLateElement(StreamRecord& record, const std::vector<Window>& windows) {
  if (!options_.late_output_tag.empty()) {
    ++num_late_records_side_output_;
    if (options_.late_provenance) {
      const Window* latest = nullptr;
      for (const Window& w : windows) {
        if (latest == nullptr || latest->end() < w.end()) {
          latest = &w;
        }
      }
      const Timestamp wm = timer_service_->CurrentWatermark();
      Timestamp late_by = 0;
      if (__builtin_sub_overflow(wm, record.timestamp, &late_by)) {
        late_by = kMaxTimestamp;
      }
      if (late_layout_ == nullptr || late_layout_->size() != record.row.size() + 3) {
        late_layout_ =
            RowLayout::Extend(record.row.layout_ptr(),
                              {FieldType::kTimestamp, FieldType::kTimestamp, FieldType::kInt64});
      }
      const size_t n = record.row.size();
      record.row.Widen(late_layout_);
      if (latest != nullptr) {
        record.row.SetInt64(n, latest->start());
        record.row.SetInt64(n + 1, latest->end());
      }
      record.row.SetInt64(n + 2, late_by);
    }
    output().CollectSide(options_.late_output_tag, record);
    return;
  }
  if (!first_late_dropped_) {
    first_late_dropped_ = {record.timestamp, timer_service_->CurrentWatermark()};
  }
  ++num_late_records_dropped_;
  if (num_late_records_dropped_ == 1 || num_late_records_dropped_ % 10000 == 0) {
    GetLogger("task")->warn("window operator '{}': dropped late records ({} so far)",
                            context().name, num_late_records_dropped_);
  }
}

void WindowOperator::ProcessWatermark(Watermark watermark, int /*input*/) {
  SampleStateBytes();
  // Sets the current watermark first, as for the per-window path's timers.
  timer_service_->AdvanceWatermark(watermark.timestamp);
  if (sliced_) {
    FireSlicedTimers(watermark.timestamp);
  }
  if (flat_sessions_) {
    FireSessionTimers(watermark.timestamp);
  }
  MaybeSpill();
  output().EmitWatermark(watermark);
}

void WindowOperator::OnEventTime(const InternalTimer<Window>& timer) {
  OnTimer(timer, true);
}

void WindowOperator::OnProcessingTime(const InternalTimer<Window>& timer) {
  OnTimer(timer, false);
}

void WindowOperator::OnTimer(const InternalTimer<Window>& timer, bool event_time) {
  const Key& key = current_key_;  // set by the timer service
  const Window window = timer.ns;
  TriggerContext& ctx = *trigger_context_;
  ctx.set_window(window);

  Window state_window = window;
  MergingWindowSet* sessions = nullptr;
  if (assigner_->IsMerging()) {
    auto it = merging_sets_.find(key);
    const Window* sw = it == merging_sets_.end() ? nullptr : it->second.GetStateWindow(window);
    if (sw == nullptr) {
      // A timer of a window that was already cleaned up (a trigger left it behind).
      return;
    }
    sessions = &it->second;
    state_window = *sw;
  }

  const TriggerResult result = event_time
                                   ? trigger_->OnEventTime(timer.timestamp, window, ctx)
                                   : trigger_->OnProcessingTime(timer.timestamp, window, ctx);
  if (IsFire(result)) {
    if (const WindowState* contents = FindState(key, state_window)) {
      EmitWindowContents(window, *contents);
    }
  }
  if (IsPurge(result)) {
    ClearState(key, state_window);
  }
  if (event_time == assigner_->IsEventTime() && timer.timestamp == CleanupTime(window)) {
    if (options_.emit_firing) {
      if (auto f = firings_.find(key); f != firings_.end()) {
        f->second.erase(window);
        if (f->second.empty()) {
          firings_.erase(f);
        }
      }
    }
    ClearState(key, state_window);
    ctx.set_window(window);
    trigger_->Clear(window, ctx);
    if (sessions != nullptr) {
      sessions->RetireWindow(window);
      if (sessions->empty()) {
        merging_sets_.erase(key);
      }
    }
  }
}

// ---- Compile ----

Schema WindowOperator::LateOutputSchema(const Schema& input) {
  Schema out = input;
  for (const char* name : {"late_window_start", "late_window_end", "late_by_ms"}) {
    if (out.IndexOf(name) >= 0) {
      throw InvalidArgument(
          fmt::format("the input already has a field '{}', which the late side output adds", name));
    }
  }
  out.Add("late_window_start", FieldType::kTimestamp);
  out.Add("late_window_end", FieldType::kTimestamp);
  out.Add("late_by_ms", FieldType::kInt64);
  return out;
}

namespace {

std::unique_ptr<WindowAssigner> MakeAssigner(const WindowSpec& spec) {
  if (spec.time != "event" && spec.time != "processing") {
    throw InvalidArgument(
        fmt::format("window.time must be 'event' or 'processing', got '{}'", spec.time));
  }
  const bool event_time = spec.time == "event";
  if (spec.assigner == "tumbling") {
    if (spec.size_ms <= 0) {
      throw InvalidArgument(fmt::format("window.size must be > 0, got {}ms", spec.size_ms));
    }
    return std::make_unique<TumblingWindows>(event_time, spec.size_ms, spec.offset_ms);
  }
  if (spec.assigner == "sliding") {
    if (spec.size_ms <= 0) {
      throw InvalidArgument(fmt::format("window.size must be > 0, got {}ms", spec.size_ms));
    }
    if (spec.slide_ms <= 0) {
      throw InvalidArgument(fmt::format("window.slide must be > 0, got {}ms", spec.slide_ms));
    }
    if (spec.slide_ms > spec.size_ms) {
      throw InvalidArgument(
          fmt::format("window.slide ({}ms) must not be larger than window.size ({}ms)",
                      spec.slide_ms, spec.size_ms));
    }
    return std::make_unique<SlidingWindows>(event_time, spec.size_ms, spec.slide_ms,
                                            spec.offset_ms);
  }
  if (spec.assigner == "session") {
    if (spec.gap_ms <= 0) {
      throw InvalidArgument(fmt::format("window.gap must be > 0, got {}ms", spec.gap_ms));
    }
    return std::make_unique<SessionWindows>(event_time, spec.gap_ms);
  }
  if (spec.assigner == "global") {
    return std::make_unique<GlobalWindows>(/*end_of_stream_trigger=*/true);
  }
  throw InvalidArgument(
      fmt::format("unknown window assigner '{}' (expected tumbling, sliding, session or global)",
                  spec.assigner));
}

}  // namespace

std::unique_ptr<WindowAssigner> MakeWindowAssigner(const WindowSpec& spec) {
  return MakeAssigner(spec);
}

WindowOperatorPlan WindowOperator::Compile(const Schema& input, const WindowSpec& spec,
                                           const std::vector<std::string>& key_by) {
  Options options;
  Schema out;
  for (const std::string& name : key_by) {
    const int slot = input.IndexOf(name);
    if (slot < 0) {
      throw InvalidArgument(fmt::format("key_by: the input has no field '{}'", name));
    }
    options.key_slots.push_back(slot);
    out.Add(name, input.field(static_cast<size_t>(slot)).type);
  }
  if (spec.allowed_lateness_ms < 0) {
    throw InvalidArgument(
        fmt::format("window.allowed_lateness must be >= 0, got {}ms", spec.allowed_lateness_ms));
  }
  options.allowed_lateness_ms = spec.allowed_lateness_ms;
  options.late_output_tag = spec.late_output;
  options.emit_firing = spec.emit_firing || spec.allowed_lateness_ms > 0;
  options.late_provenance = !spec.late_output.empty();
  options.input_layout = input.layout();
  if (options.late_provenance) {
    (void)LateOutputSchema(input);  // reports a clash of column names now
  }

  // Build once now so that every bad parameter is reported at compile time.
  std::unique_ptr<WindowAssigner> assigner = MakeAssigner(spec);
  std::unique_ptr<Trigger> trigger = spec.trigger.empty() ? nullptr : MakeTrigger(spec.trigger);
  if (assigner->IsMerging() && trigger && !trigger->CanMerge()) {
    throw InvalidArgument(
        fmt::format("window.trigger '{}' cannot be used with session windows", spec.trigger));
  }

  std::vector<ResolvedAggregate> aggregates;
  if (spec.aggregates.empty()) {
    AggregateSpec count;
    count.function = "count";
    aggregates.push_back(ResolveAggregate(count, input));
  }
  for (const AggregateSpec& a : spec.aggregates) {
    aggregates.push_back(ResolveAggregate(a, input));
  }

  // Every result row holds the key fields, then the window's start and end: a key field of one
  // of those names would stand twice in the row under one name.
  for (const char* name : {"window_start", "window_end"}) {
    if (out.IndexOf(name) >= 0) {
      throw InvalidArgument(
          fmt::format("window output column '{}' is defined twice (a key-by field "
                      "has the name of a window column; rename it with a map first)",
                      name));
    }
    out.Add(name, FieldType::kTimestamp);
  }
  for (const ResolvedAggregate& a : aggregates) {
    if (out.IndexOf(a.name) >= 0) {
      throw InvalidArgument(fmt::format("window output column '{}' is defined twice", a.name));
    }
    out.Add(a.name, a.output_type);
  }
  if (spec.emit_watermark) {
    if (out.IndexOf("watermark") >= 0) {
      throw InvalidArgument("window output column 'watermark' is defined twice");
    }
    out.Add("watermark", FieldType::kTimestamp);
  }
  if (options.emit_firing) {
    if (out.IndexOf("firing") >= 0) {
      throw InvalidArgument("window output column 'firing' is defined twice");
    }
    out.Add("firing", FieldType::kInt64);
  }

  WindowOperatorPlan plan;
  plan.output_schema = std::move(out);
  const RowLayout* output_layout = plan.output_schema.layout();
  plan.factory = [spec, options, aggregates, output_layout]() -> std::unique_ptr<StreamOperator> {
    std::unique_ptr<Trigger> t = spec.trigger.empty() ? nullptr : MakeTrigger(spec.trigger);
    return std::make_unique<WindowOperator>(
        MakeAssigner(spec), std::move(t),
        std::make_unique<AggregatingWindowFunction>(aggregates, spec.emit_watermark, output_layout),
        options);
  };
  return plan;
}

}  // namespace tidemark

namespace tidemark {

void WindowOperator::CollectMetrics(MetricsWriter& out) const {
  if (!heap_state_reason_.empty()) {
    out.Note("stateBackendFallback", heap_state_reason_);
  }
  out.Gauge("numLateRecordsDropped", num_late_records_dropped_);
  if (first_late_dropped_) {
    out.Note("firstLateRecordDropped", fmt::format("event time {} behind watermark {}",
                                                   FormatEventTime(first_late_dropped_->first),
                                                   FormatEventTime(first_late_dropped_->second)));
  }
  out.Gauge("numLateRecordsSideOutput", num_late_records_side_output_);
  out.Gauge("numWindowsFired", num_windows_fired_);
  if (timer_service_) {
    out.Gauge("currentWatermark", timer_service_->CurrentWatermark());
  }
  out.Gauge("stateBytes", state_bytes_sampled_);
  out.Gauge("stateBytesPeak", state_bytes_peak_);
  // Allocated memory of the keyed state (StateMemoryBytes) and the keys held, each at its
  // largest sample: `tidemark bench` reports their ratio as peak state bytes per key.
  out.Gauge("stateMemoryBytesPeak", state_memory_bytes_peak_);
  out.Gauge("stateKeysPeak", state_keys_peak_);
}

}  // namespace tidemark
