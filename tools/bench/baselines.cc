#include "tools/bench/baselines.h"

#include <absl/container/flat_hash_map.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <thread>

#include <boost/lockfree/spsc_queue.hpp>
#include <fmt/format.h>

#include "operators/arithmetic_map_filter.h"
#include "runtime/core/checksum.h"
#include "sources/generator_source.h"
#include "tools/bench/bench_run.h"

namespace tidemark::bench {
namespace {

/// The baselines' record: the generator's three fields in 32 bytes.
struct Rec {
  int64_t key;
  double value;
  int64_t ts;
  int64_t pad;
};
static_assert(sizeof(Rec) == 32);

/// One operator of the hand-written chain: exactly one virtual call per record.
class ChainOp {
 public:
  virtual ~ChainOp() = default;
  virtual bool Apply(Rec& r) const = 0;
};

class MapOp : public ChainOp {
 public:
  MapOp(int field, double multiply, double add) : field_(field), multiply_(multiply), add_(add) {}
  bool Apply(Rec& r) const override {
    if (field_ == 1) {
      r.value = r.value * multiply_ + add_;
    } else {
      int64_t& x = field_ == 0 ? r.key : r.ts;
      x = static_cast<int64_t>(static_cast<double>(x) * multiply_ + add_);
    }
    return true;
  }

 private:
  int field_;
  double multiply_;
  double add_;
};

class FilterOp : public ChainOp {
 public:
  FilterOp(int field, ComparisonFilterOperator::Op op, double value)
      : field_(field), op_(op), value_(value) {}
  bool Apply(Rec& r) const override {
    const double x = field_ == 1 ? r.value : static_cast<double>(field_ == 0 ? r.key : r.ts);
    return ComparisonFilterOperator::Passes(op_, x, value_);
  }

