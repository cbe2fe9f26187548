// TimerHeapSet (Flink's HeapPriorityQueueSet) against an ordered-set model: seeded random adds,
// removes (present and absent) and pops over few timestamps, keys and namespaces, so duplicates,
// equal timestamps and removals from the middle of the heap are frequent.

#include "runtime/time/timer_heap_set.h"

#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/time/internal_timer_service.h"

namespace tidemark {
namespace {

using Timer = InternalTimer<std::string>;

Timer RandomTimer(std::mt19937_64& rng) {
  Timer t;
  t.timestamp = static_cast<Timestamp>(rng() % 20) - 5;
  if (rng() % 4 == 0) {
    // String keys beside int64 ones (built by appending: g++ 12 -O2 reports a false -Wrestrict
    // for `"k" + std::to_string(...)`, GCC PR 105329).
    std::string k = "k";
    k += std::to_string(rng() % 3);
    t.key = Key{Value(k)};
  } else {
    t.key = Key{Value(static_cast<int64_t>(rng() % 6))};
  }
  t.ns = std::string(1, static_cast<char>('a' + rng() % 3));
  return t;
}

TEST(TimerHeapSetTest, BehavesAsAnOrderedSetOfTimers) {
  int64_t duplicates = 0;
  int64_t middle_removals = 0;
  for (uint64_t seed = 1; seed <= 30; ++seed) {
    std::mt19937_64 rng(seed);
    TimerHeapSet<std::string> heap;
    std::set<Timer> model;
    for (int step = 0; step < 3000; ++step) {
      const uint64_t op = rng() % 10;
      if (op < 5) {
        const Timer t = RandomTimer(rng);
        const bool inserted = model.insert(t).second;
        ASSERT_EQ(heap.Add(t), inserted) << "seed " << seed << " step " << step;
        duplicates += inserted ? 0 : 1;
      } else if (op < 8) {
        const Timer t = RandomTimer(rng);
        const bool present = model.erase(t) == 1;
        middle_removals += present && !(heap.Top() == t) ? 1 : 0;  // present: not empty
        ASSERT_EQ(heap.Remove(t), present) << "seed " << seed << " step " << step;
      } else if (!model.empty()) {
        ASSERT_FALSE(heap.empty());
        ASSERT_TRUE(heap.Top() == *model.begin()) << "seed " << seed << " step " << step;
        const Timer popped = heap.Pop();
        ASSERT_TRUE(popped == *model.begin());
        model.erase(model.begin());
      }
      ASSERT_EQ(heap.size(), model.size());
    }
    const std::vector<Timer> sorted = heap.Sorted();
    ASSERT_EQ(sorted, std::vector<Timer>(model.begin(), model.end())) << "seed " << seed;
    // Draining pops everything in (timestamp, key, namespace) order.
    while (!model.empty()) {
      ASSERT_TRUE(heap.Pop() == *model.begin());
      model.erase(model.begin());
    }
    EXPECT_TRUE(heap.empty());
  }
  // The streams exercised what matters.
  EXPECT_GT(duplicates, 1000);
  EXPECT_GT(middle_removals, 1000);
}

}  // namespace
}  // namespace tidemark
