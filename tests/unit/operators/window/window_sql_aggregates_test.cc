// The Flink SQL aggregates of `type: window` (issue 43): count-distinct, approx-count-distinct,
// percentile, approx-percentile, first-value, last-value and listagg, with exact window contents
// on tumbling, sliding and session windows, late records (dropped, and within allowed
// lateness), and restored from a snapshot at every cut of each script
// (tests/testing/snapshot_round_trip.h).

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/core/errors.h"
#include "tests/testing/snapshot_round_trip.h"

namespace tidemark {
namespace {

using testing::ElementStep;
using testing::EndInputStep;
using testing::ExpectSnapshotRoundTrips;
using testing::ScriptStep;
using testing::WatermarkStep;

Schema RideSchema() {
  Schema s;
  s.Add("k", FieldType::kInt64);
  s.Add("user", FieldType::kString);
  s.Add("fare", FieldType::kDouble);
  return s;
}

AggregateSpec Agg(const std::string& function, const std::string& field, const std::string& as) {
  AggregateSpec a;
  a.function = function;
  a.field = field;
  a.as = as;
  return a;
}

// Every new aggregate once: (count-distinct, approx-count-distinct) of user, (percentile,
// approx-percentile) of fare at 0.5, (first-value, last-value) of user, listagg of user.
std::vector<AggregateSpec> SqlAggregates() {
  AggregateSpec p = Agg("percentile", "fare", "p50");
  p.percentage = 0.5;
  AggregateSpec ap = Agg("approx-percentile", "fare", "ap50");
  ap.percentage = 0.5;
  AggregateSpec l = Agg("listagg", "user", "users");
  l.separator = "|";
  return {Agg("count-distinct", "user", "cd"),
          Agg("approx-count-distinct", "user", "acd"),
          p,
          ap,
          Agg("first-value", "user", "fv"),
          Agg("last-value", "user", "lv"),
          l};
}

struct Built {
  testing::OperatorFactory factory;
  bool sliced = false;
  bool flat_sessions = false;
};

Built Build(const WindowSpec& spec) {
  WindowOperatorPlan plan = WindowOperator::Compile(RideSchema(), spec, {"k"});
  Built b;
  b.factory = plan.factory;
  auto probe = plan.factory();
  b.sliced = static_cast<WindowOperator&>(*probe).uses_slices();
  b.flat_sessions = static_cast<WindowOperator&>(*probe).uses_flat_sessions();
  return b;
}

std::vector<int64_t> Counters(const StreamOperator& op) {
  const auto& w = static_cast<const WindowOperator&>(op);
  return {w.num_late_records_dropped(), w.num_windows_fired()};
}

WindowSpec Spec(const std::string& assigner) {
  WindowSpec spec;
  spec.assigner = assigner;
  spec.aggregates = SqlAggregates();
  return spec;
}

TEST(WindowSqlAggregatesTest, OutputSchemaNamesAndTypes) {
  const WindowOperatorPlan plan = WindowOperator::Compile(RideSchema(),
                                                          [] {
                                                            WindowSpec s = Spec("tumbling");
                                                            s.size_ms = 1000;
                                                            return s;
                                                          }(),
                                                          {"k"});
  std::string columns;
  for (const Field& f : plan.output_schema.fields()) {
    columns += f.name + ":" + std::string(ToString(f.type)) + " ";
  }
  EXPECT_EQ(columns,
            "k:int64 window_start:timestamp window_end:timestamp cd:int64 acd:int64 p50:double "
            "ap50:double fv:string lv:string users:string ");
}

// Tumbling 1 s: one key, out-of-order records (the earliest event time arrives third), a NULL
// fare, a late record dropped after the window fired.
TEST(WindowSqlAggregatesTest, TumblingExactContentsRestoredAtEveryCut) {
  WindowSpec spec = Spec("tumbling");
  spec.size_ms = 1000;
  const Built b = Build(spec);
  EXPECT_FALSE(b.sliced);  // per-window states: no slice form for these aggregates yet
  const std::vector<ScriptStep> script = {
      ElementStep(Row{int64_t{1}, "a", 10.0}, 100),
      ElementStep(Row{int64_t{1}, "b", 30.0}, 900),
      ElementStep(Row{int64_t{1}, "a", 20.0}, 50),
      ElementStep(Row{int64_t{1}, "c", Value{}}, 600),
      WatermarkStep(500),
      ElementStep(Row{int64_t{1}, "d", 40.0}, 1200),
      WatermarkStep(999),
      ElementStep(Row{int64_t{1}, "e", 5.0}, 300),  // late: [0, 1000) has fired; dropped
      WatermarkStep(kMaxTimestamp),
      EndInputStep(),
  };
  const auto run = ExpectSnapshotRoundTrips(b.factory, script, Counters);
  EXPECT_EQ(run.main, (std::vector<std::string>{
                          "watermark(500)",
                          // distinct {a, b, c}; fares 10, 30, 20 (c's is NULL): median 20; earliest
                          // event time 50 ("a"), latest 900 ("b"); arrival order a b a c.
                          "record([1,0,1000,3,3,20.0,20.0,\"a\",\"b\",\"a|b|a|c\"]@999)",
                          "watermark(999)",
                          "record([1,1000,2000,1,1,40.0,40.0,\"d\",\"d\",\"d\"]@1999)",
                          "watermark(9223372036854775807)",
                      }));
  EXPECT_EQ(run.counters, (std::vector<int64_t>{1, 2}));
}

// Sliding 1 s every 500 ms: each record in two windows, each window its own state.
TEST(WindowSqlAggregatesTest, SlidingExactContentsRestoredAtEveryCut) {
  WindowSpec spec = Spec("sliding");
  spec.size_ms = 1000;
  spec.slide_ms = 500;
  const Built b = Build(spec);
  EXPECT_FALSE(b.sliced);
  const std::vector<ScriptStep> script = {
      ElementStep(Row{int64_t{1}, "a", 1.0}, 100),   // [-500, 500), [0, 1000)
      ElementStep(Row{int64_t{1}, "b", 2.0}, 700),   // [0, 1000), [500, 1500)
      ElementStep(Row{int64_t{1}, "a", 4.0}, 400),   // [-500, 500), [0, 1000)
      ElementStep(Row{int64_t{1}, "c", 8.0}, 1100),  // [500, 1500), [1000, 2000)
      WatermarkStep(kMaxTimestamp),
      EndInputStep(),
  };
  const auto run = ExpectSnapshotRoundTrips(b.factory, script, Counters);
  EXPECT_EQ(run.main, (std::vector<std::string>{
                          // {1, 4}: median 2.5; first by time a@100, last a@400
                          "record([1,-500,500,1,1,2.5,2.5,\"a\",\"a\",\"a|a\"]@499)",
                          // {1, 2, 4}: median 2; a@100 .. b@700
                          "record([1,0,1000,2,2,2.0,2.0,\"a\",\"b\",\"a|b|a\"]@999)",
                          // {2, 8}: median 5
                          "record([1,500,1500,2,2,5.0,5.0,\"b\",\"c\",\"b|c\"]@1499)",
                          "record([1,1000,2000,1,1,8.0,8.0,\"c\",\"c\",\"c\"]@1999)",
                          "watermark(9223372036854775807)",
                      }));
}

// Sessions with a 300 ms gap: two sessions merged by a record between them; the merged
// accumulators keep arrival order (listagg) and event time (first-value / last-value).
TEST(WindowSqlAggregatesTest, SessionMergeExactContentsRestoredAtEveryCut) {
  WindowSpec spec = Spec("session");
  spec.gap_ms = 300;
  const Built b = Build(spec);
  EXPECT_FALSE(b.flat_sessions);
  const std::vector<ScriptStep> script = {
      ElementStep(Row{int64_t{1}, "a", 3.0}, 100),  // [100, 400)
      ElementStep(Row{int64_t{1}, "b", 1.0}, 350),  // [100, 650)
      ElementStep(Row{int64_t{1}, "c", 7.0}, 900),  // [900, 1200)
      ElementStep(Row{int64_t{2}, "x", 2.0}, 500),  // key 2: [500, 800)
      WatermarkStep(600),
      ElementStep(Row{int64_t{1}, "b", 5.0}, 620),  // [620, 920) joins both: [100, 1200)
      WatermarkStep(kMaxTimestamp),
      EndInputStep(),
  };
  const auto run = ExpectSnapshotRoundTrips(b.factory, script, Counters);
  EXPECT_EQ(run.main, (std::vector<std::string>{
                          "watermark(600)",
                          "record([2,500,800,1,1,2.0,2.0,\"x\",\"x\",\"x\"]@799)",
                          // {a, b, c}; fares 1 3 5 7: median 4; a@100 .. c@900; arrival a b c b
                          "record([1,100,1200,3,3,4.0,4.0,\"a\",\"c\",\"a|b|c|b\"]@1199)",
                          "watermark(9223372036854775807)",
                      }));
}

// Allowed lateness: a late record within it updates the window and fires it again (firing 1),
// with the distinct count, the percentile and last-value of all its records.
TEST(WindowSqlAggregatesTest, LateRecordWithinAllowedLatenessRefires) {
  WindowSpec spec = Spec("tumbling");
  spec.size_ms = 1000;
  spec.allowed_lateness_ms = 500;
  const Built b = Build(spec);
  const std::vector<ScriptStep> script = {
      ElementStep(Row{int64_t{1}, "a", 10.0}, 100),
      ElementStep(Row{int64_t{1}, "b", 20.0}, 200),
      WatermarkStep(1000),
      ElementStep(Row{int64_t{1}, "c", 60.0}, 999),  // late, within lateness
      ElementStep(Row{int64_t{1}, "a", 0.0}, 50),    // late, within lateness, earliest time
      WatermarkStep(1500),
      ElementStep(Row{int64_t{1}, "z", 1.0}, 10),  // beyond lateness: dropped
      WatermarkStep(kMaxTimestamp),
      EndInputStep(),
  };
  const auto run = ExpectSnapshotRoundTrips(b.factory, script, Counters);
  EXPECT_EQ(run.main, (std::vector<std::string>{
                          "record([1,0,1000,2,2,15.0,15.0,\"a\",\"b\",\"a|b\",0]@999)",
                          "watermark(1000)",
                          // {10, 20, 60}: median 20; the latest event time is c@999
                          "record([1,0,1000,3,3,20.0,20.0,\"a\",\"c\",\"a|b|c\",1]@999)",
                          // {0, 10, 20, 60}: median 15; the earliest is now a@50
                          "record([1,0,1000,3,3,15.0,15.0,\"a\",\"c\",\"a|b|c|a\",2]@999)",
                          "watermark(1500)",
                          "watermark(9223372036854775807)",
                      }));
  EXPECT_EQ(run.counters, (std::vector<int64_t>{1, 3}));
}

// Percentile follows Flink's PERCENTILE (FLINK-36123): linear interpolation at p * (n - 1), in
// Flink's arithmetic (checked against Flink 2.3 on jobs/rides_fare_percentiles.yaml).
TEST(WindowSqlAggregatesTest, PercentileInterpolatesAsFlink) {
  Schema s;
  s.Add("k", FieldType::kInt64);
  s.Add("x", FieldType::kInt64);
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = 1000;
  for (const auto& [p, name] :
       {std::pair{0.0, "p0"}, std::pair{0.3, "p30"}, std::pair{1.0, "p100"}}) {
    AggregateSpec a = Agg("percentile", "x", name);
    a.percentage = p;
    spec.aggregates.push_back(a);
  }
  const WindowOperatorPlan plan = WindowOperator::Compile(s, spec, {"k"});
  // Flink's own example, PERCENTILE(col, 0.3) over 0, 10, 10: its docs say 6.0, its arithmetic
  // ((2 - 1.6) * 0 + (1.6 - 1) * 10, PercentileAggFunction) gives 6.000000000000001, as here.
  const auto run = ExpectSnapshotRoundTrips(
      plan.factory,
      {ElementStep(Row{int64_t{1}, int64_t{10}}, 1), ElementStep(Row{int64_t{1}, int64_t{0}}, 2),
       ElementStep(Row{int64_t{1}, int64_t{10}}, 3), WatermarkStep(kMaxTimestamp), EndInputStep()});
  EXPECT_EQ(run.main, (std::vector<std::string>{"record([1,0,1000,0.0,6.000000000000001,10.0]@999)",
                                                "watermark(9223372036854775807)"}));
}

TEST(WindowSqlAggregatesTest, BadFieldTypesAreCompileErrors) {
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = 1000;
  AggregateSpec p = Agg("percentile", "user", "p");
  p.percentage = 0.5;
  spec.aggregates = {p};
  try {
    (void)WindowOperator::Compile(RideSchema(), spec, {"k"});
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(),
                 "aggregate 'percentile': field 'user' is string; percentile takes an int64 or "
                 "double field");
  }
  spec.aggregates = {Agg("listagg", "fare", "l")};
  try {
    (void)WindowOperator::Compile(RideSchema(), spec, {"k"});
    FAIL() << "no error";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(),
                 "aggregate 'listagg': field 'fare' is double; listagg joins strings (convert it "
                 "with a map first, e.g. set: {fare_text: \"CAST(fare AS STRING)\"})");
  }
}

}  // namespace
}  // namespace tidemark
