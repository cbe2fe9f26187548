#include "operators/window/merging_window_set.h"

#include <algorithm>
#include <utility>

namespace tidemark {

Window MergingWindowSet::AddWindow(const Window& new_window, const WindowAssigner& assigner,
                                   const MergeFunction& merge) {
  std::vector<Window> windows;
  windows.reserve(mapping_.size() + 1);
  for (const auto& [w, state_window] : mapping_) {
    windows.push_back(w);
  }
  windows.push_back(new_window);

  std::vector<std::pair<Window, std::vector<Window>>> merge_results;
  assigner.MergeWindows(windows, [&](const std::vector<Window>& merged, const Window& result) {
    merge_results.emplace_back(result, merged);
  });

  Window result_window = new_window;
  bool merged_new_window = false;
  for (auto& [merge_result, merged_windows] : merge_results) {
    auto it = std::find(merged_windows.begin(), merged_windows.end(), new_window);
    if (it != merged_windows.end()) {
      merged_windows.erase(it);
      merged_new_window = true;
      result_window = merge_result;
    }
    // The result keeps the state window of one merged (pre-existing) window.
    const Window merged_state_window = mapping_.at(merged_windows.front());
    std::vector<Window> merged_state_windows;
    for (const Window& m : merged_windows) {
      auto found = mapping_.find(m);
      if (found != mapping_.end()) {
        merged_state_windows.push_back(found->second);
        mapping_.erase(found);
      }
    }
    mapping_[merge_result] = merged_state_window;
    merged_state_windows.erase(
        std::remove(merged_state_windows.begin(), merged_state_windows.end(), merged_state_window),
        merged_state_windows.end());
    // A new window that lies inside one existing window does not change anything.
    const bool only_into_itself = merged_windows.size() == 1 && merged_windows[0] == merge_result;
    if (!only_into_itself) {
      merge(merge_result, merged_windows, merged_state_window, merged_state_windows);
    }
  }
  if (merge_results.empty() || (result_window == new_window && !merged_new_window)) {
    mapping_[result_window] = result_window;
  }
  return result_window;
}

const Window* MergingWindowSet::GetStateWindow(const Window& window) const {
  auto it = mapping_.find(window);
  return it == mapping_.end() ? nullptr : &it->second;
}

}  // namespace tidemark
