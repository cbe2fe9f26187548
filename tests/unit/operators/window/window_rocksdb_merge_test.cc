// The window operator's RocksDB path with partial states and merge operands (issue 45): a key
// missing from the in-memory cache is not read back for its records; its partial state is
// written as a merge operand when evicted and merged with the key's other operands when it fires.
// With a cache of a few keys every key is evicted many times per window, so each window's
// result is the merge of many operands; the tests check the exact window contents.

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <rocksdb/merge_operator.h>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "operators/window/window_slices_merge_operator.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/state/key_groups.h"
#include "tests/testing/rocksdb_merge.h"
#include "tests/testing/window_operator_runner.h"

namespace tidemark {
namespace {

constexpr int64_t kKeys = 40;

// Tumbling windows of 1000 ms: count, sum(v), min(v), max(v), last(s).
WindowSpec Spec(int64_t lateness_ms) {
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = 1000;
  spec.allowed_lateness_ms = lateness_ms;
  auto agg = [](const char* function, const char* field, const char* as) {
    AggregateSpec a;
    a.function = function;
    a.field = field;
    a.as = as;
    return a;
  };
  spec.aggregates = {agg("count", "", "n"), agg("sum", "v", "sum_v"), agg("min", "v", "min_v"),
                     agg("max", "v", "max_v"), agg("last", "s", "last_s")};
  return spec;
}

// One result row: (key, window end, count, sum, min, max, last).
using Result = std::tuple<int64_t, Timestamp, int64_t, int64_t, int64_t, int64_t, std::string>;

// The shared runner on this test's schema and windows, with its records and rows as tuples.
class Runner : public testing::WindowOperatorRunner {
 public:
  // A budget of 2560 bytes caches a few keys (at most 8: 160 bytes a key from half the budget,
  // less the filter of evicted keys).
  explicit Runner(const std::string& backend, int64_t lateness_ms = 0, int64_t budget = 2560)
      : WindowOperatorRunner(
            Schema({{"k", FieldType::kInt64}, {"v", FieldType::kInt64}, {"s", FieldType::kString}}),
            Spec(lateness_ms), "windows", backend, budget) {}

