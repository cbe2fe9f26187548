// tester-repro 06: with `state-backend: rocksdb`, a window whose aggregate has no RocksDB form
// kept all its keys on the heap without a word. The operator now says why (a note the run's
// summary shows, and a warning once per operator).

#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/task/metrics_writer.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

struct Opened {
  testing::CollectingOutput out;
  ManualProcessingTimeService clock;
  std::unique_ptr<StreamOperator> op;

  Opened(FieldType value_type, const std::string& backend) {
    Schema schema;
    schema.Add("k", FieldType::kInt64);
    schema.Add("v", value_type);
    WindowSpec spec;
    spec.assigner = "tumbling";
    spec.size_ms = 1000;
    AggregateSpec count;
    count.function = "count";
    count.as = "n";
    AggregateSpec sum;
    sum.function = "sum";
    sum.field = "v";
    sum.as = "sum_v";
    spec.aggregates = {count, sum};
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

TEST(WindowHeapFallbackTest, HeapBackendHasNoFallback) {
  Opened o(FieldType::kDouble, "heap");
  EXPECT_EQ(o.window().heap_state_reason(), "");
  EXPECT_EQ(o.Note(), "<none>");
}

}  // namespace
}  // namespace tidemark
