// The keyed process operator and the interval join on the RocksDB state backend (issue 45): with
// a memory budget small enough that keys are spilled to RocksDB and read back many times, a
// function with keyed state and event-time timers (and a join of two inputs) gives exactly the
// heap backend's output; a snapshot taken mid-stream is the same bytes on both backends and
// restores on either to the uninterrupted run's output.

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "operators/interval_join_operator.h"
#include "operators/keyed_process_operator.h"
#include "runtime/state/key_groups.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"
#include "tests/testing/snapshot_round_trip.h"

namespace tidemark {
namespace {

using testing::CollectingOutput;
using testing::DescribeRecord;

constexpr int64_t kKeys = 6000;

/// Per key and second: the sum of `v` ("sum") and the lowest timestamp ("lo"); a timer at the
/// second's end emits `key, sum, lo` and clears "sum" (so keys lose and regain state), while
/// "lo" stays for the key's lifetime.
class SumPerSecond : public KeyedProcessFunction {
 public:
  void ProcessElement(const StreamRecord& record, ProcessContext& ctx) override {
    const Value* sum = ctx.State("sum");
    ctx.SetState("sum", (sum ? std::get<int64_t>(*sum) : 0) + record.row.GetInt64(1));
    const Value* lo = ctx.State("lo");
    if (lo == nullptr || std::get<int64_t>(*lo) > record.timestamp) {
      ctx.SetState("lo", record.timestamp);
    }
    ctx.RegisterEventTimeTimer((record.timestamp / 1000 + 1) * 1000 - 1);
  }
  void OnTimer(Timestamp timestamp, ProcessContext& ctx) override {
    std::vector<Value> out = ctx.current_key();
    const Value* sum = ctx.State("sum");
    out.push_back(sum != nullptr ? *sum : Value{});
    out.push_back(*ctx.State("lo"));
    ctx.ClearState("sum");
    ctx.Collect(Row::FromValues(out), timestamp);
  }
};

// Steps of the input: a record (key, v) at ts on `input`, or a watermark. Keys 0..kKeys-1 as
// strings, 4 seconds, each key 2 records a second (the first on input 0, the second on input 1
// when `two_inputs`), out of order within a second; a watermark every 512 records trails them by
// `lag` ms.
struct Step {
  std::string key;
  int64_t v = 0;
  Timestamp ts = kMinTimestamp;
  Timestamp watermark = kMinTimestamp;
  int input = 0;
};

std::vector<Step> Input(bool two_inputs = false, int64_t lag = 500) {
  std::vector<Step> steps;
  Timestamp max_ts = kMinTimestamp;
  int64_t n = 0;
  for (int64_t second = 0; second < 4; ++second) {
    for (int64_t round = 0; round < 2; ++round) {
      for (int64_t i = 0; i < kKeys; ++i) {
        const int64_t key = (i * 7919 + round * 13) % kKeys;
        const Timestamp ts = second * 1000 + (key * 31 + round * 500) % 1000;
        steps.push_back(Step{"user-" + std::to_string(key), (n++ % 97) + 1, ts, kMinTimestamp,
                             two_inputs ? static_cast<int>(round) : 0});
        max_ts = std::max(max_ts, ts);
        if (n % 512 == 0) {
          steps.push_back(Step{"", 0, kMinTimestamp, max_ts - lag, 0});
        }
      }
    }
  }
  steps.push_back(Step{"", 0, kMinTimestamp, kMaxTimestamp, 0});
  return steps;
}

std::unique_ptr<KeyedProcessOperator> MakeProcess() {
  KeyedProcessOperator::Options options;
  options.key_slots[0] = {0};
  return std::make_unique<KeyedProcessOperator>(std::make_unique<SumPerSecond>(), options);
}

constexpr int64_t kJoinBound = 600;

std::unique_ptr<IntervalJoinOperator> MakeJoin() {
  IntervalJoinOperator::Options options;
  options.lower_bound_ms = -kJoinBound;
  options.upper_bound_ms = kJoinBound;
  options.left_key_slots = {0};
  options.right_key_slots = {0};
  options.left_layout = RowLayout::Of({FieldType::kString, FieldType::kInt64});
  options.right_layout = options.left_layout;
  return std::make_unique<IntervalJoinOperator>(options, nullptr);
}

/// Runs one operator (`Op`: KeyedProcessOperator or IntervalJoinOperator) on a state backend.
template <typename Op>
class Runner {
 public:
  explicit Runner(const std::string& backend, int64_t memory = int64_t{1} << 20) {
    if constexpr (std::is_same_v<Op, KeyedProcessOperator>) {
      op_ = MakeProcess();
    } else {
      op_ = MakeJoin();
    }
    OperatorContext ctx;
    ctx.name = "process";
    ctx.output = &out_;
    ctx.processing_time = &clock_;
    ctx.state_backend = backend;
    // 1 MiB: 2048 keys cached of 6000 (1024 for the join); kTinyCache: 128 (64 for the join).
    ctx.rocksdb.memory_fixed_per_slot = memory;
    op_->Open(ctx);
  }
  ~Runner() { op_->Close(); }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  void Run(const std::vector<Step>& steps, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      const Step& s = steps[i];
      if (s.watermark != kMinTimestamp) {
        for (int in = 0; in < op_->NumInputs(); ++in) {
          op_->ProcessWatermark(Watermark{s.watermark}, in);
        }
        continue;
      }
      StreamRecord r(Row{s.key, s.v}, s.ts);
      op_->ProcessElement(r, s.input);
    }
  }
  std::string Snapshot() { return testing::SnapshotOf(*op_); }
  void Restore(const std::string& bytes) { testing::RestoreFrom(*op_, bytes); }
  std::vector<StreamRecord> Records() const { return out_.Records(); }
  std::vector<std::string> Results() const {
    std::vector<std::string> lines;
    for (const StreamRecord& r : out_.Records()) {
      lines.push_back(DescribeRecord(r));
    }
    return lines;
  }
  Op& op() { return *op_; }

