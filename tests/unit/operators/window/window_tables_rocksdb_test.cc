// The per-window tables as the RocksDB backend's in-memory cache (window_tables.h,
// `WindowOperator::tables_budget_`): within the budget records go to the tables as on the heap
// and the output is the heap's, row for row and in order; past it the tables move into the
// sliced store, which spills, with the heap's rows; a native checkpoint moves them too and
// restores to the uninterrupted run; canonical snapshots restore heap <-> rocksdb into the
// tables, also at another parallelism.

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
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

using Step = testing::WindowStep;

constexpr int64_t kFits = int64_t{16} << 20;     // budget whose half holds the tables
constexpr int64_t kOverflow = int64_t{1} << 20;  // 512 KiB for the tables: 20000 keys overflow

Schema KeySchema(bool string_keys) {
  Schema schema;
  schema.Add("k", string_keys ? FieldType::kString : FieldType::kInt64);
  schema.Add("v", FieldType::kInt64);
  return schema;
}

// Tumbling windows of 1000 ms: count(*) and sum(v) (two accumulator words).
WindowSpec CountSum() {
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = 1000;
  AggregateSpec count;
  count.function = "count";
  count.as = std::string(1, 'n');
  AggregateSpec sum;
  sum.function = "sum";
  sum.field = "v";
  sum.as = std::string("sum_v");
  spec.aggregates = {count, sum};
  return spec;
}

// `records` records of `keys` keys over 6 windows, up to 1500 ms out of order, in batches of 37
// records, each followed by a watermark 700 ms behind the largest timestamp (so up to three windows
// are open and some records are late); the last watermark at the end. With `owned`, only the keys
// of those key groups (of 128).
std::vector<Step> Stream(bool string_keys, int64_t keys, int64_t records,
                         KeyGroupRange owned = KeyGroupRange{0, 127}) {
  std::mt19937_64 rng(static_cast<uint64_t>(keys) * 31 + 7);
  std::vector<Step> steps(1);
  // The batch so far, then `watermark` (each a step) and a new batch.
  auto close = [&steps](Timestamp watermark) {
    steps.emplace_back().watermark = watermark;
    steps.emplace_back();
  };
  Timestamp max_ts = 0;
  for (int64_t i = 0; i < records; ++i) {
    const Timestamp base = i * 6000 / records;
    const Timestamp ts = std::max<Timestamp>(0, base - static_cast<Timestamp>(rng() % 1500));
    const int64_t key = static_cast<int64_t>(rng() % static_cast<uint64_t>(keys)) - keys / 3;
    const Value k = string_keys ? Value("u" + std::to_string(key)) : Value(key);
    const auto v = static_cast<int64_t>(rng() % 100);
    max_ts = std::max(max_ts, ts);
    if (owned.Contains(KeyGroupForHash(KeyHash64(Key{k}), 128))) {
      steps.back().records.emplace_back(Row{k, Value(v)}, ts);
    }
    if (i % 37 == 36) {
      close(max_ts - 700);
    }
  }
  close(kMaxTimestamp);
  return steps;
}

class Runner : public testing::WindowOperatorRunner {
 public:
  Runner(bool string_keys, const std::string& backend, int64_t budget, int subtask = 0,
         int parallelism = 1)
      : WindowOperatorRunner(KeySchema(string_keys), CountSum(), "windows", backend, budget,
                             subtask, parallelism) {}
};

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// The heap backend's output for `steps` (its own copy).
std::vector<std::string> HeapRun(bool string_keys, std::vector<Step> steps) {
  Runner heap(string_keys, "heap", kFits);
  EXPECT_TRUE(heap.op().uses_window_tables());
  heap.Run(steps, 0, steps.size());
  return heap.Results();
}

class WindowTablesRocksDbTest : public ::testing::TestWithParam<bool> {};

