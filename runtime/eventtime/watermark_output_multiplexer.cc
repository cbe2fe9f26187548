#include "runtime/eventtime/watermark_output_multiplexer.h"

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {

class WatermarkOutputMultiplexer::ImmediateOutput final : public WatermarkOutput {
 public:
  ImmediateOutput(WatermarkOutputMultiplexer& mux, PartialWatermark& partial)
      : mux_(mux), partial_(partial) {}

  void EmitWatermark(Watermark watermark) override {
    const bool advanced = partial_.SetWatermark(watermark.timestamp);
    if (advanced && watermark.timestamp > mux_.combined_.combined_watermark()) {
      mux_.UpdateCombinedWatermark();
    }
  }
  void MarkIdle() override {
    partial_.SetIdle(true);
    mux_.UpdateCombinedWatermark();
  }
  void MarkActive() override {
    partial_.SetIdle(false);
    mux_.UpdateCombinedWatermark();
  }

 private:
  WatermarkOutputMultiplexer& mux_;
  PartialWatermark& partial_;
};

class WatermarkOutputMultiplexer::DeferredOutput final : public WatermarkOutput {
 public:
  explicit DeferredOutput(PartialWatermark& partial) : partial_(partial) {}

  void EmitWatermark(Watermark watermark) override { partial_.SetWatermark(watermark.timestamp); }
  void MarkIdle() override { partial_.SetIdle(true); }
  void MarkActive() override { partial_.SetIdle(false); }

 private:
  PartialWatermark& partial_;
};

struct WatermarkOutputMultiplexer::OutputState {
  OutputState(WatermarkOutputMultiplexer& mux, PartialWatermark* p)
      : partial(p), immediate(mux, *p), deferred(*p) {}
  PartialWatermark* partial;  // owned by combined_
  ImmediateOutput immediate;
  DeferredOutput deferred;
};

std::optional<WatermarkOutputMultiplexer::OutputView> WatermarkOutputMultiplexer::ViewOutput(
    const std::string& output_id) const {
  auto it = outputs_.find(output_id);
  if (it == outputs_.end()) {
    return std::nullopt;
  }
  return OutputView{it->second->partial->watermark(), it->second->partial->IsIdle()};
}

void WatermarkOutputMultiplexer::RegisterNewOutput(const std::string& output_id) {
  if (outputs_.count(output_id) > 0) {
    throw InvalidArgument(fmt::format("watermark output '{}' is already registered", output_id));
  }
  outputs_.emplace(output_id, std::make_unique<OutputState>(*this, combined_.Add()));
}

bool WatermarkOutputMultiplexer::UnregisterOutput(const std::string& output_id) {
  auto it = outputs_.find(output_id);
  if (it == outputs_.end()) {
    return false;
  }
  combined_.Remove(it->second->partial);
  outputs_.erase(it);
  return true;
}

WatermarkOutputMultiplexer::OutputState& WatermarkOutputMultiplexer::Find(
    const std::string& output_id) {
  auto it = outputs_.find(output_id);
  if (it == outputs_.end()) {
    throw InvalidArgument(fmt::format("no watermark output '{}' is registered", output_id));
  }
  return *it->second;
}

WatermarkOutput& WatermarkOutputMultiplexer::GetImmediateOutput(const std::string& output_id) {
  return Find(output_id).immediate;
}

WatermarkOutput& WatermarkOutputMultiplexer::GetDeferredOutput(const std::string& output_id) {
  return Find(output_id).deferred;
}

void WatermarkOutputMultiplexer::UpdateCombinedWatermark() {
  if (combined_.UpdateCombinedWatermark()) {
    underlying_.EmitWatermark(Watermark{combined_.combined_watermark()});
  }
  if (combined_.IsIdle()) {
    underlying_.MarkIdle();
  } else if (combined_.HasActiveInput()) {
    underlying_.MarkActive();
  }
}

WatermarkOutputMultiplexer::WatermarkOutputMultiplexer(WatermarkOutput& underlying)
    : underlying_(underlying) {}

WatermarkOutputMultiplexer::~WatermarkOutputMultiplexer() = default;

}  // namespace tidemark
