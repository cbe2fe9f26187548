#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <utility>

#include "runtime/core/timestamp.h"

namespace tidemark {

/// A half-open event- or processing-time interval [start, end) in ms. Mirrors Flink's `TimeWindow`.
/// Value type. `MaxTimestamp()` = end - 1 is the last timestamp that belongs to the window; it is
/// the timestamp of the window's results and the time of the default trigger's timer.
class TimeWindow {
 public:
  constexpr TimeWindow() = default;
  constexpr TimeWindow(Timestamp start, Timestamp end) : start_(start), end_(end) {}

  constexpr Timestamp start() const { return start_; }
  constexpr Timestamp end() const { return end_; }
  constexpr Timestamp MaxTimestamp() const { return end_ - 1; }

  /// True when the windows overlap or touch: `start <= other.end && end >= other.start`
  /// ([10,20) and [20,30) intersect; this is what lets session windows chain).
  constexpr bool Intersects(const TimeWindow& other) const {
    return start_ <= other.end_ && end_ >= other.start_;
  }
  /// The smallest window containing both.
  constexpr TimeWindow Cover(const TimeWindow& other) const {
    return TimeWindow(start_ < other.start_ ? start_ : other.start_,
                      end_ > other.end_ ? end_ : other.end_);
  }

  /// Start of the window of `window_size` ms (shifted by `offset` ms) that contains `timestamp`:
  /// `timestamp - ((timestamp - offset) floor-mod window_size)`. Correct for negative timestamps
  /// (size 7, ts -8 -> -14). Computed exactly; a start below Long.MIN is Long.MIN (the window
  /// is cut at the bottom of the int64 range, see `ForEachContaining`). Precondition: window_size >
  /// 0.
  static Timestamp GetWindowStartWithOffset(Timestamp timestamp, Timestamp offset,
                                            Timestamp window_size);

  /// Calls `f(TimeWindow)` for every window of `window_size` ms that contains `timestamp`, the
  /// windows starting every `slide` ms (shifted by `offset` ms), latest start first: starts
  /// GetWindowStartWithOffset(timestamp, offset, slide), then `slide` earlier each, while
  /// start > timestamp - window_size (tumbling windows: slide = window_size, one window).
  /// Windows beyond the int64 range are cut to it: a start below Long.MIN is Long.MIN, an end
  /// above Long.MAX is Long.MAX, their other bound unchanged. Flink computes these bounds in
  /// wrapping `long` arithmetic, so a timestamp within one window of Long.MIN gets a window at
  /// the top of the range, and its sliding assigner then walks the whole range down (no end in
  /// memory or time); here they stay where the record is. Preconditions: window_size > 0,
  /// slide > 0.
  template <typename F>
  static void ForEachContaining(Timestamp timestamp, Timestamp offset, Timestamp window_size,
                                Timestamp slide, F&& f) {
    __extension__ using Int128 = __int128;
    const Int128 t = timestamp;
    Timestamp shifted = 0;
    // 64-bit division unless timestamp - offset leaves the int64 range.
    Int128 remainder = __builtin_sub_overflow(timestamp, offset, &shifted)
                           ? (t - offset) % slide
                           : Int128{shifted % slide};
    if (remainder < 0) {
      remainder += slide;  // floored modulo
    }
    for (Int128 start = t - remainder; start > t - window_size; start -= slide) {
      f(TimeWindow(Clamp(start), Clamp(start + window_size)));
    }
  }

  /// "[start,end)".
  std::string ToString() const;

  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads a defaulted <=>.
  friend constexpr auto operator<=>(const TimeWindow&, const TimeWindow&) = default;

 private:
  template <typename I>
  static constexpr Timestamp Clamp(I v) {
    return v < kMinTimestamp   ? kMinTimestamp
           : v > kMaxTimestamp ? kMaxTimestamp
                               : static_cast<Timestamp>(v);
  }

  Timestamp start_ = 0;
  Timestamp end_ = 0;
};

/// The single window of `GlobalWindows`: all of time. Its max timestamp is `kMaxTimestamp`.
/// Mirrors Flink's `GlobalWindow`.
class GlobalWindow {
 public:
  static constexpr Timestamp MaxTimestamp() { return kMaxTimestamp; }
  friend constexpr auto operator<=>(const GlobalWindow&, const GlobalWindow&) = default;
};

/// The namespace of the window operator's state and timers: either a `TimeWindow` or the
/// `GlobalWindow`. Value type, implicitly built from either; ordered (time windows first, by
/// start then end). `start()`/`end()` of the global window are `kMinTimestamp`/`kMaxTimestamp`.
class Window {
 public:
  constexpr Window() = default;
  constexpr Window(const TimeWindow& w) : window_(w) {}  // NOLINT(google-explicit-constructor)
  constexpr Window(GlobalWindow) : global_(true) {}      // NOLINT(google-explicit-constructor)

  constexpr bool is_global() const { return global_; }
  /// The time window. Precondition: `!is_global()`.
  constexpr const TimeWindow& time_window() const { return window_; }
  constexpr Timestamp start() const { return global_ ? kMinTimestamp : window_.start(); }
  constexpr Timestamp end() const { return global_ ? kMaxTimestamp : window_.end(); }
  constexpr Timestamp MaxTimestamp() const {
    return global_ ? GlobalWindow::MaxTimestamp() : window_.MaxTimestamp();
  }
  /// "[start,end)" or "GlobalWindow".
  std::string ToString() const;

  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads a defaulted <=>.
  friend constexpr auto operator<=>(const Window&, const Window&) = default;
  template <typename H>
  friend H AbslHashValue(H h, const Window& w) {
    return H::combine(std::move(h), w.global_, w.window_.start(), w.window_.end());
  }

 private:
  bool global_ = false;
  TimeWindow window_;
};

}  // namespace tidemark