  // One batch per record, as a source of one record at a time hands them over.
  void Add(int64_t key, int64_t v, Timestamp ts) {
    std::string s = "s";
    s += std::to_string(v);  // (not "s" + ...: a false -Wrestrict of g++ 12, GCC PR 105329)
    WindowOperatorRunner::Add(StreamRecord(Row{Value(key), Value(v), Value(std::move(s))}, ts));
  }
  std::vector<Result> Results() const {
    std::vector<Result> out;
    for (const StreamRecord& r : Records()) {
      const Row& row = r.row;
      out.emplace_back(row.GetInt64(0), r.timestamp + 1, row.GetInt64(3), row.GetInt64(4),
                       row.GetInt64(5), row.GetInt64(6), std::string(row.GetString(7)));
    }
    return out;
  }
};

// Rounds 0..9 over keys 0..kKeys-1 in window [base, base + 1000): key k gets v = base + 100 r + k
// at base + 50 r + k. The cache holds a few of the 40 keys, so a key is evicted between any two of
// its records: each window of a key is the merge of 10 partial states.
void Feed(Runner& run, Timestamp base, int from_round = 0, int to_round = 10) {
  for (int r = from_round; r < to_round; ++r) {
    for (int64_t k = 0; k < kKeys; ++k) {
      run.Add(k, base + 100 * r + k, base + 50 * r + k);
    }
  }
}

// The exact rows of one window of Feed, fired at window end `base + 1000`, in key order (the
// heap backend's firing order; InRocksDbOrder gives the RocksDB backend's).
std::vector<Result> Expected(Timestamp base) {
  std::vector<Result> rows;
  for (int64_t k = 0; k < kKeys; ++k) {
    const int64_t sum = 10 * (base + k) + 100 * 45;
    std::string last = "s";
    last += std::to_string(base + 900 + k);
    rows.emplace_back(k, base + 1000, 10, sum, base + k, base + 900 + k, last);
  }
  return rows;
}

std::vector<Result> Concat(std::vector<Result> a, const std::vector<Result>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// On the RocksDB backend a window end's keys fire in RocksDB's order (key group of 128, then the
// key's canonical bytes; FireSlicedTimers), on the heap in key order: `rows` (firing order, key
// order within a window end) in RocksDB's.
std::vector<Result> InRocksDbOrder(std::vector<Result> rows) {
  auto order = [](const Result& r) {
    const Value key(std::get<0>(r));
    std::string bytes;
    AppendCanonicalKeyBytes(key, bytes);
    return std::make_tuple(std::get<1>(r), KeyGroupForHash(KeyHash64(Key{key}), 128), bytes);
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const Result& a, const Result& b) { return order(a) < order(b); });
  return rows;
}

TEST(WindowRocksDbMergeTest, PartialStatesMergedAcrossManyEvictionsGiveTheExactWindows) {
  Runner run("rocksdb");
  ASSERT_TRUE(run.op().uses_rocksdb());
  Feed(run, 0);
  // No key was read back for its records: each record of an evicted key started a partial state.
  EXPECT_EQ(run.op().rocksdb_keys_read(), 0);
  EXPECT_GT(run.op().rocksdb_spills(), 30);
  run.Watermark(999);
  EXPECT_EQ(run.Results(), InRocksDbOrder(Expected(0)));
  // Every key was evicted at least once, so each was read (merged) once, at its firing.
  EXPECT_EQ(run.op().rocksdb_keys_read(), kKeys);
  // The next window of the same keys: their values were deleted when read, so the new partial
  // states do not merge with the fired window's slices.
  Feed(run, 1000);
  run.Watermark(1999);
  Feed(run, 2000);
  run.Watermark(kMaxTimestamp);
  EXPECT_EQ(run.Results(),
            InRocksDbOrder(Concat(Concat(Expected(0), Expected(1000)), Expected(2000))));
}

// The filter of keys written to RocksDB (rocks_written_) holds a window's evicted keys until the
// window end fires; then their copies are dead and its part goes at once, not at the next window
// end's look-ups (at the 3e7-key check a window's part was ~170 MB, held through the whole next
// window beside that window's own).
TEST(WindowRocksDbMergeTest, AWindowEndFreesTheFilterOfItsWrittenKeys) {
  Runner run("rocksdb");
  Feed(run, 0);
  ASSERT_GT(run.op().rocksdb_spills(), 30);
  const int64_t one_window = run.op().rocksdb_filter_bytes();
  EXPECT_GT(one_window, 0);
  run.Watermark(999);
  EXPECT_EQ(run.op().rocksdb_filter_bytes(), 0);
  // The next window's keys: its own part only, freed at its end as well.
  Feed(run, 1000);
  EXPECT_EQ(run.op().rocksdb_filter_bytes(), one_window);
  run.Watermark(1999);
  EXPECT_EQ(run.op().rocksdb_filter_bytes(), 0);
  EXPECT_EQ(run.Results(), InRocksDbOrder(Concat(Expected(0), Expected(1000))));
}

// A window end reads its keys back in RocksDB's order, a chunk (half the cache) at a time, so a
// chunk is mostly one key group's keys, put into that group's table and erased as they fire.
// Those tables must not stay at the chunk's size: at the 3e7-key check (65,536-key chunks, 128
// groups) they held 1.2 GB after the first window end and the run failed with bad_alloc under
// its 2 GiB limit. A cache of 256 keys (chunks of 128) and 20,000 keys of one window: after the
// window end the operator holds less memory than before it (the cache's keys and the timers),
// not 128 tables of 128+ slots.
TEST(WindowRocksDbMergeTest, AWindowEndLeavesNoKeyGroupTableAtItsChunksSize) {
  Runner run("rocksdb", 0, 2 * 160 * 256);
  constexpr int64_t kManyKeys = 20000;
  for (int64_t k = 0; k < kManyKeys; ++k) {
    run.Add(k, k, k % 1000);
  }
  ASSERT_GT(run.op().rocksdb_spills(), 10);
  const int64_t before = run.op().StateMemoryBytes();
  run.Watermark(999);
  ASSERT_EQ(run.Results().size(), static_cast<size_t>(kManyKeys));
  for (const Result& r : run.Results()) {
    ASSERT_EQ(std::get<2>(r), 1);  // each key's one record
  }
  EXPECT_LT(run.op().StateMemoryBytes(), before);
}

TEST(WindowRocksDbMergeTest, AKeyThatLivesOnlyAsMergeOperandsFires) {
  Runner run("rocksdb");
  // Key 7 gets three records, each followed by enough other keys to evict it: it is only a
  // set of merge operands in RocksDB (never read, never cached) when its window fires.
  for (int r = 0; r < 3; ++r) {
    run.Add(7, 10 + r, 100 * r);
    for (int64_t k = 100; k < 140; ++k) {
      run.Add(k, 1, 100 * r + 1);
    }
  }
  EXPECT_EQ(run.op().rocksdb_keys_read(), 0);
  run.Watermark(999);
  std::vector<Result> got;
  for (const Result& r : run.Results()) {
    if (std::get<0>(r) == 7) {
      got.push_back(r);
    }
  }
  ASSERT_EQ(got, (std::vector<Result>{{7, 1000, 3, 33, 10, 12, "s12"}}));
  EXPECT_EQ(run.Results().size(), 41U);
}

TEST(WindowRocksDbMergeTest, CanonicalSnapshotInTheMiddleRestoresOnBothBackends) {
  for (const std::string after : {"rocksdb", "heap"}) {
    SCOPED_TRACE(after);
    std::string bytes;
    {
      Runner first("rocksdb");
      Feed(first, 0, 0, 4);  // keys spilled as partial states
      EXPECT_GT(first.op().rocksdb_spills(), 10);
      bytes = first.Snapshot();
      // The snapshot merged the partial states; the job goes on after it unchanged.
      Feed(first, 0, 4, 10);
      first.Watermark(999);
      EXPECT_EQ(first.Results(), InRocksDbOrder(Expected(0)));
    }
    Runner second(after);
    second.Restore(bytes);
    Feed(second, 0, 4, 10);
    second.Watermark(kMaxTimestamp);
    EXPECT_EQ(second.Results(), after == "heap" ? Expected(0) : InRocksDbOrder(Expected(0)));
  }
}

TEST(WindowRocksDbMergeTest, IncrementalCheckpointInTheMiddleRestores) {
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("tm_rocks_merge_" + std::to_string(::getpid()));
  std::filesystem::remove_all(root);
  CheckpointStorage storage(root, "job", 1);
  {
    Runner first("rocksdb");
    Feed(first, 0, 0, 3);
    first.Checkpoint(storage, 1);
    Feed(first, 0, 3, 6);  // more partial states over the checkpointed ones
    first.Checkpoint(storage, 2);
    Feed(first, 0, 6, 7);  // lost
  }
  std::optional<CompletedCheckpoint> cp = storage.LoadLatest();
  ASSERT_TRUE(cp.has_value());
  ASSERT_EQ(cp->id, 2);
  EXPECT_FALSE(cp->shared.at({"windows", 0}).empty());  // native: operands in its SST files
  Runner second("rocksdb");
  second.Restore(*cp);
  Feed(second, 0, 6, 10);
  second.Watermark(999);
  EXPECT_EQ(second.Results(), InRocksDbOrder(Expected(0)));
  Feed(second, 1000);
  second.Watermark(kMaxTimestamp);
  EXPECT_EQ(second.Results(), InRocksDbOrder(Concat(Expected(0), Expected(1000))));
  std::filesystem::remove_all(root);
}

TEST(WindowRocksDbMergeTest, ALateRecordOfASpilledKeyFiresWithTheKeysWholeState) {
  // Allowed lateness 5 s: window [0, 1000) fires at 999 and again for each late record; the
  // key of the late record was evicted after the first firing, so the record reads it back.
  Runner run("rocksdb", 5000);
  Feed(run, 0);
  run.Watermark(999);
  ASSERT_EQ(run.Results(), InRocksDbOrder(Expected(0)));
  Feed(run, 1000);  // evicts the keys again (the fired window's slices with them)
  run.Watermark(1500);
  run.Add(3, 7, 500);   // late, not dropped: window [0, 1000) of key 3 fires again
  run.Add(3, -1, 999);  // and again
  std::vector<Result> all = run.Results();
  ASSERT_EQ(all.size(), static_cast<size_t>(kKeys + 2));
  std::vector<Result> late(all.begin() + kKeys, all.end());
  const int64_t sum3 = 10 * 3 + 4500;
  EXPECT_EQ(late, (std::vector<Result>{{3, 1000, 11, sum3 + 7, 3, 903, "s7"},
                                       {3, 1000, 12, sum3 + 6, -1, 903, "s-1"}}));
  run.Watermark(kMaxTimestamp);
  all = run.Results();
  std::vector<Result> second(all.begin() + kKeys + 2, all.end());
  EXPECT_EQ(second, InRocksDbOrder(Expected(1000)));
}

TEST(WindowRocksDbMergeTest, TheHeapBackendGivesTheSameRows) {
  Runner heap("heap");
  Runner rocks("rocksdb");
  for (Runner* run : {&heap, &rocks}) {
    Feed(*run, 0);
    Feed(*run, 1000, 0, 5);
    run->Watermark(999);
    Feed(*run, 1000, 5, 10);
    run->Watermark(kMaxTimestamp);
  }
  EXPECT_FALSE(heap.op().uses_rocksdb());
  // The same rows; within a window end in RocksDB's order instead of key order.
  EXPECT_EQ(heap.Results(), Concat(Expected(0), Expected(1000)));
  EXPECT_EQ(rocks.Results(), InRocksDbOrder(heap.Results()));
  EXPECT_NE(rocks.Results(), heap.Results());
}

// The merge operator on its own: values in EncodeSlicedKey's layout (count only).
std::string Value1(Timestamp drop, std::vector<std::pair<Timestamp, int64_t>> slices,
                   Timestamp next_fire, Timestamp timer) {
  StateWriter w;
  w.WriteI64(drop);
  w.WriteU32(static_cast<uint32_t>(slices.size()));
  for (const auto& s : slices) {
    w.WriteI64(s.first);
  }
  w.WriteI64(next_fire);
  w.WriteI64(timer);
  for (const auto& s : slices) {
    AggregateAccumulator a;
    a.count = s.second;
    WriteAccumulator(w, a);
  }
  return w.Release();
}

TEST(WindowSlicesMergeOperatorTest, UnitesSlicesAndMergesEqualOnes) {
  ResolvedAggregate count;
  count.kind = AggregateKind::kCount;
  const std::vector<ResolvedAggregate> aggs{count};
  std::shared_ptr<rocksdb::MergeOperator> merge =
      NewWindowSlicesMergeOperator(SliceAggregates(aggs), 1);
  const std::string a = Value1(1999, {{0, 2}, {1000, 1}}, 999, 999);
  const std::string b = Value1(2999, {{1000, 4}, {2000, 5}}, 1999, 1999);
  const std::string c = Value1(999, {{0, 1}}, kMinTimestamp, 999);
  EXPECT_EQ(testing::FullMerge(*merge, a, {b, c}),
            Value1(2999, {{0, 3}, {1000, 5}, {2000, 5}}, 999, 999));
  std::string partial;
  ASSERT_TRUE(merge->PartialMergeMulti(rocksdb::Slice("k"), {rocksdb::Slice(b), rocksdb::Slice(c)},
                                       &partial, nullptr));
  EXPECT_EQ(partial, Value1(2999, {{0, 1}, {1000, 4}, {2000, 5}}, 1999, 999));
  // Bytes that are not a value fail the merge (RocksDB reports a corruption).
  EXPECT_EQ(testing::FullMerge(*merge, a, {"xy"}), std::nullopt);
}

}  // namespace
}  // namespace tidemark
