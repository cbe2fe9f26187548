#include "operators/timestamps_and_watermarks_operator.h"

#include <utility>

#include "runtime/core/errors.h"
#include "runtime/core/logging.h"
#include "runtime/eventtime/no_watermarks_generator.h"

namespace tidemark {

TimestampsAndWatermarksOperator::TimestampsAndWatermarksOperator(
    WatermarkStrategy strategy, TimestampsAndWatermarksOptions options)
    : strategy_(std::move(strategy)), options_(std::move(options)) {}

TimestampsAndWatermarksOperator::~TimestampsAndWatermarksOperator() = default;

void TimestampsAndWatermarksOperator::Open(const OperatorContext& context) {
  StreamOperator::Open(context);
  TM_CHECK(context.output != nullptr && context.processing_time != nullptr,
           "operator '{}' opened without output or processing time", context.name);
  watermark_output_ = std::make_unique<WatermarkToDataOutput>(output());
  if (options_.emit_progressive_watermarks) {
    idleness_clock_ = std::make_unique<ProcessingTimeRelativeClock>(processing_time());
    generator_ = strategy_.CreateWatermarkGenerator(idleness_clock_.get());
    interval_ms_ = context.auto_watermark_interval_ms;
    if (interval_ms_ > 0) {
      ScheduleNextPeriodicEmit();
    }
  } else {
    generator_ = std::make_unique<NoWatermarksGenerator>();
  }
}

void TimestampsAndWatermarksOperator::ScheduleNextPeriodicEmit() {
  const Timestamp now = processing_time().GetCurrentProcessingTime();
  timer_ = processing_time().RegisterTimer(SaturatingAdd(now, interval_ms_),
                                           [this](Timestamp /*time*/) { OnPeriodicTimer(); });
}

void TimestampsAndWatermarksOperator::OnPeriodicTimer() {
  timer_.reset();
  EmitRestoredWatermark();
  generator_->OnPeriodicEmit(*watermark_output_);
  ScheduleNextPeriodicEmit();
}

void TimestampsAndWatermarksOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  EmitRestoredWatermark();
  Timestamp timestamp = kMinTimestamp;
  if (!strategy_.TryExtractTimestamp(record, &timestamp)) {
    ++num_records_without_timestamp_;
    if (options_.on_missing_timestamp == MissingTimestampPolicy::kFail) {
      throw NoTimestamp(fmt::format(
          "operator '{}': a record has no timestamp (the timestamp field is missing, NULL or "
          "cannot be converted)",
          context().name));
    }
    if (num_records_without_timestamp_ == 1) {
      GetLogger("task")->warn(
          "operator '{}': a record without timestamp was sent to side output '{}' (further ones "
          "are only counted)",
          context().name, options_.errors_tag);
    }
    output().CollectSide(options_.errors_tag, record);
    return;
  }
  record.SetTimestamp(timestamp);
  if (generator_->InspectsRecordOnEvent()) {
    // The downstream may move from `record`; the generator needs the row after that.
    const StreamRecord copy = record;
    output().Collect(record);
    generator_->OnEvent(copy, timestamp, *watermark_output_);
  } else {
    output().Collect(record);
    generator_->OnEvent(record, timestamp, *watermark_output_);
  }
}

void TimestampsAndWatermarksOperator::ProcessWatermark(Watermark watermark, int /*input*/) {
  // Upstream event time is replaced by this operator's own, except the end-of-input MAX, which
  // must get through so that downstream timers fire.
  if (watermark.timestamp == kMaxTimestamp) {
    EmitRestoredWatermark();
    watermark_output_->EmitWatermark(watermark);
  }
}

void TimestampsAndWatermarksOperator::ProcessWatermarkStatus(WatermarkStatus /*status*/,
                                                             int /*input*/) {
  // Ignored: this operator decides idleness itself (WithIdleness).
}

void TimestampsAndWatermarksOperator::SnapshotState(StateSnapshotContext& context) {
  StateWriter& w = context.writer;
  w.BeginSection("timestamps-and-watermarks", 1);
  w.WriteI64(current_watermark());
  generator_->SnapshotState(w);
  w.EndSection();
}

void TimestampsAndWatermarksOperator::InitializeState(StateInitializationContext& context) {
  if (!context.is_restored() || !context.restore_watermarks) {
    return;  // Flink: a fresh generator, event time from Long.MIN
  }
  StateReader& r = *context.reader;
  r.BeginSection("timestamps-and-watermarks", 1);
  const Timestamp watermark = r.ReadI64();
  generator_->RestoreState(r);
  r.EndSection();
  if (watermark != kMinTimestamp) {
    restored_watermark_ = watermark;
  }
}

void TimestampsAndWatermarksOperator::Finish() {
  EmitRestoredWatermark();
  generator_->OnPeriodicEmit(*watermark_output_);
}

void TimestampsAndWatermarksOperator::Close() {
  if (timer_ && context_.processing_time != nullptr) {
    processing_time().CancelTimer(*timer_);
  }
  timer_.reset();
}

Timestamp TimestampsAndWatermarksOperator::current_watermark() const {
  return watermark_output_ ? watermark_output_->max_watermark_so_far() : kMinTimestamp;
}

}  // namespace tidemark
