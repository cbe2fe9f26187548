#include "sources/source_operator.h"

#include <algorithm>
#include <chrono>

#include "runtime/core/errors.h"
#include "runtime/eventtime/watermark_to_data_output.h"
#include "runtime/io/wakeup.h"

namespace tidemark {

namespace {
// A record without a usable timestamp whose cause the options do not explain
// (`SourceOperatorOptions::no_timestamp_reason` unset, or the source's own timestamps).
constexpr std::string_view kNoTimestampReason =
    "the timestamp field is missing, unparsable or Long.MIN_VALUE (-9223372036854775808, which "
    "means no timestamp)";
}  // namespace

/// The task output as the source's internals see it: every call first sends the pending batch,
/// so a watermark, status or side-output record never overtakes a record emitted before it.
class SourceOperator::FlushingOutput final : public Output {
 public:
  FlushingOutput(SourceOperator& op, Output& inner) : op_(op), inner_(inner) {}
  void Collect(StreamRecord& record) override {
    op_.FlushPending();
    inner_.Collect(record);
  }
  void CollectBatch(RecordBatch& batch) override {
    op_.FlushPending();
    inner_.CollectBatch(batch);
  }
  void CollectSide(std::string_view tag, StreamRecord& record) override {
    op_.FlushPending();
    inner_.CollectSide(tag, record);
  }
  void EmitWatermark(Watermark watermark) override {
    op_.FlushPending();
    inner_.EmitWatermark(watermark);
  }
  void EmitWatermarkStatus(WatermarkStatus status) override {
    op_.FlushPending();
    inner_.EmitWatermarkStatus(status);
  }

 private:
  SourceOperator& op_;
  Output& inner_;
};

inline StreamRecord& SourceOperator::RecordSlot(StreamRecord& fallback) {
  if (!batching_) {
    return fallback;
  }
  if (pool_used_ == pool_.size()) {
    FlushPending();
    pool_used_ = 0;
  }
  return pool_[pool_used_++];
}

inline void SourceOperator::Forward(StreamRecord& record) {
  if (!batching_) {
    out().Collect(record);
    return;
  }
  StreamRecord* slot = &record;
  if (pool_used_ == 0 || slot != &pool_[pool_used_ - 1]) {
    StreamRecord& fresh = RecordSlot(record);  // a record built elsewhere joins the batch
    fresh.row.swap(record.row);
    fresh.timestamp = record.timestamp;
    fresh.has_timestamp = record.has_timestamp;
    slot = &fresh;
  }
  pending_[pending_count_++] = slot;  // at most one per pool slot: never past kBatchSize
}

/// The split side and the main side of the task output, each idle until it shows activity; the
/// underlying output is marked idle only when both are (an unused side never holds time back).
class SourceOperator::IdlenessManager {
 public:
  class Side final : public WatermarkOutput {
   public:
    explicit Side(IdlenessManager& manager) : manager_(manager) {}
    void EmitWatermark(Watermark watermark) override {
      manager_.underlying_.EmitWatermark(watermark);
      idle_ = false;
    }
    void MarkIdle() override {
      idle_ = true;
      manager_.MaybeMarkIdle();
    }
    void MarkActive() override {
      idle_ = false;
      manager_.underlying_.MarkActive();
    }
    bool idle() const { return idle_; }

   private:
    IdlenessManager& manager_;
    bool idle_ = true;
  };

  explicit IdlenessManager(WatermarkOutput& underlying)
      : underlying_(underlying), split_side_(*this), main_side_(*this) {}

  Side& split_side() { return split_side_; }
  Side& main_side() { return main_side_; }

 private:
  void MaybeMarkIdle() {
    if (split_side_.idle() && main_side_.idle()) {
      underlying_.MarkIdle();
    }
  }

  WatermarkOutput& underlying_;
  Side split_side_;
  Side main_side_;
};

/// `idle-advance`: wraps a generator and tells the operator each record's timestamp (the largest
/// timestamp and the processing time of the newest record are what the advance moves from).
class SourceOperator::IdleAdvanceObserver final : public WatermarkGenerator {
 public:
  IdleAdvanceObserver(SourceOperator& op, std::unique_ptr<WatermarkGenerator> inner)
      : op_(op), inner_(std::move(inner)) {}
  void OnEvent(const StreamRecord& record, Timestamp event_timestamp,
               WatermarkOutput& output) override {
    op_.advance_max_ts_ = std::max(op_.advance_max_ts_, event_timestamp);
    op_.advance_last_at_ = op_.processing_time().GetCurrentProcessingTime();
    inner_->OnEvent(record, event_timestamp, output);
  }
  void OnPeriodicEmit(WatermarkOutput& output) override { inner_->OnPeriodicEmit(output); }
  bool InspectsRecordOnEvent() const override { return inner_->InspectsRecordOnEvent(); }
  std::optional<int64_t> CurrentOutOfOrdernessMs() const override {
    return inner_->CurrentOutOfOrdernessMs();
  }
  void SnapshotState(StateWriter& writer) const override { inner_->SnapshotState(writer); }
  void RestoreState(StateReader& reader) override { inner_->RestoreState(reader); }

