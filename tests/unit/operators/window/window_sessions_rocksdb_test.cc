// Session windows on the RocksDB state backend (issue 45): with a key cache of a dozen keys, so
// that nearly every key is written to RocksDB and read back between two of its records, event-
// time session windows give exactly the heap backend's results: sessions merged by an out-of-order
// record that bridges two of them, late records dropped and counted, allowed lateness with late
// firings, and a snapshot taken mid-session restored on either backend.

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/checkpoint/state_assignment.h"
#include "runtime/state/key_groups.h"
#include "tests/testing/snapshot_round_trip.h"
#include "tests/testing/window_operator_runner.h"

namespace tidemark {
namespace {

constexpr int64_t kKeys = 1500;
constexpr int64_t kRounds = 3;
constexpr int64_t kRoundMs = 3000;
constexpr size_t kBatch = 256;
// 4 KiB of budget: half of it for the cache of hot keys, 160 bytes a key: 12 keys cached.
constexpr int64_t kTinyBudget = 4096;

// {k: int64 or string, v: int64}.
Schema KeySchema(bool string_keys) {
  Schema schema;
  schema.Add("k", string_keys ? FieldType::kString : FieldType::kInt64);
  schema.Add("v", FieldType::kInt64);
  return schema;
}

WindowSpec Spec(int64_t lateness_ms) {
  WindowSpec spec;
  spec.assigner = "session";
  spec.gap_ms = 400;
  spec.allowed_lateness_ms = lateness_ms;
  AggregateSpec count;
  count.function = "count";
  count.as = "n";
  AggregateSpec sum;
  sum.function = "sum";
  sum.field = "v";
  sum.as = "sum_v";
  AggregateSpec first;
  first.function = "min";
  first.field = "v";
  first.as = "min_v";
  spec.aggregates = {count, sum, first};
  return spec;
}

using Step = testing::WindowStep;

// Per round (base = round * 3000 ms) and key k (d = k % 50 ms), the keys in a scrambled order in
// each phase: A at base+100+d and B at base+700+d (two sessions of gap 400: [100, 500) and
// [700, 1100)); for k % 3 == 0 an out-of-order C at base+350+d, whose window [350, 750) bridges
// the two into one session; for even keys D at base+1500+d (a session of its own). Then the
// watermark goes to base+1300 (A-B sessions fire, D's do not); for k % 4 == 0 a record at
// base+1000+d, a session before D's (the key's timer entry at D's end goes stale, and the new
// session's firing re-adds one there, which pops twice after D fires and ends the key); and for
// k % 5 == 0 a late record at base+200+d: its window ends at 600+d, before the watermark. The
// watermark then goes to
// base+2500 (D sessions fire), and to MAX at the end.
// `*mid_session`: the step after the second round's B records (every key has two sessions in
// flight).
std::vector<Step> Input(bool string_keys, size_t* mid_session = nullptr) {
  std::vector<Step> steps;
  Step batch;
  int64_t n = 0;
  auto flush = [&] {
    if (!batch.records.empty()) {
      steps.push_back(std::move(batch));
      batch = Step{};
    }
  };
  auto watermark = [&](Timestamp t) {
    flush();
    Step wm;
    wm.watermark = t;
    steps.push_back(std::move(wm));
  };
  auto phase = [&](Timestamp offset, int64_t modulus, int64_t salt) {
    for (int64_t i = 0; i < kKeys; ++i) {
      const int64_t key = (i * 7919 + salt) % kKeys;
      if (key % modulus != 0) {
        continue;
      }
      const Value k = string_keys ? Value("user-" + std::to_string(key)) : Value(key);
      batch.records.emplace_back(Row{k, int64_t{(n++ % 97) + 1}}, offset + key % 50);
      if (batch.records.size() == kBatch) {
        flush();
      }
    }
  };
  for (int64_t round = 0; round < kRounds; ++round) {
    const Timestamp base = round * kRoundMs;
    phase(base + 100, 1, 0);
    phase(base + 700, 1, 13);
    if (round == 1) {
      flush();
      if (mid_session != nullptr) {
        *mid_session = steps.size();
      }
    }
    phase(base + 350, 3, 29);
    phase(base + 1500, 2, 31);
    watermark(base + 1300);
    phase(base + 1000, 4, 41);
    phase(base + 200, 5, 37);
    watermark(base + 2500);
  }
  watermark(kMaxTimestamp);
  return steps;
}

// Sessions per round: one for a key k % 3 == 0 (bridged), else two; one more for an even key,
// and one more for k % 4 == 0.
int64_t SessionsPerRound() {
  int64_t n = 0;
  for (int64_t k = 0; k < kKeys; ++k) {
    n += (k % 3 == 0 ? 1 : 2) + (k % 2 == 0 ? 1 : 0) + (k % 4 == 0 ? 1 : 0);
  }
  return n;
}

class Runner : public testing::WindowOperatorRunner {
 public:
  // `subtask` of `parallelism`: the operator owns that subtask's key groups (of 128).
  Runner(bool string_keys, const std::string& backend, int64_t lateness_ms = 0, int subtask = 0,
         int parallelism = 1)
      : WindowOperatorRunner(KeySchema(string_keys), Spec(lateness_ms), "sessions", backend,
                             kTinyBudget, subtask, parallelism) {}
};

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

class SessionRocksDbTest : public ::testing::TestWithParam<bool> {};

TEST_P(SessionRocksDbTest, MergedSessionsAndLateDropsEqualTheHeapBackendWhileSpilling) {
  const bool string_keys = GetParam();
  std::vector<Step> steps = Input(string_keys);
  Runner heap(string_keys, "heap");
  heap.Run(steps, 0, steps.size());
  steps = Input(string_keys);
  Runner rocks(string_keys, "rocksdb");
  ASSERT_TRUE(rocks.op().uses_rocksdb());
  ASSERT_TRUE(rocks.op().uses_flat_sessions());
  rocks.Run(steps, 0, steps.size());
  EXPECT_TRUE(rocks.op().uses_flat_sessions());
  const std::vector<std::string> expected = heap.Results();
  ASSERT_EQ(expected.size(), static_cast<size_t>(kRounds * SessionsPerRound()));
  // The bridged session of key 0 in the first round: its records at 100, 700 and 350.
  const std::string bridged =
      string_keys ? R"(record(["user-0",100,1100,3,)" : "record([0,100,1100,3,";
  EXPECT_EQ(std::count_if(expected.begin(), expected.end(),
                          [&](const std::string& line) { return line.rfind(bridged, 0) == 0; }),
            1)
      << expected.front();
  // Same rows in the same order: sessions fire in (time, key) order on both backends.
  EXPECT_EQ(rocks.Results(), expected);
  // Late records: kKeys / 5 per round, dropped and counted on both.
  EXPECT_EQ(heap.op().num_late_records_dropped(), kRounds * kKeys / 5);
  EXPECT_EQ(rocks.op().num_late_records_dropped(), kRounds * kKeys / 5);
  // Nearly every key went through RocksDB between two of its records.
  EXPECT_GT(rocks.op().rocksdb_spills(), 50);
  EXPECT_GT(rocks.op().rocksdb_keys_read(), 3 * kRounds * kKeys);
  EXPECT_FALSE(heap.op().uses_rocksdb());
}

// Allowed lateness: the late records land in sessions not cleaned up yet and fire them again.
// Sessions with allowed lateness run on the per-window path, whose state stays on the heap on
// either backend; the results are the heap backend's.
TEST_P(SessionRocksDbTest, AllowedLatenessGivesTheHeapBackendsLateFirings) {
  const bool string_keys = GetParam();
  std::vector<Step> steps = Input(string_keys);
  Runner heap(string_keys, "heap", 1000);
  heap.Run(steps, 0, steps.size());
  steps = Input(string_keys);
  Runner rocks(string_keys, "rocksdb", 1000);
  rocks.Run(steps, 0, steps.size());
  EXPECT_FALSE(rocks.op().uses_flat_sessions());
  const std::vector<std::string> expected = heap.Results();
  // Sessions are cleaned up at their end + 1000 ms, after the watermark of base+1300. The record
  // of a key k % 4 == 0 at 1000 + d merges with its fired A-B session into one ending at 1400 + d,
  // a new window that fires at its end (as many rows as without lateness). The late record of a
  // key k % 5 == 0 ([200, 600) + d) merges with its fired session that starts at 100 + d, which
  // fires again: one more row each, except for k % 60 == 0, whose bridged session [100, 1400) + d
  // has not fired yet. For k % 3 == 0 it lands inside the bridged session without extending it:
  // `firing` 1 of the same window (k % 15 == 0 but not k % 4 == 0); otherwise [100, 500) grows to
  // [100, 600), a new window (`firing` 0).
  ASSERT_EQ(expected.size(),
            static_cast<size_t>(kRounds * (SessionsPerRound() + kKeys / 5 - kKeys / 60)));
  EXPECT_EQ(
      std::count_if(expected.begin(), expected.end(),
                    [](const std::string& line) { return line.find(",1]@") != std::string::npos; }),
      kRounds * (kKeys / 15 - kKeys / 60))
      << expected.front();
  EXPECT_EQ(rocks.Results(), expected);
  EXPECT_EQ(rocks.op().num_late_records_dropped(), 0);
}

TEST_P(SessionRocksDbTest, SnapshotMidSessionRestoresAcrossBackends) {
  const bool string_keys = GetParam();
  size_t cut = 0;
  std::vector<Step> steps = Input(string_keys, &cut);
  Runner uninterrupted(string_keys, "heap");
  uninterrupted.Run(steps, 0, steps.size());
  const std::vector<std::string> expected = Sorted(uninterrupted.Results());
  ASSERT_EQ(expected.size(), static_cast<size_t>(kRounds * SessionsPerRound()));
  ASSERT_GT(cut, steps.size() / 3);
  ASSERT_LT(cut, steps.size() * 2 / 3);
  for (const auto& [before, after] : std::vector<std::pair<std::string, std::string>>{
           {"rocksdb", "rocksdb"}, {"rocksdb", "heap"}, {"heap", "rocksdb"}}) {
    SCOPED_TRACE(before + " -> " + after);
    steps = Input(string_keys);
    std::vector<std::string> got;
    std::string bytes;
    int64_t dropped = 0;
    {
      Runner first(string_keys, before);
      first.Run(steps, 0, cut);
      if (before == "rocksdb") {
        EXPECT_GT(first.op().rocksdb_spills(), 10);
      }
      bytes = testing::SnapshotOf(first.base());
      got = first.Results();
      dropped = first.op().num_late_records_dropped();
    }
    EXPECT_EQ(dropped, kKeys / 5);  // the first round's
    Runner second(string_keys, after);
    testing::RestoreFrom(second.base(), bytes);
    EXPECT_TRUE(second.op().uses_flat_sessions());
    second.Run(steps, cut, steps.size());
    if (after == "rocksdb") {
      EXPECT_GT(second.op().rocksdb_spills(), 10);
    }
    for (std::string& line : second.Results()) {
      got.push_back(std::move(line));
    }
    EXPECT_EQ(Sorted(got), expected);
    // The counter is in the snapshot: the total is the uninterrupted run's.
    EXPECT_EQ(second.op().num_late_records_dropped(), kRounds * kKeys / 5);
  }
}

// Rescaling: a canonical snapshot of two subtasks on RocksDB, taken mid-session while keys were
// spilled, cut by key group (`AssembleSubtaskState`, as a restore at another parallelism does) and
// restored at parallelism 1 and 3 on either backend: the rows before and after are the
// uninterrupted run's.
TEST_P(SessionRocksDbTest, SnapshotOfTwoSubtasksRestoresAtOneAndThree) {
  const bool string_keys = GetParam();
  size_t cut = 0;
  std::vector<Step> all = Input(string_keys, &cut);
  Runner uninterrupted(string_keys, "heap");
  uninterrupted.Run(all, 0, all.size());
  const std::vector<std::string> expected = Sorted(uninterrupted.Results());
  ASSERT_EQ(expected.size(), static_cast<size_t>(kRounds * SessionsPerRound()));
  // The input of the subtask owning `range`: its keys' records, every watermark.
  auto owned = [&](const KeyGroupRange& range) {
    std::vector<Step> steps = Input(string_keys);
    for (Step& step : steps) {
      std::erase_if(step.records, [&](const StreamRecord& r) {
        return !range.Contains(KeyGroupForHash(KeyHash64(Key{r.row.Get(0)}), 128));
      });
    }
    return steps;
  };
  std::vector<std::string> before;
  std::vector<std::string> bytes(2);
  std::vector<std::vector<StateBlock>> blocks(2);
  for (int i = 0; i < 2; ++i) {
    std::vector<Step> steps = owned(KeyGroupRangeForOperator(128, 2, i));
    Runner old(string_keys, "rocksdb", 0, i, 2);
    old.Run(steps, 0, cut);
    EXPECT_GT(old.op().rocksdb_spills(), 10);
    StateWriter w;
    StateSnapshotContext ctx{1, 0, w};
    old.base().SnapshotState(ctx);
    blocks[static_cast<size_t>(i)] = w.ReleaseBlocks();
    bytes[static_cast<size_t>(i)] = w.Release();
    for (std::string& line : old.Results()) {
      before.push_back(std::move(line));
    }
  }
  const std::vector<SubtaskSnapshot> old{SubtaskSnapshot{0, &bytes[0], &blocks[0]},
                                         SubtaskSnapshot{1, &bytes[1], &blocks[1]}};
  for (const std::string& after : std::vector<std::string>{"rocksdb", "heap"}) {
    for (int p : {1, 3}) {
      SCOPED_TRACE(after + " at parallelism " + std::to_string(p));
      std::vector<std::string> got = before;
      for (int j = 0; j < p; ++j) {
        const std::string state = AssembleSubtaskState(old, 2, 128, p, j);
        std::vector<Step> steps = owned(KeyGroupRangeForOperator(128, p, j));
        Runner resumed(string_keys, after, 0, j, p);
        testing::RestoreFrom(resumed.base(), state);
        EXPECT_TRUE(resumed.op().uses_flat_sessions());
        resumed.Run(steps, cut, steps.size());
        if (after == "rocksdb") {
          EXPECT_GT(resumed.op().rocksdb_spills(), 10);
        }
        for (std::string& line : resumed.Results()) {
          got.push_back(std::move(line));
        }
      }
      EXPECT_EQ(Sorted(got), expected);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Sessions, SessionRocksDbTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& p) {
                           return std::string(p.param ? "StringKeys" : "Int64Keys");
                         });

}  // namespace
}  // namespace tidemark
