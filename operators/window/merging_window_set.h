#pragma once

#include <functional>
#include <map>
#include <vector>

#include "operators/window/window.h"
#include "operators/window/window_assigner.h"

namespace tidemark {

/// The in-flight windows of one key of a merging (session) window operator, each mapped to the
/// window under which its contents are stored (its "state window"). Mirrors Flink's
/// `MergingWindowSet`: when windows merge, the result keeps the state window of one of them, so
/// contents never have to be renamed, only the other state windows folded into it.
///
/// Threading: mailbox thread only. Value type; one per key.
class MergingWindowSet {
 public:
  /// Called when `AddWindow` merges: (`merge_result`, the pre-existing `merged_windows` (never
  /// the new window), the `state_window_result` that keeps the contents, and the
  /// `merged_state_windows` to fold into it). Not called when the new window merely falls inside
  /// one existing window.
  using MergeFunction = std::function<void(
      const Window& merge_result, const std::vector<Window>& merged_windows,
      const Window& state_window_result, const std::vector<Window>& merged_state_windows)>;

  /// Adds `new_window`, merging it with every window it intersects (as decided by `assigner`),
  /// and returns the window it ended up in. `merge` runs before the set is updated for the
  /// merged windows' callers to clean up triggers and timers. Exceptions from `merge` propagate.
  Window AddWindow(const Window& new_window, const WindowAssigner& assigner,
                   const MergeFunction& merge);

  /// The state window of an in-flight window; nullptr when `window` is not in the set.
  const Window* GetStateWindow(const Window& window) const;

  /// Removes `window` (cleaned up, or late on arrival).
  void RetireWindow(const Window& window) { mapping_.erase(window); }

  /// Restore from a snapshot: puts back an in-flight `window` stored under `state_window`.
  void RestoreWindow(const Window& window, const Window& state_window) {
    mapping_[window] = state_window;
  }

  bool empty() const { return mapping_.empty(); }
  const std::map<Window, Window>& mapping() const { return mapping_; }

 private:
  std::map<Window, Window> mapping_;  // in-flight window -> state window
};

}  // namespace tidemark