 private:
  SourceOperator& op_;
  std::unique_ptr<WatermarkGenerator> inner_;
};

/// One split's output: its own generator and pausable idleness clock, and multiplexer handles
/// that also tell the operator when the split's watermark advances (for split alignment).
class SourceOperator::SplitOutput : public SourceOutput {
 public:
  SplitOutput(SourceOperator& op, std::string split_id)
      : op_(op), split_id_(std::move(split_id)), immediate_(*this), deferred_(*this) {
    if (op_.multiplexer_) {
      op_.multiplexer_->RegisterNewOutput(split_id_);
      immediate_.inner = &op_.multiplexer_->GetImmediateOutput(split_id_);
      deferred_.inner = &op_.multiplexer_->GetDeferredOutput(split_id_);
      // Layered on the main clock (through its base class: a PausableRelativeClock argument
      // would select the copy constructor), so the alignment wait pauses every split clock.
      const RelativeClock& main_clock = *op_.main_clock_;
      clock_ = std::make_unique<PausableRelativeClock>(main_clock);
      generator_ = op_.MakeGenerator(clock_.get());
    }
  }
  ~SplitOutput() override {
    if (op_.multiplexer_) {
      op_.multiplexer_->UnregisterOutput(split_id_);
    }
  }
  void Collect(Row row) override {
    StreamRecord local;
    StreamRecord& record = op_.RecordSlot(local);
    record.row = std::move(row);
    record.EraseTimestamp();
    BeforeRecord();
    op_.EmitRecord(record, false, generator_.get(), handle(), split_id_);
  }
  void Collect(Row row, Timestamp ts) override {
    StreamRecord local;
    StreamRecord& record = op_.RecordSlot(local);
    record.row = std::move(row);
    record.SetTimestamp(ts);
    BeforeRecord();
    op_.EmitRecord(record, true, generator_.get(), handle(), split_id_);
  }
  void CollectReusing(Row& row, Timestamp ts) override {
    // Borrow the reader's buffer for the record and hand back another: the scratch record's, or
    // in a batch the slot's (whose row the reader then overwrites, allocating nothing).
    StreamRecord& record = op_.RecordSlot(scratch_);
    record.row.swap(row);
    record.SetTimestamp(ts);
    BeforeRecord();
    op_.EmitRecord(record, true, generator_.get(), handle(), split_id_);
    if (&record == &scratch_) {
      scratch_.row.swap(row);
    }
  }
  std::span<StreamRecord> BatchSlots(size_t max) override { return op_.LendSlots(max); }
  size_t CollectSlots(size_t n) override {
    // As n CollectReusing calls: BeforeRecord's counting and reactivation, then each record.
    records_ += static_cast<int64_t>(n);
    if (reader_idle_) {
      reader_idle_ = false;
      immediate_.MarkActive();
    }
    const size_t taken = op_.EmitSlots(n, generator_.get(), handle(), split_id_);
    records_ -= static_cast<int64_t>(n - taken);
    return taken;
  }
  void EmitWatermark(Watermark w) override {
    if (generator_) {
      reader_idle_ = false;
      immediate_.EmitWatermark(w);
    }
  }
  void MarkIdle() override {
    if (generator_) {
      reader_idle_ = true;
      immediate_.MarkIdle();
    }
  }
  void MarkActive() override {
    if (generator_) {
      reader_idle_ = false;
      immediate_.MarkActive();
    }
  }
  void OnPeriodicEmit(Timestamp now) {
    if (records_ != records_at_check_) {
      records_at_check_ = records_;
      last_active_check_ = now;
    }
    if (generator_) {
      generator_->OnPeriodicEmit(deferred_);
    }
  }
  PausableRelativeClock* clock() { return clock_.get(); }
  /// The generator's current bound, when it changes (adaptive-out-of-orderness).
  std::optional<int64_t> CurrentOutOfOrdernessMs() const {
    return generator_ ? generator_->CurrentOutOfOrdernessMs() : std::nullopt;
  }
  int64_t records() const { return records_; }
  /// The processing time of the last periodic emission that found new records of this split
  /// (MIN: none yet): its last record came before then.
  Timestamp last_active_check() const { return last_active_check_; }

 private:
  /// A multiplexer handle that also reports the split's advancing watermark to the operator.
  struct ListeningOutput final : public WatermarkOutput {
    explicit ListeningOutput(SplitOutput& o) : owner(o) {}
    void EmitWatermark(Watermark w) override {
      inner->EmitWatermark(w);
      owner.OnWatermark(w.timestamp);
    }
    void MarkIdle() override {
      inner->MarkIdle();
      owner.OnStatus(true);
    }
    void MarkActive() override {
      inner->MarkActive();
      owner.OnStatus(false);
    }
    SplitOutput& owner;
    WatermarkOutput* inner = nullptr;
  };

  WatermarkOutput* handle() { return generator_ ? &immediate_ : nullptr; }
  /// A reader that marked this split idle itself makes it active again by emitting.
  void BeforeRecord() {
    ++records_;
    if (reader_idle_) {
      reader_idle_ = false;
      immediate_.MarkActive();
    }
  }
  void OnWatermark(Timestamp w) {
    if (w > watermark_) {
      watermark_ = w;
      op_.Trace("split-watermark",
                {WatermarkTrace::Text("split", split_id_), WatermarkTrace::Number("watermark", w)});
      op_.OnSplitWatermark(split_id_, w);
    }
  }
  void OnStatus(bool idle) {
    if (idle != idle_) {
      idle_ = idle;
      op_.Trace(idle ? "split-idle" : "split-active", {WatermarkTrace::Text("split", split_id_)});
    }
  }

