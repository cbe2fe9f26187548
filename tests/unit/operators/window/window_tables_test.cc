// The window operator's per-window tables (aligned event-time tumbling windows without allowed
// lateness, operators/window/window_tables.h): exact window contents, late
// records after a window fired (counted or to the side output) and forwarded watermarks; the
// same output, element for element and in the same order, as the per-window general path; and
// snapshots taken mid-window that restore into the tables, into the RocksDB backend and from it.

#include <algorithm>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_aggregates.h"
#include "operators/window/window_operator.h"
#include "tests/testing/collecting_output.h"
#include "tests/testing/snapshot_round_trip.h"
#include "tests/testing/window_operator_runner.h"

namespace tidemark {
namespace {

using testing::DescribeRecord;

using testing::KeyValueSchema;

// Tumbling windows of `size` ms with count(*) and sum(v) (`trigger`: empty for the default).
WindowSpec CountSum(int64_t size, const std::string& late_output = "",
                    const std::string& trigger = "") {
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = size;
  spec.late_output = late_output;
  spec.trigger = trigger;
  spec.aggregates = {testing::Aggregate("count", "", "n"), testing::Aggregate("sum", "v", "sum_v")};
  return spec;
}

// One operator opened on its own as subtask 0 of 1 on a manual clock, on `backend`.
class Open : public testing::WindowOperatorRunner {
 public:
  Open(FieldType key_type, const WindowSpec& spec, const std::string& backend = "heap")
      : WindowOperatorRunner(KeyValueSchema(key_type), spec, "windows", backend, int64_t{1} << 20) {
  }
  WindowOperator& window_op() { return op(); }
  void Batch(std::vector<StreamRecord> records) {
    std::vector<testing::WindowStep> steps(1);
    steps[0].records = std::move(records);
    Run(steps, 0, 1);
  }
  std::vector<std::string> Main() const { return output().Describe(); }
  std::vector<std::string> Late() const {
    std::vector<std::string> lines;
    for (const StreamRecord& r : output().SideOutput("late")) {
      lines.push_back(DescribeRecord(r));
    }
    return lines;
  }
};

// Three windows of 1000 ms, keys given out of key order (`key(i)` for i = 0, 1, 2 orders as
// i does), records within the watermark's lag in two open windows at once, and late records
// after each window fired. Batches of more records than the look-ahead distances, and single
// records.
template <typename KeyOf>
void FeedThreeWindows(Open& o, KeyOf key) {
  std::vector<StreamRecord> batch;
  // Window [0, 1000): key 2 twice, key 0, key 1; window [1000, 2000) opens (key 0) before the
  // first one fires.
  batch.emplace_back(Row{key(2), int64_t{1}}, 100);
  batch.emplace_back(Row{key(0), int64_t{2}}, 900);
  batch.emplace_back(Row{key(0), int64_t{3}}, 1500);
  batch.emplace_back(Row{key(1), int64_t{4}}, 999);
  for (int64_t i = 0; i < 20; ++i) {
    batch.emplace_back(Row{key(2), int64_t{10}}, 500 + i);  // key 2: 21 records, sum 201
  }
  o.Batch(std::move(batch));
  o.Watermark(998);  // nothing is due: the first window's max timestamp is 999
  o.Element(StreamRecord(Row{key(0), int64_t{5}}, 999));
  o.Watermark(999);
  // Late: its window fired at 999.
  o.Element(StreamRecord(Row{key(1), int64_t{7}}, 500));
  o.Batch({StreamRecord(Row{key(1), int64_t{8}}, 1999), StreamRecord(Row{key(2), int64_t{9}}, 2000),
           StreamRecord(Row{key(2), int64_t{6}}, 0)});  // the last one late
  o.Watermark(1999);
  o.Element(StreamRecord(Row{key(0), int64_t{10}}, 1999));  // late
  o.Watermark(kMaxTimestamp);
}

// The windows of FeedThreeWindows for keys rendered `k0`, `k1`, `k2`.
std::vector<std::string> ThreeWindows(const std::string& k0, const std::string& k1,
                                      const std::string& k2) {
  return {
      "watermark(998)",
      "record([" + k0 + ",0,1000,2,7]@999)",
      "record([" + k1 + ",0,1000,1,4]@999)",
      "record([" + k2 + ",0,1000,21,201]@999)",
      "watermark(999)",
      "record([" + k0 + ",1000,2000,1,3]@1999)",
      "record([" + k1 + ",1000,2000,1,8]@1999)",
      "watermark(1999)",
      "record([" + k2 + ",2000,3000,1,9]@2999)",
      "watermark(9223372036854775807)",
  };
}

TEST(WindowTablesTest, Int64KeysGiveExactWindowsLateCountsAndWatermarks) {
  Open o(FieldType::kInt64, CountSum(1000));
  ASSERT_TRUE(o.window_op().uses_window_tables());
  // Keys -5, 3, 7 (signed order), given 7, -5, 3.
  const int64_t keys[] = {-5, 3, 7};
  FeedThreeWindows(o, [&](int i) { return Value(keys[i]); });
  EXPECT_EQ(o.Main(), ThreeWindows("-5", "3", "7"));
  EXPECT_EQ(o.window_op().num_late_records_dropped(), 3);
  EXPECT_EQ(o.window_op().num_late_records_side_output(), 0);
  EXPECT_EQ(o.window_op().num_windows_fired(), 6);
  EXPECT_TRUE(o.window_op().uses_window_tables());  // never left them
  EXPECT_EQ(o.window_op().NumSlices(), 0u);
  EXPECT_EQ(o.window_op().NumStateKeys(), 0);
}

TEST(WindowTablesTest, StringKeysGiveExactWindowsAndLateRecordsToTheSideOutput) {
  Open o(FieldType::kString, CountSum(1000, "late"));
  ASSERT_TRUE(o.window_op().uses_window_tables());
  const std::string keys[] = {"alice", "bob", "carol"};
  FeedThreeWindows(o, [&](int i) { return Value(keys[i]); });
  EXPECT_EQ(o.Main(), ThreeWindows("\"alice\"", "\"bob\"", "\"carol\""));
  // Each late record with its window and how far behind the watermark it was.
  EXPECT_EQ(o.Late(), (std::vector<std::string>{
                          "record([\"bob\",7,0,1000,499]@500)",
                          "record([\"carol\",6,0,1000,999]@0)",
                          "record([\"alice\",10,1000,2000,0]@1999)",
                      }));
  EXPECT_EQ(o.window_op().num_late_records_dropped(), 0);
  EXPECT_EQ(o.window_op().num_late_records_side_output(), 3);
  EXPECT_EQ(o.window_op().num_windows_fired(), 6);
  EXPECT_TRUE(o.window_op().uses_window_tables());
}

TEST(WindowTablesTest, OpenWindowsAreVisibleAsTheirStateWhileHeld) {
  Open o(FieldType::kInt64, CountSum(1000));
  o.Batch({StreamRecord(Row{Value(int64_t{4}), Value(int64_t{2})}, 10),
           StreamRecord(Row{Value(int64_t{4}), Value(int64_t{3})}, 20),
           StreamRecord(Row{Value(int64_t{4}), Value(int64_t{5})}, 1010),
           StreamRecord(Row{Value(int64_t{9}), Value(int64_t{1})}, 1020)});
  // Two windows open: key 4 in both, key 9 in the second.
  EXPECT_EQ(o.window_op().NumSlices(), 3u);
  EXPECT_EQ(o.window_op().NumStateKeys(), 2);
  const WindowState* first =
      o.window_op().GetWindowState(Key{Value(int64_t{4})}, Window(TimeWindow(0, 1000)));
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(o.window_op().GetWindowState(Key{Value(int64_t{9})}, Window(TimeWindow(0, 1000))),
            nullptr);
  o.Watermark(999);
  EXPECT_EQ(o.window_op().NumSlices(), 2u);
  EXPECT_EQ(o.window_op().NumStateKeys(), 2);
  EXPECT_EQ(o.window_op().GetWindowState(Key{Value(int64_t{4})}, Window(TimeWindow(0, 1000))),
            nullptr);
  EXPECT_EQ(o.Records().size(), 1u);
}

// The state gauges of string keys in tables: bytes from each table's running sum of its keys'
// bytes (a short key's from its pool entry or its slot, a long one's from its values), panes,
// and keys counted once however many open windows hold them; the same as a fired table leaves.
// With a key of 32 bytes (the tables widened to interned keys) and of 16 (short-string tables
// to the end).
void ExpectStateFigures(const std::string& long_key, const std::string& form) {
  SCOPED_TRACE(form);
  Open o(FieldType::kString, CountSum(1000));
  // Window [0, 1000): "a", "bb", long_key; [1000, 2000): "a", long_key, "ccc";
  // [2000, 3000): "a", "dddd". Records in several windows of one batch, and one at a time.
  o.Batch({StreamRecord(Row{Value("a"), Value(int64_t{1})}, 10),
           StreamRecord(Row{Value("bb"), Value(int64_t{1})}, 20),
           StreamRecord(Row{Value("a"), Value(int64_t{1})}, 1010),
           StreamRecord(Row{Value(long_key), Value(int64_t{1})}, 30),
           StreamRecord(Row{Value("a"), Value(int64_t{1})}, 40),
           StreamRecord(Row{Value(long_key), Value(int64_t{1})}, 1500)});
  o.Element(StreamRecord(Row{Value("ccc"), Value(int64_t{1})}, 1999));
  o.Element(StreamRecord(Row{Value("a"), Value(int64_t{1})}, 2000));
  o.Batch({StreamRecord(Row{Value("dddd"), Value(int64_t{1})}, 2999),
           StreamRecord(Row{Value("bb"), Value(int64_t{1})}, 999)});
  ASSERT_TRUE(o.window_op().uses_window_tables());
  EXPECT_EQ(o.window_op().window_table_keys(), form);
  // A pane: its key (a Value and the string's bytes) and two accumulators (count, sum).
  const auto value = static_cast<int64_t>(sizeof(Value));
  const auto accs = 2 * static_cast<int64_t>(sizeof(AggregateAccumulator));
  auto pane = [&](const std::string& key) {
    return value + static_cast<int64_t>(key.size()) + accs;
  };
  WindowOperator::StateFigures f = o.window_op().MeasureState();
  EXPECT_EQ(f.panes, 8);
  EXPECT_EQ(f.slices, 8);
  EXPECT_EQ(f.keys, 5);  // a, bb, long_key, ccc, dddd
  EXPECT_EQ(f.bytes, pane("a") + pane("bb") + pane(long_key) + pane("a") + pane(long_key) +
                         pane("ccc") + pane("a") + pane("dddd"));
  EXPECT_EQ(o.window_op().StateBytes(), f.bytes);
  EXPECT_EQ(o.window_op().NumStateKeys(), 5);
  o.Watermark(999);  // [0, 1000) fires: "bb" is gone, "a" and long_key stay
  f = o.window_op().MeasureState();
  EXPECT_EQ(f.panes, 5);
  EXPECT_EQ(f.keys, 4);
  EXPECT_EQ(f.bytes, pane("a") + pane(long_key) + pane("ccc") + pane("a") + pane("dddd"));
  EXPECT_EQ(o.window_op().state_bytes_peak(),
            pane("a") * 3 + pane("bb") + pane(long_key) * 2 + pane("ccc") + pane("dddd"));
  o.Watermark(1999);
  f = o.window_op().MeasureState();
  EXPECT_EQ(f.panes, 2);
  EXPECT_EQ(f.keys, 2);
  EXPECT_EQ(f.bytes, pane("a") + pane("dddd"));
  o.Watermark(kMaxTimestamp);
  f = o.window_op().MeasureState();
  EXPECT_EQ(f.panes, 0);
  EXPECT_EQ(f.keys, 0);
  EXPECT_EQ(f.bytes, 0);
  EXPECT_EQ(o.Records().size(), 8u);
}

TEST(WindowTablesTest, StateFiguresCountEveryPaneAndEachKeyOnce) {
  ExpectStateFigures("a-key-of-more-than-sixteen-bytes", "interned");  // 32 bytes: not short
  ExpectStateFigures("a-key-of-sixteen", "short-string");
}

// A table of 4 MiB and more is allocated on huge-page-advised memory (TableAllocator): 300,000
// int64 keys, two records each in shuffled order, fire once each with both counted, in key
// order.
TEST(WindowTablesTest, ALargeTableCountsEveryKeyAndFiresInKeyOrder) {
  constexpr int64_t kKeys = 300000;
  Open o(FieldType::kInt64, CountSum(1000));
  std::vector<int64_t> keys;
  for (int64_t k = 0; k < 2 * kKeys; ++k) {
    keys.push_back((k % kKeys) * 7 - kKeys);
  }
  std::shuffle(keys.begin(), keys.end(), std::mt19937_64(3));
  for (size_t from = 0; from < keys.size(); from += 256) {
    std::vector<StreamRecord> batch;
    for (size_t i = from; i < std::min(keys.size(), from + 256); ++i) {
      batch.emplace_back(Row{Value(keys[i]), Value(int64_t{1})}, static_cast<Timestamp>(i % 1000));
    }
    o.Batch(std::move(batch));
  }
  EXPECT_EQ(o.window_op().NumSlices(), static_cast<size_t>(kKeys));
  EXPECT_GE(o.window_op().StateMemoryBytes(), kKeys * 16);
  o.Watermark(999);
  const std::vector<StreamRecord> rows = o.Records();
  ASSERT_EQ(rows.size(), static_cast<size_t>(kKeys));
  for (size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(rows[i].row.GetInt64(0), static_cast<int64_t>(i) * 7 - kKeys) << i;
    ASSERT_EQ(rows[i].row.GetInt64(3), 2) << i;  // n
    ASSERT_EQ(rows[i].row.GetInt64(4), 2) << i;  // sum_v
  }
  EXPECT_EQ(o.window_op().NumSlices(), 0u);
}

// A seeded stream: `records` records of `keys` keys in 8 windows of 1000 ms, arriving up to
// 1500 ms out of order, the watermark 700 ms behind the largest timestamp every 37 records, so
// records fall late, into a fired window, and into up to three open windows.
struct Event {
  bool watermark = false;
  Timestamp ts = 0;
  int64_t key = 0;
  int64_t v = 0;
};

std::vector<Event> RandomStream(uint64_t seed, int64_t keys, int64_t records = 4000) {
  std::mt19937_64 rng(seed);
  std::vector<Event> events;
  Timestamp max_ts = 0;
  for (int64_t i = 0; i < records; ++i) {
    const Timestamp base = i * 8000 / records;
    const Timestamp ts = std::max<Timestamp>(0, base - static_cast<Timestamp>(rng() % 1500));
    events.push_back(Event{false, ts, static_cast<int64_t>(rng() % keys) - keys / 2,
                           static_cast<int64_t>(rng() % 100)});
    max_ts = std::max(max_ts, ts);
    if (i % 37 == 36) {
      events.push_back(Event{true, max_ts - 700, 0, 0});
    }
  }
  events.push_back(Event{true, kMaxTimestamp, 0, 0});
  return events;
}

// Feeds `events` in batches of up to 64 records (a watermark ends a batch), string keys as
// "user-<key>".
void Feed(Open& o, const std::vector<Event>& events, bool string_keys) {
  std::vector<StreamRecord> batch;
  for (const Event& e : events) {
    if (e.watermark) {
      o.Batch(std::move(batch));
      batch.clear();
      o.Watermark(e.ts);
      continue;
    }
    const Value k = string_keys ? Value("user-" + std::to_string(e.key)) : Value(e.key);
    batch.emplace_back(Row{k, Value(e.v)}, e.ts);
    if (batch.size() == 64) {
      o.Batch(std::move(batch));
      batch.clear();
    }
  }
}

TEST(WindowTablesTest, SameOutputInTheSameOrderAsTheGeneralPath) {
  for (const bool string_keys : {false, true}) {
    // Few keys, keys in the L2 cache, and tables of over 8192 keys a window (the batch loop's
    // look-ahead).
    for (const int64_t keys : {int64_t{7}, int64_t{500}, int64_t{40000}}) {
      SCOPED_TRACE(std::string(string_keys ? "string" : "int64") + " keys, " +
                   std::to_string(keys));
      const std::vector<Event> events =
          RandomStream(static_cast<uint64_t>(keys), keys, keys > 1000 ? 120000 : 4000);
      const FieldType type = string_keys ? FieldType::kString : FieldType::kInt64;
      Open tables(type, CountSum(1000, "late"));
      // A purging event-time trigger fires and cleans a window up exactly when the default one
      // does, but keeps the operator on per-window states and per-key timers.
      Open general(type, CountSum(1000, "late", "purging(event-time)"));
      ASSERT_TRUE(tables.window_op().uses_window_tables());
      ASSERT_FALSE(general.window_op().uses_slices());
      Feed(tables, events, string_keys);
      Feed(general, events, string_keys);
      EXPECT_TRUE(tables.window_op().uses_window_tables());
      const std::vector<std::string> want = general.Main();
      ASSERT_GT(want.size(), static_cast<size_t>(std::min<int64_t>(keys, 1000)));
      EXPECT_EQ(tables.Main(), want);
      EXPECT_EQ(tables.Late(), general.Late());
      EXPECT_GT(general.Late().size(), 10u);
      EXPECT_EQ(tables.window_op().num_windows_fired(), general.window_op().num_windows_fired());
    }
  }
}

// The stream of RandomStream as runner steps (batches of 64 records, watermarks).
std::vector<testing::WindowStep> Steps(const std::vector<Event>& events, bool string_keys) {
  std::vector<testing::WindowStep> steps;
  testing::WindowStep batch;
  for (const Event& e : events) {
    if (e.watermark || batch.records.size() == 64) {
      steps.push_back(std::move(batch));
      batch = testing::WindowStep{};
    }
    if (e.watermark) {
      testing::WindowStep wm;
      wm.watermark = e.ts;
      steps.push_back(std::move(wm));
      continue;
    }
    const Value k = string_keys ? Value("user-" + std::to_string(e.key)) : Value(e.key);
    batch.records.emplace_back(Row{k, Value(e.v)}, e.ts);
  }
  return steps;
}

FieldType KeyType(bool string_keys) {
  return string_keys ? FieldType::kString : FieldType::kInt64;
}

TEST(WindowTablesTest, SnapshotMidWindowRestoresIntoTheTablesAndIntoRocksDb) {
  for (const bool string_keys : {false, true}) {
    SCOPED_TRACE(string_keys ? "string keys" : "int64 keys");
    const std::vector<Event> events = RandomStream(11, 3000);
    std::vector<testing::WindowStep> steps = Steps(events, string_keys);
    Open whole(KeyType(string_keys), CountSum(1000));
    whole.Run(steps, 0, steps.size());
    const std::vector<std::string> expected = whole.Results();
    ASSERT_GT(expected.size(), 3000u);
    // Cuts inside windows, with one, two or three windows open.
    for (const size_t cut : {steps.size() / 5, steps.size() / 2, steps.size() * 4 / 5}) {
      SCOPED_TRACE("cut " + std::to_string(cut));
      steps = Steps(events, string_keys);
      std::vector<std::string> before;
      std::string bytes;
      size_t panes = 0;
      {
        Open first(KeyType(string_keys), CountSum(1000));
        first.Run(steps, 0, cut);
        ASSERT_TRUE(first.op().uses_window_tables());
        panes = first.op().NumSlices();
        ASSERT_GT(panes, 0u);
        bytes = first.Snapshot();
        before = first.Results();
        // The snapshot leaves the tables as they were.
        EXPECT_TRUE(first.op().uses_window_tables());
        EXPECT_EQ(first.op().NumSlices(), panes);
        first.Run(steps, cut, steps.size());
        EXPECT_EQ(first.Results(), expected);
      }
      // Into the tables: the rest of the output in the same order as the uninterrupted run's.
      {
        std::vector<testing::WindowStep> rest = Steps(events, string_keys);
        Open heap(KeyType(string_keys), CountSum(1000));
        heap.Restore(bytes);
        EXPECT_TRUE(heap.op().uses_window_tables());
        EXPECT_EQ(heap.op().NumSlices(), panes);
        EXPECT_EQ(testing::SnapshotOf(heap.base()), bytes);
        heap.Run(rest, cut, rest.size());
        std::vector<std::string> got = before;
        for (std::string& line : heap.Results()) {
          got.push_back(std::move(line));
        }
        EXPECT_EQ(got, expected);
      }
      // Into RocksDB: the tables are its cache while they fit its budget (they do: 1 MiB), so
      // the same rows in the same order.
      std::string rocks_bytes;
      {
        std::vector<testing::WindowStep> rest = Steps(events, string_keys);
        Open rocks(KeyType(string_keys), CountSum(1000), "rocksdb");
        rocks.Restore(bytes);
        ASSERT_TRUE(rocks.op().uses_rocksdb());
        EXPECT_TRUE(rocks.op().uses_window_tables());
        rocks_bytes = rocks.Snapshot();
        // The canonical bytes of the same state: the tables write what the per-key slices do.
        EXPECT_EQ(rocks_bytes, bytes);
        rocks.Run(rest, cut, rest.size());
        std::vector<std::string> got = before;
        for (std::string& line : rocks.Results()) {
          got.push_back(std::move(line));
        }
        EXPECT_EQ(got, expected);
        EXPECT_EQ(rocks.op().rocksdb_spills(), 0);
      }
      // And back from RocksDB's canonical snapshot into the tables, in order again.
      {
        std::vector<testing::WindowStep> rest = Steps(events, string_keys);
        Open heap(KeyType(string_keys), CountSum(1000));
        heap.Restore(rocks_bytes);
        EXPECT_TRUE(heap.op().uses_window_tables());
        EXPECT_EQ(heap.op().NumSlices(), panes);
        heap.Run(rest, cut, rest.size());
        std::vector<std::string> got = before;
        for (std::string& line : heap.Results()) {
          got.push_back(std::move(line));
        }
        EXPECT_EQ(got, expected);
      }
    }
  }
}

// Every cut of a short script, a record at a time: the restored run's output, late records and
// counters equal the uninterrupted run's, and the restored operator's snapshot equals the one it
// was restored from.
TEST(WindowTablesTest, EveryCutRoundTrips) {
  for (const bool string_keys : {false, true}) {
    SCOPED_TRACE(string_keys ? "string keys" : "int64 keys");
    auto k = [&](int64_t i) {
      return string_keys ? Value("key" + std::to_string(i)) : Value(i);
    };
    const std::vector<testing::ScriptStep> script = {
        testing::ElementStep(Row{k(2), Value(int64_t{10})}, 100),
        testing::ElementStep(Row{k(1), Value(int64_t{20})}, 900),
        testing::ElementStep(Row{k(1), Value(int64_t{11})}, 1500),
        testing::WatermarkStep(500),
        testing::ElementStep(Row{k(3), Value(int64_t{30})}, 999),
        testing::WatermarkStep(999),
        testing::ElementStep(Row{k(2), Value(int64_t{21})}, 950),  // late
        testing::ElementStep(Row{k(3), Value(int64_t{31})}, 2100),
        testing::ElementStep(Row{k(1), Value(int64_t{12})}, 1999),
        testing::WatermarkStep(1999),
        testing::ElementStep(Row{k(1), Value(int64_t{13})}, 2500),
        testing::WatermarkStep(kMaxTimestamp),
        testing::EndInputStep(),
    };
    const WindowOperatorPlan plan = WindowOperator::Compile(KeyValueSchema(KeyType(string_keys)),
                                                            CountSum(1000, "late"), {"k"});
    const testing::ScriptRun run =
        testing::ExpectSnapshotRoundTrips(plan.factory, script, [](const StreamOperator& op) {
          const auto& w = static_cast<const WindowOperator&>(op);
          return std::vector<int64_t>{w.num_late_records_side_output(), w.num_windows_fired(),
                                      w.uses_window_tables() ? 1 : 0};
        });
    EXPECT_EQ(run.counters, (std::vector<int64_t>{1, 6, 1}));
    ASSERT_EQ(run.side.size(), 1u);
  }
}

// Keys of one string of at most 16 bytes are held in the table slots ("short-string" tables)
// and fire in std::string order: NUL bytes, prefixes ("ab" < "ab\0" < "abc"), the empty string,
// bytes >= 0x80 (unsigned), a key of exactly 16 bytes.
TEST(WindowTablesTest, ShortStringKeysFireInStringOrderWithNulBytesAndPrefixes) {
  Open o(FieldType::kString, CountSum(1000));
  const std::vector<std::string> keys = {"abc",
                                         std::string("ab\0", 3),
                                         "ab",
                                         "",
                                         std::string("\0", 1),
                                         "b",
                                         std::string(16, '\xff'),
                                         std::string(16, 'a'),
                                         std::string("ab\0\0", 4),
                                         "\x80",
                                         "a",
                                         std::string("a\0b", 3),
                                         std::string(15, 'a'),
                                         "\x7f"};
  std::vector<StreamRecord> batch;
  for (int round = 0; round < 3; ++round) {  // each key three times, value 1, 2, 3
    for (const std::string& k : keys) {
      batch.emplace_back(Row{Value(k), Value(int64_t{round + 1})}, 10 * round);
    }
  }
  o.Batch(std::move(batch));
  EXPECT_EQ(o.window_op().window_table_keys(), "short-string");
  EXPECT_EQ(o.window_op().NumStateKeys(), static_cast<int64_t>(keys.size()));
  o.Watermark(999);
  std::vector<std::string> want = keys;
  std::sort(want.begin(), want.end());
  const std::vector<StreamRecord> rows = o.Records();
  ASSERT_EQ(rows.size(), keys.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].row.GetString(0), want[i]) << i;
    EXPECT_EQ(rows[i].row.GetInt64(3), 3) << i;  // n
    EXPECT_EQ(rows[i].row.GetInt64(4), 6) << i;  // sum_v
  }
  EXPECT_EQ(o.window_op().window_table_keys(), "short-string");
}

