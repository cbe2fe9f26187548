#include "runtime/eventtime/punctuated_watermarks.h"

#include <utility>

#include "runtime/core/errors.h"

namespace tidemark {

PunctuatedWatermarks::PunctuatedWatermarks(Extractor extractor) : extractor_(std::move(extractor)) {
  TM_CHECK(static_cast<bool>(extractor_), "PunctuatedWatermarks needs an extractor");
}

void PunctuatedWatermarks::OnEvent(const StreamRecord& record, Timestamp event_timestamp,
                                   WatermarkOutput& output) {
  if (std::optional<Timestamp> watermark = extractor_(record, event_timestamp)) {
    output.EmitWatermark(Watermark{*watermark});
  }
}

}  // namespace tidemark
