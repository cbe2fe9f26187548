// Differential test (issue 4): seeded random streams (out of order, late, several keys and
// splits) through tumbling, sliding and session windows with allowed lateness, checked record
// for record against a brute-force model of Flink's rules written independently here:
//   - a record's windows: every [s, s + size) with s = offset + k * slide containing ts;
//     sessions: [ts, ts + gap), merged with every session of its key it touches
//     (Flink's TimeWindow#intersects is inclusive: [1,3) and [3,5) merge);
//   - a window is late when end - 1 + lateness <= watermark; a record all of whose windows are
//     late goes to the late side output;
//   - a record added to a window whose end - 1 <= watermark fires it at once (an update);
//     otherwise windows fire when the watermark reaches end - 1, in (time, key, window) order;
//   - a window's contents are dropped once the watermark reaches end - 1 + lateness.
// The operator appends a firing number to each result and provenance to late records.
// The same streams also run through the compiled `type: window` operator with incremental
// aggregates (count, sum / min / max / first / last of the record id, min of the key), which
// takes the sliced path (per-key slices of gcd(size, slide)); its rows must equal the model's
// windows summarised the same way. Sessions without lateness take the flat session path (plain
// sessions per key, one timer heap entry per key), sessions with lateness the per-window path.
// Each aggregate case runs twice: string keys a record at a time, and int64 keys in batches (the
// batch loop of the int64 store). One variant adds a record at 2^61 + 5 ms mid-stream, which
// moves the operator from slices (or flat sessions) to per-window state.

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_operator.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

enum class Kind { kTumbling, kSliding, kSession };

struct Params {
  Kind kind;
  int64_t size = 0;
  int64_t slide = 0;
  int64_t offset = 0;
  int64_t gap = 0;
  int64_t lateness = 0;
};

struct Event {
  bool is_watermark = false;
  Timestamp ts = 0;  // record timestamp or watermark
  std::string key;
  std::string split;
  int64_t id = 0;
};

// "<tag><value>", built by appending: `"s" + std::to_string(v)` inlines a string insert in
// which g++ 12 -O2 reports a false -Wrestrict (GCC PR 105329).
std::string Tagged(char tag, int64_t value) {
  std::string s(1, tag);
  s += std::to_string(value);
  return s;
}

std::vector<Event> RandomStream(std::mt19937_64& rng) {
  std::vector<Event> events;
  std::uniform_int_distribution<int> key_dist(0, 2);
  std::uniform_int_distribution<int> split_dist(0, 1);
  std::uniform_int_distribution<int64_t> step(0, 120);
  std::uniform_int_distribution<int64_t> disorder(0, 3000);
  std::uniform_int_distribution<int> every(1, 6);
  Timestamp clock = 10000;
  Timestamp max_ts = kMinTimestamp;
  Timestamp wm = kMinTimestamp;
  const int n = 200;
  int until_wm = every(rng);
  for (int i = 0; i < n; ++i) {
    clock += step(rng);
    Event e;
    e.ts = clock - disorder(rng);
    e.key = std::string(1, static_cast<char>('a' + key_dist(rng)));
    e.split = Tagged('s', split_dist(rng));
    e.id = i;
    max_ts = std::max(max_ts, e.ts);
    events.push_back(e);
    if (--until_wm == 0) {
      until_wm = every(rng);
      const Timestamp next = max_ts - 400;  // below the disorder: some records come late
      if (next > wm) {
        wm = next;
        Event w;
        w.is_watermark = true;
        w.ts = wm;
        events.push_back(w);
      }
    }
  }
  Event end;
  end.is_watermark = true;
  end.ts = kMaxTimestamp;
  events.push_back(end);
  return events;
}

// ---------------------------------------------------------------- brute-force model

struct Pane {
  std::vector<int64_t> ids;
  int64_t firings = 0;
};

using WindowKey = std::pair<Timestamp, Timestamp>;  // [start, end)

std::string Result(const std::string& key, const WindowKey& w, std::vector<int64_t> ids,
                   int64_t firing) {
  std::sort(ids.begin(), ids.end());
  std::string s = key + " [" + std::to_string(w.first) + "," + std::to_string(w.second) + ") ids=";
  for (int64_t id : ids) {
    s += std::to_string(id) + ";";
  }
  return s + " firing=" + std::to_string(firing);
}

