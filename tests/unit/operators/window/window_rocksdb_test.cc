// The window operator's sliced path on the RocksDB state backend (issue 45): with a memory budget
// small enough that keys are spilled to RocksDB and read back many times, tumbling and sliding
// windows give exactly the heap backend's results, and a snapshot taken mid-window on either
// backend restores on either backend to the uninterrupted run's output.

#include <algorithm>
#include <filesystem>
#include <string>
#include <tuple>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/state/key_groups.h"
#include "tests/testing/snapshot_round_trip.h"
#include "tests/testing/window_operator_runner.h"

namespace tidemark {
namespace {

using testing::DescribeRecord;

constexpr int64_t kKeys = 6000;
constexpr size_t kBatch = 256;

// {k: int64 or string, v: int64}.
Schema KeySchema(bool string_keys) {
  Schema schema;
  schema.Add("k", string_keys ? FieldType::kString : FieldType::kInt64);
  schema.Add("v", FieldType::kInt64);
  return schema;
}

WindowSpec Spec(bool sliding) {
  WindowSpec spec;
  spec.assigner = sliding ? "sliding" : "tumbling";
  spec.size_ms = sliding ? 3000 : 1000;
  spec.slide_ms = sliding ? 1000 : 0;
  AggregateSpec count;
  count.function = "count";
  count.as = "n";
  AggregateSpec sum;
  sum.function = "sum";
  sum.field = "v";
  sum.as = "sum_v";
  spec.aggregates = {count, sum};
  return spec;
}

// Steps of the input: batches of records and watermarks. Keys 0..kKeys-1 (as int64 or as
// strings), 4 windows of 1000 ms, each key 2 records per window, out of order within a window;
// the watermark trails the records by 500 ms.
using Step = testing::WindowStep;

std::vector<Step> Input(bool string_keys, int64_t keys = kKeys) {
  std::vector<Step> steps;
  Step batch;
  Timestamp max_ts = kMinTimestamp;
  int64_t n = 0;
  for (int64_t window = 0; window < 4; ++window) {
    for (int64_t round = 0; round < 2; ++round) {
      for (int64_t i = 0; i < keys; ++i) {
        const int64_t key = (i * 7919 + round * 13) % keys;
        const Timestamp ts = window * 1000 + (key * 31 + round * 500) % 1000;
        const Value k = string_keys ? Value("user-" + std::to_string(key)) : Value(key);
        batch.records.emplace_back(Row{k, int64_t{(n++ % 97) + 1}}, ts);
        max_ts = std::max(max_ts, ts);
        if (batch.records.size() == kBatch) {
          steps.push_back(std::move(batch));
          batch = Step{};
          if (steps.size() % 16 == 0) {
            Step wm;
            wm.watermark = max_ts - 500;
            steps.push_back(std::move(wm));
          }
        }
      }
    }
  }
  steps.push_back(std::move(batch));
  Step end;
  end.watermark = kMaxTimestamp;
  steps.push_back(std::move(end));
  return steps;
}

class Runner : public testing::WindowOperatorRunner {
 public:
  // `subtask` of `parallelism`: the operator owns that subtask's key groups (of 128). The
  // budget: 1 MiB caches ~3300 keys of 6000.
  Runner(bool sliding, bool string_keys, const std::string& backend, int subtask = 0,
         int parallelism = 1, int64_t budget = int64_t{1} << 20)
      : WindowOperatorRunner(KeySchema(string_keys), Spec(sliding), "windows", backend, budget,
                             subtask, parallelism) {}

  // Results() with each window end's rows in RocksDB's order (key group of 128, then the key's
  // canonical bytes): the RocksDB backend's firing order (FireSlicedTimers), where the heap's
  // is key order.
  std::vector<std::string> ResultsInRocksDbOrder() const {
    std::vector<std::tuple<Timestamp, int, std::string, std::string>> rows;
    for (const StreamRecord& r : Records()) {
      const Value key = r.row.Get(0);
      std::string bytes;
      AppendCanonicalKeyBytes(key, bytes);
      rows.emplace_back(r.timestamp, KeyGroupForHash(KeyHash64(Key{key}), 128), std::move(bytes),
                        DescribeRecord(r));
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
             std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b));
    });
    std::vector<std::string> lines;
    for (auto& row : rows) {
      lines.push_back(std::move(std::get<3>(row)));
    }
    return lines;
  }
};

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

struct Case {
  bool sliding;
  bool string_keys;
};

class WindowRocksDbTest : public ::testing::TestWithParam<Case> {};

