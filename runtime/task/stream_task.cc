#include "runtime/task/stream_task.h"

#include <pthread.h>
#include <thread>

#include "runtime/core/logging.h"
#include "runtime/core/thread_entry.h"
#include "runtime/time/virtual_clock.h"

namespace tidemark {
namespace {

// Elements taken from the input channels per default action: small enough that mails (timers,
// cancel) run between batches, large enough to amortise the loop.
constexpr int kElementsPerTurn = 64;
// Records a source head emits per turn (its default action) before mails run again.
constexpr int64_t kSourceRecordsPerTurn = 256;
// A source task hands partial output batches to its channels at least this often.
constexpr std::chrono::microseconds kFlushTimeout{100};
// Turns without input on which a non-source task yields its core before it sleeps.
constexpr int kIdleYieldsBeforeSleep = 1;
// A task sharing its CPU with a consumer yields to it after running this long with batches
// pushed (StreamTask::SetSharesCpuWithConsumer): the bound a woken consumer waits behind it.
constexpr std::chrono::microseconds kYieldToConsumerAfter{50};

}  // namespace

// ---------------------------------------------------------------- TaskOperatorOutput

void TaskOperatorOutput::AddSideTarget(const std::string& tag, Target t) {
  for (auto& [name, targets] : side_) {
    if (name == tag) {
      targets.push_back(t);
      return;
    }
  }
  side_.emplace_back(tag, std::vector<Target>{t});
  side_records_out_.emplace_back(0);
}

std::vector<std::pair<std::string, int64_t>> TaskOperatorOutput::side_records_out() const {
  std::vector<std::pair<std::string, int64_t>> out;
  out.reserve(side_.size());
  for (size_t i = 0; i < side_.size(); ++i) {
    out.emplace_back(side_[i].first, side_records_out_[i].load(std::memory_order_relaxed));
  }
  return out;
}

void TaskOperatorOutput::Deliver(std::vector<Target>& targets, StreamRecord& record) {
  const size_t n = targets.size();
  for (size_t i = 0; i < n; ++i) {
    Target& t = targets[i];
    if (i + 1 < n) {
      StreamRecord copy = record;
      if (t.op != nullptr) {
        CallOperator(*t.op_name, [&] { t.op->ProcessElement(copy, t.input); });
      } else {
        t.writer->Emit(copy);
      }
    } else if (t.op != nullptr) {
      // A chained operator's failure names that operator, not the head that called it.
      CallOperator(*t.op_name, [&] { t.op->ProcessElement(record, t.input); });
    } else {
      t.writer->Emit(record);
    }
  }
}

void TaskOperatorOutput::CheckCancelled() {
  if (++records_since_check_ < 1024) {
    return;
  }
  records_since_check_ = 0;
  if (cancel_requested_ != nullptr && cancel_requested_->load(std::memory_order_acquire)) {
    throw Cancelled("task cancelled");
  }
}

void TaskOperatorOutput::Collect(StreamRecord& record) {
  CheckCancelled();
  // One writer (the mailbox thread): a plain load + store, no locked add per record.
  records_out_.store(records_out_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (main_.size() == 1) {  // the common chain: a direct call, no loop, no copy path
    Target& t = main_.front();
    if (t.op != nullptr) {
      CallOperator(*t.op_name, [&] { t.op->ProcessElement(record, t.input); });
    } else {
      t.writer->Emit(record);
    }
    return;
  }
  Deliver(main_, record);
}

void TaskOperatorOutput::CollectBatch(RecordBatch& batch) {
  const size_t n = batch.size;
  if (n == 0) {
    return;
  }
  // Per batch: one cancel check per 1024 records or so, one counter update, one call.
  records_since_check_ += static_cast<uint32_t>(n - 1);
  CheckCancelled();
  records_out_.store(records_out_.load(std::memory_order_relaxed) + static_cast<int64_t>(n),
                     std::memory_order_relaxed);
  if (main_.size() == 1) {
    Target& t = main_.front();
    if (t.op != nullptr) {
      CallOperator(*t.op_name, [&] { t.op->ProcessBatch(batch, t.input); });
    } else {
      t.writer->EmitBatch(batch);
    }
    return;
  }
  // Several targets: each gets its own copy of every record but the last one's, record by record.
  for (size_t i = 0; i < n; ++i) {
    Deliver(main_, *batch.records[i]);
  }
}

void TaskOperatorOutput::CollectSide(std::string_view tag, StreamRecord& record) {
  CheckCancelled();
  for (size_t i = 0; i < side_.size(); ++i) {
    if (side_[i].first == tag) {
      std::atomic<int64_t>& count = side_records_out_[i];
      count.store(count.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      Deliver(side_[i].second, record);
      return;
    }
  }
}

void TaskOperatorOutput::EmitWatermark(Watermark watermark) {
  if (trace_ && watermark.timestamp != output_watermark_.load(std::memory_order_relaxed)) {
    trace_.trace->Record(trace_.where, trace_pts_->GetCurrentProcessingTime(), "output-watermark",
                         {WatermarkTrace::Number("watermark", watermark.timestamp)});
  }
  output_watermark_.store(watermark.timestamp, std::memory_order_release);
  auto send = [&](std::vector<Target>& targets) {
    for (Target& t : targets) {
      if (t.op != nullptr) {
        CallOperator(*t.op_name, [&] { t.op->ProcessWatermark(watermark, t.input); });
      } else {
        StreamElement e;
        e.kind = StreamElement::Kind::kWatermark;
        e.watermark = watermark;
        t.writer->Broadcast(e);
      }
    }
  };
  send(main_);
  for (auto& [name, targets] : side_) {
    send(targets);
  }
}

void TaskOperatorOutput::EmitWatermarkStatus(WatermarkStatus status) {
  if (trace_ && traced_status_ != status) {
    traced_status_ = status;
    trace_.trace->Record(trace_.where, trace_pts_->GetCurrentProcessingTime(), "output-status",
                         {WatermarkTrace::Text("status", ToString(status))});
  }
  auto send = [&](std::vector<Target>& targets) {
    for (Target& t : targets) {
      if (t.op != nullptr) {
        CallOperator(*t.op_name, [&] { t.op->ProcessWatermarkStatus(status, t.input); });
      } else {
        StreamElement e;
        e.kind = StreamElement::Kind::kWatermarkStatus;
        e.status = status;
        t.writer->Broadcast(e);
      }
    }
  };
  send(main_);
  for (auto& [name, targets] : side_) {
    send(targets);
  }
}

// ---------------------------------------------------------------- StreamTask

StreamTask::StreamTask(std::string name, int subtask_index)
    : name_(std::move(name)), subtask_index_(subtask_index), mailbox_(&wakeup_) {}

StreamTask::~StreamTask() = default;

void StreamTask::SetProcessingTimeService(std::unique_ptr<ProcessingTimeService> pts,
                                          VirtualProcessingTimeService* virtual_pts) {
  pts_ = std::move(pts);
  virtual_pts_ = virtual_pts;
}

int StreamTask::AddOperator(std::unique_ptr<StreamOperator> op, std::string name) {
  ops_.push_back(
      ChainedOperator{std::move(op), std::move(name), std::make_unique<TaskOperatorOutput>()});
  ops_.back().output->SetCancelFlag(&cancel_requested_);
  return static_cast<int>(ops_.size() - 1);
}

RecordWriter* StreamTask::AddWriter(std::unique_ptr<RecordWriter> writer) {
  writers_.push_back(std::move(writer));
  return writers_.back().get();
}

TaskInput& StreamTask::AddInput(int input_index, std::vector<Channel*> channels,
                                std::vector<std::string> upstream) {
  TaskInput in;
  in.upstream = std::move(upstream);
  in.input_index = input_index;
  // design.md: a finished input leaves the minimum instead of counting as MAX; the upstream's
  // final MAX (sent just before end of input) is its end.
  // With finished-input: max (Flink), the final MAX is an ordinary watermark and end of input
  // leaves the valve alone.
  StatusWatermarkValve::Options options;
  options.end_of_input_on_max_watermark = !finished_input_max_;
  in.valve = std::make_unique<StatusWatermarkValve>(channels.size(), options);
  in.valve_output = std::make_unique<TaskInput::HeadOutput>(ops_.front().op.get(), input_index);
  in.finished.assign(channels.size(), false);
  in.channels = std::move(channels);
  inputs_.push_back(std::move(in));
  return inputs_.back();
}

void StreamTask::Cancel() {
  cancel_requested_.store(true, std::memory_order_release);
  wakeup_.Signal();
}

void StreamTask::OpenOperators() {
  // Open from the tail of the chain to the head, as Flink does, so a head that emits while
  // opening finds its downstream ready.
  for (size_t i = ops_.size(); i-- > 0;) {
    OperatorContext ctx;
    ctx.name = ops_[i].name;
    ctx.subtask_index = subtask_index_;
    ctx.parallelism = parallelism_;
    ctx.output = ops_[i].output.get();
    ctx.processing_time = pts_.get();
    ctx.auto_watermark_interval_ms = auto_watermark_interval_ms_;
    if (trace_ != nullptr) {
      ctx.trace =
          TraceContext{trace_, WatermarkTrace::Where{&name_, subtask_index_, &ops_[i].name}};
      ops_[i].output->SetTrace(ctx.trace, pts_.get());
      if (i == 0) {
        for (auto& in : inputs_) {
          in.valve_output->SetTrace(ctx.trace, pts_.get());
        }
      }
    }
    ctx.max_parallelism = max_parallelism_;
    ctx.wakeup = &wakeup_;
    ctx.virtual_clock = virtual_pts_ != nullptr;
    ctx.finished_input_counts_as_max = finished_input_max_;
    ctx.state_backend = state_backend_;
    ctx.rocksdb = rocksdb_;
    ctx.restoring = restored_ != nullptr;
    CallOperator(ops_[i].name, [&] { ops_[i].op->Open(ctx); });
  }
  if (checkpoints_enabled_ || restored_ != nullptr) {
    InitializeOperatorState();
  }
}

void StreamTask::RecordFailure(const std::function<void()>& step) {
  try {
    step();
  } catch (const Cancelled&) {
    cancelled_ = true;
  } catch (const std::exception& e) {
    failed_ = true;
    const auto* op_failure = dynamic_cast<const OperatorFailure*>(&e);
    failure_recoverable_ = op_failure != nullptr
                               ? op_failure->recoverable()
                               : dynamic_cast<const NonRecoverableError*>(&e) == nullptr;
    // Recording the failure allocates too: under a memory limit that can fail again, and
    // nothing may leave the task (design: "Never throws").
    try {
      failure_ = FailureCause(e);
    } catch (const std::exception&) {
      failure_ = "out of memory";  // fits the string's inline buffer: no allocation
    }
    try {
      GetLogger("task")->error("task {}#{} failed: {}", name_, subtask_index_, failure_);
    } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): the job reports it
    }
  }
}

void StreamTask::FailFromOutside(const std::string& cause) {
  if (!failed_) {
    failed_ = true;
    failure_ = cause;
  }
}

bool StreamTask::Begin() {
  source_ = dynamic_cast<SourceOperatorBase*>(ops_.front().op.get());
  RecordFailure([this] { OpenOperators(); });
  return !failed_ && !cancelled_;
}

StreamTask::TurnResult StreamTask::Turn() {
  TurnResult result;
  time_accounting_.Enter(kBusyTime, AccountingNow());
  RecordFailure([&] { result = TurnOrThrow(); });
  // The wait that follows the turn (sleeping, or the driver stepping other tasks) is idle or
  // back-pressured time.
  time_accounting_.Enter(result.wait == TurnResult::Wait::kIdle           ? kIdleTime
                         : result.wait == TurnResult::Wait::kBackpressure ? kBackPressuredTime
                                                                          : kBusyTime,
                         AccountingNow());
  if (failed_ || cancelled_) {
    result.progressed = true;
    result.ended = true;
  }
  return result;
}

void StreamTask::End() {
  try {
    PublishMetrics();  // the final figures, read after the job ended
  } catch (const std::exception&) {
    // Metrics never fail a task.
  }
  for (auto& c : ops_) {
    try {
      c.op->Close();
    } catch (const std::exception& e) {
      if (!failed_) {
        failed_ = true;
        try {
          failure_ = "operator '" + c.name + "' failed in close: " + FailureCause(e);
        } catch (const std::exception&) {
          failure_ = "out of memory";
        }
      }
    }
  }
  mailbox_.Close();
}

void StreamTask::Run() {
  try {
    // `top -H` / `ps -L` show which task a thread runs (Linux keeps 15 bytes of a name).
    const std::string thread_name = (name_ + "#" + std::to_string(subtask_index_)).substr(0, 15);
    pthread_setname_np(pthread_self(), thread_name.c_str());
  } catch (const std::exception&) {  // NOLINT(bugprone-empty-catch): a name is a convenience
  }
  if (Begin()) {
    Resumed();
    while (true) {
      const TurnResult r = Turn();
      if (r.ended) {
        break;
      }
      switch (r.wait) {
        case TurnResult::Wait::kNone:
          idle_yields_ = 0;
          if (yield_to_consumer_) {
            yield_to_consumer_ = false;
            std::this_thread::yield();
            Resumed();
          }
          break;
        case TurnResult::Wait::kBackpressure:
          wakeup_.WaitFor(std::chrono::milliseconds(50));
          Resumed();
          break;
        case TurnResult::Wait::kIdle:
          // A task with inputs first gives its core away once: the producer then usually
          // pushes its next batch before this task runs again, which costs neither side a
          // futex wake-up. A yield is not a spin: with more tasks than cores it only lets a
          // ready thread run first. Not a task pinned beside its consumer: the consumer its
          // pushes woke is the thread the yield hands the CPU to, and it hands it back as soon
          // as it is idle itself, so the two would take turns doing nothing until the producer
          // elsewhere pushes; parked, this task leaves the CPU to the consumer and is woken by
          // that push (issue 44: half the context switches on the consumers' CPU, a fifth less
          // of its time at half rate).
          if (source_ == nullptr && !shares_cpu_with_consumer_ &&
              idle_yields_ < kIdleYieldsBeforeSleep) {
            ++idle_yields_;
            std::this_thread::yield();
            Resumed();
            break;
          }
          idle_yields_ = 0;
          wakeup_.WaitFor(std::chrono::milliseconds(100));
          Resumed();
          break;
      }
    }
  }
  End();
}

void StreamTask::Resumed() {
  if (shares_cpu_with_consumer_) {
    running_since_ = std::chrono::steady_clock::now();
    pushed_when_resumed_ = ElementsPushed();
  }
}

bool StreamTask::ShouldYieldToConsumer() {
  return shares_cpu_with_consumer_ && virtual_pts_ == nullptr &&
         ElementsPushed() != pushed_when_resumed_ &&
         std::chrono::steady_clock::now() - running_since_ >= kYieldToConsumerAfter;
}

Timestamp StreamTask::NextTimerTime() const {
  return virtual_pts_ != nullptr ? virtual_pts_->NextTimerTime() : kMaxTimestamp;
}

int64_t StreamTask::ElementsPushed() const {
  int64_t n = 0;
  for (const auto& w : writers_) {
    n += w->elements_pushed();
  }
  return n;
}

void StreamTask::PublishMetrics() {
  next_publish_ = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
  std::vector<MetricsWriter::Gauges> gauges;
  std::vector<MetricsWriter::Notes> notes;
  gauges.reserve(ops_.size());
  notes.reserve(ops_.size());
  for (const auto& c : ops_) {
    MetricsWriter w;
    c.op->CollectMetrics(w);
    gauges.push_back(w.Take());
    notes.push_back(w.TakeNotes());
  }
  MetricsWriter::Gauges task = TaskGauges();
  MutexLock lock(metrics_mu_);
  published_gauges_ = std::move(gauges);
  published_notes_ = std::move(notes);
  published_task_gauges_ = std::move(task);
}

MetricsWriter::Gauges StreamTask::TaskGauges() {
  const int64_t now = AccountingNow();
  const TimeAccounting::PerSecond t = time_accounting_.Sample(now);
  const int64_t records = records_in();
  if (rate_window_start_ms_ == kMinTimestamp) {
    rate_window_start_ms_ = now;
    rate_window_records_ = records;
  } else if (now - rate_window_start_ms_ >= 1000) {
    records_in_per_second_ =
        (records - rate_window_records_) * 1000 / (now - rate_window_start_ms_);
    rate_window_start_ms_ = now;
    rate_window_records_ = records;
  }
  return {{"busyTimeMsPerSecond", t[kBusyTime]},
          {"idleTimeMsPerSecond", t[kIdleTime]},
          {"backPressuredTimeMsPerSecond", t[kBackPressuredTime]},
          {"numRecordsInPerSecond", records_in_per_second_}};
}

MetricsWriter::Gauges StreamTask::PublishedTaskGauges() const {
  MutexLock lock(metrics_mu_);
  return published_task_gauges_;
}

Timestamp StreamTask::input_watermark() const {
  Timestamp input_wm = kMinTimestamp;
  for (size_t i = 0; i < inputs_.size(); ++i) {  // inputs_ is fixed before Run
    const Timestamp w = inputs_[i].valve_output->last_watermark();
    input_wm = i == 0 ? w : std::min(input_wm, w);
  }
  return input_wm;
}

std::vector<MetricsWriter::Gauges> StreamTask::PublishedGauges() const {
  MutexLock lock(metrics_mu_);
  return published_gauges_;
}

std::vector<MetricsWriter::Notes> StreamTask::PublishedNotes() const {
  MutexLock lock(metrics_mu_);
  return published_notes_;
}

bool StreamTask::RunMails() {
  bool any = false;
  while (auto mail = mailbox_.TryTake()) {
    any = true;
    mail->action();
  }
  if (virtual_pts_ != nullptr && virtual_pts_->FireDueTimers()) {
    any = true;
  }
  return any;
}

bool StreamTask::DrainWriters() {
  bool all = true;
  for (auto& w : writers_) {
    all = w->TryDrain() && all;
  }
  return all;
}

void StreamTask::FlushAll() {
  for (auto& w : writers_) {
    w->FlushBatches();
  }
}

StreamTask::TurnResult StreamTask::TurnOrThrow() {
  using Wait = TurnResult::Wait;
  if (cancel_requested_.load(std::memory_order_acquire)) {
    throw Cancelled("task cancelled");
  }
  const int64_t pushed_before = ElementsPushed();
  bool ran_mail = false;
  CallOperator(name_, [&] { ran_mail = RunMails(); });
  if (std::chrono::steady_clock::now() >= next_publish_) {
    PublishMetrics();
  }
  // Whether anything another task (or this task's next turn) can see changed.
  auto changed = [&] {
    return ran_mail || ElementsPushed() != pushed_before;
  };
  if (ending_) {
    // End of input was handed on; hand everything to the channels before the task ends.
    if (DrainWriters()) {
      if (awaiting_final_checkpoint_) {
        // Checkpoints after end of input: end once the final state is in a completed one.
        return TurnResult{changed(), false, Wait::kIdle};
      }
      return TurnResult{true, true, Wait::kNone};
    }
    return TurnResult{changed(), false, Wait::kBackpressure};
  }
  // Backpressure: with output still queued, take no new input; keep running mails.
  if (!DrainWriters()) {
    return TurnResult{changed(), false, Wait::kBackpressure};
  }
  InputStatus status;
  if (source_ != nullptr) {
    // Several records per turn: mails, cancellation and backpressure are checked once per turn
    // instead of once per record. (Under the virtual clock no time passes within a turn and no
    // other task runs, so the number does not change the result.)
    int64_t emitted = 0;
    if (drain_requested_) {
      status = InputStatus::kEndOfInput;  // stopped for a drain: end the input now
    } else {
      CallOperator(ops_.front().name,
                   [&] { status = source_->EmitBatch(kSourceRecordsPerTurn, &emitted); });
    }
    records_in_.store(records_in_.load(std::memory_order_relaxed) + emitted,
                      std::memory_order_relaxed);
    // Flush partial batches on a short timeout, so a slow or paced source keeps latency low.
    // Not under the virtual clock: there, batch boundaries must not depend on wall time.
    if (virtual_pts_ == nullptr && !writers_.empty() && status == InputStatus::kMoreAvailable) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_flush_ >= kFlushTimeout) {
        FlushAll();
        last_flush_ = now;
      }
    }
  } else {
    status = ProcessInput();
  }
  switch (status) {
    case InputStatus::kMoreAvailable:
      return TurnResult{true, false, Wait::kNone};
    case InputStatus::kNothingAvailable:
      // Flush partial batches before sleeping so latency stays low.
      FlushAll();
      if (!DrainWriters() || mailbox_.HasMail()) {
        return TurnResult{changed(), false, Wait::kNone};
      }
      return TurnResult{changed(), false, Wait::kIdle};
    case InputStatus::kEndOfInput:
      TakeWatermarkSnapshot();  // a source: before its final MAX
      EndOfInput();
      ending_ = true;
      if (checkpoints_enabled_) {
        CallOperator(name_, [&] { ReportFinished(); });
      }
      return TurnResult{true, DrainWriters() && !awaiting_final_checkpoint_, Wait::kNone};
  }
  return TurnResult{true, false, Wait::kNone};
}