 private:
  ManualProcessingTimeService clock_;
  CollectingOutput out_;
  std::unique_ptr<Op> op_;
};

TEST(KeyedProcessRocksDbTest, SameResultsAsTheHeapBackendWhileSpilling) {
  const std::vector<Step> steps = Input();
  Runner<KeyedProcessOperator> heap("heap");
  heap.Run(steps, 0, steps.size());
  Runner<KeyedProcessOperator> rocks("rocksdb");
  ASSERT_TRUE(rocks.op().uses_rocksdb());
  rocks.Run(steps, 0, steps.size());
  const std::vector<std::string> expected = heap.Results();
  const std::vector<StreamRecord> heap_records = heap.Records();
  // Every key fires once a second, for 4 seconds.
  ASSERT_EQ(expected.size(), static_cast<size_t>(kKeys * 4));
  // The sums of all firings add up to the input's.
  int64_t input_sum = 0;
  for (const Step& s : steps) {
    input_sum += s.v;
  }
  int64_t fired_sum = 0;
  for (const StreamRecord& r : heap_records) {
    fired_sum += r.row.GetInt64(1);
  }
  EXPECT_EQ(fired_sum, input_sum);
  EXPECT_EQ(input_sum, 2351385);
  // Same rows in the same order: timers fire from the same heap on both backends.
  EXPECT_EQ(rocks.Results(), expected);
  // The budget made the keys go through RocksDB, again and again.
  EXPECT_GT(rocks.op().rocksdb_spills(), 10);
  EXPECT_GT(rocks.op().rocksdb_keys_read(), kKeys * 4);
  EXPECT_FALSE(heap.op().uses_rocksdb());
}

/// The heap backend's uninterrupted output of `steps` (sorted) and its snapshot at step `cut`.
template <typename Op>
std::pair<std::vector<std::string>, std::string> HeapReference(const std::vector<Step>& steps,
                                                               size_t cut) {
  Runner<Op> uninterrupted("heap");
  uninterrupted.Run(steps, 0, steps.size());
  std::vector<std::string> expected = uninterrupted.Results();
  std::sort(expected.begin(), expected.end());
  Runner<Op> heap("heap");
  heap.Run(steps, 0, cut);
  return {std::move(expected), heap.Snapshot()};
}

/// Cuts `steps` in the middle of the second second (keys spilled on the rocksdb side), snapshots
/// on one backend and restores on the other (and on the same): the snapshot is the heap
/// backend's bytes and the output the uninterrupted run's.
template <typename Op>
void CheckSnapshotsAcrossBackends(const std::vector<Step>& steps) {
  const size_t cut = steps.size() * 3 / 8;
  const auto [expected, heap_bytes] = HeapReference<Op>(steps, cut);
  for (const auto& [before, after] : std::vector<std::pair<std::string, std::string>>{
           {"heap", "rocksdb"}, {"rocksdb", "heap"}, {"rocksdb", "rocksdb"}}) {
    SCOPED_TRACE(before + " -> " + after);
    std::vector<std::string> got;
    std::string bytes;
    {
      Runner<Op> first(before);
      first.Run(steps, 0, cut);
      if (before == "rocksdb") {
        EXPECT_GT(first.op().rocksdb_spills(), 0);
      }
      bytes = first.Snapshot();
      got = first.Results();
      // Canonical: the spilled keys were copied from RocksDB, the snapshot is the heap backend's
      // bytes.
      EXPECT_EQ(bytes, heap_bytes);
      // The snapshot leaves the cache within its budget again: later records still work.
      first.Run(steps, cut, cut + 100);
    }
    Runner<Op> second(after);
    second.Restore(bytes);
    second.Run(steps, cut, steps.size());
    for (std::string& line : second.Results()) {
      got.push_back(std::move(line));
    }
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, expected);
  }
}