struct ModelOutput {
  std::vector<std::string> main;  // results and "W<wm>"
  std::vector<std::string> late;
};

int64_t FloorMod(int64_t a, int64_t b) {
  return ((a % b) + b) % b;
}

ModelOutput RunModel(const Params& p, const std::vector<Event>& events) {
  ModelOutput out;
  std::map<std::string, std::map<WindowKey, Pane>> panes;  // key -> window -> pane
  Timestamp wm = kMinTimestamp;
  const auto max_ts = [](const WindowKey& w) {
    return w.second - 1;
  };
  const auto cleanup = [&](const WindowKey& w) {
    return max_ts(w) + p.lateness;
  };
  for (const Event& e : events) {
    if (e.is_watermark) {
      // Due timers in (time, key, window) order: firings at end - 1, cleanups at end-1+lateness.
      struct Due {
        Timestamp time;
        std::string key;
        WindowKey window;
        bool operator<(const Due& o) const {
          return std::tie(time, key, window) < std::tie(o.time, o.key, o.window);
        }
      };
      std::set<Due> due;
      for (const auto& [key, windows] : panes) {
        for (const auto& [w, pane] : windows) {
          if (max_ts(w) > wm && max_ts(w) <= e.ts) {
            due.insert({max_ts(w), key, w});
          }
          if (cleanup(w) > wm && cleanup(w) <= e.ts) {
            due.insert({cleanup(w), key, w});
          }
        }
      }
      for (const Due& d : due) {
        auto& windows = panes[d.key];
        auto it = windows.find(d.window);
        if (it == windows.end()) {
          continue;
        }
        if (d.time == max_ts(d.window)) {
          out.main.push_back(Result(d.key, d.window, it->second.ids, it->second.firings++));
        }
        if (d.time == cleanup(d.window)) {
          windows.erase(it);
        }
      }
      wm = e.ts;
      out.main.push_back(Tagged('W', wm));
      continue;
    }
    auto& windows = panes[e.key];
    std::vector<WindowKey> assigned;
    if (p.kind == Kind::kSession) {
      WindowKey merged{e.ts, e.ts + p.gap};
      std::vector<int64_t> ids{e.id};
      bool merged_any = false;
      std::map<WindowKey, int64_t> absorbed_firings;
      // Absorb every session that touches the growing window until none does.
      for (bool changed = true; changed;) {
        changed = false;
        for (auto it = windows.begin(); it != windows.end(); ++it) {
          if (it->first.first <= merged.second && merged.first <= it->first.second) {
            merged = {std::min(merged.first, it->first.first),
                      std::max(merged.second, it->first.second)};
            ids.insert(ids.end(), it->second.ids.begin(), it->second.ids.end());
            absorbed_firings[it->first] = it->second.firings;
            windows.erase(it);
            merged_any = true;
            changed = true;
            break;
          }
        }
      }
      if (!merged_any && cleanup(merged) <= wm) {
        out.late.push_back(e.key + " " + e.split + " id=" + std::to_string(e.id) + " window=[" +
                           std::to_string(merged.first) + "," + std::to_string(merged.second) +
                           ") late_by=" + std::to_string(wm - e.ts));
        continue;
      }
      Pane& pane = windows[merged];
      pane.ids = ids;
      // A session whose bounds changed is a new window (firings from 0); one that only
      // absorbed the record keeps counting.
      auto same = absorbed_firings.find(merged);
      pane.firings = same == absorbed_firings.end() ? 0 : same->second;
      if (max_ts(merged) <= wm) {
        out.main.push_back(Result(e.key, merged, pane.ids, pane.firings++));
      }
      continue;
    }
    const int64_t slide = p.kind == Kind::kTumbling ? p.size : p.slide;
    const Timestamp last_start = e.ts - FloorMod(e.ts - p.offset, slide);
    for (Timestamp s = last_start; s > e.ts - p.size; s -= slide) {
      assigned.push_back({s, s + p.size});
    }
    bool all_late = true;
    for (const WindowKey& w : assigned) {
      if (cleanup(w) <= wm) {
        continue;
      }
      all_late = false;
      Pane& pane = windows[w];
      pane.ids.push_back(e.id);
      if (max_ts(w) <= wm) {
        out.main.push_back(Result(e.key, w, pane.ids, pane.firings++));
      }
    }
    if (all_late) {
      const WindowKey latest = *std::max_element(assigned.begin(), assigned.end());
      out.late.push_back(e.key + " " + e.split + " id=" + std::to_string(e.id) + " window=[" +
                         std::to_string(latest.first) + "," + std::to_string(latest.second) +
                         ") late_by=" + std::to_string(wm - e.ts));
    }
  }
  return out;
}