// The general path's output and the tables', fed the same stream of `key(e)` keys (NULL:
// `Value()`).
// On RocksDB (`backend`), whose budget the tables may outgrow, only the output is compared.
void ExpectSameAsGeneral(const std::vector<Event>& events,
                         const std::function<Value(const Event&)>& key,
                         const std::string& final_form, const std::string& backend = "heap") {
  SCOPED_TRACE(final_form + " on " + backend);
  Open tables(FieldType::kString, CountSum(1000, "late"), backend);
  Open general(FieldType::kString, CountSum(1000, "late", "purging(event-time)"));
  for (Open* o : {&tables, &general}) {
    std::vector<StreamRecord> batch;
    for (const Event& e : events) {
      if (e.watermark || batch.size() == 64) {
        o->Batch(std::move(batch));
        batch.clear();
      }
      if (e.watermark) {
        o->Watermark(e.ts);
        continue;
      }
      const Value k = key(e);
      if (k.index() == 0) {  // NULL: a NULL string cell
        Row row{Value(std::string()), Value(e.v)};
        row.SetNull(0);
        batch.emplace_back(std::move(row), e.ts);
      } else {
        batch.emplace_back(Row{k, Value(e.v)}, e.ts);
      }
    }
  }
  if (backend == "heap") {
    EXPECT_TRUE(tables.window_op().uses_window_tables());
    EXPECT_EQ(tables.window_op().window_table_keys(), final_form);
  }
  const std::vector<std::string> want = general.Main();
  ASSERT_GT(want.size(), 100u);
  EXPECT_EQ(tables.Main(), want);
  EXPECT_EQ(tables.Late(), general.Late());
  EXPECT_EQ(tables.window_op().num_windows_fired(), general.window_op().num_windows_fired());
}