InputStatus StreamTask::ProcessInput() {
  int processed = 0;
  size_t empty_checks = 0;
  size_t total_channels = 0;
  for (auto& in : inputs_) {
    total_channels += in.channels.size();
  }
  bool all_finished = true;
  for (auto& in : inputs_) {
    all_finished = all_finished && in.num_finished == in.channels.size();
  }
  if (all_finished) {
    return InputStatus::kEndOfInput;
  }
  // Round-robin over (input, channel) so no channel starves.
  while (processed < kElementsPerTurn && empty_checks < total_channels) {
    if (next_input_ >= inputs_.size()) {
      next_input_ = 0;
    }
    TaskInput& in = inputs_[next_input_];
    if (next_channel_ >= in.channels.size()) {
      next_channel_ = 0;
      ++next_input_;
      continue;
    }
    const size_t ch = next_channel_++;
    if (in.finished[ch] || ChannelBlocked(in, ch)) {
      ++empty_checks;
      continue;
    }
    auto element = in.channels[ch]->Pop();
    if (!element) {
      ++empty_checks;
      continue;
    }
    empty_checks = 0;
    ++processed;
    HandleElement(in, ch, std::move(element));
    if (ShouldYieldToConsumer()) {
      FlushAll();  // what this turn made goes to the consumer that runs next
      yield_to_consumer_ = true;
      return InputStatus::kMoreAvailable;
    }
    if (in.num_finished == in.channels.size()) {
      all_finished = true;
      for (auto& other : inputs_) {
        all_finished = all_finished && other.num_finished == other.channels.size();
      }
      if (all_finished) {
        return InputStatus::kEndOfInput;
      }
    }
  }
  return processed > 0 ? InputStatus::kMoreAvailable : InputStatus::kNothingAvailable;
}

