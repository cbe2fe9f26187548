#include "runtime/eventtime/punctuated_watermarks.h"

#include <utility>

#include "runtime/core/errors.h"

namespace tidemark {

PunctuatedWatermarks::PunctuatedWatermarks(Extractor extractor, int millis_slot)
    : extractor_(std::move(extractor)), millis_slot_(millis_slot) {
  TM_CHECK(static_cast<bool>(extractor_), "PunctuatedWatermarks needs an extractor");
}

void PunctuatedWatermarks::OnEvent(const StreamRecord& record, Timestamp event_timestamp,
                                   WatermarkOutput& output) {
  if (millis_slot_ >= 0 && static_cast<size_t>(millis_slot_) < record.row.size()) {
    const Value& v = record.row[static_cast<size_t>(millis_slot_)];
    if (const int64_t* ms = EventTimeMillisOrNull(v)) {
      output.EmitWatermark(Watermark{*ms});
      return;
    }
    if (v.index() == 0) {
      return;  // NULL: this record carries no watermark
    }
  }
  if (std::optional<Timestamp> watermark = extractor_(record, event_timestamp)) {
    output.EmitWatermark(Watermark{*watermark});
  }
}

}  // namespace tidemark
