#include "runtime/task/status_watermark_valve.h"

#include <algorithm>

#include "runtime/core/errors.h"

namespace tidemark {

StatusWatermarkValve::StatusWatermarkValve(size_t num_channels, Options options)
    : options_(options), channels_(num_channels) {
  TM_CHECK(num_channels >= 1, "a StatusWatermarkValve needs at least one channel");
}

void StatusWatermarkValve::InputWatermark(Watermark watermark, size_t channel,
                                          ValveOutput& output) {
  TM_CHECK(channel < channels_.size(), "channel {} out of range ({} channels)", channel,
           channels_.size());
  Channel& c = channels_[channel];
  if (c.finished) {
    return;
  }
  if (options_.end_of_input_on_max_watermark && watermark.timestamp == kMaxTimestamp) {
    MarkChannelFinished(channel, output);
    return;
  }
  if (output_status_ == WatermarkStatus::kIdle || c.status == WatermarkStatus::kIdle) {
    return;  // Dropped, not recorded (Flink: watermarks on idle channels are discarded).
  }
  if (watermark.timestamp <= c.watermark) {
    return;
  }
  c.watermark = watermark.timestamp;
  if (c.excluded) {
    return;
  }
  if (!c.aligned && c.watermark >= last_output_watermark_) {
    c.aligned = true;
  }
  FindAndOutputNewMinAcrossAlignedChannels(output);
}

void StatusWatermarkValve::InputWatermarkStatus(WatermarkStatus status, size_t channel,
                                                ValveOutput& output) {
  TM_CHECK(channel < channels_.size(), "channel {} out of range ({} channels)", channel,
           channels_.size());
  Channel& c = channels_[channel];
  if (c.finished || status == c.status) {
    return;
  }
  c.status = status;
  if (status == WatermarkStatus::kIdle) {
    c.aligned = false;
    if (!c.excluded) {
      OnChannelLeftActiveSet(c, output);
    }
    return;
  }
  // IDLE -> ACTIVE: rejoin the minimum only if not behind the output.
  if (c.watermark >= last_output_watermark_) {
    c.aligned = true;
  }
  if (!c.excluded && output_status_ == WatermarkStatus::kIdle) {
    EmitStatus(WatermarkStatus::kActive, output);
  }
}

void StatusWatermarkValve::MarkChannelFinished(size_t channel, ValveOutput& output) {
  TM_CHECK(channel < channels_.size(), "channel {} out of range ({} channels)", channel,
           channels_.size());
  Channel& c = channels_[channel];
  if (c.finished) {
    return;
  }
  const bool was_active_participant = Participates(c) && c.status == WatermarkStatus::kActive;
  c.finished = true;
  c.aligned = false;

  if (AllFinished()) {
    // Every input has ended: release all event time downstream.
    if (output_status_ == WatermarkStatus::kIdle) {
      EmitStatus(WatermarkStatus::kActive, output);
    }
    EmitWatermark(kMaxTimestamp, output);
    return;
  }
  if (was_active_participant) {
    OnChannelLeftActiveSet(c, output);
  }
}

void StatusWatermarkValve::SetChannelExcludedFromMin(size_t channel, bool excluded) {
  TM_CHECK(channel < channels_.size(), "channel {} out of range ({} channels)", channel,
           channels_.size());
  channels_[channel].excluded = excluded;
}

void StatusWatermarkValve::OnChannelLeftActiveSet(const Channel& channel, ValveOutput& output) {
  if (!HasActiveParticipatingChannel()) {
    // It was the last active channel: flush the highest watermark before going IDLE, so that
    // downstream is not held back by channels that are all idle now.
    if (channel.watermark == last_output_watermark_) {
      FindAndOutputMaxAcrossAllChannels(output);
    }
    if (output_status_ == WatermarkStatus::kActive) {
      EmitStatus(WatermarkStatus::kIdle, output);
    }
  } else if (channel.watermark == last_output_watermark_) {
    // It may have been holding the minimum back.
    FindAndOutputNewMinAcrossAlignedChannels(output);
  }
}

bool StatusWatermarkValve::HasActiveParticipatingChannel() const {
  return std::any_of(channels_.begin(), channels_.end(), [](const Channel& c) {
    return Participates(c) && c.status == WatermarkStatus::kActive;
  });
}

bool StatusWatermarkValve::AllFinished() const {
  return std::all_of(channels_.begin(), channels_.end(),
                     [](const Channel& c) { return c.finished; });
}

void StatusWatermarkValve::EmitWatermark(Timestamp watermark, ValveOutput& output) {
  if (watermark > last_output_watermark_) {
    last_output_watermark_ = watermark;
    output.EmitWatermark(Watermark{watermark});
  }
}

void StatusWatermarkValve::EmitStatus(WatermarkStatus status, ValveOutput& output) {
  output_status_ = status;
  output.EmitWatermarkStatus(status);
}

void StatusWatermarkValve::FindAndOutputNewMinAcrossAlignedChannels(ValveOutput& output) {
  Timestamp new_min = kMaxTimestamp;
  bool has_aligned = false;
  for (const Channel& c : channels_) {
    if (c.aligned && c.status == WatermarkStatus::kActive && Participates(c)) {
      has_aligned = true;
      new_min = std::min(new_min, c.watermark);
    }
  }
  if (has_aligned) {
    EmitWatermark(new_min, output);
  }
}

void StatusWatermarkValve::FindAndOutputMaxAcrossAllChannels(ValveOutput& output) {
  Timestamp max_watermark = kMinTimestamp;
  for (const Channel& c : channels_) {
    if (Participates(c)) {
      max_watermark = std::max(max_watermark, c.watermark);
    }
  }
  EmitWatermark(max_watermark, output);
}

}  // namespace tidemark
