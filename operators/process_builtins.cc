// Built-in operator types over KeyedProcessOperator (dedup, inactivity, timer-probe) and the
// union pass-through. Their YAML parameters are documented in docs/job-reference.md.

#include <algorithm>

#include <fmt/format.h>

#include "operators/builtins.h"
#include "operators/keyed_process_operator.h"
#include "operators/operator_params.h"
#include "runtime/core/timestamp.h"

namespace tidemark {
namespace {

int64_t AsTime(const Value* v) {
  return v != nullptr ? std::get<int64_t>(*v) : kMinTimestamp;
}

Timestamp Add(Timestamp a, int64_t b) {
  return SaturatingAdd(a, b);
}

/// First record per key; later records of the key are dropped while they are within `within`
/// of the kept one (event time: by timestamp; processing time: by arrival time). The kept
/// record's state is cleared by a timer at kept + within.
class DedupFunction : public KeyedProcessFunction {
 public:
  DedupFunction(int64_t within_ms, bool event_time) : within_ms_(within_ms), event_(event_time) {}
  void ProcessElement(const StreamRecord& record, ProcessContext& ctx) override {
    const Timestamp now = event_ ? ctx.timestamp() : ctx.CurrentProcessingTime();
    if (const Value* first = ctx.State("first")) {
      const Timestamp t = std::get<int64_t>(*first);
      if (now < Add(t, within_ms_)) {
        return;  // a duplicate within the time
      }
    }
    ctx.SetState("first", now);
    const Timestamp expiry = Add(now, within_ms_);
    if (event_) {
      ctx.RegisterEventTimeTimer(expiry);
    } else {
      ctx.RegisterProcessingTimeTimer(expiry);
    }
    ctx.Collect(record.row, record.timestamp);
  }
  void OnTimer(Timestamp timestamp, ProcessContext& ctx) override {
    if (const Value* first = ctx.State("first");
        first != nullptr && Add(std::get<int64_t>(*first), within_ms_) <= timestamp) {
      ctx.ClearState("first");
    }
  }

 private:
  int64_t within_ms_;
  bool event_;
};

/// Emits `key..., last_seen, inactive_at` when a key has seen nothing for `gap` (event time:
/// after its latest timestamp; processing time: after its latest arrival).
class InactivityFunction : public KeyedProcessFunction {
 public:
  InactivityFunction(int64_t gap_ms, bool event_time, const RowLayout* output)
      : gap_ms_(gap_ms), event_(event_time), output_(output) {}
  void ProcessElement(const StreamRecord& /*record*/, ProcessContext& ctx) override {
    const Timestamp now = event_ ? ctx.timestamp() : ctx.CurrentProcessingTime();
    const Timestamp last = std::max(now, AsTime(ctx.State("last")));
    ctx.SetState("last", last);
    const Timestamp due = Add(last, gap_ms_);
    if (const Value* timer = ctx.State("timer")) {
      const Timestamp old = std::get<int64_t>(*timer);
      if (old == due) {
        return;
      }
      if (event_) {
        ctx.DeleteEventTimeTimer(old);
      } else {
        ctx.DeleteProcessingTimeTimer(old);
      }
    }
    ctx.SetState("timer", due);
    if (event_) {
      ctx.RegisterEventTimeTimer(due);
    } else {
      ctx.RegisterProcessingTimeTimer(due);
    }
  }
  void OnTimer(Timestamp timestamp, ProcessContext& ctx) override {
    if (AsTime(ctx.State("timer")) != timestamp) {
      return;
    }
    std::vector<Value> out = ctx.current_key();
    out.emplace_back(AsTime(ctx.State("last")));
    out.emplace_back(timestamp);
    ctx.ClearState("timer");
    ctx.ClearState("last");
    ctx.Collect(Row::Of(output_, out), timestamp);
  }

 private:
  int64_t gap_ms_;
  bool event_;
  const RowLayout* output_;
};

/// The seed's exercise 3 as a built-in: per record, an event-time timer at
/// `current watermark + offset` (default -1 ms); on firing emits
/// `key..., timer, registered_watermark, fired_watermark`.
class TimerProbeFunction : public KeyedProcessFunction {
 public:
  TimerProbeFunction(int64_t offset_ms, const RowLayout* output)
      : offset_ms_(offset_ms), output_(output) {}
  void ProcessElement(const StreamRecord& /*record*/, ProcessContext& ctx) override {
    const Timestamp wm = ctx.CurrentWatermark();
    const Timestamp t = Add(wm, offset_ms_);
    const std::string name = fmt::format("registered@{}", t);
    if (ctx.State(name) == nullptr) {
      ctx.SetState(name, wm);
    }
    ctx.RegisterEventTimeTimer(t);
  }
  void OnTimer(Timestamp timestamp, ProcessContext& ctx) override {
    const std::string name = fmt::format("registered@{}", timestamp);
    std::vector<Value> out = ctx.current_key();
    out.emplace_back(timestamp);
    out.emplace_back(AsTime(ctx.State(name)));
    out.emplace_back(ctx.CurrentWatermark());
    ctx.ClearState(name);
    ctx.Collect(Row::Of(output_, out), timestamp);
  }