TEST(KeyedProcessRocksDbTest, SnapshotsAreTheSameBytesAndRestoreAcrossBackends) {
  CheckSnapshotsAcrossBackends<KeyedProcessOperator>(Input());
}

// The interval join's buffers on RocksDB: every left/right pair of a key within +-600 ms joins
// (the watermark trails by 1500 ms, so no element is late and none is cleaned before its
// partners came), on both backends, in the same order.
TEST(IntervalJoinRocksDbTest, SameResultsAsTheHeapBackendWhileSpilling) {
  const std::vector<Step> steps = Input(/*two_inputs=*/true, /*lag=*/1500);
  Runner<IntervalJoinOperator> heap("heap");
  heap.Run(steps, 0, steps.size());
  EXPECT_FALSE(heap.op().uses_rocksdb());
  Runner<IntervalJoinOperator> rocks("rocksdb");
  ASSERT_TRUE(rocks.op().uses_rocksdb());
  rocks.Run(steps, 0, steps.size());
  // The pairs, counted by brute force over each key's elements.
  std::map<std::string, std::vector<const Step*>> by_key;
  for (const Step& s : steps) {
    if (s.watermark == kMinTimestamp) {
      by_key[s.key].push_back(&s);
    }
  }
  size_t pairs = 0;
  for (const auto& [key, elements] : by_key) {
    for (const Step* l : elements) {
      for (const Step* r : elements) {
        pairs += l->input == 0 && r->input == 1 && r->ts >= l->ts - kJoinBound &&
                 r->ts <= l->ts + kJoinBound;
      }
    }
  }
  const std::vector<std::string> expected = heap.Results();
  EXPECT_EQ(expected.size(), pairs);
  EXPECT_GT(pairs, static_cast<size_t>(kKeys * 4));
  EXPECT_EQ(heap.op().num_late_records_dropped(), 0);
  EXPECT_EQ(rocks.Results(), expected);
  EXPECT_GT(rocks.op().rocksdb_spills(), 10);
  EXPECT_GT(rocks.op().rocksdb_keys_read(), kKeys * 4);
}

TEST(IntervalJoinRocksDbTest, SnapshotsAreTheSameBytesAndRestoreAcrossBackends) {
  CheckSnapshotsAcrossBackends<IntervalJoinOperator>(Input(/*two_inputs=*/true, /*lag=*/1500));
}

// A cache of 64 KiB: 128 keys for the process function (256 bytes a key), 64 for the join
// (512), so ~98% of the 6000 keys are in RocksDB at the cut.
constexpr int64_t kTinyCache = int64_t{64} << 10;