// A key the short-string tables cannot hold (17 bytes, NULL, mostly short keys with a few long
// ones) widens them to interned keys, which hold every open window's state as it was and take
// that record and the rest: the output is the general path's, and the operator stays on tables.
TEST(WindowTablesTest, AKeyTooLongOrNullWidensShortStringTablesToInternedKeys) {
  const std::vector<Event> events = RandomStream(5, 3000, 20000);
  // 16 bytes: held in the slots to the end.
  ExpectSameAsGeneral(
      events,
      [](const Event& e) {
        std::string k = "user-" + std::to_string(e.key);
        k.resize(16, '.');
        return Value(k);
      },
      "short-string");
  // 16 bytes, then one key of 17 from the middle of the stream on.
  ExpectSameAsGeneral(
      events,
      [](const Event& e) {
        std::string k = "user-" + std::to_string(e.key);
        k.resize(e.ts > 4000 && e.key == 7 ? 17 : 16, '.');
        return Value(k);
      },
      "interned");
  // A NULL key in the middle.
  ExpectSameAsGeneral(
      events,
      [](const Event& e) {
        return e.ts > 3000 && e.key == -11 ? Value() : Value("u" + std::to_string(e.key));
      },
      "interned");
  // Mostly short keys, every 100th key long; on the heap and on RocksDB.
  for (const char* backend : {"heap", "rocksdb"}) {
    ExpectSameAsGeneral(
        events,
        [](const Event& e) {
          return Value((e.key % 100 == 0 ? "a-user-id-longer-than-sixteen-bytes-" : "u") +
                       std::to_string(e.key));
        },
        "interned", backend);
  }
}

