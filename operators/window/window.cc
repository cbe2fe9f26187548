#include "operators/window/window.h"

#include <fmt/format.h>

namespace tidemark {

Timestamp TimeWindow::GetWindowStartWithOffset(Timestamp timestamp, Timestamp offset,
                                               Timestamp window_size) {
  // The one window of `window_size` every `window_size` ms that contains the timestamp.
  Timestamp start = 0;
  ForEachContaining(timestamp, offset, window_size, window_size,
                    [&start](const TimeWindow& w) { start = w.start(); });
  return start;
}

std::string TimeWindow::ToString() const {
  return fmt::format("[{},{})", start_, end_);
}

std::string Window::ToString() const {
  return global_ ? "GlobalWindow" : window_.ToString();
}

}  // namespace tidemark
