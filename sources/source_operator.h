#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "runtime/eventtime/pausable_relative_clock.h"
#include "runtime/eventtime/relative_clock.h"
#include "runtime/eventtime/watermark_output_multiplexer.h"
#include "runtime/eventtime/watermark_strategy.h"
#include "runtime/eventtime/watermark_to_data_output.h"
#include "runtime/task/source_operator_base.h"
#include "sources/source_reader.h"

namespace tidemark {

/// The head operator of a source task (Flink's `SourceOperator` with
/// `ProgressiveTimestampsAndWatermarks`): drives its SourceReader and applies the job's
/// WatermarkStrategy *per split*: every split output gets its own WatermarkGenerator, fed through
/// the split's immediate handle on events and its deferred handle on periodic emits; a
/// WatermarkOutputMultiplexer combines them (minimum over active splits, idle when all are
/// idle); only strictly increasing watermarks leave the source.
///
/// Without a strategy (`watermarks:` absent or `strategy: none`) records keep the source's own
/// timestamps and no watermark is generated (only the final MAX at end of input).
/// A record whose timestamp cannot be extracted is counted and sent to side output `errors`.
/// Mailbox thread only.
class SourceOperator : public SourceOperatorBase {
 public:
  SourceOperator(std::shared_ptr<const Source> source, std::optional<WatermarkStrategy> strategy);
  ~SourceOperator() override;

  void Open(const OperatorContext& context) override;
  [[nodiscard]] InputStatus EmitNext() override;
  void Close() override;

  int64_t records_without_timestamp() const { return records_without_timestamp_; }
  /// Input the reader could not turn into records (`ReaderOutput::EmitError`), sent to `errors`.
  int64_t input_errors() const { return input_errors_; }
  /// Counts `error` and sends its row (SourceErrorSchema) to side output `errors`.
  void EmitError(const SourceError& error);
  /// The last watermark that left the source (MIN before any).
  Timestamp current_watermark() const {
    return data_output_ ? data_output_->max_watermark_so_far() : kMinTimestamp;
  }

 private:
  class SplitOutput;
  class MainReaderOutput;
  class ReaderContext;

  void EmitPeriodicWatermark();
  void SchedulePeriodic(Timestamp at_ms);
  /// Stamps `record` (assigner or the source's timestamp), emits it, then lets `generator` (if
  /// any) see it with `immediate` as its output. A record without a timestamp goes to `errors`.
  void EmitRecord(StreamRecord& record, bool has_source_ts, WatermarkGenerator* generator,
                  WatermarkOutput* immediate, const std::string& split_id = "");

  std::shared_ptr<const Source> source_;
  std::optional<WatermarkStrategy> strategy_;
  std::unique_ptr<SourceReader> reader_;
  std::unique_ptr<ReaderContext> reader_context_;
  std::unique_ptr<WatermarkToDataOutput> data_output_;
  std::unique_ptr<WatermarkOutputMultiplexer> multiplexer_;
  std::unique_ptr<ProcessingTimeRelativeClock> base_clock_;
  std::unique_ptr<MainReaderOutput> main_output_;
  std::map<std::string, std::unique_ptr<SplitOutput>> split_outputs_;
  int64_t records_without_timestamp_ = 0;
  int64_t input_errors_ = 0;
  bool periodic_enabled_ = false;
};

}  // namespace tidemark