// ---------------------------------------------------------------- the operator

ModelOutput RunOperator(const Params& p, const std::vector<Event>& events) {
  std::unique_ptr<WindowAssigner> assigner;
  if (p.kind == Kind::kTumbling) {
    assigner = std::make_unique<TumblingWindows>(true, p.size, p.offset);
  } else if (p.kind == Kind::kSliding) {
    assigner = std::make_unique<SlidingWindows>(true, p.size, p.slide, p.offset);
  } else {
    assigner = std::make_unique<SessionWindows>(true, p.gap);
  }
  auto fn = std::make_unique<BufferingWindowFunction>([](const WindowFunction::Context& ctx,
                                                         const std::vector<StreamRecord>& elements,
                                                         std::vector<Row>& rows) {
    std::vector<int64_t> ids;
    for (const StreamRecord& r : elements) {
      ids.push_back(std::get<int64_t>(r.row.Get(2)));
    }
    rows.push_back(Row{ctx.key[0], ctx.window.start(), ctx.window.end(),
                       Result(std::get<std::string>(ctx.key[0]),
                              {ctx.window.start(), ctx.window.end()}, ids, -1)});
  });
  WindowOperator::Options options;
  options.key_slots = {0};
  options.allowed_lateness_ms = p.lateness;
  options.late_output_tag = "late";
  options.emit_firing = true;
  options.late_provenance = true;
  WindowOperator op(std::move(assigner), nullptr, std::move(fn), options);
  ManualProcessingTimeService time;
  testing::CollectingOutput output;
  OperatorContext ctx;
  ctx.name = "windows";
  ctx.output = &output;
  ctx.processing_time = &time;
  op.Open(ctx);
  for (const Event& e : events) {
    if (e.is_watermark) {
      op.ProcessWatermark(Watermark{e.ts}, 0);
    } else {
      StreamRecord r(Row{e.key, e.split, e.id}, e.ts);
      op.ProcessElement(r, 0);
    }
  }
  ModelOutput out;
  for (const auto& element : output.elements()) {
    if (const auto* w = std::get_if<Watermark>(&element)) {
      out.main.push_back(Tagged('W', w->timestamp));
    } else if (const auto* r = std::get_if<StreamRecord>(&element)) {
      std::string s = std::get<std::string>(r->row.Get(3));
      s = s.substr(0, s.rfind(" firing=")) +
          " firing=" + std::to_string(std::get<int64_t>(r->row.Get(4)));
      EXPECT_EQ(r->timestamp, std::get<int64_t>(r->row.Get(2)) - 1) << "result timestamp = end - 1";
      out.main.push_back(s);
    }
  }
  for (const StreamRecord& r : output.SideOutput("late")) {
    out.late.push_back(std::get<std::string>(r.row.Get(0)) + " " +
                       std::get<std::string>(r.row.Get(1)) +
                       " id=" + std::to_string(std::get<int64_t>(r.row.Get(2))) + " window=[" +
                       std::to_string(std::get<int64_t>(r.row.Get(3))) + "," +
                       std::to_string(std::get<int64_t>(r.row.Get(4))) +
                       ") late_by=" + std::to_string(std::get<int64_t>(r.row.Get(5))));
  }
  op.Close();
  return out;
}

// ---------------------------------------------------------------- aggregates (sliced path)

