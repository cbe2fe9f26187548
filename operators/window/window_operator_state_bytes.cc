// WindowOperator's state-size gauges (stateBytes, stateBytesPeak), kept apart from the operator's
// logic: they only read its state, in the byte model of window_state_bytes.h.

#include <algorithm>

#include "operators/window/window_operator.h"
#include "operators/window/window_state_bytes.h"

namespace tidemark {

int64_t WindowOperator::StateBytes() const {
  int64_t bytes = 0;
  for (const auto& [key, ks] : sliced_keys_) {
    bytes += static_cast<int64_t>(ks.starts.size()) * PaneStateBytes(RowStateBytes(key), num_accs_);
  }
  const auto* aggregating = dynamic_cast<const AggregatingWindowFunction*>(function_.get());
  for (const auto& [key, panes] : panes_) {
    const int64_t key_bytes = RowStateBytes(key);
    for (const auto& [window, state] : panes) {
      if (const auto* list = dynamic_cast<const ListWindowState*>(state.get())) {
        bytes += key_bytes;
        for (const StreamRecord& e : list->elements()) {
          bytes += ElementStateBytes(e);
        }
      } else {
        bytes += PaneStateBytes(key_bytes, aggregating ? aggregating->num_aggregates() : 1);
      }
    }
  }
  return bytes;
}

void WindowOperator::SampleStateBytes() {
  // Reading the state costs O(panes); sampling only once as many records arrived as the last
  // sample counted panes keeps that O(1) per record, so a million keys do not slow every
  // watermark down. Samples are taken before timers fire, where the state is largest.
  if (records_since_state_sample_ < state_panes_at_sample_) {
    return;
  }
  records_since_state_sample_ = 0;
  const int64_t bytes = StateBytes();
  state_bytes_sampled_ = bytes;
  state_bytes_peak_ = std::max(state_bytes_peak_, bytes);
  state_panes_at_sample_ = static_cast<int64_t>(NumSlices()) + static_cast<int64_t>(panes_.size());
}

}  // namespace tidemark