 private:
  int64_t offset_ms_;
  const RowLayout* output_;
};

/// Passes records through unchanged (`union`: several inputs of one schema into one stream;
/// their channels meet in one valve, so event time is the minimum over all of them).
class PassThroughOperator : public StreamOperator {
 public:
  void ProcessElement(StreamRecord& record, int /*input*/) override { output().Collect(record); }
};

const Schema& SingleInput(const CompileContext& ctx) {
  if (ctx.input_schemas.size() != 1) {
    throw CompileError("inputs",
                       fmt::format("a {} operator takes exactly one input", ctx.spec.type));
  }
  return ctx.input_schemas.front();
}

/// Key fields of the output: the key-by fields with their input types.
Schema KeySchema(const Schema& input, const std::vector<int>& slots) {
  Schema out;
  for (int slot : slots) {
    out.Add(input.field(static_cast<size_t>(slot)).name,
            input.field(static_cast<size_t>(slot)).type);
  }
  return out;
}

void SetKeying(CompiledOperator& out, const std::vector<int>& slots) {
  out.input_key_slots = slots;
  out.hash_input = true;
  if (slots.empty()) {
    out.forced_parallelism = 1;  // one key for all records
  }
}

template <typename Fn>
void SetProcessFactory(CompiledOperator& out, const std::vector<int>& slots, Fn make_function) {
  const RowLayout* output = out.output_schema.layout();
  out.factory = [slots, make_function, output](int, int) -> std::unique_ptr<StreamOperator> {
    KeyedProcessOperator::Options options;
    options.key_slots[0] = slots;
    options.output_layout = output;
    return std::make_unique<KeyedProcessOperator>(make_function(), options);
  };
}

CompiledOperator CompileDedup(const CompileContext& ctx) {
  const Schema& input = SingleInput(ctx);
  OperatorParams params(ctx.spec);
  params.CheckKeys({"within", "time"});
  const int64_t within = params.DurationMs("within", std::nullopt);
  if (within <= 0) {
    params.Fail(params.Get("within")->location, "within", "must be greater than 0");
  }
  const bool event = params.Enum("time", {"event", "processing"}, "event") == "event";
  CompiledOperator out;
  out.output_schema = input;
  const std::vector<int> slots = ResolveKeyBy(ctx.spec, input);
  SetKeying(out, slots);
  SetProcessFactory(out, slots,
                    [within, event] { return std::make_unique<DedupFunction>(within, event); });
  return out;
}

CompiledOperator CompileInactivity(const CompileContext& ctx) {
  const Schema& input = SingleInput(ctx);
  OperatorParams params(ctx.spec);
  params.CheckKeys({"gap", "time"});
  const int64_t gap = params.DurationMs("gap", std::nullopt);
  if (gap <= 0) {
    params.Fail(params.Get("gap")->location, "gap", "must be greater than 0");
  }
  const bool event = params.Enum("time", {"event", "processing"}, "event") == "event";
  const std::vector<int> slots = ResolveKeyBy(ctx.spec, input);
  CompiledOperator out;
  out.output_schema = KeySchema(input, slots);
  for (const char* name : {"last_seen", "inactive_at"}) {
    if (out.output_schema.IndexOf(name) >= 0) {
      throw CompileError("key-by", fmt::format("a key field may not be named '{}'", name));
    }
    out.output_schema.Add(name, FieldType::kTimestamp);
  }
  SetKeying(out, slots);
  const RowLayout* layout = out.output_schema.layout();
  SetProcessFactory(out, slots, [gap, event, layout] {
    return std::make_unique<InactivityFunction>(gap, event, layout);
  });
  return out;
}

CompiledOperator CompileTimerProbe(const CompileContext& ctx) {
  const Schema& input = SingleInput(ctx);
  OperatorParams params(ctx.spec);
  params.CheckKeys({"offset"});
  const int64_t offset = params.DurationMs("offset", -1, /*allow_negative=*/true);
  const std::vector<int> slots = ResolveKeyBy(ctx.spec, input);
  CompiledOperator out;
  out.output_schema = KeySchema(input, slots);
  for (const char* name : {"timer", "registered_watermark", "fired_watermark"}) {
    if (out.output_schema.IndexOf(name) >= 0) {
      throw CompileError("key-by", fmt::format("a key field may not be named '{}'", name));
    }
    out.output_schema.Add(name, FieldType::kTimestamp);
  }
  SetKeying(out, slots);
  const RowLayout* layout = out.output_schema.layout();
  SetProcessFactory(out, slots, [offset, layout] {
    return std::make_unique<TimerProbeFunction>(offset, layout);
  });
  return out;
}

CompiledOperator CompileUnion(const CompileContext& ctx) {
  OperatorParams params(ctx.spec);
  params.CheckKeys({});
  if (ctx.input_schemas.empty()) {
    throw CompileError("inputs", "a union needs at least one input");
  }
  for (size_t i = 1; i < ctx.input_schemas.size(); ++i) {
    if (!(ctx.input_schemas[i] == ctx.input_schemas.front())) {
      throw CompileError(
          fmt::format("inputs[{}]", i),
          fmt::format("all inputs of a union must have the same schema; '{}' differs "
                      "from '{}'",
                      ctx.spec.inputs[i].from, ctx.spec.inputs[0].from),
          ctx.spec.inputs[i].location);
    }
  }
  CompiledOperator out;
  out.output_schema = ctx.input_schemas.front();
  out.factory = [](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<PassThroughOperator>();
  };
  return out;
}

}  // namespace

std::unique_ptr<KeyedProcessFunction> MakeDedupFunction(int64_t within_ms, bool event_time) {
  return std::make_unique<DedupFunction>(within_ms, event_time);
}

void RegisterProcessBuiltins(OperatorRegistry& registry) {
  registry.Register("dedup", CompileDedup);
  registry.Register("inactivity", CompileInactivity);
  registry.Register("timer-probe", CompileTimerProbe);
  registry.Register("union", CompileUnion);
  RegisterExpressionProcess(registry);
}

}  // namespace tidemark