TEST_P(WindowTablesRocksDbTest, WithinTheBudgetTheTablesGiveTheHeapOutputInOrder) {
  const bool string_keys = GetParam();
  std::vector<Step> steps = Stream(string_keys, 5000, 30000);
  const std::vector<std::string> expected = HeapRun(string_keys, steps);
  ASSERT_GT(expected.size(), 5000u);
  Runner rocks(string_keys, "rocksdb", kFits);
  ASSERT_TRUE(rocks.op().uses_rocksdb());
  ASSERT_TRUE(rocks.op().uses_window_tables());
  for (size_t i = 0; i < steps.size(); ++i) {
    rocks.Run(steps, i, i + 1);
    ASSERT_LE(rocks.op().StateMemoryBytes(), kFits / 2) << "step " << i;
  }
  EXPECT_TRUE(rocks.op().uses_window_tables());  // never left them
  EXPECT_EQ(rocks.op().rocksdb_spills(), 0);
  EXPECT_EQ(rocks.Results(), expected);  // row for row, in the heap's (key) order
  EXPECT_GT(rocks.op().num_late_records_dropped(), 0);
}

TEST_P(WindowTablesRocksDbTest, PastTheBudgetTheTablesMoveIntoTheSpillingStore) {
  const bool string_keys = GetParam();
  std::vector<Step> steps = Stream(string_keys, 20000, 60000);
  const std::vector<std::string> expected = HeapRun(string_keys, steps);
  Runner rocks(string_keys, "rocksdb", kOverflow);
  ASSERT_TRUE(rocks.op().uses_window_tables());
  size_t left_at = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    rocks.Run(steps, i, i + 1);
    if (rocks.op().uses_window_tables()) {
      // The tables' bytes stay within the cache's half of the budget.
      ASSERT_LE(rocks.op().StateMemoryBytes(), kOverflow / 2) << "step " << i;
    } else if (left_at == 0) {
      left_at = i;
    }
  }
  ASSERT_GT(left_at, 10u);  // the tables took records first
  EXPECT_FALSE(rocks.op().uses_window_tables());
  EXPECT_GT(rocks.op().rocksdb_spills(), 5);
  EXPECT_GT(rocks.op().rocksdb_keys_read(), 20000);
  const std::vector<std::string> got = rocks.Results();
  EXPECT_EQ(Sorted(got), Sorted(expected));
  // Window ends in order (within one, the keys in RocksDB's order once it holds keys).
  Timestamp last = kMinTimestamp;
  for (const StreamRecord& r : rocks.Records()) {
    ASSERT_GE(r.timestamp, last);
    last = r.timestamp;
  }
}

TEST_P(WindowTablesRocksDbTest, NativeCheckpointsAfterTheTablesRestoreToTheUninterruptedRun) {
  const bool string_keys = GetParam();
  std::vector<Step> steps = Stream(string_keys, 5000, 30000);
  const std::vector<std::string> expected = Sorted(HeapRun(string_keys, steps));
  const std::filesystem::path root =
      std::filesystem::temp_directory_path() /
      ("tm_tables_rocks_" + std::to_string(::getpid()) + "_" + (string_keys ? "s" : "i"));
  std::filesystem::remove_all(root);
  CheckpointStorage storage(root, "job", 1);
  const size_t cut1 = steps.size() / 3;
  const size_t cut2 = steps.size() * 2 / 3;
  std::vector<std::string> got;
  {
    Runner first(string_keys, "rocksdb", kFits);
    first.Run(steps, 0, cut1);
    ASSERT_TRUE(first.op().uses_window_tables());
    const size_t panes = first.op().NumSlices();
    ASSERT_GT(panes, 1000u);
    first.Checkpoint(storage, 1);
    // The checkpoint needed the state in RocksDB: the tables moved into the store, spilled.
    EXPECT_FALSE(first.op().uses_window_tables());
    EXPECT_EQ(first.op().NumSlices(), 0u);
    EXPECT_GT(first.op().rocksdb_spills(), 0);
    first.Run(steps, cut1, cut2);
    first.Checkpoint(storage, 2);
    got = first.Results();
    first.Run(steps, cut2, cut2 + 10);  // lost: the process dies here
  }
  std::optional<CompletedCheckpoint> cp = storage.LoadLatest();
  ASSERT_TRUE(cp.has_value());
  ASSERT_EQ(cp->id, 2);
  EXPECT_FALSE(cp->shared.at({"windows", 0}).empty());  // native, not canonical
  Runner second(string_keys, "rocksdb", kFits);
  second.Restore(*cp);
  EXPECT_FALSE(second.op().uses_window_tables());  // its keys are in RocksDB
  second.Run(steps, cut2, steps.size());
  for (std::string& line : second.Results()) {
    got.push_back(std::move(line));
  }
  EXPECT_EQ(Sorted(got), expected);
  std::filesystem::remove_all(root);
}

