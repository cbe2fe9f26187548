// Snapshot / restore of the window operator on every path: for every cut of a scripted input
// (between records, with open windows and pending timers) the restored run's output equals the
// uninterrupted run's (tests/testing/snapshot_round_trip.h).

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/core/errors.h"
#include "runtime/state/key_groups.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"
#include "tests/testing/snapshot_round_trip.h"

namespace tidemark {
namespace {

using testing::ElementStep;
using testing::EndInputStep;
using testing::ExpectSnapshotRoundTrips;
using testing::ProcessingTimeStep;
using testing::ScriptStep;
using testing::WatermarkStep;

Schema KeyValueSchema(FieldType key_type) {
  Schema s;
  s.Add("k", key_type);
  s.Add("v", FieldType::kInt64);
  return s;
}

AggregateSpec Agg(const std::string& function, const std::string& field, const std::string& as) {
  AggregateSpec a;
  a.function = function;
  a.field = field;
  a.as = as;
  return a;
}

// count, sum, first, last: exact when pre-aggregated, so event-time tumbling / sliding windows
// with the default trigger run on the sliced path.
std::vector<AggregateSpec> SlicedAggregates() {
  return {Agg("count", "", "count"), Agg("sum", "v", "sum_v"), Agg("first", "v", "first_v"),
          Agg("last", "v", "last_v")};
}

struct Built {
  testing::OperatorFactory factory;
  bool sliced = false;
};

Built Build(const WindowSpec& spec, FieldType key_type = FieldType::kInt64) {
  WindowOperatorPlan plan = WindowOperator::Compile(KeyValueSchema(key_type), spec, {"k"});
  Built b;
  b.factory = plan.factory;
  auto probe = plan.factory();
  b.sliced = static_cast<WindowOperator&>(*probe).uses_slices();
  return b;
}

std::vector<int64_t> WindowCounters(const StreamOperator& op) {
  const auto& w = static_cast<const WindowOperator&>(op);
  return {w.num_late_records_dropped(), w.num_late_records_side_output(), w.num_windows_fired(),
          w.uses_slices() ? 1 : 0};
}

// Keys 1..3 over three tumbling windows, out of order, with records late within and beyond the
// allowed lateness (late firings, side output), a watermark that fires some windows and not
// others, and the end of input.
std::vector<ScriptStep> TumblingScript(bool string_keys) {
  auto k = [&](int64_t i) {
    return string_keys ? Value("key" + std::to_string(i)) : Value(i);
  };
  return {
      ElementStep(Row{k(1), 10}, 100),
      ElementStep(Row{k(2), 20}, 900),
      ElementStep(Row{k(1), 11}, 1500),
      ElementStep(Row{k(3), 30}, 999),
      WatermarkStep(500),
      ElementStep(Row{k(1), 12}, 400),
      WatermarkStep(1200),
      ElementStep(Row{k(2), 21}, 950),  // late, allowed
      ElementStep(Row{k(3), 31}, 2100),
      WatermarkStep(1600),
      ElementStep(Row{k(1), 13}, 10),  // beyond lateness: side output
      ElementStep(Row{k(2), 22}, 1999),
      ElementStep(Row{k(1), 14}, 2500),
      WatermarkStep(2400),
      ElementStep(Row{k(3), 32}, 1800),
      WatermarkStep(kMaxTimestamp),
      EndInputStep(),
  };
}

// `script` with `step` inserted before position `at`.
std::vector<ScriptStep> With(const std::vector<ScriptStep>& script, size_t at, ScriptStep step) {
  std::vector<ScriptStep> out;
  out.reserve(script.size() + 1);
  for (size_t i = 0; i < script.size(); ++i) {
    if (i == at) {
      out.push_back(step);
    }
    out.push_back(script[i]);
  }
  return out;
}

WindowSpec Tumbling(int64_t size, int64_t lateness) {
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.size_ms = size;
  spec.allowed_lateness_ms = lateness;
  spec.late_output = "late";
  spec.aggregates = SlicedAggregates();
  return spec;
}

TEST(WindowSnapshotTest, SlicedTumblingInt64KeysRoundTripWithLateFiringsAndSideOutput) {
  const Built b = Build(Tumbling(1000, 500));
  ASSERT_TRUE(b.sliced);
  const auto run = ExpectSnapshotRoundTrips(b.factory, TumblingScript(false), WindowCounters);
  // The uninterrupted run itself: 0 dropped, 1 to the side output, 9 firings, still sliced.
  EXPECT_EQ(run.counters, (std::vector<int64_t>{0, 1, 9, 1}));
  ASSERT_EQ(run.side.size(), 1u);
  EXPECT_EQ(run.side[0], "late: record([1,13,0,1000,1590]@10)");
  EXPECT_EQ(run.main.size(), 9u + 5u);  // results and watermarks
}

TEST(WindowSnapshotTest, SlicedTumblingStringKeysRoundTrip) {
  const Built b = Build(Tumbling(1000, 500), FieldType::kString);
  ASSERT_TRUE(b.sliced);
  ExpectSnapshotRoundTrips(b.factory, TumblingScript(true), WindowCounters);
}

TEST(WindowSnapshotTest, SlicedSlidingRoundTripWithoutLateness) {
  WindowSpec spec;
  spec.assigner = "sliding";
  spec.size_ms = 1500;
  spec.slide_ms = 500;
  spec.aggregates = SlicedAggregates();
  const Built b = Build(spec);
  ASSERT_TRUE(b.sliced);
  const auto run = ExpectSnapshotRoundTrips(b.factory, TumblingScript(false), WindowCounters);
  EXPECT_EQ(run.counters[0], 1);  // ts 10 at watermark 1600: every window of it is gone
}

TEST(WindowSnapshotTest, SlicedInt64StoreMigratingToKeysRoundTrips) {
  // Int64 keys first, then a NULL key moves the sliced state to the general key store.
  std::vector<ScriptStep> script = TumblingScript(false);
  script = With(script, 6, ElementStep(Row{Value(), Value(int64_t{5})}, 1300));
  const Built b = Build(Tumbling(1000, 500));
  ExpectSnapshotRoundTrips(b.factory, script, WindowCounters);
}

TEST(WindowSnapshotTest, LeavingTheSlicedPathRoundTrips) {
  // A timestamp beyond +-2^61 ms converts the operator to per-window state mid-stream.
  const std::vector<ScriptStep> script =
      With(TumblingScript(false), 7,
           ElementStep(Row{Value(int64_t{2}), Value(int64_t{7})}, Timestamp{1} << 62));
  const Built b = Build(Tumbling(1000, 500));
  const auto run = ExpectSnapshotRoundTrips(b.factory, script, WindowCounters);
  EXPECT_EQ(run.counters[3], 0);  // ended on the general path
}

TEST(WindowSnapshotTest, GeneralPathWithAvgAndCountTriggerRoundTrips) {
  WindowSpec spec = Tumbling(1000, 300);
  spec.aggregates.push_back(Agg("avg", "v", "avg_v"));  // not pre-aggregatable: per-window state
  spec.trigger = "count(2)";                            // trigger state per (key, window)
  const Built b = Build(spec);
  ASSERT_FALSE(b.sliced);
  ExpectSnapshotRoundTrips(b.factory, TumblingScript(false), WindowCounters);
}

TEST(WindowSnapshotTest, ContinuousTriggerTimersRoundTrip) {
  WindowSpec spec = Tumbling(2000, 0);
  spec.trigger = "continuous-event-time(300ms)";
  const Built b = Build(spec);
  ExpectSnapshotRoundTrips(b.factory, TumblingScript(false), WindowCounters);
}

TEST(WindowSnapshotTest, SessionWindowsRoundTripWithMergesAndLateness) {
  WindowSpec spec;
  spec.assigner = "session";
  spec.gap_ms = 400;
  spec.allowed_lateness_ms = 200;
  spec.late_output = "late";
  spec.aggregates = SlicedAggregates();
  const Built b = Build(spec);
  std::vector<ScriptStep> script = TumblingScript(false);
  // Bridging records merge sessions of key 1 ([100,500) + [1500,1900) via 800 and 1200).
  script = With(script, 3, ElementStep(Row{Value(int64_t{1}), Value(int64_t{40})}, 800));
  script = With(script, 9, ElementStep(Row{Value(int64_t{1}), Value(int64_t{41})}, 1200));
  const auto run = ExpectSnapshotRoundTrips(b.factory, script, WindowCounters);
  EXPECT_GT(run.counters[2], 0);
}

// Session windows without lateness run on the flat session path; `PerWindowSessions` (another
// type, so the operator does not recognise it) forces the per-window path for the same windows.
class PerWindowSessions : public SessionWindows {
 public:
  using SessionWindows::SessionWindows;
};

testing::OperatorFactory SessionFactory(bool flat, FieldType key_type, bool emit_firing) {
  return [flat, key_type, emit_firing]() -> std::unique_ptr<StreamOperator> {
    const Schema input = KeyValueSchema(key_type);
    std::vector<ResolvedAggregate> aggregates;
    for (const AggregateSpec& a : SlicedAggregates()) {
      aggregates.push_back(ResolveAggregate(a, input));
    }
    aggregates.push_back(ResolveAggregate(Agg("avg", "v", "avg_v"), input));
    WindowOperator::Options options;
    options.key_slots = {0};
    options.late_output_tag = "late";
    options.late_provenance = true;
    options.emit_firing = emit_firing;
    options.input_layout = input.layout();
    std::unique_ptr<WindowAssigner> assigner = flat
                                                   ? std::make_unique<SessionWindows>(true, 400)
                                                   : std::make_unique<PerWindowSessions>(true, 400);
    auto op = std::make_unique<WindowOperator>(
        std::move(assigner), nullptr,
        std::make_unique<AggregatingWindowFunction>(
            aggregates, false,
            AggregatingWindowFunction::OutputLayout({key_type}, aggregates, false, emit_firing)),
        options);
    EXPECT_EQ(op->uses_flat_sessions(), flat);
    return op;
  };
}

// TumblingScript with bridging records that merge sessions of key 1 ([100,500) + [1500,1900)
// via 800 and 1200, so the merged session keeps [100,500)'s state window) and two records of
// key 2 that touch [900,1300) from both sides.
std::vector<ScriptStep> SessionScript(bool string_keys) {
  auto k = [&](int64_t i) {
    return string_keys ? Value("key" + std::to_string(i)) : Value(i);
  };
  std::vector<ScriptStep> script = TumblingScript(string_keys);
  script = With(script, 3, ElementStep(Row{k(1), Value(int64_t{40})}, 800));
  script = With(script, 4, ElementStep(Row{k(2), Value(int64_t{23})}, 1300));
  script = With(script, 5, ElementStep(Row{k(2), Value(int64_t{24})}, 500));
  script = With(script, 11, ElementStep(Row{k(1), Value(int64_t{41})}, 1200));
  return script;
}

// Both paths, every cut: the same output, and at every cut the same snapshot bytes (the flat path
// writes the per-window format), so each restores the other's snapshots (the flat operator's
// round trip restores exactly the bytes the per-window one writes).
void ExpectFlatSessionsMatchPerWindow(const std::vector<ScriptStep>& script, FieldType key_type,
                                      bool emit_firing = false) {
  const auto flat = SessionFactory(true, key_type, emit_firing);
  const auto per_window = SessionFactory(false, key_type, emit_firing);
  const auto run = ExpectSnapshotRoundTrips(flat, script, WindowCounters);
  const auto reference = testing::RunScript(per_window, script, -1, WindowCounters);
  EXPECT_EQ(run.main, reference.main);
  EXPECT_EQ(run.side, reference.side);
  EXPECT_EQ(run.counters, reference.counters);
  for (int cut = 0; cut <= static_cast<int>(script.size()); ++cut) {
    const auto a = testing::RunScript(flat, script, cut, WindowCounters);
    const auto b = testing::RunScript(per_window, script, cut, WindowCounters);
    EXPECT_EQ(a.snapshot, b.snapshot) << "cut " << cut;
    EXPECT_EQ(a.main, reference.main) << "cut " << cut;
  }
}

TEST(WindowSnapshotTest, FlatSessionsInt64KeysMatchThePerWindowPathAndRoundTrip) {
  ExpectFlatSessionsMatchPerWindow(SessionScript(false), FieldType::kInt64);
  const auto run =
      testing::RunScript(SessionFactory(true, FieldType::kInt64, false), SessionScript(false));
  // Real values. Key 1: 10@100 alone in [100,500), fired at watermark 500; 40@800 then 12@400
  // form [400,1200) (first 40, last 12); 41@1200 and 11@1500 form [1200,1900). Key 2: 20@900,
  // 23@1300, 24@500 (touching [900,1300) from below) and 21@950 in one session [500,1700).
  EXPECT_EQ(
      run.main,
      (std::vector<std::string>{
          "record([1,100,500,1,10,10,10,10.0]@499)", "watermark(500)",
          "record([1,400,1200,2,52,40,12,26.0]@1199)", "watermark(1200)",
          "record([3,999,1399,1,30,30,30,30.0]@1398)", "watermark(1600)",
          "record([2,500,1700,4,88,20,21,22.0]@1699)", "record([1,1200,1900,2,52,11,41,26.0]@1899)",
          "record([2,1999,2399,1,22,22,22,22.0]@2398)", "watermark(2400)",
          "record([3,1800,2500,2,63,31,32,31.5]@2499)",
          "record([1,2500,2900,1,14,14,14,14.0]@2899)", "watermark(9223372036854775807)"}));
  ASSERT_EQ(run.side.size(), 1u) << ::testing::PrintToString(run.side);
  EXPECT_EQ(run.side[0], "late: record([1,13,10,410,1590]@10)");
}

TEST(WindowSnapshotTest, FlatSessionsStringKeysAndFiringColumnMatchThePerWindowPath) {
  ExpectFlatSessionsMatchPerWindow(SessionScript(true), FieldType::kString, /*emit_firing=*/true);
}

TEST(WindowSnapshotTest, FlatSessionsInt64StoreMigratingToKeysMatchesThePerWindowPath) {
  // Int64 keys first, then a NULL key moves the sessions to the general key store.
  std::vector<ScriptStep> script = SessionScript(false);
  script = With(script, 7, ElementStep(Row{Value(), Value(int64_t{5})}, 1300));
  ExpectFlatSessionsMatchPerWindow(script, FieldType::kInt64);
}

TEST(WindowSnapshotTest, LeavingTheFlatSessionPathRoundTrips) {
  // A timestamp beyond +-2^61 ms converts the operator to per-window state mid-stream.
  const std::vector<ScriptStep> script =
      With(SessionScript(false), 8,
           ElementStep(Row{Value(int64_t{2}), Value(int64_t{7})}, Timestamp{1} << 62));
  ExpectFlatSessionsMatchPerWindow(script, FieldType::kInt64);
}

TEST(WindowSnapshotTest, BufferingFunctionPanesRoundTrip) {
  // A ListWindowState per pane (Flink's ProcessWindowFunction over an iterable).
  testing::OperatorFactory factory = [] {
    WindowOperator::Options options;
    options.key_slots = {0};
    options.allowed_lateness_ms = 500;
    options.emit_firing = true;
    options.input_layout = RowLayout::Of({FieldType::kInt64, FieldType::kInt64});
    auto fn = std::make_unique<BufferingWindowFunction>(
        [](const WindowFunction::Context& ctx, const std::vector<StreamRecord>& elements,
           std::vector<Row>& out) {
          std::vector<Value> row;
          row.push_back(ctx.key[0]);
          row.emplace_back(ctx.window.start());
          for (const StreamRecord& r : elements) {
            row.push_back(r.row.Get(1));
            row.push_back(r.timestamp);
          }
          out.push_back(Row::FromValues(row));
        });
    return std::make_unique<WindowOperator>(std::make_unique<SlidingWindows>(true, 1000, 500, 0),
                                            nullptr, std::move(fn), options);
  };
  ExpectSnapshotRoundTrips(factory, TumblingScript(false), WindowCounters);
}

TEST(WindowSnapshotTest, ProcessingTimeWindowsRoundTripWithPendingTimers) {
  WindowSpec spec;
  spec.assigner = "tumbling";
  spec.time = "processing";
  spec.size_ms = 1000;
  spec.aggregates = SlicedAggregates();
  const Built b = Build(spec);
  const std::vector<ScriptStep> script = {
      ProcessingTimeStep(100),
      ElementStep(Row{int64_t{1}, 1}, 5),
      ElementStep(Row{int64_t{2}, 2}, 6),
      ProcessingTimeStep(999),
      ElementStep(Row{int64_t{1}, 3}, 7),
      ProcessingTimeStep(1000),
      ElementStep(Row{int64_t{1}, 4}, 8),
      ProcessingTimeStep(2500),
      ElementStep(Row{int64_t{2}, 5}, 9),
      EndInputStep(),
      ProcessingTimeStep(3000),
  };
  const auto run = ExpectSnapshotRoundTrips(b.factory, script, WindowCounters);
  EXPECT_EQ(run.counters[2], 5);
}

TEST(WindowSnapshotTest, CorruptOrForeignSnapshotsAreStateCorrupt) {
  const Built sliced = Build(Tumbling(1000, 500));
  WindowSpec avg = Tumbling(1000, 500);
  avg.aggregates = {Agg("avg", "v", "avg_v")};
  const Built general = Build(avg);

  const auto snapshot_of = [](const testing::OperatorFactory& f, int steps) {
    return testing::RunScript(f, TumblingScript(false), steps).snapshot;
  };
  const std::string bytes = snapshot_of(sliced.factory, 5);
  ASSERT_FALSE(bytes.empty());

  const auto restore = [](const testing::OperatorFactory& f, const std::string& b) {
    testing::CollectingOutput out;
    ManualProcessingTimeService clock;
    auto op = f();
    OperatorContext ctx;
    ctx.output = &out;
    ctx.processing_time = &clock;
    op->Open(ctx);
    StateReader reader(b);
    StateInitializationContext init{&reader, 1, /*restore_watermarks=*/true, {}};
    op->InitializeState(init);
  };
  // Every truncation fails cleanly, never reads past the end.
  for (size_t n = 0; n < bytes.size(); n += 7) {
    EXPECT_THROW(restore(sliced.factory, bytes.substr(0, n)), StateCorrupt) << n;
  }
  // A snapshot of another configuration (sliced, 4 aggregates) into an avg operator.
  EXPECT_THROW(restore(general.factory, bytes), StateCorrupt);
  // Every single flipped byte either still reads or is StateCorrupt; nothing else escapes.
  for (const testing::OperatorFactory& f : {sliced.factory, general.factory}) {
    const std::string good = snapshot_of(f, 9);
    for (size_t i = 0; i < good.size(); ++i) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ 0x5a);
      try {
        restore(f, bad);
      } catch (const StateCorrupt&) {
      }
    }
  }
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

// Rescaling: a snapshot of one subtask restored into two (subtasks 0 and 1 of 2) keeps in each
// exactly the key groups it owns; with the remaining records routed by key group, the two
// restored operators together emit exactly the records the single operator would have.
TEST(WindowSnapshotTest, KeyGroupsRestoreIntoTwoSubtasksAfterRescaling) {
  for (const bool string_keys : {false, true}) {
    for (const bool sliced : {true, false}) {
      SCOPED_TRACE(std::string(string_keys ? "string" : "int64") + " keys, " +
                   (sliced ? "sliced" : "per-window"));
      WindowSpec spec = Tumbling(1000, 500);
      if (!sliced) {
        spec.aggregates.push_back(Agg("avg", "v", "avg_v"));
      }
      const Built b = Build(spec, string_keys ? FieldType::kString : FieldType::kInt64);
      ASSERT_EQ(b.sliced, sliced);
      const std::vector<ScriptStep> script = TumblingScript(string_keys);
      const testing::ScriptRun whole = testing::RunScript(b.factory, script);
      for (size_t cut = 0; cut <= script.size(); ++cut) {
        SCOPED_TRACE("cut " + std::to_string(cut));
        testing::CollectingOutput out;
        ManualProcessingTimeService clock;
        auto open = [&](int subtask, int parallelism) {
          auto op = b.factory();
          OperatorContext ctx;
          ctx.subtask_index = subtask;
          ctx.parallelism = parallelism;
          ctx.output = &out;
          ctx.processing_time = &clock;
          op->Open(ctx);
          return op;
        };
        auto run_step = [](StreamOperator& op, const ScriptStep& s) {
          ScriptStep step = s;
          if (step.kind == ScriptStep::Kind::kElement) {
            op.ProcessElement(step.record, 0);
          } else if (step.kind == ScriptStep::Kind::kWatermark) {
            op.ProcessWatermark(Watermark{step.time}, 0);
          } else if (step.kind == ScriptStep::Kind::kEndInput) {
            op.EndInput(0);
            op.Finish();
          }
        };
        auto single = open(0, 1);
        for (size_t i = 0; i < cut; ++i) {
          run_step(*single, script[i]);
        }
        StateWriter writer;
        StateSnapshotContext snap{1, 0, writer};
        single->SnapshotState(snap);
        single->Close();
        std::unique_ptr<StreamOperator> parts[2] = {open(0, 2), open(1, 2)};
        for (auto& part : parts) {
          StateReader reader(writer.bytes());
          StateInitializationContext init{&reader, 1, /*restore_watermarks=*/true, {}};
          part->InitializeState(init);
        }
        for (size_t i = cut; i < script.size(); ++i) {
          const ScriptStep& s = script[i];
          if (s.kind == ScriptStep::Kind::kElement) {
            const int group = KeyGroupForHash(KeyHash64(Key{s.record.row.Get(0)}), 128);
            run_step(*parts[OperatorIndexForKeyGroup(128, 2, group)], s);
          } else {
            run_step(*parts[0], s);
            run_step(*parts[1], s);
          }
        }
        std::vector<std::string> records;
        std::vector<std::string> expected;
        for (const StreamRecord& r : out.Records()) {
          records.push_back(testing::DescribeRecord(r));
        }
        for (const std::string& e : whole.main) {
          if (e.rfind("record(", 0) == 0) {
            expected.push_back(e);
          }
        }
        std::sort(records.begin(), records.end());
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(records, expected);
        if (::testing::Test::HasFailure()) {
          return;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tidemark