  SourceOperator& op_;
  std::string split_id_;
  ListeningOutput immediate_;
  ListeningOutput deferred_;
  StreamRecord scratch_;  // CollectReusing's record: no allocation per record
  std::unique_ptr<PausableRelativeClock> clock_;
  std::unique_ptr<WatermarkGenerator> generator_;
  Timestamp watermark_ = kMinTimestamp;  // the largest watermark this split's generator emitted
  bool idle_ = false;                    // the split's status in the multiplexer (traced)
  int64_t records_ = 0;
  int64_t records_at_check_ = 0;
  Timestamp last_active_check_ = kMinTimestamp;
  bool reader_idle_ = false;
};

/// Records emitted without a split: one more generator, whose watermarks go to the main side of
/// the task output directly (not through the multiplexer).
class SourceOperator::MainReaderOutput : public ReaderOutput {
 public:
  explicit MainReaderOutput(SourceOperator& op) : op_(op) {
    if (op_.idleness_) {
      generator_ = op_.MakeGenerator(op_.main_clock_.get());
    }
  }
  void Collect(Row row) override {
    StreamRecord local;
    StreamRecord& record = op_.RecordSlot(local);
    record.row = std::move(row);
    record.EraseTimestamp();
    BeforeRecord();
    op_.EmitRecord(record, false, generator_.get(), handle());
  }
  void Collect(Row row, Timestamp ts) override {
    StreamRecord local;
    StreamRecord& record = op_.RecordSlot(local);
    record.row = std::move(row);
    record.SetTimestamp(ts);
    BeforeRecord();
    op_.EmitRecord(record, true, generator_.get(), handle());
  }
  void EmitWatermark(Watermark w) override {
    if (op_.idleness_) {
      reader_idle_ = false;
      op_.idleness_->main_side().EmitWatermark(w);
    }
  }
  void MarkIdle() override {
    if (op_.idleness_) {
      reader_idle_ = true;
      op_.idleness_->main_side().MarkIdle();
    }
  }
  void MarkActive() override {
    if (op_.idleness_) {
      reader_idle_ = false;
      op_.idleness_->main_side().MarkActive();
    }
  }
  SourceOutput& CreateOutputForSplit(const std::string& split_id) override {
    return op_.CreateSplitOutput(split_id);
  }
  void ReleaseOutputForSplit(const std::string& split_id) override {
    op_.OnSplitReleased(split_id);
  }
  void EmitError(const SourceError& error) override { op_.EmitError(error); }

  void OnPeriodicEmit() {
    if (generator_) {
      generator_->OnPeriodicEmit(op_.idleness_->main_side());
    }
  }

 private:
  WatermarkOutput* handle() { return generator_ ? &op_.idleness_->main_side() : nullptr; }
  void BeforeRecord() {
    if (reader_idle_) {
      reader_idle_ = false;
      op_.idleness_->main_side().MarkActive();
    }
  }

  SourceOperator& op_;
  std::unique_ptr<WatermarkGenerator> generator_;
  bool reader_idle_ = false;
};

class SourceOperator::ReaderContext : public SourceReaderContext {
 public:
  explicit ReaderContext(SourceOperator& op) : op_(op) {}
  int subtask_index() const override { return op_.context().subtask_index; }
  int parallelism() const override { return op_.context().parallelism; }
  ProcessingTimeService& processing_time() override { return op_.processing_time(); }
  std::function<void()> AvailabilityNotifier() override {
    Wakeup* wakeup = op_.context().wakeup;
    if (wakeup == nullptr) {
      return {};
    }
    return [wakeup] {
      wakeup->Signal();
    };
  }
  bool virtual_clock() const override { return op_.context().virtual_clock; }
  void WakeUpAfter(std::chrono::nanoseconds delay) override {
    Wakeup* wakeup = op_.context().wakeup;
    if (op_.context().virtual_clock || wakeup == nullptr) {
      SourceReaderContext::WakeUpAfter(delay);  // whole milliseconds of processing time
      return;
    }
    wakeup->WakeNoLaterThan(std::chrono::steady_clock::now() + delay);
  }
  void WakeUpAt(Timestamp time_ms) override {
    // A timer whose mail wakes the task; under the virtual clock it is also the source's next
    // arrival, an event the clock stops at. One per distinct time: a reader polled again before
    // then asks for the same time.
    if (wake_up_at_ == time_ms) {
      return;
    }
    wake_up_at_ = time_ms;
    op_.processing_time().RegisterTimer(time_ms, [this](Timestamp t) {
      if (wake_up_at_ == t) {
        wake_up_at_.reset();
      }
    });
  }