/// The most keys of any one key group among the 6000 keys (max parallelism 128).
int64_t LargestKeyGroup() {
  std::map<int, int64_t> groups;
  for (int64_t i = 0; i < kKeys; ++i) {
    ++groups[KeyGroupForHash(KeyHash64(Key{"user-" + std::to_string(i)}), kDefaultMaxParallelism)];
  }
  int64_t largest = 0;
  for (const auto& [group, n] : groups) {
    largest = std::max(largest, n);
  }
  return largest;
}

/// With nearly every key spilled: the snapshot is the heap backend's bytes, taken without
/// reading the spilled keys into the cache (it never holds more than its budget + 1 keys, and
/// the snapshot at most one key group's spilled keys at once); a restore on RocksDB fills the
/// cache to its budget and writes the rest to RocksDB, and gives the uninterrupted heap run's
/// output; the restored operator's own snapshot is the same bytes again.
template <typename Op>
void CheckStreamedSnapshotAndRestore(const std::vector<Step>& steps, size_t cache_keys) {
  const size_t cut = steps.size() * 3 / 8;
  const auto [expected, heap_bytes] = HeapReference<Op>(steps, cut);
  std::vector<std::string> got;
  std::string bytes;
  {
    Runner<Op> first("rocksdb", kTinyCache);
    ASSERT_EQ(first.op().rocksdb_cache_keys(), cache_keys);
    first.Run(steps, 0, cut);
    EXPECT_GT(first.op().rocksdb_spills(), 40);
    const int64_t cached_before = first.op().rocksdb_peak_cached_keys();
    bytes = first.Snapshot();
    got = first.Results();
    EXPECT_EQ(bytes, heap_bytes);
    ::testing::Test::RecordProperty("peak_cached_keys_before_snapshot",
                                    std::to_string(cached_before));
    ::testing::Test::RecordProperty("snapshot_peak_group_keys",
                                    std::to_string(first.op().rocksdb_snapshot_peak_group_keys()));
    ::testing::Test::RecordProperty("snapshot_bytes", std::to_string(bytes.size()));
    // The heap held at most the budget's keys (+1 before a write-out), the snapshot included.
    EXPECT_LE(first.op().rocksdb_peak_cached_keys(), static_cast<int64_t>(cache_keys) + 1);
    EXPECT_GE(first.op().rocksdb_peak_cached_keys(), static_cast<int64_t>(cache_keys));
    // The snapshot held one key group's spilled keys at a time: a few dozen, not thousands.
    EXPECT_GT(first.op().rocksdb_snapshot_peak_group_keys(), 0);
    EXPECT_LE(first.op().rocksdb_snapshot_peak_group_keys(), LargestKeyGroup());
    EXPECT_LT(LargestKeyGroup(), 80);
    // A second snapshot reads the same: the first left the store and the cache as they were.
    EXPECT_EQ(first.Snapshot(), heap_bytes);
  }
  Runner<Op> second("rocksdb", kTinyCache);
  second.Restore(bytes);
  // The restore filled the cache to its budget, no further: the rest went to RocksDB.
  EXPECT_EQ(second.op().rocksdb_peak_cached_keys(), static_cast<int64_t>(cache_keys));
  EXPECT_EQ(second.op().rocksdb_spills(), 0);
  EXPECT_EQ(second.Snapshot(), bytes);
  second.Run(steps, cut, steps.size());
  EXPECT_LE(second.op().rocksdb_peak_cached_keys(), static_cast<int64_t>(cache_keys) + 1);
  for (std::string& line : second.Results()) {
    got.push_back(std::move(line));
  }
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, expected);
}

TEST(KeyedProcessRocksDbTest, SnapshotAndRestoreStreamPastATinyCache) {
  CheckStreamedSnapshotAndRestore<KeyedProcessOperator>(Input(), 128);
}

TEST(IntervalJoinRocksDbTest, SnapshotAndRestoreStreamPastATinyCache) {
  CheckStreamedSnapshotAndRestore<IntervalJoinOperator>(Input(/*two_inputs=*/true, /*lag=*/1500),
                                                        64);
}

}  // namespace
}  // namespace tidemark
