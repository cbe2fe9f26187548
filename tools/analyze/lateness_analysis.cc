#include "tools/analyze/lateness_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

#include "operators/window/window_state_bytes.h"
#include "runtime/eventtime/make_watermark_strategy.h"
#include "runtime/eventtime/relative_clock.h"
#include "runtime/eventtime/watermark_output_multiplexer.h"
#include "runtime/graph/job_graph.h"
#include "runtime/graph/job_resources.h"
#include "runtime/time/manual_processing_time_service.h"
#include "sources/builtins.h"
#include "sources/source_reader.h"
#include "tools/engine/engine.h"

namespace tidemark::analyze {
namespace {

// ---------------------------------------------------------------- the job's shape

const OperatorSpec* FindOp(const JobSpec& job, const std::string& id) {
  for (const OperatorSpec& op : job.operators) {
    if (op.id == id) {
      return &op;
    }
  }
  return nullptr;
}

// The operator whose watermarks reach `op`: following main inputs up through operators that pass
// watermarks on (map, filter, ...) to the nearest source or assign-timestamps-and-watermarks.
const OperatorSpec* WatermarkProducer(const JobSpec& job, const OperatorSpec& op) {
  const OperatorSpec* cur = &op;
  for (size_t guard = 0; guard <= job.operators.size(); ++guard) {
    if (cur->inputs.empty()) {
      return cur;  // a source
    }
    const OperatorSpec* up = FindOp(job, cur->inputs.front().from);
    if (up == nullptr) {
      return nullptr;
    }
    if (up->type == "source" || up->type == "assign-timestamps-and-watermarks") {
      return up;
    }
    cur = up;
  }
  return nullptr;
}

// The source whose records reach `op` (first inputs all the way up).
const OperatorSpec* UpstreamSource(const JobSpec& job, const OperatorSpec& op) {
  const OperatorSpec* cur = &op;
  for (size_t guard = 0; guard <= job.operators.size() && cur != nullptr; ++guard) {
    if (cur->type == "source") {
      return cur;
    }
    if (cur->inputs.empty()) {
      return nullptr;
    }
    cur = FindOp(job, cur->inputs.front().from);
  }
  return nullptr;
}

std::string DescribeStrategy(const WatermarkStrategySpec& w) {
  if (w.strategy == "bounded-out-of-orderness") {
    return "bounded-out-of-orderness " + FormatDuration(w.max_out_of_orderness_ms);
  }
  if (w.strategy == "adaptive-out-of-orderness" && w.adaptive) {
    return fmt::format("adaptive-out-of-orderness p{} over {} in [{}, {}]", w.adaptive->percentile,
                       FormatDuration(w.adaptive->window_ms), FormatDuration(w.adaptive->min_ms),
                       FormatDuration(w.adaptive->max_ms));
  }
  return w.strategy;
}

// ---------------------------------------------------------------- reading the source

enum class EventKind : uint8_t { kRecord, kRelease, kIdle, kActive };

struct Event {
  Timestamp ts;
  Timestamp at;  // processing time of arrival
  int32_t split;
  EventKind kind;
};

// What a window needs to know of each record for its state estimate.
struct WindowProbe {
  const OperatorSpec* window = nullptr;
  std::vector<int> key_slots;  // in the source schema; empty with key_by set: unknown
  bool keys_known = true;
  std::unordered_set<std::string> keys;
  double key_bytes_sum = 0;
  double record_bytes_sum = 0;
  int64_t records = 0;
};

struct Trace {
  std::vector<std::string> split_ids;  // registered at start, in assignment order
  std::vector<Event> events;
  int64_t records = 0;
  int64_t without_timestamp = 0;
  int64_t input_errors = 0;
  Timestamp end_ms = 0;
  bool truncated = false;
};

class TraceOutput;

class TraceSplitOutput final : public SourceOutput {
 public:
  TraceSplitOutput(TraceOutput& owner, int32_t index) : owner_(owner), index_(index) {}
  void Collect(Row row) override;
  void Collect(Row row, Timestamp ts) override;
  void CollectReusing(Row& row, Timestamp ts) override;
  void EmitWatermark(Watermark) override {}
  void MarkIdle() override;
  void MarkActive() override;

 private:
  TraceOutput& owner_;
  int32_t index_;
};

class TraceOutput final : public ReaderOutput {
 public:
  TraceOutput(Trace& trace, ProcessingTimeService& time, const WatermarkStrategy* stamping,
              std::vector<WindowProbe>& probes)
      : trace_(trace), time_(time), stamping_(stamping), probes_(probes) {}

