#include "sources/source_operator.h"

#include "runtime/core/errors.h"
#include "runtime/eventtime/watermark_to_data_output.h"
#include "runtime/time/virtual_clock.h"

namespace tidemark {

/// One split's output: its own generator and pausable idleness clock.
class SourceOperator::SplitOutput : public SourceOutput {
 public:
  SplitOutput(SourceOperator& op, std::string split_id) : op_(op), split_id_(std::move(split_id)) {
    if (op_.multiplexer_) {
      op_.multiplexer_->RegisterNewOutput(split_id_);
      clock_ = std::make_unique<PausableRelativeClock>(*op_.base_clock_);
      generator_ = op_.strategy_->CreateWatermarkGenerator(clock_.get());
    }
  }
  ~SplitOutput() override {
    if (op_.multiplexer_) {
      op_.multiplexer_->UnregisterOutput(split_id_);
    }
  }
  void Collect(Row row) override { Emit(StreamRecord(std::move(row)), false); }
  void Collect(Row row, Timestamp ts) override { Emit(StreamRecord(std::move(row), ts), true); }
  void CollectReusing(Row& row, Timestamp ts) override {
    // Borrow the reader's buffer for the record and hand back whatever is left of it.
    scratch_.row.swap(row);
    scratch_.SetTimestamp(ts);
    if (generator_ && immediate_ == nullptr) {
      immediate_ = &op_.multiplexer_->GetImmediateOutput(split_id_);  // valid until unregistered
    }
    op_.EmitRecord(scratch_, true, generator_.get(), immediate_, split_id_);
    scratch_.row.swap(row);
  }
  void EmitWatermark(Watermark w) override {
    if (op_.multiplexer_) {
      op_.multiplexer_->GetImmediateOutput(split_id_).EmitWatermark(w);
    }
  }
  void MarkIdle() override {
    if (op_.multiplexer_) {
      op_.multiplexer_->GetImmediateOutput(split_id_).MarkIdle();
    }
  }
  void MarkActive() override {
    if (op_.multiplexer_) {
      op_.multiplexer_->GetImmediateOutput(split_id_).MarkActive();
    }
  }
  void OnPeriodicEmit() {
    if (generator_) {
      generator_->OnPeriodicEmit(op_.multiplexer_->GetDeferredOutput(split_id_));
    }
  }
  PausableRelativeClock* clock() { return clock_.get(); }

 private:
  void Emit(StreamRecord record, bool has_source_ts) {
    op_.EmitRecord(record, has_source_ts, generator_.get(),
                   generator_ ? &op_.multiplexer_->GetImmediateOutput(split_id_) : nullptr, split_id_);
  }

  SourceOperator& op_;
  std::string split_id_;
  StreamRecord scratch_;  // CollectReusing's record: no allocation per record
  WatermarkOutput* immediate_ = nullptr;  // cached multiplexer handle for CollectReusing
  std::unique_ptr<PausableRelativeClock> clock_;
  std::unique_ptr<WatermarkGenerator> generator_;
};

/// Records emitted without a split go through one more generator, registered in the
/// multiplexer as the output "" on first use (so an unused main output never holds time back).
class SourceOperator::MainReaderOutput : public ReaderOutput {
 public:
  explicit MainReaderOutput(SourceOperator& op) : op_(op) {}
  void Collect(Row row) override { Main().Collect(std::move(row)); }
  void Collect(Row row, Timestamp ts) override { Main().Collect(std::move(row), ts); }
  void EmitWatermark(Watermark w) override { Main().EmitWatermark(w); }
  void MarkIdle() override { Main().MarkIdle(); }
  void MarkActive() override { Main().MarkActive(); }
  SourceOutput& CreateOutputForSplit(const std::string& split_id) override {
    auto& slot = op_.split_outputs_[split_id];
    if (!slot) {
      slot = std::make_unique<SplitOutput>(op_, split_id);
    }
    return *slot;
  }
  void ReleaseOutputForSplit(const std::string& split_id) override { op_.split_outputs_.erase(split_id); }
  void EmitError(const SourceError& error) override { op_.EmitError(error); }

