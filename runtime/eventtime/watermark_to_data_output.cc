#include "runtime/eventtime/watermark_to_data_output.h"

namespace tidemark {

void WatermarkToDataOutput::EmitWatermark(Watermark watermark) {
  if (watermark.timestamp <= max_watermark_so_far_) {
    return;
  }
  max_watermark_so_far_ = watermark.timestamp;
  MarkActive();
  output_.EmitWatermark(watermark);
  if (on_forwarded_) {
    on_forwarded_(watermark.timestamp);
  }
}

void WatermarkToDataOutput::MarkIdle() {
  if (idle_) {
    return;
  }
  idle_ = true;
  output_.EmitWatermarkStatus(WatermarkStatus::kIdle);
}

void WatermarkToDataOutput::MarkActive() {
  if (!idle_) {
    return;
  }
  idle_ = false;
  output_.EmitWatermarkStatus(WatermarkStatus::kActive);
}

}  // namespace tidemark