 private:
  SourceOperator& op_;
  std::optional<Timestamp> wake_up_at_;
};

SourceOperator::SourceOperator(std::shared_ptr<const Source> source,
                               std::optional<WatermarkStrategy> strategy,
                               SourceOperatorOptions options)
    : source_(std::move(source)), strategy_(std::move(strategy)), options_(std::move(options)) {}

SourceOperator::~SourceOperator() {
  split_outputs_.clear();  // unregisters from the multiplexer while it still exists
}

void SourceOperator::Open(const OperatorContext& context) {
  SourceOperatorBase::Open(context);
  out_ = std::make_unique<FlushingOutput>(*this, output());
  pool_.resize(kBatchSize);
  pending_.assign(kBatchSize, nullptr);
  if (generates_watermarks()) {
    data_output_ = std::make_unique<WatermarkToDataOutput>(
        out(), [this](Timestamp watermark) { OnWatermarkForwarded(watermark); });
    idleness_ = std::make_unique<IdlenessManager>(*data_output_);
    multiplexer_ = std::make_unique<WatermarkOutputMultiplexer>(idleness_->split_side());
    base_clock_ = std::make_unique<ProcessingTimeRelativeClock>(processing_time());
    main_clock_ = std::make_unique<PausableRelativeClock>(*base_clock_);
  }
  main_output_ = std::make_unique<MainReaderOutput>(*this);
  reader_context_ = std::make_unique<ReaderContext>(*this);
  reader_ = source_->CreateReader(context.subtask_index);
  reader_->Start(*reader_context_);
  if (options_.assign_splits_on_open) {
    AddSplits(SplitEnumerator::SplitsFor(*source_, context.subtask_index, context.parallelism));
    reader_->NotifyNoMoreSplits();
  }
  const Timestamp now = processing_time().GetCurrentProcessingTime();
  if (generates_watermarks() && context.auto_watermark_interval_ms > 0) {
    periodic_enabled_ = true;
    SchedulePeriodic(now + context.auto_watermark_interval_ms);
  }
}

void SourceOperator::InitializeOutputs() {
  // Flink's SourceOperator leaves OUTPUT_NOT_INITIALIZED at its first emitNext: only then are the
  // outputs of the splits assigned so far created (so their generators and idleness countdowns
  // start there; periodic ticks before do nothing) and the alignment reports scheduled, every
  // update-interval from now.
  outputs_initialized_ = true;
  std::vector<std::string> pending;
  pending.swap(pending_split_outputs_);
  for (const std::string& id : pending) {
    CreateSplitOutput(id);
  }
  if (aligned()) {
    ScheduleReport(processing_time().GetCurrentProcessingTime() +
                   strategy_->alignment()->update_interval_ms);
  }
}

void SourceOperator::AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) {
  std::vector<std::string> ids;
  for (const auto& split : splits) {
    CountSplit(split->SplitId());
    ids.push_back(split->SplitId());
  }
  reader_->AddSplits(std::move(splits));
  for (const std::string& id : ids) {
    // An assigned split holds time back until it reports; before the first EmitNext its output
    // waits (Flink's splitsToInitializeOutput). A split the reader keeps queued is not assigned
    // in Flink's sense yet: the reader creates its output when it starts reading it.
    if (reader_->IsSplitQueued(id)) {
      continue;
    }
    if (outputs_initialized_) {
      CreateSplitOutput(id);
    } else {
      pending_split_outputs_.push_back(id);
    }
  }
}

void SourceOperator::CountSplit(const std::string& split_id) {
  if (counted_splits_.insert(split_id).second) {
    ++num_splits_;
  }
}

SourceOutput& SourceOperator::CreateSplitOutput(const std::string& split_id) {
  auto& slot = split_outputs_[split_id];
  if (!slot) {
    // A reader that discovers its own splits (Kafka partitions) assigns them by creating their
    // output: they count as assigned splits (for alignment's split pausing) like AddSplits'.
    CountSplit(split_id);
    slot = std::make_unique<SplitOutput>(*this, split_id);
  }
  return *slot;
}

void SourceOperator::OnSplitReleased(const std::string& split_id) {
  split_watermarks_.erase(split_id);
  paused_splits_.erase(split_id);  // its clock goes with its output
  split_outputs_.erase(split_id);
}

void SourceOperator::SchedulePeriodic(Timestamp at_ms) {
  processing_time().RegisterTimer(at_ms, [this](Timestamp fired_at) {
    if (!periodic_enabled_) {
      return;
    }
    EmitPeriodicWatermark();
    // Fixed rate from the timer's own time, so the virtual clock gives 200, 400, 600, ...
    SchedulePeriodic(fired_at + context().auto_watermark_interval_ms);
  });
}

void SourceOperator::EmitPeriodicWatermark() {
  if (!outputs_initialized_) {
    return;  // Flink: no outputs exist before the first emitNext, so the tick has nothing to do
  }
  // Each split records its candidate through its deferred handle; the multiplexer then merges.
  const Timestamp now = processing_time().GetCurrentProcessingTime();
  for (auto& [id, out] : split_outputs_) {
    out->OnPeriodicEmit(now);
  }
  multiplexer_->OnPeriodicEmit();
  main_output_->OnPeriodicEmit();
  if (strategy_->idle_advance()) {
    IdleAdvance(now);
  }
}

std::unique_ptr<WatermarkGenerator> SourceOperator::MakeGenerator(const RelativeClock* clock) {
  std::unique_ptr<WatermarkGenerator> generator = strategy_->CreateWatermarkGenerator(clock);
  if (strategy_->idle_advance()) {
    generator = std::make_unique<IdleAdvanceObserver>(*this, std::move(generator));
  }
  return generator;
}

