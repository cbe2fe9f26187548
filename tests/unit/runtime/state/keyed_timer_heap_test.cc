// KeyedTimerHeap (runtime/state/keyed_state_backend.h): entries pop in (time, key) order;
// `TakeDue` takes exactly the entries repeated `PopDue` would, in the same order, whether a few
// or most entries are due; `PopDueBefore` merges entries added during a run into its order.
// KeyedTimerBuckets drops duplicate timers when asked to (CompactDuplicates).

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/state/keyed_state_backend.h"

namespace tidemark {
namespace {

using Due = std::vector<std::pair<Timestamp, int64_t>>;

KeyedTimerHeap<int64_t> HeapOf(const Due& entries) {
  KeyedTimerHeap<int64_t> heap;
  for (const auto& [time, key] : entries) {
    heap.Add(time, key);
  }
  return heap;
}

TEST(KeyedTimerHeapTest, PopsInTimeThenKeyOrderUpToTheWatermark) {
  KeyedTimerHeap<int64_t> heap = HeapOf({{30, 2}, {10, 9}, {30, 1}, {20, 5}, {40, 0}});
  Due popped;
  Timestamp time = 0;
  int64_t key = 0;
  while (heap.PopDue(30, &time, &key)) {
    popped.emplace_back(time, key);
  }
  EXPECT_EQ(popped, (Due{{10, 9}, {20, 5}, {30, 1}, {30, 2}}));
  EXPECT_EQ(heap.size(), 1u);
}

TEST(KeyedTimerHeapTest, TakeDueGivesWhatRepeatedPopDueGivesForFewAndForManyDueEntries) {
  std::mt19937_64 rng(7);
  Due entries;
  for (int i = 0; i < 5000; ++i) {
    // Repeated (time, key) pairs too: the heap keeps duplicates, both ways must give them.
    entries.emplace_back(static_cast<Timestamp>(rng() % 1000), static_cast<int64_t>(rng() % 300));
  }
  // 5 entries due (the pop path), about half and all of them (the partition path).
  for (const Timestamp watermark : {Timestamp{0}, Timestamp{499}, Timestamp{2000}}) {
    KeyedTimerHeap<int64_t> by_pop = HeapOf(entries);
    KeyedTimerHeap<int64_t> by_take = HeapOf(entries);
    Due expected;
    Timestamp time = 0;
    int64_t key = 0;
    while (by_pop.PopDue(watermark, &time, &key)) {
      expected.emplace_back(time, key);
    }
    Due due{{-1, -1}};  // cleared by TakeDue
    EXPECT_EQ(by_take.TakeDue(watermark, &due), expected.size()) << watermark;
    EXPECT_EQ(due, expected) << watermark;
    EXPECT_EQ(by_take.size(), by_pop.size()) << watermark;
    // What stays behind still pops in order.
    Due rest_pop;
    Due rest_take;
    while (by_pop.PopDue(kMaxTimestamp, &time, &key)) {
      rest_pop.emplace_back(time, key);
    }
    while (by_take.PopDue(kMaxTimestamp, &time, &key)) {
      rest_take.emplace_back(time, key);
    }
    EXPECT_EQ(rest_take, rest_pop) << watermark;
  }
  KeyedTimerHeap<int64_t> none = HeapOf(entries);
  Due due;
  EXPECT_EQ(none.TakeDue(-1, &due), 0u);
  EXPECT_TRUE(due.empty());
}

TEST(KeyedTimerHeapTest, PopDueBeforeYieldsOnlyDueEntriesOrderedBeforeTheGivenOne) {
  KeyedTimerHeap<int64_t> heap = HeapOf({{15, 3}});
  Timestamp time = 0;
  int64_t key = 0;
  EXPECT_FALSE(heap.PopDueBefore(20, 15, 3, &time, &key));  // equal: not before
  EXPECT_FALSE(heap.PopDueBefore(20, 15, 2, &time, &key));  // same time, larger key
  EXPECT_FALSE(heap.PopDueBefore(14, 16, 0, &time, &key));  // before, but not due
  EXPECT_TRUE(heap.PopDueBefore(20, 15, 4, &time, &key));
  EXPECT_EQ(time, 15);
  EXPECT_EQ(key, 3);
  EXPECT_TRUE(heap.empty());
  EXPECT_FALSE(heap.PopDueBefore(20, 100, 0, &time, &key));
}

// KeyedTimerBuckets::CompactDuplicates (the window operator's RocksDB partial states register a
// key's timer again at each eviction): duplicates go once the entries have grown by a quarter
// since the last compaction; what fires is unchanged.
TEST(KeyedTimerBucketsTest, CompactDuplicatesDropsRepeatedTimersOnceTheyPileUp) {
  KeyedTimerBuckets<int64_t> timers;
  for (int64_t k = 0; k < 70000; ++k) {
    timers.Add(999, k);
  }
  timers.Add(1999, 5);
  timers.CompactDuplicates();  // nothing repeated
  EXPECT_EQ(timers.NumEntries(), 70001U);
  for (int64_t k = 0; k < 17000; ++k) {
    timers.Add(999, k);
  }
  timers.CompactDuplicates();  // 87,001 entries, below 70,001 * 1.25: kept
  EXPECT_EQ(timers.NumEntries(), 87001U);
  for (int64_t k = 17000; k < 18000; ++k) {
    timers.Add(999, k);
  }
  timers.CompactDuplicates();  // 88,001: compacted
  EXPECT_EQ(timers.NumEntries(), 70001U);
  Timestamp time = 0;
  std::vector<int64_t> keys;
  ASSERT_TRUE(timers.PopDue(kMaxTimestamp, &time, keys));
  EXPECT_EQ(time, 999);
  ASSERT_EQ(keys.size(), 70000U);
  EXPECT_EQ(keys.front(), 0);
  EXPECT_EQ(keys.back(), 69999);
  ASSERT_TRUE(timers.PopDue(kMaxTimestamp, &time, keys));
  EXPECT_EQ(time, 1999);
  EXPECT_EQ(keys, std::vector<int64_t>{5});
  EXPECT_FALSE(timers.PopDue(kMaxTimestamp, &time, keys));
}

}  // namespace
}  // namespace tidemark
