// Window Top-N (`type: window-top-n`, Flink's window Top-N): the N best rows per window and
// partition, emitted when the watermark passes the window's max timestamp, with rownum; equal
// sort keys in arrival order; late rows dropped; restored from a snapshot at every cut.

#include "operators/window/window_top_n_operator.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "tests/testing/snapshot_round_trip.h"

namespace tidemark {
namespace {

using testing::ElementStep;
using testing::EndInputStep;
using testing::ExpectSnapshotRoundTrips;
using testing::ScriptStep;
using testing::WatermarkStep;

// region, zone, window_start, window_end, total
Schema ZoneTotals() {
  Schema s;
  s.Add("region", FieldType::kString);
  s.Add("zone", FieldType::kInt64);
  s.Add("window_start", FieldType::kTimestamp);
  s.Add("window_end", FieldType::kTimestamp);
  s.Add("total", FieldType::kDouble);
  return s;
}

testing::OperatorFactory Factory(int64_t n, std::vector<int> partition, bool descending) {
  static const Schema input = ZoneTotals();
  static const Schema output = [] {
    Schema s = ZoneTotals();
    s.Add("rownum", FieldType::kInt64);
    return s;
  }();
  WindowTopNOperator::Options options;
  options.window_start_slot = 2;
  options.window_end_slot = 3;
  options.partition_slots = std::move(partition);
  options.order_by = {{4, descending}};
  options.n = n;
  options.input_layout = input.layout();
  options.output_layout = output.layout();
  return [options] {
    return std::make_unique<WindowTopNOperator>(options);
  };
}

std::vector<int64_t> Counters(const StreamOperator& op) {
  const auto& t = static_cast<const WindowTopNOperator&>(op);
  return {t.num_late_records_dropped(), static_cast<int64_t>(t.rows_held())};
}

// What a window aggregate emits: window [0, 1000) rows stamped 999 before watermark 999, window
// [1000, 2000) rows stamped 1999; a tie on total, a NULL total, and a late row.
std::vector<ScriptStep> Script() {
  auto row = [](const char* region, int64_t zone, int64_t start, Value total) {
    return Row{Value(region), Value(zone), Value(start), Value(start + 1000), std::move(total)};
  };
  return {
      ElementStep(row("east", 1, 0, 10.0), 999),
      ElementStep(row("west", 2, 0, 30.0), 999),
      ElementStep(row("east", 3, 0, 50.0), 999),
      ElementStep(row("east", 4, 0, 30.0), 999),  // ties zone 2's 30.0, arrives later
      ElementStep(row("west", 5, 0, Value{}), 999),
      ElementStep(row("east", 6, 1000, 5.0), 1999),  // the next window, held
      WatermarkStep(999),
      ElementStep(row("east", 7, 0, 99.0), 999),  // its window was emitted: late, dropped
      ElementStep(row("west", 8, 1000, 7.0), 1999),
      WatermarkStep(kMaxTimestamp),
      EndInputStep(),
  };
}

TEST(WindowTopNOperatorTest, TopTwoPerWindowDescendingWithRownum) {
  const auto run = ExpectSnapshotRoundTrips(Factory(2, {}, true), Script(), Counters);
  EXPECT_EQ(run.main, (std::vector<std::string>{
                          "record([\"east\",3,0,1000,50.0,1]@999)",
                          "record([\"west\",2,0,1000,30.0,2]@999)",  // 30.0 first to arrive
                          "watermark(999)",
                          "record([\"west\",8,1000,2000,7.0,1]@1999)",
                          "record([\"east\",6,1000,2000,5.0,2]@1999)",
                          "watermark(9223372036854775807)",
                      }));
  EXPECT_EQ(run.counters, (std::vector<int64_t>{1, 0}));
}

TEST(WindowTopNOperatorTest, PerPartitionAscendingNullsFirst) {
  const auto run = ExpectSnapshotRoundTrips(Factory(2, {0}, false), Script(), Counters);
  EXPECT_EQ(run.main, (std::vector<std::string>{
                          // (window, region) in order: east then west (partition keys sort)
                          "record([\"east\",1,0,1000,10.0,1]@999)",
                          "record([\"east\",4,0,1000,30.0,2]@999)",
                          "record([\"west\",5,0,1000,null,1]@999)",
                          "record([\"west\",2,0,1000,30.0,2]@999)",
                          "watermark(999)",
                          "record([\"east\",6,1000,2000,5.0,1]@1999)",
                          "record([\"west\",8,1000,2000,7.0,1]@1999)",
                          "watermark(9223372036854775807)",
                      }));
}

}  // namespace
}  // namespace tidemark
