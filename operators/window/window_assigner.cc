#include "operators/window/window_assigner.h"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <random>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {

namespace {

Timestamp EventTimestamp(const StreamRecord& record) {
  if (!record.has_timestamp || record.timestamp == kMinTimestamp) {
    throw NoTimestamp(
        "Record has no timestamp (Long.MIN_VALUE marker). Is the window in processing time, or "
        "are timestamps and watermarks not assigned upstream?");
  }
  return record.timestamp;
}

// |offset| without overflow on INT64_MIN.
bool AbsAtLeast(int64_t offset, int64_t bound) {
  return offset >= bound || offset <= -bound || offset == std::numeric_limits<int64_t>::min();
}

}  // namespace

void WindowAssigner::MergeWindows(const std::vector<Window>& /*windows*/,
                                  const MergeCallback& /*callback*/) const {}

void MergeTimeWindows(const std::vector<Window>& windows,
                      const WindowAssigner::MergeCallback& callback) {
  std::vector<TimeWindow> sorted;
  sorted.reserve(windows.size());
  for (const Window& w : windows) {
    if (!w.is_global()) {
      sorted.push_back(w.time_window());
    }
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const TimeWindow& a, const TimeWindow& b) { return a < b; });
  std::vector<std::pair<TimeWindow, std::vector<Window>>> groups;
  for (const TimeWindow& candidate : sorted) {
    if (!groups.empty() && groups.back().first.Intersects(candidate)) {
      groups.back().first = groups.back().first.Cover(candidate);
      // Each group is a set (as in Flink): a window listed twice counts once.
      if (groups.back().second.back() != Window(candidate)) {
        groups.back().second.push_back(candidate);
      }
    } else {
      groups.push_back({candidate, {Window(candidate)}});
    }
  }
  for (const auto& [cover, members] : groups) {
    if (members.size() > 1) {
      callback(members, cover);
    }
  }
}

// ---- TumblingWindows ----

TumblingWindows::TumblingWindows(bool event_time, int64_t size_ms, int64_t offset_ms,
                                 WindowStagger stagger)
    : event_time_(event_time), size_(size_ms), global_offset_(offset_ms), stagger_(stagger) {
  if (size_ms <= 0 || AbsAtLeast(offset_ms, size_ms)) {
    throw InvalidArgument(
        fmt::format("{} parameters must satisfy abs(offset) < size (size={}ms, offset={}ms)",
                    event_time ? "TumblingEventTimeWindows" : "TumblingProcessingTimeWindows",
                    size_ms, offset_ms));
  }
}

std::vector<Window> TumblingWindows::AssignWindows(const StreamRecord& record, Context& ctx) {
  const Timestamp now = ctx.GetCurrentProcessingTime();
  const Timestamp t = event_time_ ? EventTimestamp(record) : now;
  if (!stagger_offset_) {
    switch (stagger_) {
      case WindowStagger::kAligned:
        stagger_offset_ = 0;
        break;
      case WindowStagger::kNatural: {
        const int64_t r = now % size_;
        stagger_offset_ = r < 0 ? r + size_ : r;
        break;
      }
      case WindowStagger::kRandom: {
        std::random_device rd;
        std::uniform_int_distribution<int64_t> dist(0, size_ - 1);
        stagger_offset_ = dist(rd);
        break;
      }
    }
  }
  std::vector<Window> windows;
  TimeWindow::ForEachContaining(t, (global_offset_ + *stagger_offset_) % size_, size_, size_,
                                [&](const TimeWindow& w) { windows.emplace_back(w); });
  return windows;
}

std::unique_ptr<Trigger> TumblingWindows::GetDefaultTrigger() const {
  if (event_time_) {
    return std::make_unique<EventTimeTrigger>();
  }
  return std::make_unique<ProcessingTimeTrigger>();
}

std::string TumblingWindows::ToString() const {
  return fmt::format("Tumbling{}TimeWindows({}, {})", event_time_ ? "Event" : "Processing", size_,
                     global_offset_);
}

// ---- SlidingWindows ----

