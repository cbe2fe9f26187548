#include "runtime/task/time_accounting.h"

namespace tidemark {

void TimeAccounting::Advance(int64_t now_ms) {
  if (!started_) {
    started_ = true;
    last_ms_ = now_ms;
    window_start_ms_ = now_ms;
    return;
  }
  if (now_ms > last_ms_) {
    total_[state_] += now_ms - last_ms_;
    last_ms_ = now_ms;
  }
}

void TimeAccounting::Enter(size_t state, int64_t now_ms) {
  Advance(now_ms);
  state_ = state < kStates ? state : 0;
}

TimeAccounting::PerSecond TimeAccounting::Sample(int64_t now_ms) {
  Advance(now_ms);
  const int64_t span = last_ms_ - window_start_ms_;
  if (span < window_ms_ || span <= 0) {
    return last_;
  }
  PerSecond out{};
  int64_t rest = 1000;
  for (size_t s = 1; s < kStates; ++s) {
    const int64_t d = total_[s] - window_start_total_[s];
    out[s] = (d * 1000 + span / 2) / span;
    rest -= out[s];
  }
  out[0] = rest < 0 ? 0 : rest;
  window_start_total_ = total_;
  window_start_ms_ = last_ms_;
  last_ = out;
  return out;
}

}  // namespace tidemark