TEST_P(WindowRocksDbTest, SameResultsAsTheHeapBackendWhileSpilling) {
  const Case c = GetParam();
  std::vector<Step> steps = Input(c.string_keys);
  Runner heap(c.sliding, c.string_keys, "heap");
  heap.Run(steps, 0, steps.size());
  steps = Input(c.string_keys);
  Runner rocks(c.sliding, c.string_keys, "rocksdb");
  ASSERT_TRUE(rocks.op().uses_rocksdb());
  rocks.Run(steps, 0, steps.size());
  // Every key fires in every window it has records in: 4 tumbling windows, or the 6 sliding
  // windows of 3 s covering 4 s of records.
  const std::vector<std::string> expected = heap.ResultsInRocksDbOrder();
  ASSERT_EQ(expected.size(), static_cast<size_t>(kKeys * (c.sliding ? 6 : 4)));
  // Same rows in firing order: by window end on both backends, within one by key on the heap
  // and by RocksDB's key order (key group, key bytes) on RocksDB, which reads a window end's
  // keys back in one pass over its files.
  EXPECT_EQ(rocks.Results(), expected);
  EXPECT_NE(heap.Results(), expected);
  // The budget made the keys go through RocksDB, again and again.
  EXPECT_GT(rocks.op().rocksdb_spills(), 4);
  EXPECT_GT(rocks.op().rocksdb_keys_read(), kKeys);
  // But a key missing from the cache is looked up only when RocksDB may hold a live copy of it
  // (EvictedKeyFilter): a key's first record in a window, which would find its previous window's
  // copy dead or no copy at all, costs no read. Without the filter about half the keys (those not
  // cached at their first record) missed in RocksDB in each window (11264 lookups tumbling, 2672
  // sliding); with it only the filter's false positives (~1%) do.
  EXPECT_LT(rocks.op().rocksdb_lookups_missed(), kKeys / 20);
  EXPECT_FALSE(heap.op().uses_rocksdb());
}

// Subtask 2 of 3 owns key groups 86..127 of 128, a range that does not start at a multiple of
// its size: evictions walk that range from a cursor that starts at 0 (a new user's job at
// parallelism 3 crashed here while spilling). Only the keys the subtask owns are sent: about a
// third of 3 × kKeys, more than the budget (256 KiB: ~800 keys) caches, and more than the
// tumbling windows' per-window tables hold within it (128 KiB), so they spill too.
TEST_P(WindowRocksDbTest, SpillsWithinAKeyGroupRangeThatDoesNotStartAtZero) {
  const Case c = GetParam();
  const KeyGroupRange range = KeyGroupRangeForOperator(128, 3, 2);
  ASSERT_EQ(range, (KeyGroupRange{86, 127}));
  auto owned = [&]() {
    std::vector<Step> steps = Input(c.string_keys, 3 * kKeys);
    for (Step& step : steps) {
      std::erase_if(step.records, [&](const StreamRecord& r) {
        const Key key{r.row.Get(0)};
        return !range.Contains(KeyGroupForHash(KeyHash64(key), 128));
      });
    }
    return steps;
  };
  std::vector<Step> steps = owned();
  Runner heap(c.sliding, c.string_keys, "heap", 2, 3);
  heap.Run(steps, 0, steps.size());
  steps = owned();
  Runner rocks(c.sliding, c.string_keys, "rocksdb", 2, 3, int64_t{1} << 18);
  rocks.Run(steps, 0, steps.size());
  const std::vector<std::string> expected = heap.ResultsInRocksDbOrder();
  // About a third of the keys (42 of 128 groups), each in every window.
  ASSERT_GT(expected.size(), static_cast<size_t>(3 * kKeys / 4 * (c.sliding ? 6 : 4)));
  EXPECT_EQ(rocks.Results(), expected);
  EXPECT_GT(rocks.op().rocksdb_spills(), 0);
}