SlidingWindows::SlidingWindows(bool event_time, int64_t size_ms, int64_t slide_ms,
                               int64_t offset_ms)
    : event_time_(event_time), size_(size_ms), slide_(slide_ms), offset_(offset_ms) {
  if (size_ms <= 0 || slide_ms <= 0 || AbsAtLeast(offset_ms, slide_ms)) {
    throw InvalidArgument(fmt::format(
        "{} parameters must satisfy abs(offset) < slide and size > 0 (size={}ms, slide={}ms, "
        "offset={}ms)",
        event_time ? "SlidingEventTimeWindows" : "SlidingProcessingTimeWindows", size_ms, slide_ms,
        offset_ms));
  }
}

std::vector<Window> SlidingWindows::AssignWindows(const StreamRecord& record, Context& ctx) {
  const Timestamp t = event_time_ ? EventTimestamp(record) : ctx.GetCurrentProcessingTime();
  std::vector<Window> windows;
  windows.reserve(static_cast<size_t>(size_ / slide_) + 1);
  TimeWindow::ForEachContaining(t, offset_, size_, slide_,
                                [&](const TimeWindow& w) { windows.emplace_back(w); });
  return windows;
}

std::unique_ptr<Trigger> SlidingWindows::GetDefaultTrigger() const {
  if (event_time_) {
    return std::make_unique<EventTimeTrigger>();
  }
  return std::make_unique<ProcessingTimeTrigger>();
}

std::string SlidingWindows::ToString() const {
  return fmt::format("Sliding{}TimeWindows({}, {}, {})", event_time_ ? "Event" : "Processing",
                     size_, slide_, offset_);
}

// ---- SessionWindows ----

SessionWindows::SessionWindows(bool event_time, int64_t gap_ms)
    : event_time_(event_time), gap_(gap_ms) {
  if (gap_ms <= 0) {
    throw InvalidArgument(fmt::format(
        "{} parameters must satisfy 0 < size (gap={}ms)",
        event_time ? "EventTimeSessionWindows" : "ProcessingTimeSessionWindows", gap_ms));
  }
}

SessionWindows::SessionWindows(bool event_time, GapExtractor gap_extractor)
    : event_time_(event_time), gap_extractor_(std::move(gap_extractor)) {
  if (!gap_extractor_) {
    throw InvalidArgument("dynamic session windows need a gap extractor");
  }
}

Timestamp SessionWindows::ElementTime(const StreamRecord& record, Context& ctx) const {
  // Unlike tumbling and sliding windows, Flink's (Dynamic)EventTimeSessionWindows do not check
  // for a missing timestamp: a record without one opens the session [MIN, MIN + gap), because
  // its timestamp reads as Long.MIN_VALUE (StreamRecord::timestamp is kMinTimestamp then).
  return event_time_ ? record.timestamp : ctx.GetCurrentProcessingTime();
}

std::vector<Window> SessionWindows::AssignWindows(const StreamRecord& record, Context& ctx) {
  const Timestamp t = ElementTime(record, ctx);
  int64_t gap = gap_;
  if (gap_extractor_) {
    gap = gap_extractor_(record);
    if (gap <= 0) {
      throw InvalidArgument(
          fmt::format("Dynamic session time gap must satisfy 0 < gap, got {}ms", gap));
    }
  }
  return {Window(TimeWindow(t, SaturatingAdd(t, gap)))};
}

std::unique_ptr<Trigger> SessionWindows::GetDefaultTrigger() const {
  if (event_time_) {
    return std::make_unique<EventTimeTrigger>();
  }
  return std::make_unique<ProcessingTimeTrigger>();
}

void SessionWindows::MergeWindows(const std::vector<Window>& windows,
                                  const MergeCallback& callback) const {
  MergeTimeWindows(windows, callback);
}

std::string SessionWindows::ToString() const {
  const char* kind = event_time_ ? "EventTime" : "ProcessingTime";
  if (gap_extractor_) {
    return fmt::format("Dynamic{}SessionWindows()", kind);
  }
  return fmt::format("{}SessionWindows({})", kind, gap_);
}

// ---- GlobalWindows ----

std::vector<Window> GlobalWindows::AssignWindows(const StreamRecord& /*record*/, Context& /*ctx*/) {
  return {Window(GlobalWindow())};
}

std::unique_ptr<Trigger> GlobalWindows::GetDefaultTrigger() const {
  if (end_of_stream_trigger_) {
    return std::make_unique<EndOfStreamTrigger>();
  }
  return std::make_unique<NeverTrigger>();
}

}  // namespace tidemark