 private:
  SourceOutput& Main() { return CreateOutputForSplit(""); }
  SourceOperator& op_;
};

class SourceOperator::ReaderContext : public SourceReaderContext {
 public:
  ReaderContext(SourceOperator& op) : op_(op) {}
  int subtask_index() const override { return op_.context().subtask_index; }
  int parallelism() const override { return op_.context().parallelism; }
  ProcessingTimeService& processing_time() override { return op_.processing_time(); }
  void WakeUpAt(Timestamp time_ms) override {
    if (auto* v = dynamic_cast<VirtualProcessingTimeService*>(&op_.processing_time())) {
      v->AdvanceTo(time_ms);  // the source's pacing is what moves virtual time
    } else {
      op_.processing_time().RegisterTimer(time_ms, [](Timestamp) {});  // its mail wakes the task
    }
  }

 private:
  SourceOperator& op_;
};

SourceOperator::SourceOperator(std::shared_ptr<const Source> source, std::optional<WatermarkStrategy> strategy)
    : source_(std::move(source)), strategy_(std::move(strategy)) {}

SourceOperator::~SourceOperator() {
  split_outputs_.clear();  // unregisters from the multiplexer while it still exists
}

void SourceOperator::Open(const OperatorContext& context) {
  SourceOperatorBase::Open(context);
  if (strategy_) {
    data_output_ = std::make_unique<WatermarkToDataOutput>(output());
    multiplexer_ = std::make_unique<WatermarkOutputMultiplexer>(*data_output_);
    base_clock_ = std::make_unique<ProcessingTimeRelativeClock>(processing_time());
  }
  main_output_ = std::make_unique<MainReaderOutput>(*this);
  reader_context_ = std::make_unique<ReaderContext>(*this);
  reader_ = source_->CreateReader(context.subtask_index);
  reader_->Start(*reader_context_);
  reader_->AddSplits(SplitEnumerator::SplitsFor(*source_, context.subtask_index, context.parallelism));
  reader_->NotifyNoMoreSplits();
  if (strategy_ && context.auto_watermark_interval_ms > 0) {
    periodic_enabled_ = true;
    SchedulePeriodic(processing_time().GetCurrentProcessingTime() + context.auto_watermark_interval_ms);
  }
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
  // Each split records its candidate through its deferred handle; the multiplexer then merges.
  for (auto& [id, out] : split_outputs_) {
    out->OnPeriodicEmit();
  }
  multiplexer_->OnPeriodicEmit();
}

void SourceOperator::EmitError(const SourceError& error) {
  ++input_errors_;
  StreamRecord side(SourceErrorRow(error));
  output().CollectSide("errors", side);
}

void SourceOperator::EmitRecord(StreamRecord& record, bool has_source_ts, WatermarkGenerator* generator,
                                WatermarkOutput* immediate, const std::string& split_id) {
  std::optional<Timestamp> ts;
  if (strategy_) {
    ts = strategy_->ExtractTimestamp(record);
  } else if (has_source_ts) {
    ts = record.timestamp;
  }
  if (!ts) {
    if (strategy_ || has_source_ts) {
      ++records_without_timestamp_;
      // The side output has one schema for every kind of input error (SourceErrorSchema).
      StreamRecord side(SourceErrorRow(
          SourceError{split_id, 0, "no timestamp: the timestamp field is missing or unparsable",
                      source_->schema().RowToJson(record.row)}));
      output().CollectSide("errors", side);
      return;
    }
    output().Collect(record);  // no event time at all: the record travels without a timestamp
    return;
  }
  record.SetTimestamp(*ts);
  if (generator == nullptr) {
    output().Collect(record);
    return;
  }
  // The generator sees the record after it was emitted (Flink's SourceOutputWithWatermarks), so a
  // punctuated watermark follows its record; downstream may move from (or modify) the emitted one,
  // so a generator that reads the record gets a copy; timestamp-only generators need none.
  if (!generator->InspectsRecordOnEvent()) {
    output().Collect(record);
    generator->OnEvent(record, *ts, *immediate);
    return;
  }
  StreamRecord seen = record;
  output().Collect(record);
  generator->OnEvent(seen, *ts, *immediate);
}

InputStatus SourceOperator::EmitNext() { return reader_->PollNext(*main_output_); }

void SourceOperator::Close() {
  periodic_enabled_ = false;
  if (reader_) {
    reader_->Close();
  }
}

}  // namespace tidemark
