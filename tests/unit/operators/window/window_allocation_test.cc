// Steady-state allocation of the int64-keyed window paths: a global operator new counter around
// 1e6 and 2e5 records through a keyed tumbling count (sliced path) and a keyed session count
// (flat session path). The records cover the same windows / sessions and keys in both runs (only
// their density differs), so any allocation per record shows as a difference.

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/time/manual_processing_time_service.h"

namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace

// These replace the global allocation functions for this test executable: operator delete
// frees what this operator new took from malloc (GCC cannot see that pairing).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) {
    return p;
  }
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace tidemark {
namespace {

/// Counts results; keeps nothing (so the sink itself does not allocate per result).
class CountingOutput : public Output {
 public:
  void Collect(StreamRecord& record) override {
    ++records;
    sum += std::get<int64_t>(record.row.back());
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

// `n` records over 1000 int64 keys and event time [0, 40 s): four tumbling 10 s windows, a
// watermark (ts - 1) every 1000 records. Counts allocations from the first record to the end.
RunResult RunWindow(int64_t n) {
  Schema input({{"key", FieldType::kInt64}, {"value", FieldType::kDouble}, {"ts", FieldType::kTimestamp}});
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = 10000;
  AggregateSpec count;
  count.function = "count";
  spec.aggregates = {count};
  WindowOperatorPlan plan = WindowOperator::Compile(input, spec, {"key"});
  std::unique_ptr<StreamOperator> op = plan.factory();
  ManualProcessingTimeService clock;
  CountingOutput out;
  OperatorContext ctx;
  ctx.name = "windows";
  ctx.output = &out;
  ctx.processing_time = &clock;
  op->Open(ctx);

  StreamRecord record(Row{Value(int64_t{0}), Value(0.5), Value(int64_t{0})}, 0);
  const int64_t before = g_allocations.load();
  for (int64_t i = 0; i < n; ++i) {
    const Timestamp ts = i * 40000 / n;
    std::get<int64_t>(record.row[0]) = (i * 7919) % 1000;
    std::get<int64_t>(record.row[2]) = ts;
    record.timestamp = ts;
    op->ProcessElement(record, 0);
    if (i % 1000 == 999) {
      op->ProcessWatermark(Watermark{ts - 1}, 0);
    }
  }
  op->ProcessWatermark(Watermark{kMaxTimestamp}, 0);
  RunResult r;
  r.allocations = g_allocations.load() - before;
  r.results = out.records;
  r.counted = out.sum;
  EXPECT_EQ(out.side, 0);
  EXPECT_TRUE(static_cast<WindowOperator&>(*op).uses_slices());
  op->Close();
  return r;
}

// `n` records over 1000 int64 keys and event time [0, 40 s) except two silent stretches,
// [10 s, 11 s) and [25 s, 26.5 s), through session windows with a 500 ms gap: every key sees a
// record at least every 200 ms otherwise, so it has exactly three sessions in both runs. A
// watermark (ts - 1) every 1000 records.
RunResult RunSessions(int64_t n) {
  Schema input({{"key", FieldType::kInt64}, {"value", FieldType::kDouble}, {"ts", FieldType::kTimestamp}});
  WindowSpec spec;
  spec.assigner = "session";
  spec.gap_ms = 500;
  AggregateSpec count;
  count.function = "count";
  spec.aggregates = {count};
  WindowOperatorPlan plan = WindowOperator::Compile(input, spec, {"key"});
  std::unique_ptr<StreamOperator> op = plan.factory();
  ManualProcessingTimeService clock;
  CountingOutput out;
  OperatorContext ctx;
  ctx.name = "sessions";
  ctx.output = &out;
  ctx.processing_time = &clock;
  op->Open(ctx);

  StreamRecord record(Row{Value(int64_t{0}), Value(0.5), Value(int64_t{0})}, 0);
  int64_t sent = 0;
  const int64_t before = g_allocations.load();
  for (int64_t i = 0; i < n; ++i) {
    const Timestamp ts = i * 40000 / n;
    if ((ts >= 10000 && ts < 11000) || (ts >= 25000 && ts < 26500)) {
      continue;
    }
    std::get<int64_t>(record.row[0]) = (i * 7919) % 1000;
    std::get<int64_t>(record.row[2]) = ts;
    record.timestamp = ts;
    op->ProcessElement(record, 0);
    ++sent;
    if (i % 1000 == 999) {
      op->ProcessWatermark(Watermark{ts - 1}, 0);
    }
  }
  op->ProcessWatermark(Watermark{kMaxTimestamp}, 0);
  RunResult r;
  r.allocations = g_allocations.load() - before;
  r.results = out.records;
  r.counted = out.sum - sent;  // 0 when every record was counted once
  EXPECT_EQ(out.side, 0);
  EXPECT_TRUE(static_cast<WindowOperator&>(*op).uses_flat_sessions());
  op->Close();
  return r;
}

TEST(WindowAllocationTest, Int64KeyedTumblingAllocatesNothingPerRecord) {
  const RunResult small = RunWindow(200000);
  const RunResult large = RunWindow(1000000);
  // Every key in every window: 4 windows x 1000 keys, each record counted once.
  EXPECT_EQ(small.results, 4000);
  EXPECT_EQ(large.results, 4000);
  EXPECT_EQ(small.counted, 200000);
  EXPECT_EQ(large.counted, 1000000);
  // Allocations come from keys, windows and results (the same in both runs), not from records.
  EXPECT_LE(std::abs(large.allocations - small.allocations), 16)
      << "2e5 records: " << small.allocations << " allocations, 1e6 records: "
      << large.allocations;
  // And they are bounded by the results: at most a few per emitted window result.
  EXPECT_LT(large.allocations, 4 * large.results);
  std::printf("allocations: %lld for 2e5 records, %lld for 1e6 records (%lld results)\n",
              static_cast<long long>(small.allocations), static_cast<long long>(large.allocations),
              static_cast<long long>(large.results));
}

TEST(WindowAllocationTest, Int64KeyedSessionsAllocateNothingPerRecord) {
  const RunResult small = RunSessions(200000);
  const RunResult large = RunSessions(1000000);
  // Three sessions per key, every record counted once.
  EXPECT_EQ(small.results, 3000);
  EXPECT_EQ(large.results, 3000);
  EXPECT_EQ(small.counted, 0);
  EXPECT_EQ(large.counted, 0);
  // Allocations come from keys, sessions, timer entries and results, not from records.
  EXPECT_LE(std::abs(large.allocations - small.allocations), 16)
      << "2e5 records: " << small.allocations << " allocations, 1e6 records: "
      << large.allocations;
  EXPECT_LT(large.allocations, 4 * large.results);
  std::printf("session allocations: %lld for 2e5 records, %lld for 1e6 records (%lld results)\n",
              static_cast<long long>(small.allocations), static_cast<long long>(large.allocations),
              static_cast<long long>(large.results));
}

}  // namespace
}  // namespace tidemark