TEST_P(WindowTablesRocksDbTest, SnapshotsRestoreHeapAndRocksDbIntoTheTables) {
  const bool string_keys = GetParam();
  std::vector<Step> steps = Stream(string_keys, 5000, 30000);
  const std::vector<std::string> expected = HeapRun(string_keys, steps);
  const size_t cut = steps.size() * 2 / 5;
  std::vector<std::string> before;
  std::string heap_bytes;
  std::string rocks_bytes;
  {
    Runner heap(string_keys, "heap", kFits);
    heap.Run(steps, 0, cut);
    heap_bytes = heap.Snapshot();
    before = heap.Results();
  }
  {
    Runner rocks(string_keys, "rocksdb", kFits);
    rocks.Run(steps, 0, cut);
    ASSERT_TRUE(rocks.op().uses_window_tables());
    rocks_bytes = rocks.Snapshot();
    EXPECT_TRUE(rocks.op().uses_window_tables());  // a canonical snapshot leaves them
    EXPECT_EQ(rocks.Results(), before);
  }
  // The same state, the same canonical bytes, whichever backend held it.
  EXPECT_EQ(rocks_bytes, heap_bytes);
  for (const auto& [bytes, backend, budget, tables] :
       std::vector<std::tuple<std::string, std::string, int64_t, bool>>{
           {heap_bytes, "rocksdb", kFits, true},
           {rocks_bytes, "heap", kFits, true},
           {rocks_bytes, "rocksdb", kFits, true},
           // More than the tables' budget: adopted, then moved into the store and spilled.
           {heap_bytes, "rocksdb", int64_t{256} << 10, false}}) {
    SCOPED_TRACE(backend + " " + std::to_string(budget));
    std::vector<Step> rest = Stream(string_keys, 5000, 30000);
    Runner after(string_keys, backend, budget);
    after.Restore(bytes);
    EXPECT_EQ(after.op().uses_window_tables(), tables);
    after.Run(rest, cut, rest.size());
    std::vector<std::string> got = before;
    for (std::string& line : after.Results()) {
      got.push_back(std::move(line));
    }
    if (tables) {
      EXPECT_EQ(got, expected);  // in order
    } else {
      EXPECT_GT(after.op().rocksdb_spills(), 0);
      EXPECT_EQ(Sorted(got), Sorted(expected));
    }
  }
}

// A parallelism-1 savepoint of the tables on RocksDB restores at parallelism 2, each subtask
// into its own tables over RocksDB, and the two give the rest of the uninterrupted run.
TEST_P(WindowTablesRocksDbTest, ASavepointRestoresAtAnotherParallelismIntoTheTables) {
  const bool string_keys = GetParam();
  std::vector<Step> steps = Stream(string_keys, 5000, 30000);
  const std::vector<std::string> expected = HeapRun(string_keys, steps);
  const size_t cut = steps.size() / 2;
  std::string bytes;
  std::vector<std::string> got;
  {
    Runner rocks(string_keys, "rocksdb", kFits);
    rocks.Run(steps, 0, cut);
    bytes = rocks.Snapshot();
    got = rocks.Results();
  }
  for (int subtask = 0; subtask < 2; ++subtask) {
    // The same stream with only the subtask's keys (the cut falls at the same place: the steps
    // are kept, emptied of other keys).
    std::vector<Step> own =
        Stream(string_keys, 5000, 30000, KeyGroupRangeForOperator(128, 2, subtask));
    ASSERT_EQ(own.size(), steps.size());
    Runner part(string_keys, "rocksdb", kFits, subtask, 2);
    part.Restore(bytes);
    EXPECT_TRUE(part.op().uses_window_tables());
    part.Run(own, cut, own.size());
    EXPECT_TRUE(part.op().uses_window_tables());
    for (std::string& line : part.Results()) {
      got.push_back(std::move(line));
    }
  }
  EXPECT_EQ(Sorted(got), Sorted(expected));
}

INSTANTIATE_TEST_SUITE_P(Keys, WindowTablesRocksDbTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return std::string(p.param ? "StringKeys" : "Int64Keys");
                         });

}  // namespace
}  // namespace tidemark
