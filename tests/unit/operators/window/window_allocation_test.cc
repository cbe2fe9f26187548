// Steady-state allocation of the keyed window paths: a global operator new counter around
// 1e6 and 2e5 records through a keyed tumbling count (sliced path) and a keyed session count
// (flat session path), keyed by an int64, by a string (longer than any inline string buffer, so
// a copy per record would allocate) and by a string and an int64 together. The records cover
// the same windows / sessions and keys in both runs (only their density differs), so any
// allocation per record shows as a difference. Records arrive in batches (`ProcessBatch`),
// as a task delivers them.

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/counting_allocator.h"

namespace tidemark {
namespace {

/// Counts results; keeps nothing (so the sink itself does not allocate per result).
class CountingOutput : public Output {
 public:
  void Collect(StreamRecord& record) override {
    ++records;
    sum += record.row.GetInt64(record.row.size() - 1);
  }
  void CollectSide(std::string_view, StreamRecord&) override { ++side; }
  void EmitWatermark(Watermark) override { ++watermarks; }
  void EmitWatermarkStatus(WatermarkStatus) override {}
  int64_t records = 0;
  int64_t sum = 0;
  int64_t side = 0;
  int64_t watermarks = 0;
};

struct RunResult {
  int64_t allocations = 0;
  int64_t results = 0;
  int64_t counted = 0;
};

// How the test's records are keyed: key k of 1000 as the int64 k, as the string
// "customer-account-<k>", or as that string and the int64 k % 7 (two key fields).
enum class KeyKind { kInt64, kString, kStringAndInt64 };

// `n` records over 1000 keys ((i * 7919) mod 1000, see `KeyKind`) and event time [0, 40 s), leaving
// out the records in `silent` stretches [from, to), through `spec` keyed by `key`; a watermark (ts
// - 1) every 1000 records, MAX at the end. Counts allocations from the first record to the end;
// `counted` is the sum of the results' last column minus the records sent (0 when each record was
// counted once).
RunResult RunWindow(const WindowSpec& spec, int64_t n,
                    const std::vector<std::pair<Timestamp, Timestamp>>& silent = {},
                    KeyKind kind = KeyKind::kInt64) {
  const bool string_key = kind != KeyKind::kInt64;
  Schema input({{"key", string_key ? FieldType::kString : FieldType::kInt64},
                {"value", FieldType::kDouble},
                {"ts", FieldType::kTimestamp},
                {"region", FieldType::kInt64}});
  std::vector<std::string> names;
  for (int k = 0; k < 1000; ++k) {
    names.push_back("customer-account-" + std::to_string(k));
  }
  const std::vector<std::string> key_by = kind == KeyKind::kStringAndInt64
                                              ? std::vector<std::string>{"key", "region"}
                                              : std::vector<std::string>{"key"};
  WindowOperatorPlan plan = WindowOperator::Compile(input, spec, key_by);
  std::unique_ptr<StreamOperator> op = plan.factory();
  ManualProcessingTimeService clock;
  CountingOutput out;
  OperatorContext ctx;
  ctx.name = "windows";
  ctx.output = &out;
  ctx.processing_time = &clock;
  op->Open(ctx);

  // Batches of up to 1000 records through `ProcessBatch`, as a task hands them over (the
  // operator prefetches keyed state within a batch), rows reused from batch to batch.
  const StreamRecord blank(Row{string_key ? Value(std::string(32, ' ')) : Value(int64_t{0}),
                               Value(0.5), Value(int64_t{0}), Value(int64_t{0})},
                           0);
  std::vector<StreamRecord> batch(1000, blank);
  std::vector<StreamRecord*> pointers;
  for (StreamRecord& r : batch) {
    pointers.push_back(&r);
  }
  auto process = [&](size_t count) {
    RecordBatch b{pointers.data(), count};
    op->ProcessBatch(b, 0);
  };
  size_t filled = 0;
  int64_t sent = 0;
  const int64_t before = testing::AllocationCount();
  for (int64_t i = 0; i < n; ++i) {
    const Timestamp ts = i * 40000 / n;
    if (std::any_of(silent.begin(), silent.end(),
                    [ts](const auto& s) { return ts >= s.first && ts < s.second; })) {
      continue;
    }
    const int64_t k = (i * 7919) % 1000;
    if (filled == batch.size()) {  // a silent stretch skipped the last watermark
      process(batch.size());
      filled = 0;
    }
    StreamRecord& record = batch[filled++];
    if (string_key) {
      record.row.SetString(0, names[static_cast<size_t>(k)]);  // fits the old bytes or grows once
    } else {
      record.row.SetInt64(0, k);
    }
    record.row.SetInt64(3, k % 7);
    record.row.SetInt64(2, ts);
    record.timestamp = ts;
    ++sent;
    if (i % 1000 == 999) {
      process(filled);
      filled = 0;
      op->ProcessWatermark(Watermark{ts - 1}, 0);
    }
  }
  process(filled);
  op->ProcessWatermark(Watermark{kMaxTimestamp}, 0);
  RunResult r;
  r.allocations = testing::AllocationCount() - before;
  r.results = out.records;
  r.counted = out.sum - sent;
  EXPECT_EQ(out.side, 0);
  const auto& window_op = static_cast<WindowOperator&>(*op);
  EXPECT_TRUE(spec.assigner == "session" ? window_op.uses_flat_sessions()
                                         : window_op.uses_slices());
  op->Close();
  return r;
}

WindowSpec CountSpec(const std::string& assigner) {
  WindowSpec spec;
  spec.assigner = assigner;
  AggregateSpec count;
  count.function = "count";
  spec.aggregates = {count};
  return spec;
}

// Keyed by an int64 (its own fast path), by strings and by (string, int64): a key other than
// one int64 is looked up in place and its values stored once in the backend's key pool, so no
// record allocates either.
class WindowAllocationTest : public ::testing::TestWithParam<KeyKind> {};

// Allocations come from keys, windows, timer entries and results (the same in both runs), not
// from records; and they are bounded by the results: at most a few per emitted window result
// (one more for a string key: each result row copies it, longer than the inline buffer).
int64_t AllocationsPerResultBound(KeyKind kind) {
  return kind == KeyKind::kInt64 ? 4 : 5;
}

TEST_P(WindowAllocationTest, TumblingAllocatesNothingPerRecord) {
  // Four tumbling 10 s windows.
  WindowSpec spec = CountSpec("tumbling");
  spec.size_ms = 10000;
  const RunResult small = RunWindow(spec, 200000, {}, GetParam());
  const RunResult large = RunWindow(spec, 1000000, {}, GetParam());
  // Every key in every window: 4 windows x 1000 keys, each record counted once (counted 0).
  EXPECT_EQ(small.results, 4000);
  EXPECT_EQ(large.results, 4000);
  EXPECT_EQ(small.counted, 0);
  EXPECT_EQ(large.counted, 0);
  EXPECT_LE(std::abs(large.allocations - small.allocations), 16)
      << "2e5 records: " << small.allocations << " allocations, 1e6 records: " << large.allocations;
  EXPECT_LT(large.allocations, AllocationsPerResultBound(GetParam()) * large.results);
  std::printf("allocations: %lld for 2e5 records, %lld for 1e6 records (%lld results)\n",
              static_cast<long long>(small.allocations), static_cast<long long>(large.allocations),
              static_cast<long long>(large.results));
}

TEST_P(WindowAllocationTest, TumblingWithWideAccumulatorsAllocatesNothingPerRecord) {
  // sum(region), min(key), count: six accumulator words per slice, more than a key's slot holds
  // inline (so each key's words live on the heap, recycled from key to key), and for a string
  // key a string min kept in the operator's accumulator strings.
  WindowSpec spec = CountSpec("tumbling");
  spec.size_ms = 10000;
  AggregateSpec sum;
  sum.function = "sum";
  sum.field = "region";
  AggregateSpec min;
  min.function = "min";
  min.field = "key";
  spec.aggregates.insert(spec.aggregates.begin(), {sum, min});
  const RunResult small = RunWindow(spec, 200000, {}, GetParam());
  const RunResult large = RunWindow(spec, 1000000, {}, GetParam());
  EXPECT_EQ(small.results, 4000);
  EXPECT_EQ(large.results, 4000);
  EXPECT_EQ(small.counted, 0);
  EXPECT_EQ(large.counted, 0);
  EXPECT_LE(std::abs(large.allocations - small.allocations), 16)
      << "2e5 records: " << small.allocations << " allocations, 1e6 records: " << large.allocations;
  // One more per result for a string key: the row copies the min as well as the key.
  EXPECT_LT(large.allocations, (AllocationsPerResultBound(GetParam()) + 1) * large.results);
  std::printf("wide allocations: %lld for 2e5 records, %lld for 1e6 records (%lld results)\n",
              static_cast<long long>(small.allocations), static_cast<long long>(large.allocations),
              static_cast<long long>(large.results));
}

TEST_P(WindowAllocationTest, SessionsAllocateNothingPerRecord) {
  // Sessions with a 500 ms gap; two silent stretches, [10 s, 11 s) and [25 s, 26.5 s). Every key
  // sees a record at least every 200 ms otherwise, so it has exactly three sessions in both runs.
  WindowSpec spec = CountSpec("session");
  spec.gap_ms = 500;
  const std::vector<std::pair<Timestamp, Timestamp>> silent = {{10000, 11000}, {25000, 26500}};
  const RunResult small = RunWindow(spec, 200000, silent, GetParam());
  const RunResult large = RunWindow(spec, 1000000, silent, GetParam());
  // Three sessions per key, every record counted once.
  EXPECT_EQ(small.results, 3000);
  EXPECT_EQ(large.results, 3000);
  EXPECT_EQ(small.counted, 0);
  EXPECT_EQ(large.counted, 0);
  EXPECT_LE(std::abs(large.allocations - small.allocations), 16)
      << "2e5 records: " << small.allocations << " allocations, 1e6 records: " << large.allocations;
  EXPECT_LT(large.allocations, AllocationsPerResultBound(GetParam()) * large.results);
  std::printf("session allocations: %lld for 2e5 records, %lld for 1e6 records (%lld results)\n",
              static_cast<long long>(small.allocations), static_cast<long long>(large.allocations),
              static_cast<long long>(large.results));
}

INSTANTIATE_TEST_SUITE_P(Keys, WindowAllocationTest,
                         ::testing::Values(KeyKind::kInt64, KeyKind::kString,
                                           KeyKind::kStringAndInt64),
                         [](const ::testing::TestParamInfo<KeyKind>& param_info) {
                           switch (param_info.param) {
                             case KeyKind::kInt64:
                               return std::string("Int64");
                             case KeyKind::kString:
                               return std::string("String");
                             default:
                               return std::string("StringAndInt64");
                           }
                         });

}  // namespace
}  // namespace tidemark
