// The window operator's stateBytes / stateBytesPeak gauges (window_state_bytes.h's byte model).

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "operators/window/window_state_bytes.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

TEST(WindowOperatorStateBytesTest, CountsBufferedElementsAndKeysAndKeepsThePeak) {
  WindowOperator::Options options;
  options.key_slots = {0};
  WindowOperator op(std::make_unique<TumblingWindows>(true, 3000, 0), nullptr,
                    std::make_unique<BufferingWindowFunction>([](const WindowFunction::Context&,
                                                                 const std::vector<StreamRecord>&,
                                                                 std::vector<Row>&) {}),
                    options);
  ManualProcessingTimeService clock;
  testing::CollectingOutput out;
  OperatorContext ctx;
  ctx.name = "windows";
  ctx.output = &out;
  ctx.processing_time = &clock;
  op.Open(ctx);
  auto element = [&](const std::string& key, Timestamp ts) {
    StreamRecord r(Row{key, int64_t{1}}, ts);
    op.ProcessElement(r, 0);
  };
  element("a", 20);
  element("b", 2999);
  element("a", 0);
  element("a", 3000);
  // Panes a[0,3s) with 2 elements, b[0,3s) with 1, a[3s,6s) with 1; a key "a" is one Value
  // holding one character, an element a StreamRecord with a one-character string and an int64.
  const int64_t key = static_cast<int64_t>(sizeof(Value)) + 1;
  const int64_t element_bytes = static_cast<int64_t>(sizeof(StreamRecord) + 2 * sizeof(Value)) + 1;
  EXPECT_EQ(ElementStateBytes(StreamRecord(Row{std::string("a"), int64_t{1}}, 0)), element_bytes);
  EXPECT_EQ(op.StateBytes(), 3 * key + 4 * element_bytes);
  op.ProcessWatermark(Watermark{2999}, 0);  // sampled before [0,3s) fires and is cleaned up
  EXPECT_EQ(op.StateBytes(), key + element_bytes);
  EXPECT_EQ(op.state_bytes_peak(), 3 * key + 4 * element_bytes);
  MetricsWriter metrics;
  op.CollectMetrics(metrics);
  bool found = false;
  for (const auto& [name, value] : metrics.gauges()) {
    if (name == "stateBytesPeak") {
      EXPECT_EQ(value, 3 * key + 4 * element_bytes);
      found = true;
    }
  }
  EXPECT_TRUE(found);
  op.Close();
}

}  // namespace
}  // namespace tidemark
