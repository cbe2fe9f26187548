#pragma once

#include <absl/container/node_hash_map.h>
#include <absl/hash/hash.h>
#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

#include "runtime/core/key.h"
#include "runtime/core/timestamp.h"

namespace tidemark {

template <typename N>
struct InternalTimer;

/// A deduplicated priority queue of timers: a binary min-heap in (timestamp, key, namespace)
/// order plus a hash index from each timer to its heap position, so that adding an existing
/// timer, finding one and deleting one cost one hash lookup (and O(log n) sifting), not a walk
/// down a tree of key comparisons. Mirrors Flink's `HeapPriorityQueueSet` (the heap of
/// `TimerHeapInternalTimer`s behind `InternalTimerServiceImpl`). Timers are plain data (no
/// closures); each lives in one index node, the heap holds pointers to the nodes.
///
/// `N` must be copyable, ordered (`<`, `==`) and hashable with `absl::Hash` (`AbslHashValue`).
/// Threading: one thread (the owning operator's mailbox thread). Ownership: owns its timers.
template <typename N>
class TimerHeapSet {
 public:
  using Timer = InternalTimer<N>;

  /// Adds `timer`; false (and nothing changes) when it is already queued.
  bool Add(const Timer& timer) {
    auto [it, inserted] = index_.try_emplace(timer, heap_.size());
    if (!inserted) {
      return false;
    }
    heap_.push_back(&*it);
    SiftUp(heap_.size() - 1);
    return true;
  }

  /// Removes `timer`; false when it is not queued.
  bool Remove(const Timer& timer) {
    auto it = index_.find(timer);
    if (it == index_.end()) {
      return false;
    }
    const size_t pos = it->second;
    RemoveAt(pos);
    index_.erase(it);
    return true;
  }

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  /// The earliest timer. Precondition: `!empty()`.
  const Timer& Top() const { return heap_.front()->first; }

  /// Removes and returns the earliest timer. Precondition: `!empty()`.
  Timer Pop() {
    auto node = index_.extract(heap_.front()->first);
    RemoveAt(0);
    return std::move(node.key());
  }

  /// Calls `f(timer)` for every queued timer, in no particular order.
  template <typename F>
  void ForEach(F&& f) const {
    for (const Node* n : heap_) {
      f(n->first);
    }
  }

  /// A copy of every queued timer in (timestamp, key, namespace) order. O(n log n).
  std::vector<Timer> Sorted() const {
    std::vector<Timer> out;
    out.reserve(heap_.size());
    for (const Node* n : heap_) {
      out.push_back(n->first);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  struct Hash {
    size_t operator()(const Timer& t) const {
      return absl::HashOf(t.timestamp, KeyHash()(t.key), t.ns);
    }
  };
  using Index = absl::node_hash_map<Timer, size_t, Hash>;
  using Node = typename Index::value_type;

  static bool Less(const Node* a, const Node* b) { return a->first < b->first; }

  void Place(size_t pos, Node* n) {
    heap_[pos] = n;
    n->second = pos;
  }
  void SiftUp(size_t pos) {
    Node* n = heap_[pos];
    while (pos > 0) {
      const size_t parent = (pos - 1) / 2;
      if (!Less(n, heap_[parent])) {
        break;
      }
      Place(pos, heap_[parent]);
      pos = parent;
    }
    Place(pos, n);
  }
  void SiftDown(size_t pos) {
    Node* n = heap_[pos];
    const size_t size = heap_.size();
    while (true) {
      size_t child = 2 * pos + 1;
      if (child >= size) {
        break;
      }
      if (child + 1 < size && Less(heap_[child + 1], heap_[child])) {
        ++child;
      }
      if (!Less(heap_[child], n)) {
        break;
      }
      Place(pos, heap_[child]);
      pos = child;
    }
    Place(pos, n);
  }
  // Takes the node at `pos` out of the heap (its index entry stays, for the caller to drop).
  void RemoveAt(size_t pos) {
    Node* last = heap_.back();
    heap_.pop_back();
    if (pos == heap_.size()) {
      return;
    }
    Place(pos, last);
    if (pos > 0 && Less(last, heap_[(pos - 1) / 2])) {
      SiftUp(pos);
    } else {
      SiftDown(pos);
    }
  }

  Index index_;              // timer -> its position in heap_
  std::vector<Node*> heap_;  // min-heap by (timestamp, key, namespace)
};

}  // namespace tidemark