void StreamTask::HandleElement(TaskInput& in, size_t channel,
                               std::unique_ptr<StreamElement> element) {
  StreamOperator& head = *ops_.front().op;
  const std::string& head_name = ops_.front().name;
  const int input = in.input_index;
  if (element->kind == StreamElement::Kind::kEndOfInput ||
      (element->kind == StreamElement::Kind::kWatermark &&
       element->watermark.timestamp == kMaxTimestamp)) {
    TakeWatermarkSnapshot();  // where event time stood before end of input reached this task
  }
  switch (element->kind) {
    case StreamElement::Kind::kRecords: {
      const WireBatch& wire = element->wire;
      records_in_.store(records_in_.load(std::memory_order_relaxed) +
                            static_cast<int64_t>(element->records.size() + wire.size()),
                        std::memory_order_relaxed);
      // The whole channel batch in one call: the head (and a chain of batch-aware operators
      // behind it) runs one loop per operator instead of one call chain per record.
      batch_pointers_.clear();
      for (StreamRecord& r : element->records) {
        batch_pointers_.push_back(&r);
      }
      if (decoded_.size() < wire.size()) {
        decoded_.resize(wire.size());
      }
      wire.Decode(0, wire.size(), decoded_.data());
      for (size_t i = 0; i < wire.size(); ++i) {
        batch_pointers_.push_back(&decoded_[i]);
      }
      RecordBatch batch{batch_pointers_.data(), batch_pointers_.size()};
      CallOperator(head_name, [&] { head.ProcessBatch(batch, input); });
      in.channels[channel]->Recycle(std::move(element));  // the producer refills it in place
      break;
    }
    case StreamElement::Kind::kWatermark:
      CallOperator(head_name, [&] {
        in.valve->InputWatermark(element->watermark, channel, *in.valve_output);
      });
      break;
    case StreamElement::Kind::kWatermarkStatus:
      CallOperator(head_name, [&] {
        in.valve->InputWatermarkStatus(element->status, channel, *in.valve_output);
      });
      break;
    case StreamElement::Kind::kCheckpointBarrier:
    case StreamElement::Kind::kCancelCheckpointMarker:
      HandleCheckpointElement(in, channel, *element);
      break;
    case StreamElement::Kind::kEndOfInput:
      in.finished[channel] = true;
      ++in.num_finished;
      if (barrier_handler_ != nullptr) {
        HandleCheckpointElement(in, channel, *element);
      }
      CallOperator(head_name, [&] {
        if (!finished_input_max_) {
          in.valve->MarkChannelFinished(channel, *in.valve_output);
        }
        if (in.num_finished == in.channels.size()) {
          head.EndInput(input);
        }
      });
      break;
  }
}

