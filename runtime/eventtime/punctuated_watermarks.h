#pragma once

#include <functional>
#include <optional>

#include "runtime/eventtime/watermark_generator.h"

namespace tidemark {

/// A punctuated generator: the records themselves say when event time has advanced. For every
/// record, `extractor(record, event_timestamp)` returns the watermark the record carries, or
/// nullopt; a returned value is emitted at once, from `OnEvent` (so in
/// `TimestampsAndWatermarksOperator` it directly follows its record). `OnPeriodicEmit` does
/// nothing. This is the shape of Flink's punctuated `WatermarkGenerator`s (a generator that emits
/// in `onEvent`); Flink has no single class for it.
///
/// Watermarks that do not advance are still passed on; the output drops them.
/// Typical extractors: a boolean flag field plus the timestamp (`[flag, ts]` records), or a
/// nullable field holding the watermark (`watermarks.watermark_field` in a job, see
/// `MakeWatermarkStrategy`). Threading: mailbox thread only.
class PunctuatedWatermarks final : public WatermarkGenerator {
 public:
  using Extractor = std::function<std::optional<Timestamp>(const StreamRecord& record,
                                                           Timestamp event_timestamp)>;

  /// `extractor` must be callable (TM_CHECK). `millis_slot` >= 0 declares that the extractor
  /// reads field `millis_slot` as milliseconds (an int64 is the watermark, NULL none): OnEvent
  /// then answers those two cases itself, without the std::function call, whose std::optional
  /// result g++ 12 passes through the stack with a store-forwarding stall (about a fifth of
  /// watermarks_punctuated's samples); the extractor answers every other value.
  explicit PunctuatedWatermarks(Extractor extractor, int millis_slot = -1);

  void OnEvent(const StreamRecord& record, Timestamp event_timestamp,
               WatermarkOutput& output) override;
  void OnPeriodicEmit(WatermarkOutput& /*output*/) override {}
  bool InspectsRecordOnEvent() const override { return true; }

 private:
  Extractor extractor_;
  int millis_slot_;
};

}  // namespace tidemark