void SourceOperator::IdleAdvance(Timestamp now) {
  const IdleAdvanceParams& params = *strategy_->idle_advance();
  if (advance_max_ts_ == kMinTimestamp) {
    return;  // no record yet: nothing to advance from
  }
  const int64_t quiet = now - advance_last_at_;
  if (advancing_ && quiet < params.after_ms) {
    // A record came: the splits' own watermarks lead again (they cannot go back: the output
    // forwards only increases). The main side returns to the status it had before.
    advancing_ = false;
    Trace("idle-advance-end", {WatermarkTrace::Number("watermark", latest_watermark_)});
    if (main_side_was_idle_) {
      idleness_->main_side().MarkIdle();
    }
  }
  if (quiet < params.after_ms || waiting_for_alignment_ ||
      advance_max_ts_ > kMaxTimestamp - 1 - quiet) {
    return;
  }
  const Timestamp candidate = advance_max_ts_ + quiet - params.lag_ms;
  if (candidate <= latest_watermark_) {
    return;
  }
  if (!advancing_) {
    advancing_ = true;
    main_side_was_idle_ = idleness_->main_side().idle();
  }
  Trace("idle-advance", {WatermarkTrace::Number("watermark", candidate),
                         WatermarkTrace::Number("max_timestamp", advance_max_ts_),
                         WatermarkTrace::Number("quiet_ms", quiet)});
  // Through the main side: while it advances, the subtask is active even when idleness has
  // marked every split idle (its watermark moves, so it must not be left out downstream).
  idleness_->main_side().EmitWatermark(Watermark{candidate});
}

void SourceOperator::ScheduleReport(Timestamp at_ms) {
  next_report_at_ = at_ms;
  processing_time().RegisterTimer(at_ms, [this](Timestamp fired_at) {
    if (finished_ || stopped_ || !periodic_reports_) {
      next_report_at_.reset();
      return;
    }
    ReportLatestWatermark();
    ScheduleReport(fired_at + strategy_->alignment()->update_interval_ms);
  });
}

void SourceOperator::ReportLatestWatermark() {
  if (latest_watermark_ == kMinTimestamp) {
    return;  // nothing before the first watermark: a subtask without data takes no part
  }
  const Timestamp reported = IsIdle() ? kMaxTimestamp : latest_watermark_;
  last_reported_ = reported;
  if (reporter_) {
    reporter_(reported);
  }
}

std::optional<WatermarkAlignmentParams> SourceOperator::alignment_params() const {
  if (!aligned()) {
    return std::nullopt;
  }
  return strategy_->alignment();
}

void SourceOperator::OnWatermarkForwarded(Timestamp watermark) {
  latest_watermark_ = watermark;
  if (aligned()) {
    CheckWatermarkAlignment();
  }
}

void SourceOperator::HandleAlignmentEvent(Timestamp max_allowed_watermark) {
  max_allowed_ = max_allowed_watermark;
  CheckWatermarkAlignment();
  CheckSplitWatermarkAlignment();
}

void SourceOperator::CheckWatermarkAlignment() {
  // Strict: a watermark equal to the maximum allowed keeps reading.
  SetWaitingForAlignment(!finished_ && !stopped_ && max_allowed_ < latest_watermark_);
}

void SourceOperator::SetWaitingForAlignment(bool waiting) {
  if (waiting == waiting_for_alignment_) {
    return;
  }
  waiting_for_alignment_ = waiting;
  Trace(waiting ? "alignment-wait" : "alignment-resume",
        {WatermarkTrace::Number("max_allowed", max_allowed_),
         WatermarkTrace::Number("watermark", latest_watermark_)});
  // As in Flink, a subtask waiting for alignment stops its main input activity clock, and with it
  // every split's idleness clock (they are layered on it): waiting is not inactivity.
  if (main_clock_) {
    if (waiting) {
      main_clock_->Pause();
    } else {
      main_clock_->Unpause();
    }
  }
}

void SourceOperator::OnSplitWatermark(const std::string& split_id, Timestamp watermark) {
  if (!aligned()) {
    return;
  }
  split_watermarks_[split_id] = watermark;
  if (num_splits_ > 1 && watermark > max_allowed_ && paused_splits_.count(split_id) == 0) {
    PauseOrResumeSplits({split_id}, {});
  }
}

void SourceOperator::CheckSplitWatermarkAlignment() {
  std::vector<std::string> pause;
  std::vector<std::string> resume;
  for (const auto& [id, watermark] : split_watermarks_) {
    // With one split the subtask-level wait suffices (Flink); a split paused earlier still resumes.
    if (num_splits_ > 1 && watermark > max_allowed_) {
      if (paused_splits_.count(id) == 0) {
        pause.push_back(id);
      }
    } else if (paused_splits_.count(id) > 0) {
      resume.push_back(id);
    }
  }
  if (!pause.empty() || !resume.empty()) {
    PauseOrResumeSplits(pause, resume);
  }
}