 private:
  int field_;
  ComparisonFilterOperator::Op op_;
  double value_;
};

using Chain = std::vector<std::unique_ptr<ChainOp>>;

int FieldIndex(const BenchPlan& plan, const std::string& name) {
  if (name == "key") {
    return 0;
  }
  if (name == "value") {
    return 1;
  }
  if (name == plan.generator.timestamp_field_name) {
    return 2;
  }
  return -1;
}

Chain MakeChain(const BenchPlan& plan) {
  Chain chain;
  for (const OperatorSpec& op : plan.chain) {
    if (op.map) {
      chain.push_back(
          std::make_unique<MapOp>(FieldIndex(plan, op.map->field), op.map->multiply, op.map->add));
    } else {
      chain.push_back(std::make_unique<FilterOp>(FieldIndex(plan, op.filter->field),
                                                 ComparisonFilterOperator::ParseOp(op.filter->op),
                                                 op.filter->value));
    }
  }
  return chain;
}

RecordGenerator GeneratorOf(const BenchPlan& plan) {
  return RecordGenerator(plan.generator.keys, plan.generator.step_ms);
}

inline Rec MakeRec(const RecordGenerator& generate, int64_t i) {
  const GeneratedRecord g = generate(i);
  return Rec{g.key, g.value, g.ts, 0};
}

inline uint64_t SinkHash(const Rec& r) {
  return RecordHash(FieldHash(0, r.key) + FieldHash(1, r.value) + FieldHash(2, r.ts));
}

/// Applies the chain; true when the record reaches the sink.
inline bool RunChain(const Chain& chain, Rec& r) {
  for (const auto& op : chain) {
    if (!op->Apply(r)) {
      return false;
    }
  }
  return true;
}

double Since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Runs `body(s)` for subtasks 1..p-1 on their own threads and subtask 0 on this one, joins them,
/// and adds up the per-subtask results `body` wrote into `parts`; seconds are since `start`.
/// A subtask that throws (or a thread that cannot start) fails the baseline: the first failure is
/// rethrown here once every thread is joined, never std::terminate.
BaselineResult RunPerSubtask(int p, std::chrono::steady_clock::time_point start,
                             const std::vector<BaselineResult>& parts,
                             const std::function<void(int)>& body) {
  std::vector<std::exception_ptr> errors(static_cast<size_t>(std::max(1, p)));
  auto guarded = [&body, &errors](int s) {
    try {
      body(s);
    } catch (...) {
      errors[static_cast<size_t>(s)] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  try {
    for (int s = 1; s < p; ++s) {
      threads.emplace_back(guarded, s);
    }
  } catch (...) {
    errors[0] = std::current_exception();
  }
  if (!errors[0]) {
    guarded(0);
  }
  for (auto& t : threads) {
    t.join();
  }
  for (const std::exception_ptr& error : errors) {
    if (error) {
      std::rethrow_exception(error);
    }
  }
  BaselineResult out;
  out.seconds = Since(start);
  for (const auto& part : parts) {
    out.sink_records += part.sink_records;
    out.checksum += part.checksum;
  }
  return out;
}

}  // namespace

BenchPlan MakeBenchPlan(const JobSpec& job) {
  BenchPlan plan;
  const BenchJobEnds ends = FindBenchJobEnds(job);
  if (!ends.unsupported.empty()) {
    plan.unsupported = ends.unsupported;
    return plan;
  }
  const auto& by_id = ends.by_id;
  const OperatorSpec* source = ends.source;
  const OperatorSpec* sink = ends.sink;
  if (source == nullptr || !source->source || source->source->type != "generator") {
    plan.unsupported = "the source is not a generator";
    return plan;
  }
  if (sink == nullptr || !sink->sink || sink->sink->type != "checksum") {
    plan.unsupported = "the sink is not a checksum sink";
    return plan;
  }
  plan.generator = *source->source;
  plan.parallelism = source->parallelism > 0 ? source->parallelism : job.pipeline.parallelism;
  // Walk back from the sink: a straight line of one-input operators.
  std::vector<const OperatorSpec*> line;
  for (const OperatorSpec* at = sink; at != source;) {
    if (at->inputs.size() != 1 || !at->inputs[0].side_output.empty()) {
      plan.unsupported = fmt::format("operator '{}' is not a one-input main-output step", at->id);
      return plan;
    }
    at = by_id.at(at->inputs[0].from);
    if (at != source) {
      line.push_back(at);
    }
  }
  std::reverse(line.begin(), line.end());
  for (const OperatorSpec* op : line) {
    if (op->type == "map" || op->type == "filter") {
      if (plan.window) {
        plan.unsupported = "map/filter after a window";
        return plan;
      }
      const std::string& field = op->map ? op->map->field : op->filter->field;
      if (FieldIndex(plan, field) < 0) {
        plan.unsupported = fmt::format("operator '{}' reads field '{}'", op->id, field);
        return plan;
      }
      plan.chain.push_back(*op);
    } else if (op->type == "window") {
      const WindowSpec& w = *op->window;
      if (plan.window || op->key_by != std::vector<std::string>{"key"} || w.time != "event" ||
          w.offset_ms != 0 || w.emit_watermark || !w.trigger.empty() ||
          (w.assigner != "tumbling" && w.assigner != "sliding" && w.assigner != "session")) {
        plan.unsupported =
            fmt::format("window '{}' is not a plain keyed event-time window", op->id);
        return plan;
      }
      for (const AggregateSpec& a : w.aggregates) {
        if (a.function != "count" &&
            !(a.field == "value" &&
              (a.function == "sum" || a.function == "min" || a.function == "max"))) {
          plan.unsupported = fmt::format("aggregate {} of '{}'", a.function, a.field);
          return plan;
        }
      }
      plan.window = *op;
    } else if (op->type != "assign-timestamps-and-watermarks") {
      plan.unsupported = fmt::format("operator type '{}'", op->type);
      return plan;
    }
  }
  return plan;
}

BaselineResult RunFusedLoop(const BenchPlan& plan) {
  const int p = std::max(1, plan.parallelism);
  std::vector<BaselineResult> parts(static_cast<size_t>(p));
  const auto start = std::chrono::steady_clock::now();
  auto body = [&plan, &parts, p](int s) {
    const Chain chain = MakeChain(plan);
    const RecordGenerator generate = GeneratorOf(plan);
    int64_t n = 0;
    uint64_t sum = 0;
    for (int64_t i = s; i < plan.generator.count; i += p) {
      Rec r = MakeRec(generate, i);
      if (RunChain(chain, r)) {
        ++n;
        sum += SinkHash(r);
      }
    }
    parts[static_cast<size_t>(s)].sink_records = n;
    parts[static_cast<size_t>(s)].checksum = sum;
  };
  return RunPerSubtask(p, start, parts, body);
}

BaselineResult RunRawChannel(const BenchPlan& plan) {
  constexpr size_t kBatch = 256;
  const int p = std::max(1, plan.parallelism);
  std::vector<BaselineResult> parts(static_cast<size_t>(p));
  const auto start = std::chrono::steady_clock::now();
  auto pair = [&plan, &parts, p](int s) {
    // Capacity in records: 1024 batches of 256, the runtime's default channel capacity until issue
    // 10 (now 64); kept, so the baseline's figures stay comparable with earlier runs.
    boost::lockfree::spsc_queue<Rec> queue(1024 * kBatch);
    // A producer that throws stops the consumer (which would otherwise wait for ever) and its
    // exception fails this subtask once it is joined.
    std::exception_ptr producer_error;
    std::atomic<bool> producer_failed{false};
    auto produce = [&] {
      const RecordGenerator generate = GeneratorOf(plan);
      Rec batch[kBatch];
      size_t fill = 0;
      auto flush = [&] {
        size_t done = 0;
        while (done < fill) {
          done += queue.push(batch + done, fill - done);
          if (done < fill) {
            std::this_thread::yield();
          }
        }
        fill = 0;
      };
      for (int64_t i = s; i < plan.generator.count; i += p) {
        batch[fill++] = MakeRec(generate, i);
        if (fill == kBatch) {
          flush();
        }
      }
      flush();
    };
    std::thread producer([&] {
      try {
        produce();
      } catch (...) {
        producer_error = std::current_exception();
        producer_failed.store(true, std::memory_order_release);
      }
    });
    const Chain chain = MakeChain(plan);
    const int64_t expected = plan.generator.count > s ? (plan.generator.count - s + p - 1) / p : 0;
    int64_t received = 0;
    int64_t n = 0;
    uint64_t sum = 0;
    Rec batch[kBatch];
    while (received < expected) {
      const size_t got = queue.pop(batch, kBatch);
      if (got == 0) {
        if (producer_failed.load(std::memory_order_acquire)) {
          break;
        }
        std::this_thread::yield();
        continue;
      }
      received += static_cast<int64_t>(got);
      for (size_t k = 0; k < got; ++k) {
        if (RunChain(chain, batch[k])) {
          ++n;
          sum += SinkHash(batch[k]);
        }
      }
    }
    producer.join();
    if (producer_error) {
      std::rethrow_exception(producer_error);
    }
    parts[static_cast<size_t>(s)].sink_records = n;
    parts[static_cast<size_t>(s)].checksum = sum;
  };
  return RunPerSubtask(p, start, parts, pair);
}

namespace {

struct Agg {
  int64_t count = 0;
  double sum = 0;
  double min = 0;
  double max = 0;
  void Add(double v) {
    if (count == 0) {
      min = max = v;
    } else {
      min = std::min(min, v);
      max = std::max(max, v);
    }
    sum += v;
    ++count;
  }
};

class WindowEmitter {
 public:
  explicit WindowEmitter(const WindowSpec& w) : w_(w) {}
  void Emit(int64_t key, int64_t start, int64_t end, const Agg& a) {
    uint64_t h = FieldHash(0, key) + FieldHash(1, start) + FieldHash(2, end);
    size_t pos = 3;
    for (const AggregateSpec& spec : w_.aggregates) {
      if (spec.function == "count") {
        h += FieldHash(pos, a.count);
      } else if (spec.function == "sum") {
        h += FieldHash(pos, a.sum);
      } else if (spec.function == "min") {
        h += FieldHash(pos, a.min);
      } else {
        h += FieldHash(pos, a.max);
      }
      ++pos;
    }
    sum_ += RecordHash(h);
    ++n_;
  }
  int64_t n() const { return n_; }
  uint64_t sum() const { return sum_; }

 private:
  const WindowSpec& w_;
  int64_t n_ = 0;
  uint64_t sum_ = 0;
};

}  // namespace

BaselineResult RunHashAggregation(const BenchPlan& plan) {
  BaselineResult out;
  if (!plan.window) {
    return out;
  }
  const WindowSpec& w = *plan.window->window;
  const Chain chain = MakeChain(plan);
  const RecordGenerator generate = GeneratorOf(plan);
  WindowEmitter emit(w);
  const auto start = std::chrono::steady_clock::now();
  // The practical limit: absl::flat_hash_map (open addressing) over int64 keys with the
  // accumulators inline in the slots, as a hand-written loop would do it.
  if (w.assigner == "session") {
    struct Session {
      int64_t start;
      int64_t end;
      Agg agg;
    };
    absl::flat_hash_map<int64_t, Session> open;
    for (int64_t i = 0; i < plan.generator.count; ++i) {
      Rec r = MakeRec(generate, i);
      if (!RunChain(chain, r)) {
        continue;
      }
      auto [it, fresh] = open.try_emplace(r.key, Session{r.ts, r.ts + w.gap_ms, {}});
      Session& s = it->second;
      if (!fresh && r.ts > s.end) {  // TimeWindow#intersects: touching windows merge
        emit.Emit(r.key, s.start, s.end, s.agg);
        s = Session{r.ts, r.ts + w.gap_ms, {}};
      }
      s.end = std::max(s.end, r.ts + w.gap_ms);
      s.agg.Add(r.value);
    }
    out.state_memory_bytes = FlatTableBytes(open);
    out.state_keys = static_cast<int64_t>(open.size());
    for (const auto& [key, s] : open) {
      emit.Emit(key, s.start, s.end, s.agg);
    }
  } else {
    const int64_t size = w.size_ms;
    const int64_t slide = w.assigner == "sliding" ? w.slide_ms : w.size_ms;
    // The open windows in ascending start order, one flat map each; timestamps ascend, so a
    // window is complete once a record lies past its end, and a record's windows are the last
    // ceil(size / slide) ones. Emptied maps are reused for later windows.
    struct OpenWindow {
      int64_t start;
      absl::flat_hash_map<int64_t, Agg> aggs;
    };
    std::deque<OpenWindow> windows;
    std::vector<absl::flat_hash_map<int64_t, Agg>> spare;
    auto flush_before = [&](int64_t ts) {
      if (!windows.empty() && windows.front().start + size <= ts) {
        // The state is largest just before a window completes: every open window's table.
        int64_t bytes = 0;
        int64_t keys = 0;
        for (const OpenWindow& ow : windows) {
          bytes += FlatTableBytes(ow.aggs);
          keys += static_cast<int64_t>(ow.aggs.size());
        }
        out.state_memory_bytes = std::max(out.state_memory_bytes, bytes);
        out.state_keys = std::max(out.state_keys, keys);
      }
      while (!windows.empty() && windows.front().start + size <= ts) {
        OpenWindow& front = windows.front();
        for (const auto& [key, agg] : front.aggs) {
          emit.Emit(key, front.start, front.start + size, agg);
        }
        front.aggs.clear();
        spare.push_back(std::move(front.aggs));
        windows.pop_front();
      }
    };
    for (int64_t i = 0; i < plan.generator.count; ++i) {
      Rec r = MakeRec(generate, i);
      if (!RunChain(chain, r)) {
        continue;
      }
      flush_before(r.ts);
      const int64_t last_start = r.ts - ((r.ts + slide) % slide);
      while (windows.empty() || windows.back().start < last_start) {
        const int64_t next = windows.empty() ? last_start - ((size - 1) / slide) * slide
                                             : windows.back().start + slide;
        windows.push_back(OpenWindow{next, {}});
        if (!spare.empty()) {
          windows.back().aggs = std::move(spare.back());
          spare.pop_back();
        }
      }
      // windows.back() starts at last_start; walk back over the record's earlier windows.
      for (size_t k = windows.size(); k-- > 0 && windows[k].start > r.ts - size;) {
        windows[k].aggs[r.key].Add(r.value);
      }
    }
    flush_before(std::numeric_limits<int64_t>::max() / 2);
  }
  out.seconds = Since(start);
  out.sink_records = emit.n();
  out.checksum = emit.sum();
  return out;
}

}  // namespace tidemark::bench
