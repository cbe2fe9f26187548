// The window operator's stateBytes / stateBytesPeak gauges (window_state_bytes.h's byte model).

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_aggregates.h"
#include "operators/window/window_operator.h"
#include "operators/window/window_state_bytes.h"
#include "runtime/state/keyed_state_backend.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

// A compiled count window operator over {key, ts timestamp} records (an int64 key unless
// `key_type` says otherwise), keyed by `key`, opened on a manual clock.
struct OpenCountWindows {
  explicit OpenCountWindows(WindowSpec spec, FieldType key_type = FieldType::kInt64) {
    AggregateSpec count;
    count.function = "count";
    spec.aggregates = {count};
    op = WindowOperator::Compile(Schema({{"key", key_type}, {"ts", FieldType::kTimestamp}}), spec,
                                 {"key"})
             .factory();
    OperatorContext ctx;
    ctx.name = "windows";
    ctx.output = &out;
    ctx.processing_time = &clock;
    op->Open(ctx);
  }
  WindowOperator& window_op() { return static_cast<WindowOperator&>(*op); }

  ManualProcessingTimeService clock;
  testing::CollectingOutput out;
  std::unique_ptr<StreamOperator> op;
};

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

// The sampler's one pass (MeasureState) gives what the separate figures count, on a store of
// string keys whose slices outgrow their inline room: sliding windows of 1000 ms every 200 ms
// give each key five slices of 200 ms.
TEST(WindowOperatorStateBytesTest, OnePassMeasuresSlicesKeysAndBytesOfStringKeys) {
  WindowSpec spec;
  spec.assigner = "sliding";
  spec.size_ms = 1000;
  spec.slide_ms = 200;
  OpenCountWindows windows(spec, FieldType::kString);
  StreamOperator* op = windows.op.get();
  WindowOperator& window_op = windows.window_op();
  const std::vector<std::string> keys = {"a", "bb", "ccc"};
  for (const std::string& key : keys) {
    for (Timestamp ts = 100; ts < 1000; ts += 200) {
      StreamRecord r(Row{Value(key), Value(int64_t{ts})}, ts);
      op->ProcessElement(r, 0);
    }
  }
  ASSERT_TRUE(window_op.uses_slices());
  const WindowOperator::StateFigures f = window_op.MeasureState();
  EXPECT_EQ(f.slices, 15);
  EXPECT_EQ(f.panes, 15);
  EXPECT_EQ(f.keys, 3);
  EXPECT_EQ(window_op.NumSlices(), 15u);
  EXPECT_EQ(window_op.NumStateKeys(), 3);
  // Five panes a key, each the key's value (a Value plus its characters) and one accumulator.
  const auto value = static_cast<int64_t>(sizeof(Value));
  const auto acc = static_cast<int64_t>(sizeof(AggregateAccumulator));
  EXPECT_EQ(f.bytes, 5 * ((value + 1 + acc) + (value + 2 + acc) + (value + 3 + acc)));
  EXPECT_EQ(window_op.StateBytes(), f.bytes);
  // Each key's five slice starts and five count words are on the heap (two inline), so the
  // memory holds at least 3 x 2 x 5 x 8 bytes beyond the tables.
  EXPECT_EQ(window_op.StateMemoryBytes(), f.memory_bytes);
  EXPECT_GE(f.memory_bytes, 3 * 2 * 5 * 8 + 3 * 73);
  op->Close();
}

}  // namespace
TEST(WindowOperatorStateBytesTest, TableBytesCountCapacityNotKeys) {
  // One key group, so one table: capacity 1 after one key, 3 after two (absl grows 2n + 1).
  KeyedStateBackend<int64_t, int64_t> backend(1, KeyGroupRange{0, 0});
  EXPECT_EQ(backend.TableBytes(), 0);
  *backend.GetOrCreate(7).first = 1;
  const int64_t slot = static_cast<int64_t>(sizeof(std::pair<const int64_t, int64_t>));
  EXPECT_EQ(backend.TableBytes(), 1 * (slot + 1) + 16);
  *backend.GetOrCreate(8).first = 1;
  EXPECT_EQ(backend.TableBytes(), 3 * (slot + 1) + 16);
  backend.Erase(7);
  backend.Erase(8);
  EXPECT_EQ(backend.TableBytes(), 3 * (slot + 1) + 16);  // erasing keeps the capacity
}

