// tester-repro 06: with `state-backend: rocksdb`, a window whose aggregate has no RocksDB form
// kept all its keys on the heap without a word. The operator now says why (a note the run's
// summary shows, and a warning once per operator).

#include <cstdint>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/task/metrics_writer.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

// A count and a sum of `v`, per `k`, over 1 s tumbling windows or sessions with a 1 s gap
// (std::string(...) spares GCC 12 a false -Wrestrict on assigning literals here).
WindowSpec Spec(bool session, int64_t allowed_lateness_ms, const std::string& function) {
  WindowSpec spec;
  if (session) {
    spec.assigner = std::string("session");
    spec.gap_ms = 1000;
  } else {
    spec.assigner = std::string("tumbling");
    spec.size_ms = 1000;
  }
  spec.allowed_lateness_ms = allowed_lateness_ms;
  AggregateSpec count;
  count.function = std::string("count");
  count.as = std::string("n");
  AggregateSpec sum;
  sum.function = function;
  sum.field = std::string("v");
  sum.as = std::string("sum_v");
  spec.aggregates = {count, sum};
  return spec;
}

struct Opened {
  testing::CollectingOutput out;
  ManualProcessingTimeService clock;
  std::unique_ptr<StreamOperator> op;

  Opened(FieldType value_type, const std::string& backend, bool session = false,
         int64_t allowed_lateness_ms = 0, const std::string& function = "sum") {
    Schema schema;
    schema.Add("k", FieldType::kInt64);
    schema.Add("v", value_type);
    const WindowSpec spec = Spec(session, allowed_lateness_ms, function);
    op = WindowOperator::Compile(schema, spec, {"k"}).factory();
    OperatorContext ctx;
    ctx.name = "w";
    ctx.output = &out;
    ctx.processing_time = &clock;
    ctx.state_backend = backend;
    op->Open(ctx);
  }
  ~Opened() { op->Close(); }

  const WindowOperator& window() const { return static_cast<const WindowOperator&>(*op); }
  std::string Note() const {
    MetricsWriter w;
    op->CollectMetrics(w);
    for (const auto& [name, text] : w.notes()) {
      if (name == "stateBackendFallback") {
        return text;
      }
    }
    return "<none>";
  }
};

TEST(WindowHeapFallbackTest, DoubleSumOnRocksDbNamesTheAggregate) {
  Opened o(FieldType::kDouble, "rocksdb");
  EXPECT_FALSE(o.window().uses_rocksdb());
  EXPECT_EQ(o.window().heap_state_reason(),
            "aggregate 'sum_v' has no RocksDB form (a double sum, double min/max, avg, "
            "first-value/last-value or a percentile/listagg keeps per-window state on the heap)");
  EXPECT_EQ(o.Note(), o.window().heap_state_reason());
}

TEST(WindowHeapFallbackTest, Int64SumOnRocksDbHasNoFallback) {
  Opened o(FieldType::kInt64, "rocksdb");
  EXPECT_TRUE(o.window().uses_rocksdb());
  EXPECT_EQ(o.window().heap_state_reason(), "");
  EXPECT_EQ(o.Note(), "<none>");
}

// What docs/checkpoints.md and docs/job-reference.md say of `avg`: not on the sliced path, so
// neither in RocksDB nor in per-window tables (which an int64 sum takes on either backend).
TEST(WindowHeapFallbackTest, AvgIsNeitherInRocksDbNorInPerWindowTables) {
  Opened rocks(FieldType::kInt64, "rocksdb", false, 0, "avg");
  EXPECT_FALSE(rocks.window().uses_rocksdb());
  EXPECT_FALSE(rocks.window().uses_window_tables());
  EXPECT_EQ(rocks.window().heap_state_reason(),
            "aggregate 'sum_v' has no RocksDB form (a double sum, double min/max, avg, "
            "first-value/last-value or a percentile/listagg keeps per-window state on the heap)");
  Opened heap(FieldType::kInt64, "heap", false, 0, "avg");
  EXPECT_FALSE(heap.window().uses_window_tables());
  Opened int64_sum(FieldType::kInt64, "heap");
  EXPECT_TRUE(int64_sum.window().uses_window_tables());
  Opened int64_sum_rocks(FieldType::kInt64, "rocksdb");
  EXPECT_TRUE(int64_sum_rocks.window().uses_window_tables());
}

// Session windows on the flat session path keep their state in RocksDB; with allowed lateness
// they run on per-window state, on the heap, and say so.
TEST(WindowHeapFallbackTest, SessionWindowsOnRocksDbHaveNoFallback) {
  Opened o(FieldType::kInt64, "rocksdb", /*session=*/true);
  EXPECT_TRUE(o.window().uses_rocksdb());
  EXPECT_EQ(o.window().heap_state_reason(), "");
  EXPECT_EQ(o.Note(), "<none>");
}

TEST(WindowHeapFallbackTest, SessionWindowsWithLatenessOnRocksDbNameTheLateness) {
  Opened o(FieldType::kInt64, "rocksdb", /*session=*/true, 500);
  EXPECT_FALSE(o.window().uses_rocksdb());
  EXPECT_EQ(o.window().heap_state_reason(),
            "session windows with allowed-lateness keep per-window state on the heap");
  EXPECT_EQ(o.Note(), o.window().heap_state_reason());
}

TEST(WindowHeapFallbackTest, HeapBackendHasNoFallback) {
  Opened o(FieldType::kDouble, "heap");
  EXPECT_EQ(o.window().heap_state_reason(), "");
  EXPECT_EQ(o.Note(), "<none>");
}

}  // namespace
}  // namespace tidemark
