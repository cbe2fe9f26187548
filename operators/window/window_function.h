#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "operators/window/window.h"
#include "runtime/core/key.h"
#include "runtime/core/row.h"
#include "runtime/core/stream_record.h"
#include "runtime/state/state_serializer.h"
#include "runtime/time/processing_time_service.h"

namespace tidemark {

/// The contents of one (key, window) pane: a buffer of elements or an incremental accumulator.
/// Mirrors the window operator's `AppendingState` (ListState / ReducingState / AggregatingState).
/// Created by its `WindowFunction`; an absent pane (never added to, or purged) is represented by
/// the operator holding no state at all, so `Process` never sees an empty pane.
/// Threading: mailbox thread only.
class WindowState {
 public:
  virtual ~WindowState() = default;
  /// Adds one element (the record's row and timestamp).
  virtual void Add(const StreamRecord& record) = 0;
  /// Folds `other` into this (session windows merging). `other` was created by the same
  /// function and is discarded afterwards.
  virtual void MergeFrom(const WindowState& other) = 0;
  /// Writes the pane's contents for a snapshot (values, not layout). Default: throws `Error`
  /// (a state kind that cannot be snapshotted fails the checkpoint).
  virtual void WriteTo(StateWriter& /*writer*/) const {
    throw Error("this window state cannot be snapshotted");
  }
  /// Replaces the contents with what `WriteTo` wrote; buffered elements are read into
  /// `element_layout`, the operator's input layout. Errors: `StateCorrupt`.
  virtual void ReadFrom(StateReader& /*reader*/, const RowLayout* /*element_layout*/) {
    throw StateCorrupt("this window state cannot be restored");
  }
};

/// Turns a window's contents into result rows when its trigger fires. Mirrors Flink's
/// ReduceFunction / AggregateFunction combined with a (Process)WindowFunction: `CreateState`
/// picks the state kind (buffering or incremental), `Process` emits the results. The operator
/// stamps every result with `window.MaxTimestamp()`.
/// One instance serves all keys and windows of an operator; it must not keep per-pane data
/// outside the `WindowState`. Threading: mailbox thread only.
class WindowFunction {
 public:
  /// What `Process` may read about the firing (Flink's `ProcessWindowFunction.Context`).
  struct Context {
    const Key& key;
    const Window& window;
    Timestamp current_watermark;  ///< operator's watermark at firing (MAX at end of input)
    ProcessingTimeService& processing_time;  ///< the operator's clock, read only when asked

    /// The processing time now (ms). Read on demand, as Flink's `currentProcessingTime()`: a
    /// firing of a million windows does not read the system clock a million times.
    Timestamp current_processing_time() const { return processing_time.GetCurrentProcessingTime(); }
  };

  virtual ~WindowFunction() = default;
  virtual std::unique_ptr<WindowState> CreateState() const = 0;
  /// Appends the window's results to `out` (zero or more rows).
  virtual void Process(const Context& ctx, const WindowState& state,
                       std::vector<Row>& out) const = 0;
  /// State the function keeps across panes (an arrival counter ordering first / last), written
  /// into and read from the operator's snapshot. Default: none.
  virtual void WriteFunctionState(StateWriter& /*writer*/) const {}
  virtual void ReadFunctionState(StateReader& /*reader*/) {}
};

/// A `WindowState` that keeps every element in arrival order (Flink's ListState).
class ListWindowState : public WindowState {
 public:
  void Add(const StreamRecord& record) override { elements_.push_back(record); }
  void MergeFrom(const WindowState& other) override;
  /// `U32` count, then each element (`WriteRecord`).
  void WriteTo(StateWriter& writer) const override;
  void ReadFrom(StateReader& reader, const RowLayout* element_layout) override;
  const std::vector<StreamRecord>& elements() const { return elements_; }

 private:
  std::vector<StreamRecord> elements_;
};

/// A buffering window function defined by a callable over the window's elements (Flink's
/// ProcessWindowFunction over an iterable). Handy for tests and full (non-incremental) functions.
class BufferingWindowFunction : public WindowFunction {
 public:
  using Fn = std::function<void(const Context& ctx, const std::vector<StreamRecord>& elements,
                                std::vector<Row>& out)>;
  explicit BufferingWindowFunction(Fn fn) : fn_(std::move(fn)) {}

  std::unique_ptr<WindowState> CreateState() const override {
    return std::make_unique<ListWindowState>();
  }
  void Process(const Context& ctx, const WindowState& state, std::vector<Row>& out) const override;

 private:
  Fn fn_;
};

}  // namespace tidemark