TEST(WindowOperatorStateBytesTest, BackendKeyGroupsAreKeyGroupForHashAtAnyMaxParallelism) {
  // A power-of-two max parallelism takes the hash's low bits instead of dividing: the same group.
  for (const int max_parallelism : {128, 100, 1, 32768, 7}) {
    KeyedStateBackend<int64_t, int64_t> backend(max_parallelism,
                                                KeyGroupRange{0, max_parallelism - 1});
    for (int64_t k = -5000; k < 5000; k += 3) {
      ASSERT_EQ(backend.KeyGroupOf(k), KeyGroupForHash(Int64KeyHash64(k), max_parallelism))
          << "key " << k << ", max parallelism " << max_parallelism;
    }
  }
}

namespace {

// The memory gauges of 1000 keys in one tumbling window with `lateness`.
void CheckMemoryPeakGauges(int64_t lateness) {
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = 1000;
  spec.allowed_lateness_ms = lateness;
  OpenCountWindows windows(spec);
  StreamOperator* op = windows.op.get();
  testing::CollectingOutput& out = windows.out;
  WindowOperator& window_op = windows.window_op();
  std::vector<StreamRecord> batch;
  for (int64_t k = 0; k < 1000; ++k) {
    batch.emplace_back(Row{Value(k), Value(int64_t{k % 1000})}, k % 1000);
  }
  std::vector<StreamRecord*> pointers;
  for (StreamRecord& r : batch) {
    pointers.push_back(&r);
  }
  RecordBatch records{pointers.data(), pointers.size()};
  op->ProcessBatch(records, 0);
  ASSERT_TRUE(window_op.uses_slices());
  EXPECT_EQ(window_op.NumStateKeys(), 1000);
  const int64_t held = window_op.StateMemoryBytes();
  if (lateness == 0) {
    // One table for the window: a key's slot is the int64 key and its count (16 bytes), and
    // at most a table's growth (2x) plus load headroom over it; no timers.
    const int64_t slot = static_cast<int64_t>(sizeof(std::pair<const int64_t, uint64_t>)) + 1;
    EXPECT_EQ(slot, 16 + 1);
    EXPECT_GE(held, 1000 * slot);
    EXPECT_LE(held, 4 * 1000 * slot + 16);
  } else {
    // Every key's slot, and at most a table's growth (2x) plus load headroom over it; the
    // timers hold one entry per key (1000 keys at one window end).
    const int64_t slot = static_cast<int64_t>(sizeof(std::pair<const int64_t, SlicedKeyState>)) + 1;
    // A key's slot: the int64 key (8), its slice starts (24: two inline), next firing and timer
    // (16) and its narrow accumulator words (24: two inline; a count is one), 72 bytes, where
    // two general accumulators made it 192.
    EXPECT_EQ(slot, 72 + 1);
    EXPECT_GE(held, 1000 * slot + 1000 * static_cast<int64_t>(sizeof(int64_t)));
    EXPECT_LE(held, 4 * 1000 * slot + 128 * (slot + 16) +
                        4 * 1000 * static_cast<int64_t>(sizeof(int64_t)));
  }
  op->ProcessWatermark(Watermark{kMaxTimestamp}, 0);  // sampled before the windows fire
  EXPECT_EQ(out.Records().size(), 1000u);
  EXPECT_EQ(window_op.NumStateKeys(), 0);
  MetricsWriter metrics;
  op->CollectMetrics(metrics);
  int64_t peak = -1;
  int64_t keys = -1;
  for (const auto& [name, value] : metrics.gauges()) {
    if (name == "stateMemoryBytesPeak") {
      peak = value;
    } else if (name == "stateKeysPeak") {
      keys = value;
    }
  }
  EXPECT_EQ(peak, held);
  EXPECT_EQ(keys, 1000);
  op->Close();
}

}  // namespace

TEST(WindowOperatorStateBytesTest, MemoryPeakGaugesCountTheSlicedTablesAndTheirKeys) {
  // Allowed lateness keeps the sliced store (per-key slices and timers); without it the tumbling
  // windows are per-window tables (one slot of key and count per key, no timers).
  for (const int64_t lateness : {int64_t{1}, int64_t{0}}) {
    SCOPED_TRACE(lateness);
    CheckMemoryPeakGauges(lateness);
  }
}