void SourceOperator::PauseOrResumeSplits(const std::vector<std::string>& pause,
                                         const std::vector<std::string>& resume) {
  reader_->PauseOrResumeSplits(pause, resume);
  for (const std::string& id : pause) {
    Trace("split-paused",
          {WatermarkTrace::Text("split", id), WatermarkTrace::Number("max_allowed", max_allowed_)});
    paused_splits_.insert(id);
    if (auto it = split_outputs_.find(id);
        it != split_outputs_.end() && it->second->clock() != nullptr) {
      it->second->clock()->Pause();  // a paused split must not become idle
    }
  }
  for (const std::string& id : resume) {
    Trace("split-resumed",
          {WatermarkTrace::Text("split", id), WatermarkTrace::Number("max_allowed", max_allowed_)});
    paused_splits_.erase(id);
    if (auto it = split_outputs_.find(id);
        it != split_outputs_.end() && it->second->clock() != nullptr) {
      it->second->clock()->Unpause();
    }
  }
}

void SourceOperator::Stop(SourceStopMode /*mode*/) {
  // Both modes release a wait for alignment; the task then ends its input (stop-with-savepoint
  // --drain: its MAX_WATERMARK and end of input; without drain the job's tasks are stopped
  // after the savepoint instead, so a source is only stopped for a drain).
  stopped_ = true;
  SetWaitingForAlignment(false);
  periodic_enabled_ = false;
}

void SourceOperator::Trace(std::string_view event,
                           std::initializer_list<WatermarkTrace::Field> fields) {
  const TraceContext& t = context().trace;
  if (t) {
    t.trace->Record(t.where, processing_time().GetCurrentProcessingTime(), event, fields);
  }
}

void SourceOperator::EmitError(const SourceError& error) {
  if (options_.fail_on_input_error) {
    FailOnBadInput(error);
  }
  if (first_input_error_.empty()) {
    first_input_error_ = error.Place();
  }
  ++input_errors_;
  StreamRecord side(SourceErrorRow(error));
  out().CollectSide("errors", side);
}

void SourceOperator::FailOnBadInput(const SourceError& error) {
  throw BadInputError(fmt::format("bad input (errors: fail): {}", error.PlaceWithOffset()));
}

void SourceOperator::EmitRecord(StreamRecord& record, bool has_source_ts,
                                WatermarkGenerator* generator, WatermarkOutput* immediate,
                                const std::string& split_id) {
  Timestamp ts = kMinTimestamp;
  bool found = false;
  if (strategy_) {
    found = strategy_->TryExtractTimestamp(record, &ts);
  } else if (has_source_ts && record.timestamp != kMinTimestamp) {
    ts = record.timestamp;  // Long.MIN_VALUE would mean "no timestamp" downstream: an error here
    found = true;
  }
  if (!found) {
    if (strategy_ || has_source_ts) {
      // Inside the reader's Collect: the reader knows where this record was read.
      const RecordPosition at = reader_ ? reader_->CurrentRecordPosition() : RecordPosition{};
      const SourceError error{split_id,
                              at.line,
                              "no timestamp: " + NoTimestampReason(record),
                              source_->schema().RowToJson(record.row),
                              at.offset,
                              at.unit};
      if (options_.fail_on_input_error) {
        FailOnBadInput(error);
      }
      if (first_without_timestamp_.empty()) {
        first_without_timestamp_ = error.Place();
      }
      ++records_without_timestamp_;
      // The side output has one schema for every kind of input error (SourceErrorSchema).
      StreamRecord side(SourceErrorRow(error));
      out().CollectSide("errors", side);
      return;
    }
    Forward(record);  // no event time at all: the record travels without a timestamp
    return;
  }
  record.SetTimestamp(ts);
  if (generator == nullptr) {
    Forward(record);
    return;
  }
  // The generator sees the record after it was emitted (Flink's SourceOutputWithWatermarks), so a
  // punctuated watermark follows its record; downstream may move from (or modify) the emitted one,
  // so a generator that reads the record gets a copy; timestamp-only generators need none.
  if (!generator->InspectsRecordOnEvent()) {
    Forward(record);
    generator->OnEvent(record, ts, *immediate);
    return;
  }
  // The copy goes into a reused record: copying a row into a buffer of the same width allocates
  // nothing (a fresh copy cost a malloc and a free per record).
  seen_.row = record.row;
  seen_.timestamp = record.timestamp;
  seen_.has_timestamp = record.has_timestamp;
  Forward(record);
  generator->OnEvent(seen_, ts, *immediate);
}

std::string SourceOperator::NoTimestampReason(const StreamRecord& record) const {
  if (!strategy_) {
    // The source's own timestamp (a file's first timestamp field): only Long.MIN_VALUE is refused.
    return "its timestamp is Long.MIN_VALUE (-9223372036854775808), which means no timestamp";
  }
  return options_.no_timestamp_reason ? options_.no_timestamp_reason(record)
                                      : std::string(kNoTimestampReason);
}

Output& SourceOperator::out() {
  return *out_;
}

void SourceOperator::FlushPending() {
  if (pending_count_ == 0) {
    return;
  }
  RecordBatch batch{pending_.data(), pending_count_};
  if (pending_count_ == pool_.size()) {
    // Every slot is pending (at most once each), so none holds a record being built: the
    // receiver may take the whole pool (RecordBatch::storage) and leave another in its place.
    batch.storage = &pool_;
  }
  pending_count_ = 0;  // before the call: the batch's records are delivered whatever it does
  output().CollectBatch(batch);
}

std::span<StreamRecord> SourceOperator::LendSlots(size_t max) {
  if (!batching_ || max == 0) {
    return {};
  }
  if (pool_used_ == pool_.size()) {
    FlushPending();
    pool_used_ = 0;
  }
  return {pool_.data() + pool_used_, std::min(max, pool_.size() - pool_used_)};
}