  int32_t IndexOf(const std::string& id) {
    auto it = index_.find(id);
    if (it != index_.end()) {
      return it->second;
    }
    const auto i = static_cast<int32_t>(trace_.split_ids.size());
    trace_.split_ids.push_back(id);
    index_.emplace(id, i);
    outputs_.push_back(std::make_unique<TraceSplitOutput>(*this, i));
    return i;
  }

  void Record(int32_t split, const Row& row, std::optional<Timestamp> source_ts) {
    std::optional<Timestamp> ts = source_ts;
    if (stamping_ != nullptr) {
      StreamRecord rec = source_ts ? StreamRecord(row, *source_ts) : StreamRecord(row);
      ts = stamping_->ExtractTimestamp(rec);
    }
    if (!ts) {
      ++trace_.without_timestamp;
      return;
    }
    trace_.events.push_back(
        Event{*ts, time_.GetCurrentProcessingTime(), split, EventKind::kRecord});
    ++trace_.records;
    for (WindowProbe& p : probes_) {
      ++p.records;
      p.record_bytes_sum += static_cast<double>(ElementStateBytes(StreamRecord(row)));
      if (!p.keys_known) {
        continue;
      }
      Key key;
      key.reserve(p.key_slots.size());
      for (int slot : p.key_slots) {
        key.push_back(static_cast<size_t>(slot) < row.size() ? row.Get(static_cast<size_t>(slot))
                                                             : Value{});
      }
      p.key_bytes_sum += static_cast<double>(RowStateBytes(key));
      std::string k;
      for (const Value& v : key) {
        k += ValueToString(v);
        k.push_back('\x1f');
      }
      p.keys.insert(std::move(k));
    }
  }
  void Mark(int32_t split, EventKind kind) {
    trace_.events.push_back(Event{0, time_.GetCurrentProcessingTime(), split, kind});
  }

  // ReaderOutput: records of no particular split are the split "(main)".
  void Collect(Row row) override { Record(IndexOf("(main)"), row, std::nullopt); }
  void Collect(Row row, Timestamp ts) override { Record(IndexOf("(main)"), row, ts); }
  void EmitWatermark(Watermark) override {}
  void MarkIdle() override {}
  void MarkActive() override {}
  SourceOutput& CreateOutputForSplit(const std::string& id) override {
    return *outputs_[static_cast<size_t>(IndexOf(id))];
  }
  void ReleaseOutputForSplit(const std::string& id) override {
    Mark(IndexOf(id), EventKind::kRelease);
  }
  void EmitError(const SourceError&) override { ++trace_.input_errors; }

 private:
  static std::string ValueToString(const Value& v) {
    return std::visit(
        [](const auto& x) -> std::string {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::monostate>) {
            return "\x1e";
          } else if constexpr (std::is_same_v<T, std::string>) {
            return x;
          } else {
            return fmt::format("{}", x);
          }
        },
        v);
  }

  Trace& trace_;
  ProcessingTimeService& time_;
  const WatermarkStrategy* stamping_;
  std::vector<WindowProbe>& probes_;
  std::map<std::string, int32_t> index_;
  std::vector<std::unique_ptr<TraceSplitOutput>> outputs_;
};

void TraceSplitOutput::Collect(Row row) {
  owner_.Record(index_, row, std::nullopt);
}
void TraceSplitOutput::Collect(Row row, Timestamp ts) {
  owner_.Record(index_, row, ts);
}
void TraceSplitOutput::CollectReusing(Row& row, Timestamp ts) {
  owner_.Record(index_, row, ts);
}
void TraceSplitOutput::MarkIdle() {
  owner_.Mark(index_, EventKind::kIdle);
}
void TraceSplitOutput::MarkActive() {
  owner_.Mark(index_, EventKind::kActive);
}

class TraceContext final : public SourceReaderContext {
 public:
  TraceContext(int subtask, int parallelism) : subtask_(subtask), parallelism_(parallelism) {}
  int subtask_index() const override { return subtask_; }
  int parallelism() const override { return parallelism_; }
  ProcessingTimeService& processing_time() override { return time; }
  void WakeUpAt(Timestamp t) override {
    time.AdvanceTo(std::max(t, time.GetCurrentProcessingTime()));
  }
  ManualProcessingTimeService time;