// The model's "key [s,e) ids=1;5; firing=N" as the aggregate row it stands for. Ids are
// assigned in arrival order, so first = min and last = max.
std::string Summarize(const std::string& result) {
  if (result.empty() || result[0] == 'W') {
    return result;
  }
  const size_t ids_pos = result.find(" ids=");
  const size_t firing_pos = result.find(" firing=");
  std::vector<int64_t> ids;
  std::string list = result.substr(ids_pos + 5, firing_pos - ids_pos - 5);
  for (size_t start = 0, end; (end = list.find(';', start)) != std::string::npos; start = end + 1) {
    ids.push_back(std::stoll(list.substr(start, end - start)));
  }
  int64_t sum = 0;
  for (int64_t id : ids) {
    sum += id;
  }
  const std::string key = result.substr(0, result.find(' '));
  return result.substr(0, ids_pos) + " n=" + std::to_string(ids.size()) +
         " sum=" + std::to_string(sum) + " min=" + std::to_string(ids.front()) +
         " max=" + std::to_string(ids.back()) + " first=" + std::to_string(ids.front()) +
         " last=" + std::to_string(ids.back()) + " minkey=" + key + result.substr(firing_pos);
}

// How the records reach the compiled operator: string keys one record at a time, or the same
// keys as int64 ('a' -> 0, ...: order kept, so min(key) agrees) in batches, each batch the
// records between two watermarks (the int64-keyed batch loop of the sliced and session paths).
enum class Feed { kStringKeysPerRecord, kInt64KeysInBatches };

ModelOutput RunAggregatingOperator(const Params& p, const std::vector<Event>& events,
                                   bool expect_fast_at_end,
                                   Feed feed = Feed::kStringKeysPerRecord) {
  const bool int_keys = feed == Feed::kInt64KeysInBatches;
  WindowSpec spec;
  spec.assigner =
      p.kind == Kind::kTumbling ? "tumbling" : (p.kind == Kind::kSliding ? "sliding" : "session");
  spec.gap_ms = p.gap;
  spec.size_ms = p.size;
  spec.slide_ms = p.slide;
  spec.offset_ms = p.offset;
  spec.allowed_lateness_ms = p.lateness;
  spec.late_output = "late";
  spec.emit_firing = true;
  for (const char* f : {"count", "sum", "min", "max", "first", "last"}) {
    AggregateSpec a;
    a.function = f;
    a.field = std::string(f) == "count" ? "" : "id";
    spec.aggregates.push_back(a);
  }
  AggregateSpec min_key;
  min_key.function = "min";
  min_key.field = "key";
  min_key.as = "min_key";
  spec.aggregates.push_back(min_key);
  const Schema input({Field{"key", int_keys ? FieldType::kInt64 : FieldType::kString},
                      Field{"split", FieldType::kString}, Field{"id", FieldType::kInt64}});
  const WindowOperatorPlan plan = WindowOperator::Compile(input, spec, {"key"});
  std::unique_ptr<StreamOperator> op = plan.factory();
  auto& window_op = static_cast<WindowOperator&>(*op);
  const bool session = p.kind == Kind::kSession;
  // The fast path this configuration takes: slices, flat sessions (no lateness) or none.
  auto fast = [&] {
    return session ? window_op.uses_flat_sessions() : window_op.uses_slices();
  };
  const bool fast_path = !session || p.lateness == 0;
  EXPECT_EQ(fast(), fast_path);
  ManualProcessingTimeService time;
  testing::CollectingOutput output;
  OperatorContext ctx;
  ctx.name = "windows";
  ctx.output = &output;
  ctx.processing_time = &time;
  op->Open(ctx);
  std::vector<StreamRecord> batch;
  auto flush = [&] {
    std::vector<StreamRecord*> pointers;
    for (StreamRecord& r : batch) {
      pointers.push_back(&r);
    }
    RecordBatch records{pointers.data(), pointers.size()};
    op->ProcessBatch(records, 0);
    batch.clear();
  };
  for (const Event& e : events) {
    if (e.is_watermark) {
      flush();
      op->ProcessWatermark(Watermark{e.ts}, 0);
    } else if (int_keys) {
      batch.emplace_back(Row{int64_t{e.key[0] - 'a'}, e.split, e.id}, e.ts);
    } else {
      StreamRecord r(Row{e.key, e.split, e.id}, e.ts);
      op->ProcessElement(r, 0);
    }
  }
  flush();
  EXPECT_EQ(fast(), fast_path && expect_fast_at_end);
  auto key_text = [&](const Value& v) {
    return int_keys ? std::string(1, static_cast<char>('a' + std::get<int64_t>(v)))
                    : std::get<std::string>(v);
  };
  // The MAX watermark cleaned up every window: no slice, session or timer is left.
  EXPECT_EQ(window_op.NumSlices(), 0u);
  EXPECT_EQ(window_op.StateBytes(), 0);
  EXPECT_EQ(window_op.timer_service().NumEventTimeTimers(), 0u);
  ModelOutput out;
  for (const auto& element : output.elements()) {
    if (const auto* w = std::get_if<Watermark>(&element)) {
      out.main.push_back(Tagged('W', w->timestamp));
    } else if (const auto* r = std::get_if<StreamRecord>(&element)) {
      const Row& row = r->row;
      EXPECT_EQ(r->timestamp, std::get<int64_t>(row.Get(2)) - 1) << "result timestamp = end - 1";
      out.main.push_back(key_text(row.Get(0)) + " [" +
                         std::to_string(std::get<int64_t>(row.Get(1))) + "," +
                         std::to_string(std::get<int64_t>(row.Get(2))) +
                         ") n=" + std::to_string(std::get<int64_t>(row.Get(3))) +
                         " sum=" + std::to_string(std::get<int64_t>(row.Get(4))) +
                         " min=" + std::to_string(std::get<int64_t>(row.Get(5))) +
                         " max=" + std::to_string(std::get<int64_t>(row.Get(6))) +
                         " first=" + std::to_string(std::get<int64_t>(row.Get(7))) +
                         " last=" + std::to_string(std::get<int64_t>(row.Get(8))) +
                         " minkey=" + key_text(row.Get(9)) +
                         " firing=" + std::to_string(std::get<int64_t>(row.Get(10))));
    }
  }
  for (const StreamRecord& r : output.SideOutput("late")) {
    out.late.push_back(key_text(r.row.Get(0)) + " " + std::get<std::string>(r.row.Get(1)) +
                       " id=" + std::to_string(std::get<int64_t>(r.row.Get(2))) + " window=[" +
                       std::to_string(std::get<int64_t>(r.row.Get(3))) + "," +
                       std::to_string(std::get<int64_t>(r.row.Get(4))) +
                       ") late_by=" + std::to_string(std::get<int64_t>(r.row.Get(5))));
  }
  op->Close();
  return out;
}

