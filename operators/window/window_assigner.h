#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "operators/window/trigger.h"
#include "operators/window/window.h"
#include "runtime/core/stream_record.h"

namespace tidemark {

/// How tumbling windows of different keys are shifted against each other. Mirrors Flink's
/// `WindowStagger`: ALIGNED (no shift), NATURAL (shift = processing time of the first assignment
/// mod size), RANDOM (a uniformly random shift in [0, size), chosen once).
enum class WindowStagger { kAligned, kNatural, kRandom };

/// Assigns each element to zero or more windows. Mirrors Flink's `WindowAssigner` (and, for
/// `IsMerging()` assigners, `MergingWindowAssigner`).
///
/// Threading: mailbox thread only. An assigner may keep lazily initialised state (the stagger
/// offset), so each operator instance owns its own assigner.
class WindowAssigner {
 public:
  /// What an assigner may ask its operator.
  class Context {
   public:
    virtual ~Context() = default;
    virtual Timestamp GetCurrentProcessingTime() = 0;
  };

  /// Called by `MergeWindows` once per group of more than one window that must merge:
  /// (`merged` windows, their cover `result`).
  using MergeCallback =
      std::function<void(const std::vector<Window>& merged, const Window& result)>;

  virtual ~WindowAssigner() = default;

  /// The windows of `record`. Event-time assigners use the record's timestamp; tumbling and
  /// sliding ones throw `NoTimestamp` when it has none (sessions take it as MIN, as Flink does);
  /// processing-time assigners use `ctx`'s clock.
  virtual std::vector<Window> AssignWindows(const StreamRecord& record, Context& ctx) = 0;
  /// The trigger used when the job names none.
  virtual std::unique_ptr<Trigger> GetDefaultTrigger() const = 0;
  /// True for event-time windows (lateness and cleanup follow the watermark).
  virtual bool IsEventTime() const = 0;
  /// True for session-style assigners whose windows merge (`MergeWindows` is then meaningful).
  virtual bool IsMerging() const { return false; }
  /// Merging assigners: reports every group of intersecting `windows` through `callback`.
  /// Default: no merges.
  virtual void MergeWindows(const std::vector<Window>& windows,
                            const MergeCallback& callback) const;
  virtual std::string ToString() const = 0;
};

/// Flink's `TimeWindow.mergeWindows`: sorts by start, chains intersecting (or touching) windows
/// and reports each chain of more than one window with its cover. Global windows are ignored.
void MergeTimeWindows(const std::vector<Window>& windows,
                      const WindowAssigner::MergeCallback& callback);

/// Tumbling windows of `size_ms` shifted by `offset_ms` (|offset| < size, size > 0), in event or
/// processing time. Mirrors `TumblingEventTimeWindows` / `TumblingProcessingTimeWindows`.
class TumblingWindows : public WindowAssigner {
 public:
  /// Throws `InvalidArgument` ("... must satisfy abs(offset) < size") on bad parameters.
  TumblingWindows(bool event_time, int64_t size_ms, int64_t offset_ms,
                  WindowStagger stagger = WindowStagger::kAligned);
  std::vector<Window> AssignWindows(const StreamRecord& record, Context& ctx) override;
  std::unique_ptr<Trigger> GetDefaultTrigger() const override;
  bool IsEventTime() const override { return event_time_; }
  std::string ToString() const override;

  int64_t size_ms() const { return size_; }
  /// The offset given at construction (before any stagger).
  int64_t offset_ms() const { return global_offset_; }
  WindowStagger stagger() const { return stagger_; }

 private:
  bool event_time_;
  int64_t size_;
  int64_t global_offset_;
  WindowStagger stagger_;
  std::optional<int64_t> stagger_offset_;  // decided on the first assignment
};

/// Sliding windows of `size_ms` every `slide_ms`, shifted by `offset_ms` (|offset| < slide,
/// size > 0, slide > 0); each element belongs to about size/slide windows. Mirrors
/// `SlidingEventTimeWindows` / `SlidingProcessingTimeWindows`.
class SlidingWindows : public WindowAssigner {
 public:
  /// Throws `InvalidArgument` ("... must satisfy abs(offset) < slide and size > 0").
  SlidingWindows(bool event_time, int64_t size_ms, int64_t slide_ms, int64_t offset_ms);
  std::vector<Window> AssignWindows(const StreamRecord& record, Context& ctx) override;
  std::unique_ptr<Trigger> GetDefaultTrigger() const override;
  bool IsEventTime() const override { return event_time_; }
  std::string ToString() const override;

  int64_t size_ms() const { return size_; }
  int64_t slide_ms() const { return slide_; }
  int64_t offset_ms() const { return offset_; }

 private:
  bool event_time_;
  int64_t size_;
  int64_t slide_;
  int64_t offset_;
};

/// Session windows: each element gets [t, t + gap) (t = event or processing time) and
/// intersecting windows merge. The gap is fixed (`gap_ms` > 0) or, with `gap_extractor`,
/// computed per element (must then be > 0 at assignment). Mirrors `EventTimeSessionWindows`,
/// `ProcessingTimeSessionWindows` and their `DynamicSessionWindows` variants.
class SessionWindows : public WindowAssigner {
 public:
  using GapExtractor = std::function<int64_t(const StreamRecord&)>;

  /// Fixed gap. Throws `InvalidArgument` ("... must satisfy 0 < size") for gap <= 0.
  SessionWindows(bool event_time, int64_t gap_ms);
  /// Dynamic gap from each element.
  SessionWindows(bool event_time, GapExtractor gap_extractor);

  std::vector<Window> AssignWindows(const StreamRecord& record, Context& ctx) override;
  std::unique_ptr<Trigger> GetDefaultTrigger() const override;
  bool IsEventTime() const override { return event_time_; }
  bool IsMerging() const override { return true; }
  void MergeWindows(const std::vector<Window>& windows,
                    const MergeCallback& callback) const override;
  std::string ToString() const override;

  /// The fixed gap (ms); meaningless with a gap extractor.
  int64_t gap_ms() const { return gap_; }
  bool has_dynamic_gap() const { return static_cast<bool>(gap_extractor_); }

 protected:
  /// The time an element's session starts at: its timestamp (event time) or now (processing).
  /// In event time a record without a timestamp counts as MIN (no error, as in Flink), so it gets
  /// [MIN, MIN + gap); tumbling and sliding event-time windows throw `NoTimestamp` instead.
  Timestamp ElementTime(const StreamRecord& record, Context& ctx) const;

 private:
  bool event_time_;
  int64_t gap_ = 0;
  GapExtractor gap_extractor_;
};

/// One global window for all elements. Default trigger: `NeverTrigger`, or `EndOfStreamTrigger`
/// when built with `end_of_stream_trigger` (Flink's `GlobalWindows.createWithEndOfStreamTrigger`).
/// Not an event-time assigner: its window is never late and never cleaned up.
class GlobalWindows : public WindowAssigner {
 public:
  explicit GlobalWindows(bool end_of_stream_trigger = false)
      : end_of_stream_trigger_(end_of_stream_trigger) {}
  std::vector<Window> AssignWindows(const StreamRecord& record, Context& ctx) override;
  std::unique_ptr<Trigger> GetDefaultTrigger() const override;
  bool IsEventTime() const override { return false; }
  std::string ToString() const override { return "GlobalWindows()"; }

 private:
  bool end_of_stream_trigger_;
};

}  // namespace tidemark