 private:
  int subtask_;
  int parallelism_;
};

Trace ReadSubtask(const Source& source, const WatermarkStrategy* stamping, int subtask,
                  int parallelism, int64_t max_records, std::vector<WindowProbe>& probes) {
  Trace trace;
  TraceContext context(subtask, parallelism);
  TraceOutput output(trace, context.time, stamping, probes);
  std::unique_ptr<SourceReader> reader = source.CreateReader(subtask);
  reader->Start(context);
  std::vector<std::unique_ptr<SourceSplit>> splits =
      SplitEnumerator::SplitsFor(source, subtask, parallelism);
  for (const auto& s : splits) {
    output.IndexOf(s->SplitId());  // the source operator registers every assigned split at start
  }
  reader->AddSplits(std::move(splits));
  reader->NotifyNoMoreSplits();
  int64_t stalls = 0;
  while (true) {
    const Timestamp before = context.time.GetCurrentProcessingTime();
    const size_t events_before = trace.events.size();
    const InputStatus status = reader->PollNext(output);
    if (status == InputStatus::kEndOfInput) {
      break;
    }
    if (trace.records >= max_records) {
      trace.truncated = true;
      break;
    }
    if (status == InputStatus::kNothingAvailable &&
        before == context.time.GetCurrentProcessingTime() && events_before == trace.events.size()) {
      if (++stalls > 1'000'000) {
        throw std::runtime_error(fmt::format(
            "subtask {}: the reader neither produced records nor asked to be woken up later",
            subtask));
      }
    } else {
      stalls = 0;
    }
  }
  reader->Close();
  trace.end_ms = context.time.GetCurrentProcessingTime();
  return trace;
}

// ---------------------------------------------------------------- distributions

int64_t Rank(const std::vector<int64_t>& sorted, double percentile) {
  if (sorted.empty()) {
    return 0;
  }
  const double r = std::ceil(percentile / 100.0 * static_cast<double>(sorted.size()) - 1e-9);
  const size_t i = std::clamp<size_t>(static_cast<size_t>(std::max(r, 1.0)), 1, sorted.size());
  return sorted[i - 1];
}

LatenessDistribution Summarize(std::vector<int64_t> lateness, Timestamp min_ts, Timestamp max_ts) {
  LatenessDistribution d;
  d.count = static_cast<int64_t>(lateness.size());
  if (lateness.empty()) {
    return d;
  }
  d.min_ts = min_ts;
  d.max_ts = max_ts;
  std::sort(lateness.begin(), lateness.end());
  d.p50 = Rank(lateness, 50);
  d.p90 = Rank(lateness, 90);
  d.p99 = Rank(lateness, 99);
  d.p999 = Rank(lateness, 99.9);
  d.max = lateness.back();
  // Bin 0 holds exact zeros (in-order records); then 10 bins of equal width up to the maximum,
  // the width rounded up to a "nice" 1, 2 or 5 x 10^k ms.
  d.edges.push_back(0);
  d.bins.push_back(static_cast<int64_t>(std::upper_bound(lateness.begin(), lateness.end(), 0) -
                                        lateness.begin()));
  if (d.max > 0) {
    int64_t width = 1;
    const int64_t raw = (d.max + 9) / 10;
    for (int64_t p = 1;; p *= 10) {
      if (p >= raw) {
        width = p;
        break;
      }
      if (2 * p >= raw) {
        width = 2 * p;
        break;
      }
      if (5 * p >= raw) {
        width = 5 * p;
        break;
      }
    }
    for (int64_t lo = 0; lo < d.max; lo += width) {
      const int64_t hi = lo + width;
      const auto a = std::upper_bound(lateness.begin(), lateness.end(), lo);
      const auto b = std::upper_bound(lateness.begin(), lateness.end(), hi);
      d.edges.push_back(hi);
      d.bins.push_back(static_cast<int64_t>(b - a));
    }
  }
  return d;
}

// Lateness of each record against the running maximum of `events` filtered by `split` (-1: all).
LatenessDistribution LatenessOf(const Trace& t, int32_t split) {
  std::vector<int64_t> out;
  Timestamp max_seen = kMinTimestamp;
  Timestamp min_ts = kMaxTimestamp;
  for (const Event& e : t.events) {
    if (e.kind != EventKind::kRecord || (split >= 0 && e.split != split)) {
      continue;
    }
    max_seen = std::max(max_seen, e.ts);
    min_ts = std::min(min_ts, e.ts);
    int64_t l = 0;
    if (__builtin_sub_overflow(max_seen, e.ts, &l)) {
      l = std::numeric_limits<int64_t>::max();
    }
    out.push_back(l);
  }
  return Summarize(std::move(out), min_ts, max_seen);
}

SplitGap GapOf(const Trace& t, int32_t split, int64_t interval) {
  SplitGap g;
  std::vector<int64_t> gaps;
  Timestamp prev = 0;  // the split is registered at the start, so its first wait counts too
  bool any = false;
  bool from_start = false;
  for (const Event& e : t.events) {
    if (e.kind != EventKind::kRecord || e.split != split) {
      continue;
    }
    const int64_t gap = e.at - prev;
    if (any) {
      gaps.push_back(gap);
    }
    if (gap > g.longest_ms) {
      g.longest_ms = gap;
      g.from_ms = prev;
      g.to_ms = e.at;
      from_start = !any;
    }
    prev = e.at;
    any = true;
  }
  std::sort(gaps.begin(), gaps.end());
  g.p99_gap_ms = Rank(gaps, 99);
  if (interval > 0 && g.longest_ms > 0) {
    // A record at t is counted by the first periodic check after t (a check at exactly t runs
    // before it); the first check without records starts the countdown (c1); the split is idle
    // at the first check c with c - c1 > timeout, and the last check before the next record is
    // c_last (a check at the record's own time included).
    const Timestamp c1 = from_start ? interval : (g.from_ms / interval + 1) * interval + interval;
    const Timestamp c_last = g.to_ms / interval * interval;
    g.idleness_below_ms = std::max<int64_t>(0, c_last - c1);
  }
  return g;
}

// ---------------------------------------------------------------- simulation

// Whether a record at `ts` is late for a watermark `wm`: kRecord is the watermark's own promise
// (ts <= wm); the window rules are the WindowOperator's (the record's last window is cleaned up:
// maxTimestamp + allowed lateness <= wm).
struct LateRule {
  enum Kind { kRecord, kTumbling, kSliding, kSession, kNever } kind = kRecord;
  std::string at;  // window id
  int64_t size = 0, slide = 0, offset = 0, gap = 0, lateness = 0;