void CheckAggregateSeeds(const Params& p, bool far_record = false) {
  int64_t late = 0;
  int64_t updates = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Event> events = RandomStream(rng);
    if (far_record) {
      Event far;
      far.ts = (Timestamp{1} << 61) + 5;
      far.key = "c";
      far.split = "s0";
      far.id = 100000;
      events.insert(events.begin() + static_cast<std::ptrdiff_t>(events.size() / 2), far);
    }
    ModelOutput expected = RunModel(p, events);
    for (std::string& s : expected.main) {
      s = Summarize(s);
    }
    const ModelOutput actual = RunAggregatingOperator(p, events, !far_record);
    ASSERT_EQ(actual.main, expected.main) << "seed " << seed;
    ASSERT_EQ(actual.late, expected.late) << "seed " << seed;
    const ModelOutput batched =
        RunAggregatingOperator(p, events, !far_record, Feed::kInt64KeysInBatches);
    ASSERT_EQ(batched.main, expected.main) << "int64 keys in batches, seed " << seed;
    ASSERT_EQ(batched.late, expected.late) << "int64 keys in batches, seed " << seed;
    late += static_cast<int64_t>(expected.late.size());
    for (const std::string& s : expected.main) {
      updates += s.find("firing=1") != std::string::npos ? 1 : 0;
    }
  }
  EXPECT_GT(late, 0);
  if (p.lateness > 0) {
    EXPECT_GT(updates, 0);
  }
}

