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
  if (millis_slot_ >= 0 && IsInt64Slot(record.row, millis_slot_)) {
    const auto slot = static_cast<size_t>(millis_slot_);
    if (record.row.IsNull(slot)) {
      return;  // NULL: this record carries no watermark
    }
    int64_t ms;
    if (EventTimeMillis(record.row, slot, &ms)) {
      output.EmitWatermark(Watermark{ms});
      return;
    }
  }
  if (std::optional<Timestamp> watermark = extractor_(record, event_timestamp)) {
    output.EmitWatermark(Watermark{*watermark});
  }
}

}  // namespace tidemark