size_t SourceOperator::EmitSlots(size_t n, WatermarkGenerator* generator,
                                 WatermarkOutput* immediate, const std::string& split_id) {
  TM_DCHECK(batching_ && n >= 1 && pool_used_ + n <= pool_.size(), "slots not lent");
  const size_t start = pool_used_;
  if (!strategy_) {
    // Source timestamps as they are, no generator: a record with one joins the batch as it is
    // (what EmitRecord and Forward would do); one without goes the general way.
    for (size_t i = 0; i < n; ++i) {
      StreamRecord& record = pool_[start + i];
      if (record.has_timestamp && record.timestamp != kMinTimestamp) [[likely]] {
        pending_[pending_count_++] = &record;
      } else {
        pool_used_ = start + i + 1;
        EmitRecord(record, record.has_timestamp, nullptr, nullptr, split_id);
      }
    }
    pool_used_ = start + n;
    return n;
  }
  if (generator == nullptr || !generator->InspectsRecordOnEvent()) {
    // What EmitRecord and Forward do for a record whose timestamp the strategy finds, with the
    // per-batch questions asked once; a record without one takes EmitRecord's error path.
    for (size_t i = 0; i < n; ++i) {
      pool_used_ = start + i + 1;
      StreamRecord& record = pool_[start + i];
      Timestamp ts;
      if (!strategy_->TryExtractTimestamp(record, &ts)) [[unlikely]] {
        EmitRecord(record, record.has_timestamp, generator, immediate, split_id);
      } else {
        record.SetTimestamp(ts);
        pending_[pending_count_++] = &record;
        if (generator != nullptr) {
          generator->OnEvent(record, ts, *immediate);
        }
      }
      if (waiting_for_alignment_) [[unlikely]] {
        return i + 1;  // as below
      }
    }
    return n;
  }
  for (size_t i = 0; i < n; ++i) {
    // Taken one by one, so each record is the last slot taken when Forward sees it, as a
    // RecordSlot record is.
    pool_used_ = start + i + 1;
    StreamRecord& record = pool_[start + i];
    EmitRecord(record, record.has_timestamp, generator, immediate, split_id);
    if (waiting_for_alignment_) [[unlikely]] {
      return i + 1;  // EmitNext would not poll again: the rest stay unread
    }
  }
  return n;
}

InputStatus SourceOperator::EmitBatch(int64_t max_polls, int64_t* polls) {
  *polls = 0;
  InputStatus status = InputStatus::kMoreAvailable;
  batching_ = true;
  try {
    while (*polls < max_polls) {
      int64_t n = 0;
      status = Poll(max_polls - *polls, &n);
      *polls += n;
      if (status != InputStatus::kMoreAvailable) {
        break;
      }
      TM_DCHECK(n >= 1, "a poll returned kMoreAvailable for no poll");
    }
    FlushPending();
  } catch (...) {
    batching_ = false;
    pending_count_ = 0;
    pool_used_ = 0;
    throw;
  }
  batching_ = false;
  pool_used_ = 0;
  return status;
}

InputStatus SourceOperator::EmitNext() {
  int64_t polls = 0;
  return Poll(0, &polls);
}

InputStatus SourceOperator::Poll(int64_t max_polls, int64_t* polls) {
  *polls = 0;
  if (stopped_ || finished_) {
    return InputStatus::kEndOfInput;
  }
  if (!outputs_initialized_) {
    InitializeOutputs();
  }
  if (waiting_for_alignment_) {
    return InputStatus::kNothingAvailable;  // the next report's announcement may release us
  }
  InputStatus status;
  if (max_polls == 0) {
    status = reader_->PollNext(*main_output_);
    *polls = status == InputStatus::kMoreAvailable ? 1 : 0;
  } else {
    status = reader_->PollBatch(*main_output_, max_polls, polls);
  }
  if (status == InputStatus::kEndOfInput) {
    finished_ = true;
    SetWaitingForAlignment(false);
    if (aligned()) {
      // A finished subtask no longer holds its group back (Flink reports MAX at end of data).
      latest_watermark_ = kMaxTimestamp;
      last_reported_ = kMaxTimestamp;
      if (reporter_) {
        reporter_(kMaxTimestamp);
      }
    }
    return status;
  }
  if (waiting_for_alignment_) {
    // This poll's record pushed us past the maximum allowed. Flink still returns the reader's
    // status (MORE_AVAILABLE); the next EmitNext finds the wait and returns NOTHING_AVAILABLE.
    return status;
  }
  return status;
}

void SourceOperator::SnapshotState(StateSnapshotContext& context) {
  std::vector<std::unique_ptr<SourceSplit>> splits = reader_->SnapshotState(context.checkpoint_id);
  StateWriter& w = context.writer;
  w.BeginSection("source-splits", 1);
  // Operator list state: on a restore at another parallelism the splits of all old readers are
  // handed round-robin to the new ones (Flink's SourceOperator keeps them in a ListState).
  w.BeginList(static_cast<uint32_t>(splits.size()));
  for (const auto& split : splits) {
    w.NextListElement();
    split->WriteTo(w);
  }
  w.EndList();
  w.EndSection();
}