TEST_P(WindowRocksDbTest, SnapshotMidWindowRestoresAcrossBackends) {
  const Case c = GetParam();
  std::vector<Step> steps = Input(c.string_keys);
  Runner uninterrupted(c.sliding, c.string_keys, "heap");
  uninterrupted.Run(steps, 0, steps.size());
  const std::vector<std::string> expected = Sorted(uninterrupted.Results());
  // A cut in the middle of the second window, keys spilled on the rocksdb side.
  const size_t cut = steps.size() * 3 / 8;
  for (const auto& [before, after] : std::vector<std::pair<std::string, std::string>>{
           {"heap", "rocksdb"}, {"rocksdb", "heap"}, {"rocksdb", "rocksdb"}}) {
    SCOPED_TRACE(before + " -> " + after);
    steps = Input(c.string_keys);
    std::vector<std::string> got;
    std::string bytes;
    {
      Runner first(c.sliding, c.string_keys, before);
      first.Run(steps, 0, cut);
      if (before == "rocksdb") {
        EXPECT_GT(first.op().rocksdb_spills(), 0);
      }
      bytes = first.Snapshot();
      got = first.Results();
    }
    Runner second(c.sliding, c.string_keys, after);
    second.Restore(bytes);
    second.Run(steps, cut, steps.size());
    for (std::string& line : second.Results()) {
      got.push_back(std::move(line));
    }
    EXPECT_EQ(Sorted(got), expected);
  }
}

// Incremental checkpoints (checkpointing.incremental): two native checkpoints while keys spill,
// the process dies after the second, and a restore from it gives the uninterrupted run's windows.
TEST_P(WindowRocksDbTest, RestoreFromAnIncrementalCheckpointGivesTheUninterruptedRun) {
  const Case c = GetParam();
  std::vector<Step> steps = Input(c.string_keys);
  Runner uninterrupted(c.sliding, c.string_keys, "heap");
  uninterrupted.Run(steps, 0, steps.size());
  const std::vector<std::string> expected = Sorted(uninterrupted.Results());
  ASSERT_EQ(expected.size(), static_cast<size_t>(kKeys * (c.sliding ? 6 : 4)));
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() /
      ("tm_rocks_incr_restore_" + std::to_string(::getpid()) + "_" +
       ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(root);
  CheckpointStorage storage(root, "job", 1);
  steps = Input(c.string_keys);
  const size_t cut1 = steps.size() / 4;
  const size_t cut2 = steps.size() * 5 / 8;
  std::vector<std::string> got;
  {
    Runner first(c.sliding, c.string_keys, "rocksdb");
    first.Run(steps, 0, cut1);
    first.Checkpoint(storage, 1);
    first.Run(steps, cut1, cut2);
    first.Checkpoint(storage, 2);
    got = first.Results();
    EXPECT_GT(first.op().rocksdb_spills(), 2);
    first.Run(steps, cut2, cut2 + 10);  // lost: the process dies here
  }
  std::optional<CompletedCheckpoint> cp = storage.LoadLatest();
  ASSERT_TRUE(cp.has_value());
  ASSERT_EQ(cp->id, 2);
  EXPECT_FALSE(cp->shared.at({"windows", 0}).empty());  // native, not canonical
  Runner second(c.sliding, c.string_keys, "rocksdb");
  second.Restore(*cp);
  second.Run(steps, cut2, steps.size());
  for (std::string& line : second.Results()) {
    got.push_back(std::move(line));
  }
  EXPECT_EQ(Sorted(got), expected);
  std::filesystem::remove_all(root);
}

INSTANTIATE_TEST_SUITE_P(Windows, WindowRocksDbTest,
                         ::testing::Values(Case{false, false}, Case{true, false}, Case{false, true},
                                           Case{true, true}),
                         [](const ::testing::TestParamInfo<Case>& p) {
                           return std::string(p.param.sliding ? "Sliding" : "Tumbling") +
                                  (p.param.string_keys ? "StringKeys" : "Int64Keys");
                         });

TEST(RocksDbKeyedStoreTest, KeysArePrefixedByKeyGroupAndClearEmptiesAColumnFamily) {
  RocksDbKeyedStore::Options options;
  options.dir = RocksDbKeyedStore::InstanceDir(RocksDbSpec{}, "store-test", 0);
  std::string dir = options.dir;
  {
    RocksDbKeyedStore store(options);
    const int cf = store.ColumnFamily("a");
    EXPECT_EQ(store.ColumnFamily("a"), cf);
    store.StagePut(cf, 300, "k1", "v300");
    store.StagePut(cf, 2, "k1", "v2");
    store.StagePut(cf, 2, "k0", "v2b");
    std::string value;
    EXPECT_FALSE(store.Get(cf, 2, "k1", &value));  // staged, not written
    store.Commit();
    ASSERT_TRUE(store.Get(cf, 300, "k1", &value));
    EXPECT_EQ(value, "v300");
    std::vector<std::string> seen;
    store.ForEach(cf, [&](int group, std::string_view k, std::string_view v) {
      seen.push_back(std::to_string(group) + ":" + std::string(k) + "=" + std::string(v));
    });
    EXPECT_EQ(seen, (std::vector<std::string>{"2:k0=v2b", "2:k1=v2", "300:k1=v300"}));
    store.Delete(cf, 2, "k0");
    EXPECT_FALSE(store.Get(cf, 2, "k0", &value));
    store.Clear(cf);
    EXPECT_FALSE(store.Get(cf, 300, "k1", &value));
    EXPECT_EQ(store.num_puts(cf), 0);
    EXPECT_TRUE(std::filesystem::exists(dir));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));  // removed on close
}