void StreamTask::TakeWatermarkSnapshot() {
  if (!snapshot_enabled_) {
    return;
  }
  {
    // Written only on this (the mailbox) thread, but read by Metrics under the lock.
    MutexLock lock(metrics_mu_);
    if (snapshot_.taken) {
      return;
    }
  }
  TaskWatermarkSnapshot s = BuildWatermarkSnapshot();
  MutexLock lock(metrics_mu_);
  snapshot_ = std::move(s);
}

bool StreamTask::RequestLiveWatermarkSnapshot(std::function<void(TaskWatermarkSnapshot)> done) {
  return mailbox_.Put(Mail{[this, done = std::move(done)] {
                             TaskWatermarkSnapshot s = BuildWatermarkSnapshot();
                             s.live = true;
                             done(std::move(s));
                           },
                           "live watermark snapshot"});
}

TaskWatermarkSnapshot StreamTask::BuildWatermarkSnapshot() {
  TaskWatermarkSnapshot s;
  s.taken = true;
  s.task = name_;
  s.subtask = subtask_index_;
  s.time = pts_->GetCurrentProcessingTime();
  for (const TaskInput& in : inputs_) {
    TaskWatermarkSnapshot::Input i;
    i.input_index = in.input_index;
    i.watermark = in.valve->last_output_watermark();
    i.idle = in.valve->output_status() == WatermarkStatus::kIdle;
    for (size_t c = 0; c < in.channels.size(); ++c) {
      i.channels.push_back(TaskWatermarkSnapshot::Channel{
          c < in.upstream.size() ? in.upstream[c] : std::string(), in.valve->channel_watermark(c),
          in.valve->channel_status(c) == WatermarkStatus::kIdle, in.finished[c]});
    }
    s.inputs.push_back(std::move(i));
  }
  for (const auto& c : ops_) {
    MetricsWriter w;
    c.op->CollectMetrics(w);
    s.operators.push_back(
        TaskWatermarkSnapshot::Operator{c.name, c.output->output_watermark(), w.Take()});
  }
  return s;
}

TaskWatermarkSnapshot StreamTask::watermark_snapshot() const {
  MutexLock lock(metrics_mu_);
  return snapshot_;
}

void StreamTask::EndOfInput() {
  if (dynamic_cast<SourceOperatorBase*>(ops_.front().op.get()) != nullptr) {
    // A finished source advances event time to the end, firing every event-time timer
    // downstream (Flink's advanceToEndOfEventTime).
    CallOperator(ops_.front().name,
                 [&] { ops_.front().output->EmitWatermark(Watermark{kMaxTimestamp}); });
  }
  // Chained operators see end of input, then finish, head first.
  for (size_t i = 0; i < ops_.size(); ++i) {
    CallOperator(ops_[i].name, [&] {
      if (i > 0) {
        ops_[i].op->EndInput(0);
      }
      ops_[i].op->Finish();
    });
  }
  StreamElement eoi;
  eoi.kind = StreamElement::Kind::kEndOfInput;
  for (auto& w : writers_) {
    w->Broadcast(eoi);
  }
}

}  // namespace tidemark
