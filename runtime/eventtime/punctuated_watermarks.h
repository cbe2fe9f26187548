#pragma once

#include <functional>
#include <optional>

#include "runtime/eventtime/watermark_generator.h"

namespace tidemark {

/// A punctuated generator: the records themselves say when event time has advanced. For every
/// record, `extractor(record, event_timestamp)` returns the watermark the record carries, or
/// nullopt; a returned value is emitted at once, from `OnEvent` (so in
/// `TimestampsAndWatermarksOperator` it directly follows its record). `OnPeriodicEmit` does nothing.
/// This is the shape of Flink's punctuated `WatermarkGenerator`s (a generator that emits in
/// `onEvent`); Flink has no single class for it.
///
/// Watermarks that do not advance are still passed on; the output drops them.
/// Typical extractors: a boolean flag field plus the timestamp (`[flag, ts]` records), or a
/// nullable field holding the watermark (`watermarks.watermark_field` in a job, see
/// `MakeWatermarkStrategy`). Threading: mailbox thread only.
class PunctuatedWatermarks final : public WatermarkGenerator {
 public:
  using Extractor = std::function<std::optional<Timestamp>(const StreamRecord& record,
                                                           Timestamp event_timestamp)>;

  /// `extractor` must be callable (TM_CHECK).
  explicit PunctuatedWatermarks(Extractor extractor);

  void OnEvent(const StreamRecord& record, Timestamp event_timestamp, WatermarkOutput& output) override;
  void OnPeriodicEmit(WatermarkOutput& /*output*/) override {}
  bool InspectsRecordOnEvent() const override { return true; }

 private:
  Extractor extractor_;
};

}  // namespace tidemark