  bool IsLate(Timestamp ts, Timestamp wm) const {
    if (wm == kMinTimestamp) {
      return false;
    }
    auto mod = [](int64_t a, int64_t b) {
      return ((a % b) + b) % b;
    };
    switch (kind) {
      case kRecord:
        return ts <= wm;
      case kTumbling: {
        const Timestamp start = ts - mod(ts - offset, size);
        return SaturatingAdd(SaturatingAdd(start, size - 1), lateness) <= wm;
      }
      case kSliding: {
        const Timestamp last_start = ts - mod(ts - offset, slide);
        return SaturatingAdd(SaturatingAdd(last_start, size - 1), lateness) <= wm;
      }
      case kSession:
        return SaturatingAdd(SaturatingAdd(ts, gap - 1), lateness) <= wm;
      case kNever:
        return false;
    }
    return false;
  }
};

LateRule RuleFor(const OperatorSpec& window) {
  LateRule r;
  r.at = window.id;
  const WindowSpec& w = *window.window;
  r.lateness = w.allowed_lateness_ms;
  r.size = w.size_ms;
  r.slide = w.slide_ms;
  r.offset = w.offset_ms;
  r.gap = w.gap_ms;
  if (w.time != "event" || w.assigner == "global") {
    r.kind = LateRule::kNever;
  } else if (w.assigner == "tumbling") {
    r.kind = LateRule::kTumbling;
  } else if (w.assigner == "sliding") {
    r.kind = LateRule::kSliding;
  } else {
    r.kind = LateRule::kSession;
  }
  if ((r.kind == LateRule::kTumbling && r.size <= 0) ||
      (r.kind == LateRule::kSliding && r.slide <= 0)) {
    r.kind = LateRule::kRecord;
  }
  return r;
}

class SimClock final : public RelativeClock {
 public:
  int64_t GetRelativeTimeNanos() const override { return (now + 1) * 1'000'000; }
  Timestamp now = 0;
};

class MaxOutput final : public WatermarkOutput {
 public:
  void EmitWatermark(Watermark w) override { wm = std::max(wm, w.timestamp); }
  void MarkIdle() override {}
  void MarkActive() override {}
  Timestamp wm = kMinTimestamp;
};

// Replays `t` through `strategy`'s generators as the runtime would: a generator per split merged
// by a WatermarkOutputMultiplexer (per_split), or one for the subtask; periodic emits at
// k * interval of processing time, each before the records arriving at that time. Returns the
// late records per rule.
struct SimResult {
  std::vector<int64_t> late;  // per rule
  /// Mean over periodic emits (once there is a watermark) of max timestamp seen - watermark:
  /// the bound, plus in split mode the skew between splits. What keeps window state alive.
  double mean_delay_ms = 0;
};

SimResult Simulate(const Trace& t, const WatermarkStrategy& strategy, bool per_split,
                   int64_t interval, const std::vector<LateRule>& rules) {
  SimResult result;
  std::vector<int64_t>& late = result.late;
  late.assign(rules.size(), 0);
  Timestamp max_seen = kMinTimestamp;
  double delay_sum = 0;
  int64_t delay_n = 0;
  SimClock clock;
  MaxOutput out;
  WatermarkOutputMultiplexer mux(out);
  std::vector<std::unique_ptr<WatermarkGenerator>> gens;
  std::vector<bool> live;
  std::unique_ptr<WatermarkGenerator> single;
  if (per_split) {
    for (const std::string& id : t.split_ids) {
      mux.RegisterNewOutput(id);
      gens.push_back(strategy.CreateWatermarkGenerator(&clock));
      live.push_back(true);
    }
  } else {
    single = strategy.CreateWatermarkGenerator(&clock);
  }
  Timestamp next_tick = interval;
  auto tick = [&] {
    clock.now = next_tick;
    if (per_split) {
      for (size_t i = 0; i < gens.size(); ++i) {
        if (live[i]) {
          gens[i]->OnPeriodicEmit(mux.GetDeferredOutput(t.split_ids[i]));
        }
      }
      mux.OnPeriodicEmit();
    } else {
      single->OnPeriodicEmit(out);
    }
    if (out.wm != kMinTimestamp && max_seen != kMinTimestamp) {
      delay_sum += static_cast<double>(max_seen - out.wm);
      ++delay_n;
    }
    next_tick += interval;
  };
  for (const Event& e : t.events) {
    while (interval > 0 && next_tick <= e.at) {
      tick();
    }
    clock.now = e.at;
    const auto i = static_cast<size_t>(e.split);
    switch (e.kind) {
      case EventKind::kRecord: {
        for (size_t r = 0; r < rules.size(); ++r) {
          late[r] += rules[r].IsLate(e.ts, out.wm) ? 1 : 0;
        }
        const StreamRecord rec(Row{}, e.ts);
        max_seen = std::max(max_seen, e.ts);
        if (per_split) {
          if (live[i]) {
            gens[i]->OnEvent(rec, e.ts, mux.GetImmediateOutput(t.split_ids[i]));
          }
        } else {
          single->OnEvent(rec, e.ts, out);
        }
        break;
      }
      case EventKind::kRelease:
        if (per_split && live[i]) {
          mux.UnregisterOutput(t.split_ids[i]);
          live[i] = false;
        }
        break;
      case EventKind::kIdle:
        if (per_split && live[i]) {
          mux.GetImmediateOutput(t.split_ids[i]).MarkIdle();
        }
        break;
      case EventKind::kActive:
        if (per_split && live[i]) {
          mux.GetImmediateOutput(t.split_ids[i]).MarkActive();
        }
        break;
    }
  }
  result.mean_delay_ms = delay_n == 0 ? 0.0 : delay_sum / static_cast<double>(delay_n);
  return result;
}

// `idleness_ms` > 0: the candidate keeps the job's idleness timeout (a split that goes idle and
// comes back behind the watermark makes late records whatever the bound).
int64_t LateWithBound(const Trace& t, int64_t bound, bool per_split, int64_t interval,
                      int64_t idleness_ms) {
  WatermarkStrategy s = WatermarkStrategy::ForBoundedOutOfOrderness(
      std::chrono::milliseconds(bound), RecordTimestampAssigner());
  if (idleness_ms > 0) {
    s = s.WithIdleness(std::chrono::milliseconds(idleness_ms));
  }
  return Simulate(t, s, per_split, interval, {LateRule{}}).late.front();
}

// The smallest bound whose record lateness is at most `target` of the records. The late count
// does not grow with the bound (a larger bound only lowers every watermark), and `hi` (the
// largest lateness) gives none, so a binary search finds it.
int64_t SmallestBound(const Trace& t, bool per_split, int64_t interval, int64_t idleness_ms,
                      double target, int64_t hi, double& late_fraction) {
  const double allowed = target * static_cast<double>(t.records);
  int64_t lo = 0;
  if (static_cast<double>(LateWithBound(t, 0, per_split, interval, idleness_ms)) <= allowed) {
    hi = 0;
  } else {
    while (lo + 1 < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<double>(LateWithBound(t, mid, per_split, interval, idleness_ms)) <= allowed) {
        hi = mid;
      } else {
        lo = mid;
      }
    }
  }
  late_fraction =
      t.records == 0 ? 0.0
                     : static_cast<double>(LateWithBound(t, hi, per_split, interval, idleness_ms)) /
                           static_cast<double>(t.records);
  return hi;
}