// ReadSorted (a window end's pass): keys in byte order, found ones reported by index; a key a
// few entries on is stepped to, one more than 8 entries on is sought, one beyond the last
// entry ends the pass, and keys absent in between are skipped.
TEST(RocksDbKeyedStoreTest, ReadSortedStepsToNearKeysAndSeeksFarOnes) {
  RocksDbKeyedStore::Options options;
  options.dir = RocksDbKeyedStore::InstanceDir(RocksDbSpec{}, "store-test", 2);
  RocksDbKeyedStore store(options);
  const int cf = store.ColumnFamily("a");
  auto key = [](int i) {
    std::string k = "k";
    k += static_cast<char>('0' + i / 10);
    k += static_cast<char>('0' + i % 10);
    return k;
  };
  for (int i = 0; i < 40; ++i) {  // k00..k39 in group 5, and one key in group 9
    store.StagePut(cf, 5, key(i), "v" + std::to_string(i));
  }
  store.StagePut(cf, 9, "z", "vz");
  store.Commit();
  auto prefixed = [](int group, std::string_view k) {
    std::string out;
    RocksDbKeyedStore::AppendKeyGroup(group, &out);
    out += k;
    return out;
  };
  // k01 (first), k03 (two steps), k03x (absent, between entries), k30 (27 entries on: sought),
  // group 7's "a" (absent: sought past), group 9's "z", then "zz" after the last entry.
  const std::vector<std::string> keys{
      prefixed(5, key(1)), prefixed(5, key(3)), prefixed(5, key(3) + "x"), prefixed(5, key(30)),
      prefixed(7, "a"),    prefixed(9, "z"),    prefixed(9, "zz")};
  ASSERT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  std::vector<std::string> found;
  store.ReadSorted(cf, keys, [&](size_t i, std::string_view v) {
    found.push_back(std::to_string(i) + "=" + std::string(v));
  });
  EXPECT_EQ(found, (std::vector<std::string>{"0=v1", "1=v3", "3=v30", "5=vz"}));
  // Staged writes are not seen, as with MultiGet.
  store.StageDelete(cf, 5, key(1));
  found.clear();
  store.ReadSorted(cf, {prefixed(5, key(1))}, [&](size_t i, std::string_view v) {
    found.push_back(std::to_string(i) + "=" + std::string(v));
  });
  EXPECT_EQ(found, (std::vector<std::string>{"0=v1"}));
}

TEST(RocksDbKeyedStoreTest, MultiGetFindsWrittenKeysAndStagedDeletesApplyAtCommit) {
  RocksDbKeyedStore::Options options;
  options.dir = RocksDbKeyedStore::InstanceDir(RocksDbSpec{}, "store-test", 1);
  RocksDbKeyedStore store(options);
  const int cf = store.ColumnFamily("a");
  store.StagePut(cf, 7, "a", "va");
  store.StagePut(cf, 7, "b", "vb");
  store.StagePut(cf, 258, "a", "va258");
  store.Commit();
  store.StageDelete(cf, 7, "b");
  auto prefixed = [](int group, std::string_view key) {
    std::string out;
    RocksDbKeyedStore::AppendKeyGroup(group, &out);
    out += key;
    return out;
  };
  EXPECT_EQ(prefixed(258, "x"), std::string("\x01\x02x", 3));
  const std::vector<std::string> keys{prefixed(258, "a"), prefixed(7, "b"), prefixed(7, "c"),
                                      prefixed(7, "a")};
  auto read = [&] {
    std::vector<std::string> found;
    store.MultiGet(cf, keys, [&](size_t i, std::string_view v) {
      found.push_back(std::to_string(i) + "=" + std::string(v));
    });
    return found;
  };
  // The delete is staged: reads still see the key until the batch is written.
  EXPECT_EQ(read(), (std::vector<std::string>{"0=va258", "1=vb", "3=va"}));
  store.Commit();
  EXPECT_EQ(read(), (std::vector<std::string>{"0=va258", "3=va"}));
}

}  // namespace
}  // namespace tidemark