// A slice is dropped at the cleanup time of the last window holding it (its max timestamp plus
// the allowed lateness; Flink clears a window's state when the watermark reaches that time), not
// a millisecond earlier or later: tumbling, sliding with the slice as the slide, and sliding
// with a slice finer than the slide (size 1000, slide 400: slices of 200).
TEST(WindowOperatorStateBytesTest, SlicesAreDroppedExactlyAtTheirLastWindowsCleanupTime) {
  struct Case {
    const char* assigner;
    int64_t slide_ms;
    int64_t offset_ms;
    Timestamp record_ts;
    Timestamp drop_at;  // the last window holding the record's slice: max timestamp + 500
  };
  const Case cases[] = {
      {"tumbling", 0, 0, 700, 999 + 500},      // [0, 1000)
      {"tumbling", 0, 300, 700, 1299 + 500},   // [300, 1300)
      {"sliding", 500, 0, 700, 1499 + 500},    // slice [500, 1000), last window [500, 1500)
      {"sliding", 400, 0, 700, 1399 + 500},    // slice [600, 800), last window [400, 1400)
      {"sliding", 400, 100, 700, 1499 + 500},  // slice [700, 900), last window [500, 1500)
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.assigner) + " slide " + std::to_string(c.slide_ms) + " offset " +
                 std::to_string(c.offset_ms));
    WindowSpec spec;
    spec.assigner = c.assigner;
    spec.size_ms = 1000;
    spec.slide_ms = c.slide_ms;
    spec.offset_ms = c.offset_ms;
    spec.allowed_lateness_ms = 500;
    OpenCountWindows windows(spec);
    StreamOperator* op = windows.op.get();
    WindowOperator& window_op = windows.window_op();
    StreamRecord record(Row{Value(int64_t{7}), Value(int64_t{c.record_ts})}, c.record_ts);
    StreamRecord* pointer = &record;
    RecordBatch records{&pointer, 1};
    op->ProcessBatch(records, 0);
    ASSERT_TRUE(window_op.uses_slices());
    ASSERT_EQ(window_op.NumSlices(), 1u);
    op->ProcessWatermark(Watermark{c.drop_at - 1}, 0);
    EXPECT_EQ(window_op.NumSlices(), 1u);
    EXPECT_EQ(window_op.NumStateKeys(), 1);
    op->ProcessWatermark(Watermark{c.drop_at}, 0);
    EXPECT_EQ(window_op.NumSlices(), 0u);
    EXPECT_EQ(window_op.NumStateKeys(), 0);
  }
}

}  // namespace tidemark

namespace tidemark {
namespace {

// Tester 28/16: session windows with allowed lateness run on the per-window path, whose keys were
// left out of NumStateKeys, so stateKeysPeak read 0 while the operator held every key.
TEST(WindowOperatorStateBytesTest, PerWindowPathKeysCountInStateKeysAndItsPeak) {
  WindowSpec spec;
  spec.assigner = "session";
  spec.gap_ms = 1000;
  spec.allowed_lateness_ms = 500;
  OpenCountWindows windows(spec);
  StreamOperator* op = windows.op.get();
  WindowOperator& window_op = windows.window_op();
  std::vector<StreamRecord> batch;
  for (int64_t k = 0; k < 3; ++k) {
    batch.emplace_back(Row{Value(k), Value(int64_t{100 * k})}, 100 * k);
  }
  std::vector<StreamRecord*> pointers;
  for (StreamRecord& r : batch) {
    pointers.push_back(&r);
  }
  RecordBatch records{pointers.data(), pointers.size()};
  op->ProcessBatch(records, 0);
  ASSERT_FALSE(window_op.uses_slices());
  ASSERT_FALSE(window_op.uses_flat_sessions());
  EXPECT_EQ(window_op.NumStateKeys(), 3);
  op->ProcessWatermark(Watermark{kMaxTimestamp}, 0);  // sampled before the windows fire
  EXPECT_EQ(windows.out.Records().size(), 3u);
  EXPECT_EQ(window_op.NumStateKeys(), 0);
  MetricsWriter metrics;
  op->CollectMetrics(metrics);
  int64_t keys = -1;
  for (const auto& [name, value] : metrics.gauges()) {
    if (name == "stateKeysPeak") {
      keys = value;
    }
  }
  EXPECT_EQ(keys, 3);
  op->Close();
}

}  // namespace
}  // namespace tidemark
