#include "operators/window/window.h"

#include <fmt/format.h>

namespace tidemark {

Timestamp TimeWindow::GetWindowStartWithOffset(Timestamp timestamp, Timestamp offset,
                                               Timestamp window_size) {
  // Wrapping arithmetic (as Java's long) so extreme timestamps do not hit signed-overflow UB.
  Timestamp shifted = 0;
  __builtin_sub_overflow(timestamp, offset, &shifted);
  const Timestamp remainder = shifted % window_size;
  Timestamp start = 0;
  if (remainder < 0) {
    // Floored modulo: a negative remainder belongs to the window one size earlier.
    __builtin_sub_overflow(timestamp, remainder + window_size, &start);
  } else {
    __builtin_sub_overflow(timestamp, remainder, &start);
  }
  return start;
}

std::string TimeWindow::ToString() const {
  return fmt::format("[{},{})", start_, end_);
}

std::string Window::ToString() const {
  return global_ ? "GlobalWindow" : window_.ToString();
}

}  // namespace tidemark