int64_t RoundUpToHundred(int64_t ms) {
  return (ms + 99) / 100 * 100;
}

// The bound a strategy applies, for the state estimate: fixed, the adaptive one at its percentile
// of `merged` (clamped), 0 for monotonous; nullopt without progressive watermarks.
std::optional<int64_t> EffectiveBound(const WatermarkStrategySpec& w,
                                      const LatenessDistribution& merged) {
  if (w.strategy == "bounded-out-of-orderness") {
    return w.max_out_of_orderness_ms;
  }
  if (w.strategy == "monotonous" || w.strategy == "punctuated") {
    return 0;
  }
  if (w.strategy == "adaptive-out-of-orderness" && w.adaptive) {
    const double p = w.adaptive->percentile;
    const int64_t v = p >= 99.9 ? merged.p999
                      : p >= 99 ? merged.p99
                      : p >= 90 ? merged.p90
                                : merged.p50;
    return std::clamp(v, w.adaptive->min_ms, w.adaptive->max_ms);
  }
  return std::nullopt;
}

}  // namespace

std::string FormatDuration(int64_t ms) {
  if (ms == 0) {
    return "0ms";
  }
  if (ms > -1000 && ms < 1000) {
    return fmt::format("{}ms", ms);
  }
  return FormatSeconds(ms);
}