void SourceOperator::InitializeState(StateInitializationContext& context) {
  if (!context.is_restored()) {
    return;
  }
  StateReader& r = *context.reader;
  r.BeginSection("source-splits", 1);
  const uint32_t n = r.ReadU32();
  if (n > r.remaining()) {
    throw StateCorrupt("source state: split count larger than the state");
  }
  std::vector<std::unique_ptr<SourceSplit>> splits;
  for (uint32_t i = 0; i < n; ++i) {
    splits.push_back(source_->RestoreSplit(r));
  }
  r.EndSection();
  // The splits the enumerator assigned at Open give way to the restored ones, on a fresh reader.
  reader_->Close();
  split_outputs_.clear();
  pending_split_outputs_.clear();
  split_watermarks_.clear();
  paused_splits_.clear();
  num_splits_ = 0;
  reader_ = source_->CreateReader(context_.subtask_index);
  reader_->Start(*reader_context_);
  // Restored splits join the multiplexer at restore time (they hold the watermark back from now
  // on, not from their first record).
  counted_splits_.clear();
  std::vector<std::string> ids;
  for (const auto& split : splits) {
    CountSplit(split->SplitId());
    ids.push_back(split->SplitId());
  }
  reader_->AddSplits(std::move(splits));
  for (const std::string& id : ids) {
    if (!reader_->IsSplitQueued(id)) {
      CreateSplitOutput(id);
    }
  }
  reader_->NotifyNoMoreSplits();
}

void SourceOperator::NotifyCheckpointComplete(int64_t checkpoint_id) {
  if (reader_) {
    reader_->NotifyCheckpointComplete(checkpoint_id);
  }
}

void SourceOperator::Close() {
  periodic_enabled_ = false;
  periodic_reports_ = false;
  if (reader_) {
    reader_->Close();
  }
}

}  // namespace tidemark

namespace tidemark {

void SourceOperator::CollectMetrics(MetricsWriter& out) const {
  // Not opened (a later operator of the chain failed to open first): no clock yet.
  const Timestamp now =
      context_.processing_time != nullptr ? processing_time().GetCurrentProcessingTime() : 0;
  // Flink's sourceIdleTime: how long the source has not emitted a record (to this sample's
  // resolution: metrics are collected every ~200 ms).
  int64_t records = 0;
  for (const auto& [id, split] : split_outputs_) {
    records += split->records();
  }
  if (records != metrics_records_seen_ || last_record_seen_at_ == kMinTimestamp) {
    metrics_records_seen_ = records;
    last_record_seen_at_ = now;
  }
  out.Gauge("sourceIdleTime", std::max<int64_t>(0, now - last_record_seen_at_));
  if (aligned() && max_allowed_ != kMaxTimestamp && latest_watermark_ != kMinTimestamp) {
    // Flink's watermarkAlignmentDrift: how far this source's watermark is ahead of the group's
    // minimum (the announced maximum allowed watermark is that minimum plus the max drift).
    out.Gauge("watermarkAlignmentDrift",
              latest_watermark_ - (max_allowed_ - strategy_->alignment()->max_drift_ms));
  }
  out.Gauge("currentOutputWatermark", latest_watermark_);
  out.Gauge("idle", IsIdle() ? 1 : 0);
  out.Gauge("waitingForAlignment", waiting_for_alignment_ ? 1 : 0);
  out.Gauge("numInputErrors", input_errors_);
  out.Gauge("numRecordsWithoutTimestamp", records_without_timestamp_);
  if (!first_input_error_.empty()) {
    out.Note("firstInputError", first_input_error_);
  }
  if (!first_without_timestamp_.empty()) {
    out.Note("firstRecordWithoutTimestamp", first_without_timestamp_);
  }
  if (reader_) {
    reader_->CollectMetrics(out);
  }
  for (const auto& [id, split] : split_outputs_) {
    if (id.empty()) {
      continue;  // the reader's main output, not a split
    }
    bool idle = false;
    if (multiplexer_) {
      if (auto view = multiplexer_->ViewOutput(id)) {
        out.Gauge("split." + id + ".watermark", view->watermark);
        out.Gauge("split." + id + ".idle", view->idle ? 1 : 0);
        idle = view->idle;
      }
    }
    const bool paused = paused_splits_.count(id) > 0;
    out.Gauge("split." + id + ".paused", paused ? 1 : 0);
    // Flink's split activeTimeMsPerSecond / idleTimeMsPerSecond / pausedTimeMsPerSecond, from the
    // state seen at each sample (paused wins over idle).
    TimeAccounting& time = split_time_[id];
    time.Enter(paused ? 2 : idle ? 1 : 0, now);
    const TimeAccounting::PerSecond per_second = time.Sample(now);
    out.Gauge("split." + id + ".activeTimeMsPerSecond", per_second[0]);
    out.Gauge("split." + id + ".idleTimeMsPerSecond", per_second[1]);
    out.Gauge("split." + id + ".pausedTimeMsPerSecond", per_second[2]);
    if (std::optional<int64_t> bound = split->CurrentOutOfOrdernessMs()) {
      out.Gauge("split." + id + ".currentOutOfOrdernessMs", *bound);
    }
    out.Gauge("split." + id + ".numRecordsOut", split->records());
    out.Gauge("split." + id + ".lastActiveCheck", split->last_active_check());
  }
}

}  // namespace tidemark