void CheckSeeds(const Params& p) {
  int64_t late = 0;
  int64_t updates = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 rng(seed);
    const std::vector<Event> events = RandomStream(rng);
    const ModelOutput expected = RunModel(p, events);
    const ModelOutput actual = RunOperator(p, events);
    ASSERT_EQ(actual.main, expected.main) << "seed " << seed;
    ASSERT_EQ(actual.late, expected.late) << "seed " << seed;
    late += static_cast<int64_t>(expected.late.size());
    for (const std::string& s : expected.main) {
      updates += s.find("firing=1") != std::string::npos ? 1 : 0;
    }
  }
  // The streams must exercise what is being tested.
  EXPECT_GT(late, 0);
  if (p.lateness > 0) {
    EXPECT_GT(updates, 0);
  }
}

TEST(WindowDifferentialTest, TumblingWithoutLateness) {
  CheckSeeds({Kind::kTumbling, 1000, 0, 0, 0, 0});
}
TEST(WindowDifferentialTest, TumblingWithOffsetAndLateness) {
  CheckSeeds({Kind::kTumbling, 1000, 0, -250, 0, 600});
}
TEST(WindowDifferentialTest, SlidingWithLateness) {
  CheckSeeds({Kind::kSliding, 1000, 250, 0, 0, 500});
}
TEST(WindowDifferentialTest, SlidingWithOffsetAndLateness) {
  CheckSeeds({Kind::kSliding, 900, 300, 100, 0, 1000});
}
TEST(WindowDifferentialTest, SlicedTumblingWithoutLateness) {
  CheckAggregateSeeds({Kind::kTumbling, 1000, 0, 0, 0, 0});
}
TEST(WindowDifferentialTest, SlicedTumblingWithOffsetAndLateness) {
  CheckAggregateSeeds({Kind::kTumbling, 1000, 0, -250, 0, 600});
}
TEST(WindowDifferentialTest, SlicedSlidingWithoutLateness) {
  CheckAggregateSeeds({Kind::kSliding, 1000, 250, 0, 0, 0});
}
TEST(WindowDifferentialTest, SlicedSlidingWithLateness) {
  CheckAggregateSeeds({Kind::kSliding, 1000, 250, 0, 0, 500});
}
TEST(WindowDifferentialTest, SlicedSlidingWithOffsetAndLateness) {
  CheckAggregateSeeds({Kind::kSliding, 900, 300, 100, 0, 1000});
}
TEST(WindowDifferentialTest, SlicedSlidingUnevenSlideAndLateness) {
  // gcd(1000, 400) = 200: a window covers 5 slices, windows start every 2.
  CheckAggregateSeeds({Kind::kSliding, 1000, 400, -150, 0, 700});
}
TEST(WindowDifferentialTest, SlicedSlidingMovesToPerWindowStateOnAFarTimestamp) {
  CheckAggregateSeeds({Kind::kSliding, 1000, 250, 0, 0, 500}, /*far_record=*/true);
}
TEST(WindowDifferentialTest, SlicedTumblingMovesToPerWindowStateOnAFarTimestamp) {
  CheckAggregateSeeds({Kind::kTumbling, 1000, 0, 0, 0, 600}, /*far_record=*/true);
}
TEST(WindowDifferentialTest, SessionsWithoutLateness) {
  CheckSeeds({Kind::kSession, 0, 0, 0, 300, 0});
}
TEST(WindowDifferentialTest, SessionsWithLateness) {
  CheckSeeds({Kind::kSession, 0, 0, 0, 250, 700});
}
TEST(WindowDifferentialTest, FlatSessionsWithoutLateness) {
  CheckAggregateSeeds({Kind::kSession, 0, 0, 0, 300, 0});
}
TEST(WindowDifferentialTest, FlatSessionsWithAShortGap) {
  CheckAggregateSeeds({Kind::kSession, 0, 0, 0, 40, 0});
}
TEST(WindowDifferentialTest, AggregatedSessionsWithLatenessStayPerWindow) {
  CheckAggregateSeeds({Kind::kSession, 0, 0, 0, 250, 700});
}
TEST(WindowDifferentialTest, FlatSessionsMoveToPerWindowStateOnAFarTimestamp) {
  CheckAggregateSeeds({Kind::kSession, 0, 0, 0, 300, 0}, /*far_record=*/true);
}

}  // namespace
}  // namespace tidemark