// A snapshot of short-string tables is the bytes interned-key tables (and the sliced store)
// write for the same state; it restores into short-string tables, a state with a long key into
// interned ones.
TEST(WindowTablesTest, ShortStringSnapshotsAreTheInternedTablesBytes) {
  const std::vector<Event> events = RandomStream(13, 2000, 6000);
  std::vector<testing::WindowStep> steps = Steps(events, true);
  const size_t cut = steps.size() / 2;
  // The same records, then a late record (dropped: state unchanged but for the counter) of a
  // short key, or of a long one, which widens the tables first.
  auto run = [&](const std::string& late_key) {
    auto o = std::make_unique<Open>(FieldType::kString, CountSum(1000));
    o->Run(steps, 0, cut);
    o->Element(StreamRecord(Row{Value(late_key), Value(int64_t{1})}, 0));
    return o;
  };
  std::unique_ptr<Open> short_run = run("late");
  std::unique_ptr<Open> long_run = run("a-late-key-longer-than-sixteen-bytes");
  EXPECT_EQ(short_run->op().window_table_keys(), "short-string");
  EXPECT_EQ(long_run->op().window_table_keys(), "interned");
  EXPECT_GT(short_run->op().num_late_records_dropped(), 0);
  EXPECT_EQ(long_run->op().num_late_records_dropped(), short_run->op().num_late_records_dropped());
  const size_t panes = short_run->op().NumSlices();
  ASSERT_GT(panes, 200u);
  EXPECT_EQ(long_run->op().NumSlices(), panes);
  EXPECT_EQ(long_run->op().NumStateKeys(), short_run->op().NumStateKeys());
  EXPECT_EQ(long_run->op().StateBytes(), short_run->op().StateBytes());
  const std::string bytes = short_run->Snapshot();
  EXPECT_EQ(long_run->Snapshot(), bytes);
  // Restored: into short-string tables, the same bytes again, the same rest of the output.
  Open restored(FieldType::kString, CountSum(1000));
  restored.Restore(bytes);
  EXPECT_TRUE(restored.op().uses_window_tables());
  EXPECT_EQ(restored.op().window_table_keys(), "short-string");
  EXPECT_EQ(restored.op().NumSlices(), panes);
  EXPECT_EQ(testing::SnapshotOf(restored.base()), bytes);
  const std::vector<std::string> before = short_run->Results();
  restored.Run(steps, cut, steps.size());
  short_run->Run(steps, cut, steps.size());
  std::vector<std::string> got = before;
  for (std::string& line : restored.Results()) {
    got.push_back(std::move(line));
  }
  EXPECT_EQ(got, short_run->Results());
  // A state holding a long key restores into interned-key tables.
  long_run->Element(
      StreamRecord(Row{Value("another-key-longer-than-sixteen"), Value(int64_t{1})}, 7999));
  Open restored_long(FieldType::kString, CountSum(1000));
  const std::string long_bytes = long_run->Snapshot();
  restored_long.Restore(long_bytes);
  EXPECT_EQ(restored_long.op().window_table_keys(), "interned");
  EXPECT_EQ(restored_long.op().NumSlices(), panes + 1);
  EXPECT_EQ(testing::SnapshotOf(restored_long.base()), long_bytes);
}

}  // namespace
}  // namespace tidemark