std::optional<double> ParseLateTarget(const std::string& text) {
  if (text.size() < 2 || text.back() != '%') {
    return std::nullopt;
  }
  const std::string number = text.substr(0, text.size() - 1);
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(number, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != number.size() || !(v >= 0.0 && v < 100.0)) {
    return std::nullopt;
  }
  return v / 100.0;
}

std::vector<SourceAnalysis> Analyze(const JobSpec& job, const AnalyzeOptions& options) {
  {
    JobResources resources;  // validates the whole job as `run` would (throws JobCompileError)
    (void)CompileJobGraph(job, BuiltinRegistry(), resources);
  }
  std::vector<const OperatorSpec*> sources;
  for (const OperatorSpec& op : job.operators) {
    if (op.type == "source" && (options.source_id.empty() || op.id == options.source_id)) {
      sources.push_back(&op);
    }
  }
  if (sources.empty()) {
    if (!options.source_id.empty()) {
      std::string known;
      for (const OperatorSpec& op : job.operators) {
        if (op.type == "source") {
          known += (known.empty() ? "" : ", ") + op.id;
        }
      }
      throw std::runtime_error(fmt::format(
          "--source: no source operator '{}' in the job (sources: {})", options.source_id, known));
    }
    throw std::runtime_error("the job has no source operator");
  }

  std::vector<SourceAnalysis> result;
  for (const OperatorSpec* src : sources) {
    SourceAnalysis a;
    a.source_op = src->id;
    a.source_type = src->source->type;
    a.parallelism = src->parallelism > 0 ? src->parallelism : job.pipeline.parallelism;
    a.interval_ms = job.pipeline.auto_watermark_interval_ms;
    a.target_late = options.target_late;
    const std::shared_ptr<const Source> source = MakeSource(*src, job);
    const Schema& schema = source->schema();

    // Strategies fed by this source: its own (per split) and assigners after it (per subtask).
    struct Strategy {
      const OperatorSpec* op;
      bool per_split;
      std::optional<WatermarkStrategy> strategy;
    };
    std::vector<Strategy> strategies;
    if (src->watermarks) {
      strategies.push_back({src, true, MakeWatermarkStrategy(*src->watermarks, schema)});
    }
    for (const OperatorSpec& op : job.operators) {
      if (op.type == "assign-timestamps-and-watermarks" && UpstreamSource(job, op) == src) {
        std::optional<WatermarkStrategy> s;
        try {
          s = MakeWatermarkStrategy(*op.watermarks, schema);
        } catch (const InvalidArgument&) {
          // Its fields come from an operator in between; it cannot be replayed on source rows.
        }
        strategies.push_back({&op, false, std::move(s)});
      }
    }
    // Timestamps: the source's strategy, else the first assigner's, else the source's own.
    const WatermarkStrategy* stamping = nullptr;
    for (const Strategy& s : strategies) {
      if (s.strategy) {
        stamping = &*s.strategy;
        break;
      }
    }
    // Windows fed by this source.
    std::vector<WindowProbe> probes;
    for (const OperatorSpec& op : job.operators) {
      if (op.type == "window" && op.window && UpstreamSource(job, op) == src) {
        WindowProbe p;
        p.window = &op;
        for (const std::string& k : op.key_by) {
          const int slot = schema.IndexOf(k);
          if (slot < 0) {
            p.keys_known = false;
          }
          p.key_slots.push_back(slot);
        }
        probes.push_back(std::move(p));
      }
    }

    // Candidates keep the idleness timeouts the job already has.
    const int64_t source_idleness =
        src->watermarks && src->watermarks->idleness_ms ? *src->watermarks->idleness_ms : 0;
    int64_t assigner_idleness = 0;
    for (const Strategy& s : strategies) {
      if (!s.per_split && s.op->watermarks->idleness_ms) {
        assigner_idleness = *s.op->watermarks->idleness_ms;
        break;
      }
    }

    std::vector<Trace> traces;
    traces.reserve(static_cast<size_t>(a.parallelism));
    for (int s = 0; s < a.parallelism; ++s) {
      traces.push_back(
          ReadSubtask(*source, stamping, s, a.parallelism, options.max_records, probes));
    }

    int64_t total_records = 0;
    Timestamp min_ts = kMaxTimestamp;
    Timestamp max_ts = kMinTimestamp;
    Timestamp max_end = 0;
    for (int s = 0; s < a.parallelism; ++s) {
      const Trace& t = traces[static_cast<size_t>(s)];
      SubtaskReport r;
      r.subtask = s;
      r.records = t.records;
      r.records_without_timestamp = t.without_timestamp;
      r.input_errors = t.input_errors;
      r.end_ms = t.end_ms;
      r.truncated = t.truncated;
      int64_t split_max = 0;
      for (size_t i = 0; i < t.split_ids.size(); ++i) {
        SplitReport sr;
        sr.id = t.split_ids[i];
        sr.lateness = LatenessOf(t, static_cast<int32_t>(i));
        sr.gap = GapOf(t, static_cast<int32_t>(i), a.interval_ms);
        split_max = std::max(split_max, sr.lateness.max);
        r.splits.push_back(std::move(sr));
      }
      // With an idle split coming back behind, no bound may reach the target: the search stops
      // at the largest lateness and reports the fraction that remains.
      // A split marked idle lets the others' watermark pass it: then the merged lateness bounds it.
      r.merged = LatenessOf(t, -1);
      r.bound.at_source_ms =
          SmallestBound(t, true, a.interval_ms, source_idleness, a.target_late,
                        source_idleness > 0 ? std::max(split_max, r.merged.max) : split_max,
                        r.bound.at_source_late);
      r.bound.after_source_ms =
          SmallestBound(t, false, a.interval_ms, assigner_idleness, a.target_late, r.merged.max,
                        r.bound.after_source_late);
      r.bound.after_source_with_margin_ms =
          RoundUpToHundred((r.bound.after_source_ms * 11 + 9) / 10);
      if (r.merged.count > 0) {
        min_ts = std::min(min_ts, r.merged.min_ts);
        max_ts = std::max(max_ts, r.merged.max_ts);
      }
      total_records += t.records;
      max_end = std::max(max_end, t.end_ms);
      a.subtasks.push_back(std::move(r));
    }

    // Late figures of each strategy, at each window it feeds (or the watermark itself).
    std::map<const OperatorSpec*, double> delay_of;  // strategy op -> mean watermark delay
    for (const Strategy& s : strategies) {
      std::vector<LateRule> rules;
      for (const WindowProbe& p : probes) {
        if (WatermarkProducer(job, *p.window) == s.op) {
          rules.push_back(RuleFor(*p.window));
        }
      }
      if (rules.empty()) {
        rules.push_back(LateRule{});
      }
      const bool simulable = s.strategy.has_value() && s.op->watermarks->strategy != "punctuated";
      std::vector<int64_t> late(rules.size(), 0);
      if (simulable) {
        for (const Trace& t : traces) {
          const SimResult sim = Simulate(t, *s.strategy, s.per_split, a.interval_ms, rules);
          for (size_t r = 0; r < sim.late.size(); ++r) {
            late[r] += sim.late[r];
          }
          delay_of[s.op] = std::max(delay_of[s.op], sim.mean_delay_ms);
        }
      }
      for (size_t r = 0; r < rules.size(); ++r) {
        LateFigure f;
        f.strategy_op = s.op->id;
        f.description = DescribeStrategy(*s.op->watermarks) +
                        (s.per_split ? ", a generator per split" : ", a generator per subtask");
        f.at = rules[r].at;
        f.records = total_records;
        f.late = late[r];
        f.simulated = simulable;
        a.late.push_back(std::move(f));
      }
    }

    // State estimates (seed 002 §4.3).
    const double span_ms = max_ts > min_ts ? static_cast<double>(max_ts - min_ts) : 1.0;
    const double rate_per_ms = static_cast<double>(total_records) / span_ms;
    // Event time one periodic interval moves the watermark by: the lag between two firings.
    const double event_per_proc = max_end > 0 ? span_ms / static_cast<double>(max_end) : 0.0;
    const LatenessDistribution& all_merged = a.subtasks.front().merged;
    for (WindowProbe& p : probes) {
      const WindowSpec& w = *p.window->window;
      StateEstimate e;
      e.window_op = p.window->id;
      const bool aligned = src->watermarks && src->watermarks->alignment;
      e.description = fmt::format(
          "{} {}{}, {} aggregate{}", w.assigner,
          w.assigner == "session" ? FormatDuration(w.gap_ms) : FormatDuration(w.size_ms),
          w.assigner == "sliding" ? " every " + FormatDuration(w.slide_ms) : "",
          w.aggregates.size(), w.aggregates.size() == 1 ? "" : "s");
      if (aligned) {
        e.description += "; alignment, which holds fast splits back, is not simulated";
      }
      e.keys = p.key_slots.empty() ? 1 : static_cast<int64_t>(p.keys.size());
      e.records_per_s = rate_per_ms * 1000.0;
      e.record_bytes = p.records > 0 ? p.record_bytes_sum / static_cast<double>(p.records) : 0;
      const double key_bytes = p.records > 0 ? p.key_bytes_sum / static_cast<double>(p.records) : 0;
      const OperatorSpec* producer = WatermarkProducer(job, *p.window);
      std::optional<int64_t> bound;
      if (producer != nullptr && producer->watermarks) {
        bound = EffectiveBound(*producer->watermarks, all_merged);
      }
      const bool no_watermarks = !bound || max_end == 0;
      e.bound_ms = bound.value_or(0);
      // The watermark trails the newest record by the bound (plus, per split, the skew between
      // splits, which the simulation measured), and moves once per periodic interval.
      double delay = static_cast<double>(e.bound_ms);
      if (auto it = delay_of.find(producer); it != delay_of.end()) {
        delay = std::max(delay, it->second);
      }
      e.delay_ms = static_cast<int64_t>(std::llround(delay));
      const double lag = event_per_proc * static_cast<double>(a.interval_ms);
      const int64_t window_len = w.assigner == "session" ? w.gap_ms : w.size_ms;
      double span = no_watermarks
                        ? span_ms
                        : static_cast<double>(window_len + w.allowed_lateness_ms) + delay + lag;
      span = std::min(span, span_ms + static_cast<double>(window_len));
      e.span_ms = static_cast<int64_t>(std::llround(span));
      e.buffered_bytes = static_cast<int64_t>(std::llround(rate_per_ms * e.record_bytes * span));
      // Incremental aggregates: one pane per key and slice (gcd(size, slide); a tumbling window is
      // its own slice), for the keys a slice's n records touch (uniform keys: K (1 - e^(-n/K)),
      // about n when sparse).
      int64_t slice = w.size_ms;
      if (w.assigner == "sliding" && w.slide_ms > 0) {
        slice = std::gcd(w.size_ms, w.slide_ms);
      }
      double panes = 0;
      const double k = static_cast<double>(std::max<int64_t>(e.keys, 1));
      if (w.assigner == "tumbling" || w.assigner == "sliding") {
        const double slices = std::ceil(span / static_cast<double>(std::max<int64_t>(slice, 1)));
        const double per_slice = rate_per_ms * static_cast<double>(slice);
        panes = slices * k * (1.0 - std::exp(-per_slice / k));
      } else {
        panes = k;  // session / global: one live pane per key
      }
      e.estimate_bytes = static_cast<int64_t>(std::llround(
          panes * static_cast<double>(PaneStateBytes(static_cast<int64_t>(std::llround(key_bytes)),
                                                     w.aggregates.size()))));
      a.state.push_back(std::move(e));
    }
    result.push_back(std::move(a));
  }

  if (options.run) {
    auto job_run = LocalJob::Create(job, [](const std::string&) {});
    job_run->execution().Start();
    const JobState state = job_run->execution().Wait();
    if (state != JobState::kFinished) {
      throw std::runtime_error(
          fmt::format("the run {}: {}", ToString(state), job_run->execution().failure_cause()));
    }
    std::map<std::string, int64_t> late_by_op;
    std::map<std::string, int64_t> peak_by_op;
    for (const auto& m : job_run->execution().Metrics()) {
      for (const auto& op : m.operators) {
        for (const auto& [name, value] : op.gauges) {
          if (name == "numLateRecordsDropped" || name == "numLateRecordsSideOutput") {
            late_by_op[op.name] += value;
          } else if (name == "stateBytesPeak") {
            peak_by_op[op.name] += value;
          }
        }
      }
    }
    for (SourceAnalysis& a : result) {
      for (LateFigure& f : a.late) {
        if (!f.at.empty() && late_by_op.count(f.at)) {
          f.measured_late = late_by_op[f.at];
        }
      }
      for (StateEstimate& e : a.state) {
        if (peak_by_op.count(e.window_op)) {
          e.measured_peak_bytes = peak_by_op[e.window_op];
        }
      }
    }
  }
  return result;
}

}  // namespace tidemark::analyze
