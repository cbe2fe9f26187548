// `type: process`: a keyed process function written in YAML (Flink's KeyedProcessFunction, and
// with a broadcast input its KeyedBroadcastProcessFunction): per-key value state, per-record
// event- and processing-time timers, and what to emit, all as expressions. The YAML is
// documented in docs/job-reference.md ("The process type").

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "operators/builtins.h"
#include "operators/expression.h"
#include "operators/keyed_process_operator.h"
#include "operators/operator_params.h"

namespace tidemark {
namespace {

/// Names the expressions of a handler can read besides fields and state.
constexpr const char* kWatermarkVar = "watermark";  // the operator's current event time
constexpr const char* kNowVar = "now";              // the current processing time
constexpr const char* kTimerVar = "timer";          // in on-timer: the firing timer's time
constexpr const char* kDomainVar = "time_domain";   // in on-timer: 'event' | 'processing'

/// One of `on-record`, `on-timer`, `on-broadcast`, compiled against its scope (the row its
/// expressions read; see ProcessPlan).
struct Handler {
  bool present = false;
  /// (index into the state it writes, expression); all are evaluated before any is stored.
  std::vector<std::pair<size_t, Expression>> set;
  std::optional<Expression> event_timer;
  std::optional<Expression> processing_timer;
  std::optional<Expression> emit_if;
  std::vector<Expression> emit;
  /// `clear:` true, or a bool expression (evaluated after emit): clear the key's state.
  std::optional<Expression> clear_if;
  bool clear = false;
};

/// Everything the function needs, shared by every subtask (immutable after compile).
///
/// Scopes (the row each handler's expressions are compiled against):
///   on-record:    the keyed input's fields, state..., broadcast state..., watermark, now
///   on-timer:     the key fields,           state..., broadcast state..., timer, watermark, now,
///                 time_domain
///   on-broadcast: the broadcast input's fields,        broadcast state..., watermark, now
struct ProcessPlan {
  /// The layouts of the three scopes (see above) and of the emitted rows.
  const RowLayout* record_scope = nullptr;
  const RowLayout* timer_scope = nullptr;
  const RowLayout* broadcast_scope = nullptr;
  const RowLayout* output = nullptr;
  std::vector<std::string> state;
  std::vector<Value> state_init;
  std::vector<std::string> broadcast_state;
  std::vector<Value> broadcast_init;
  Handler on_record;
  Handler on_timer;
  Handler on_broadcast;
};

/// Runs a ProcessPlan. One per subtask; `scope_` is a reused buffer.
class ExpressionProcessLogic {
 public:
  explicit ExpressionProcessLogic(std::shared_ptr<const ProcessPlan> plan)
      : plan_(std::move(plan)) {}

  void OnRecord(const StreamRecord& record, ProcessContext& ctx) {
    size_t at = BeginScope(plan_->record_scope, record.row);
    at = AppendKeyedState(ctx, at);
    at = AppendBroadcastState(ctx, at);
    scope_.SetInt64(at++, ctx.CurrentWatermark());
    scope_.SetInt64(at++, ctx.CurrentProcessingTime());
    Run(plan_->on_record, record.row.size(), ctx,
        record.has_timestamp ? std::optional<Timestamp>(record.timestamp) : std::nullopt);
  }

  void OnTimer(Timestamp time, ProcessContext& ctx) {
    const Key& key = ctx.current_key();
    scope_.Reset(plan_->timer_scope);
    size_t at = 0;
    for (const Value& v : key) {
      scope_.Set(at++, v);
    }
    at = AppendKeyedState(ctx, at);
    at = AppendBroadcastState(ctx, at);
    scope_.SetInt64(at++, time);
    scope_.SetInt64(at++, ctx.CurrentWatermark());
    scope_.SetInt64(at++, ctx.CurrentProcessingTime());
    scope_.SetString(at++, ctx.time_domain() == TimeDomain::kEventTime ? "event" : "processing");
    // Flink stamps what an event-time timer emits with the timer's time and erases the
    // timestamp of what a processing-time timer emits.
    // At end of event time (MAX) a timer set here could only fire at once, and again from its
    // own firing, for ever: it is dropped (documented in docs/job-reference.md).
    const bool drop_event_timers = ctx.CurrentWatermark() == kMaxTimestamp;
    Run(plan_->on_timer, key.size(), ctx,
        ctx.time_domain() == TimeDomain::kEventTime ? std::optional<Timestamp>(time) : std::nullopt,
        drop_event_timers);
  }

  void OnBroadcast(const StreamRecord& record, ProcessContext& ctx) {
    size_t at = BeginScope(plan_->broadcast_scope, record.row);
    at = AppendBroadcastState(ctx, at);
    scope_.SetInt64(at++, ctx.CurrentWatermark());
    scope_.SetInt64(at++, ctx.CurrentProcessingTime());
    const Handler& h = plan_->on_broadcast;
    values_.clear();
    for (const auto& [index, expression] : h.set) {
      values_.push_back(expression.Evaluate(scope_));
    }
    for (size_t i = 0; i < h.set.size(); ++i) {
      ctx.SetBroadcastState(plan_->broadcast_state[h.set[i].first], std::move(values_[i]));
    }
  }

 private:
  /// Starts the scope row of `layout` with `row`'s cells; returns the next slot.
  size_t BeginScope(const RowLayout* layout, const Row& row) {
    scope_.Reset(layout);
    for (size_t i = 0; i < row.size(); ++i) {
      scope_.CopyCell(i, row, i);
    }
    return row.size();
  }
  size_t AppendKeyedState(const ProcessContext& ctx, size_t at) {
    for (size_t i = 0; i < plan_->state.size(); ++i) {
      const Value* v = ctx.State(plan_->state[i]);
      scope_.Set(at++, v != nullptr ? *v : plan_->state_init[i]);
    }
    return at;
  }
  size_t AppendBroadcastState(const ProcessContext& ctx, size_t at) {
    for (size_t i = 0; i < plan_->broadcast_state.size(); ++i) {
      const Value* v = ctx.BroadcastState(plan_->broadcast_state[i]);
      scope_.Set(at++, v != nullptr ? *v : plan_->broadcast_init[i]);
    }
    return at;
  }

  /// `state_offset`: where the keyed state starts in the scope.
  void Run(const Handler& h, size_t state_offset, ProcessContext& ctx,
           std::optional<Timestamp> stamp, bool drop_event_timers = false) {
    values_.clear();
    for (const auto& [index, expression] : h.set) {
      values_.push_back(expression.Evaluate(scope_));
    }
    for (size_t i = 0; i < h.set.size(); ++i) {
      const size_t index = h.set[i].first;
      scope_.Set(state_offset + index, values_[i]);
      ctx.SetState(plan_->state[index], std::move(values_[i]));
    }
    if (h.event_timer && !drop_event_timers) {
      const Value t = h.event_timer->Evaluate(scope_);
      if (const auto* time = std::get_if<int64_t>(&t)) {
        ctx.RegisterEventTimeTimer(*time);  // NULL: no timer
      }
    }
    if (h.processing_timer) {
      const Value t = h.processing_timer->Evaluate(scope_);
      if (const auto* time = std::get_if<int64_t>(&t)) {
        ctx.RegisterProcessingTimeTimer(*time);
      }
    }
    if (!h.emit.empty() && (!h.emit_if || h.emit_if->Test(scope_))) {
      Row out(plan_->output);
      for (size_t i = 0; i < h.emit.size(); ++i) {
        h.emit[i].EvaluateInto(scope_, out, i);
      }
      if (stamp) {
        ctx.Collect(std::move(out), *stamp);
      } else {
        ctx.Collect(std::move(out));
      }
    }
    if (h.clear || (h.clear_if && h.clear_if->Test(scope_))) {
      for (const std::string& name : plan_->state) {
        ctx.ClearState(name);
      }
    }
  }

  std::shared_ptr<const ProcessPlan> plan_;
  Row scope_;
  std::vector<Value> values_;
};

class ExpressionProcessFunction : public KeyedProcessFunction {
 public:
  explicit ExpressionProcessFunction(std::shared_ptr<const ProcessPlan> plan)
      : logic_(std::move(plan)) {}
  void ProcessElement(const StreamRecord& record, ProcessContext& ctx) override {
    logic_.OnRecord(record, ctx);
  }
  void OnTimer(Timestamp timestamp, ProcessContext& ctx) override {
    logic_.OnTimer(timestamp, ctx);
  }

 private:
  ExpressionProcessLogic logic_;
};

/// Two inputs, one of them broadcast (`broadcast_input`).
class ExpressionBroadcastProcessFunction : public KeyedCoProcessFunction {
 public:
  ExpressionBroadcastProcessFunction(std::shared_ptr<const ProcessPlan> plan, int broadcast_input)
      : logic_(std::move(plan)), broadcast_input_(broadcast_input) {}
  void ProcessElement1(const StreamRecord& record, ProcessContext& ctx) override {
    Dispatch(0, record, ctx);
  }
  void ProcessElement2(const StreamRecord& record, ProcessContext& ctx) override {
    Dispatch(1, record, ctx);
  }
  void OnTimer(Timestamp timestamp, ProcessContext& ctx) override {
    logic_.OnTimer(timestamp, ctx);
  }

 private:
  void Dispatch(int input, const StreamRecord& record, ProcessContext& ctx) {
    if (input == broadcast_input_) {
      logic_.OnBroadcast(record, ctx);
    } else {
      logic_.OnRecord(record, ctx);
    }
  }
  ExpressionProcessLogic logic_;
  int broadcast_input_;
};

bool SameStorage(FieldType a, FieldType b) {
  auto integral = [](FieldType t) {
    return t == FieldType::kInt64 || t == FieldType::kTimestamp;
  };
  return a == b || (integral(a) && integral(b));
}

/// Compiles the `process:` block of one operator.
class ProcessCompiler {
 public:
  explicit ProcessCompiler(const CompileContext& ctx) : ctx_(ctx), params_(ctx.spec) {}

  CompiledOperator Compile() {
    params_.CheckKeys({"state", "broadcast-state", "on-record", "on-timer", "on-broadcast"});
    ResolveInputs();
    auto plan = std::make_shared<ProcessPlan>();
    ReadState("state", &plan->state, &plan->state_init, &state_schema_);
    ReadState("broadcast-state", &plan->broadcast_state, &plan->broadcast_init, &broadcast_schema_);
    if (broadcast_input_ < 0 && params_.Has("broadcast-state")) {
      params_.Fail(
          params_.Get("broadcast-state")->location, "broadcast-state",
          "broadcast state needs a broadcast input (an input with `partition: broadcast`)");
    }
    CheckNames();

    const Schema& keyed = ctx_.input_schemas[static_cast<size_t>(keyed_input_)];
    Schema key_schema;
    for (int slot : key_slots_) {
      key_schema.Add(keyed.field(static_cast<size_t>(slot)).name,
                     keyed.field(static_cast<size_t>(slot)).type);
    }
    const Schema record_scope = Scope(keyed, true, {kWatermarkVar, kNowVar});
    Schema timer_scope = Scope(key_schema, true, {kTimerVar, kWatermarkVar, kNowVar});
    timer_scope.Add(kDomainVar, FieldType::kString);

    Schema record_out;
    Schema timer_out;
    plan->record_scope = record_scope.layout();
    plan->timer_scope = timer_scope.layout();
    plan->on_record = ReadHandler("on-record", record_scope, false, &record_out);
    plan->on_timer = ReadHandler("on-timer", timer_scope, false, &timer_out);
    if (broadcast_input_ >= 0) {
      const Schema& b = ctx_.input_schemas[static_cast<size_t>(broadcast_input_)];
      Schema dummy;
      const Schema broadcast_scope = Scope(b, false, {kWatermarkVar, kNowVar});
      plan->broadcast_scope = broadcast_scope.layout();
      plan->on_broadcast = ReadHandler("on-broadcast", broadcast_scope, true, &dummy);
      if (!plan->on_broadcast.present) {
        params_.Fail(
            ctx_.spec.location, "on-broadcast",
            fmt::format(
                "input '{}' is broadcast, so the process block needs `on-broadcast:` saying "
                "what its records set in `broadcast-state:`",
                ctx_.spec.inputs[static_cast<size_t>(broadcast_input_)].from));
      }
    } else if (params_.Has("on-broadcast")) {
      params_.Fail(params_.Get("on-broadcast")->location, "on-broadcast",
                   "on-broadcast needs a broadcast input (an input with `partition: broadcast`)");
    }
    if (!plan->on_record.present) {
      params_.Fail(ctx_.spec.location, "on-record",
                   "a process operator needs an `on-record:` block");
    }

    CompiledOperator out;
    if (plan->on_record.emit.empty() && plan->on_timer.emit.empty()) {
      params_.Fail(ctx_.spec.location, "",
                   "a process operator emits nothing: give on-record or on-timer an `emit:` list");
    }
    if (!plan->on_record.emit.empty() && !plan->on_timer.emit.empty()) {
      CheckSameOutput(record_out, timer_out);
    }
    out.output_schema = plan->on_record.emit.empty() ? timer_out : record_out;
    plan->output = out.output_schema.layout();
    out.num_inputs = static_cast<int>(ctx_.input_schemas.size());
    out.input_key_slots = key_slots_;
    if (out.num_inputs == 2) {
      out.input_key_slots_per_input.resize(2);
      out.input_key_slots_per_input[static_cast<size_t>(keyed_input_)] = key_slots_;
    }
    out.hash_input = true;
    if (key_slots_.empty()) {
      out.forced_parallelism = 1;  // one key for all records
    }
    KeyedProcessOperator::Options options;
    options.key_slots[keyed_input_] = key_slots_;
    options.output_layout = plan->output;
    options.broadcast_input = broadcast_input_;
    if (broadcast_input_ >= 0) {
      options.excluded_from_min[broadcast_input_] = ctx_.spec.broadcast_watermarks != "include";
    }
    const int broadcast_input = broadcast_input_;
    std::shared_ptr<const ProcessPlan> shared = plan;
    out.factory = [shared, options, broadcast_input](int, int) -> std::unique_ptr<StreamOperator> {
      if (broadcast_input < 0) {
        return std::make_unique<KeyedProcessOperator>(
            std::make_unique<ExpressionProcessFunction>(shared), options);
      }
      return std::make_unique<KeyedProcessOperator>(
          std::make_unique<ExpressionBroadcastProcessFunction>(shared, broadcast_input), options);
    };
    return out;
  }

 private:
  void ResolveInputs() {
    const size_t n = ctx_.input_schemas.size();
    if (n != 1 && n != 2) {
      throw CompileError("inputs",
                         fmt::format("a process operator takes one input, or two of which one is "
                                     "broadcast; got {}",
                                     n));
    }
    int broadcast = -1;
    for (size_t i = 0; i < n; ++i) {
      if (ctx_.spec.inputs[i].partitioning == Partitioning::kBroadcast) {
        if (n == 1) {
          throw CompileError(
              "inputs[0]",
              "the only input of a process operator cannot be broadcast (it is keyed by key-by)",
              ctx_.spec.inputs[i].location);
        }
        if (broadcast >= 0) {
          throw CompileError(fmt::format("inputs[{}]", i),
                             "at most one input of a process operator may be broadcast",
                             ctx_.spec.inputs[i].location);
        }
        broadcast = static_cast<int>(i);
      }
    }
    if (n == 2 && broadcast < 0) {
      throw CompileError("inputs",
                         "a process operator with two inputs needs one of them broadcast "
                         "(`partition: broadcast`); "
                         "to process two keyed streams together use a union first");
    }
    broadcast_input_ = broadcast;
    keyed_input_ = broadcast == 0 ? 1 : 0;
    key_slots_ = ResolveKeyBy(ctx_.spec, ctx_.input_schemas[static_cast<size_t>(keyed_input_)]);
  }

  /// `name: initial-value expression` pairs (a constant: a number, a string in quotes, a bool).
  void ReadState(const std::string& key, std::vector<std::string>* names, std::vector<Value>* init,
                 Schema* schema) {
    const ParamNode* node = params_.Get(key);
    if (node == nullptr) {
      return;
    }
    if (node->kind != ParamNode::Kind::kMap || node->keys.empty()) {
      params_.Fail(node->location, key,
                   "expected a mapping of names to initial values, like {total: 0, last: \"''\"}");
    }
    for (size_t i = 0; i < node->keys.size(); ++i) {
      const std::string& name = node->keys[i];
      const std::string path = fmt::format("{}.{}", key, name);
      const Expression e = params_.CompileExpression(node->items[i], path, Schema{});
      Value v = e.Evaluate(Row{});
      if (std::holds_alternative<std::monostate>(v)) {
        params_.Fail(node->items[i].location, path,
                     "the initial value decides the state's type, so it cannot be null; write 0, "
                     "0.0, false or "
                     "\"''\"");
      }
      names->push_back(name);
      init->push_back(std::move(v));
      schema->Add(name, e.type());
      locations_[name] = node->key_locations[i];
      paths_[name] = path;
    }
  }

  /// State and broadcast-state names must not hide a field, each other or a variable.
  void CheckNames() {
    const char* vars[] = {kWatermarkVar, kNowVar, kTimerVar, kDomainVar};
    auto check = [&](const Schema& names, const char* what) {
      for (const Field& f : names.fields()) {
        for (size_t i = 0; i < ctx_.input_schemas.size(); ++i) {
          if (ctx_.input_schemas[i].IndexOf(f.name) >= 0) {
            params_.Fail(locations_[f.name], paths_[f.name],
                         fmt::format("{} '{}' has the name of a field of input '{}'; rename it",
                                     what, f.name, ctx_.spec.inputs[i].from));
          }
        }
        for (const char* v : vars) {
          if (f.name == v) {
            params_.Fail(locations_[f.name], paths_[f.name],
                         fmt::format("'{}' is a variable of the process block (watermark, now, "
                                     "timer, time_domain); rename the {}",
                                     f.name, what));
          }
        }
      }
    };
    check(state_schema_, "state");
    check(broadcast_schema_, "broadcast state");
    for (const Field& f : broadcast_schema_.fields()) {
      if (state_schema_.IndexOf(f.name) >= 0) {
        params_.Fail(locations_[f.name], paths_[f.name],
                     fmt::format("'{}' is both state and broadcast state", f.name));
      }
    }
    for (size_t i = 0; i < ctx_.input_schemas.size(); ++i) {
      for (const char* v : vars) {
        if (ctx_.input_schemas[i].IndexOf(v) >= 0) {
          throw CompileError(
              "inputs",
              fmt::format("input '{}' has a field named '{}', which the process block uses "
                          "as a variable; rename the field with a project first",
                          ctx_.spec.inputs[i].from, v));
        }
      }
    }
  }

  /// `base` fields, then the keyed state (when `keyed`), the broadcast state, then `vars`
  /// (timestamps).
  Schema Scope(const Schema& base, bool keyed, std::initializer_list<const char*> vars) const {
    Schema s = base;
    if (keyed) {
      for (const Field& f : state_schema_.fields()) {
        s.Add(f.name, f.type);
      }
    }
    for (const Field& f : broadcast_schema_.fields()) {
      s.Add(f.name, f.type);
    }
    for (const char* v : vars) {
      s.Add(v, FieldType::kTimestamp);
    }
    return s;
  }

  Handler ReadHandler(const std::string& key, const Schema& scope, bool broadcast, Schema* output) {
    Handler h;
    const ParamNode* node = params_.Get(key);
    if (node == nullptr) {
      return h;
    }
    h.present = true;
    if (node->kind != ParamNode::Kind::kMap) {
      params_.Fail(node->location, key,
                   "expected a mapping with set, event-timer, processing-timer, emit-if, emit, "
                   "clear");
    }
    static const std::vector<std::string> kKeyed = {"set",     "event-timer", "processing-timer",
                                                    "emit-if", "emit",        "clear"};
    static const std::vector<std::string> kBroadcast = {"set"};
    const auto& allowed = broadcast ? kBroadcast : kKeyed;
    for (size_t i = 0; i < node->keys.size(); ++i) {
      if (std::find(allowed.begin(), allowed.end(), node->keys[i]) == allowed.end()) {
        std::string list;
        for (const auto& a : allowed) {
          list += (list.empty() ? "" : ", ") + a;
        }
        params_.Fail(node->key_locations[i], key + "." + node->keys[i],
                     fmt::format("unknown key '{}' (allowed: {})", node->keys[i], list));
      }
    }
    const Schema& targets = broadcast ? broadcast_schema_ : state_schema_;
    if (const ParamNode* set = node->Find("set")) {
      if (set->kind != ParamNode::Kind::kMap || set->keys.empty()) {
        params_.Fail(set->location, key + ".set",
                     "expected a mapping of state names to expressions");
      }
      for (size_t i = 0; i < set->keys.size(); ++i) {
        const std::string& name = set->keys[i];
        const std::string path = fmt::format("{}.set.{}", key, name);
        const int index = targets.IndexOf(name);
        if (index < 0) {
          params_.Fail(
              set->key_locations[i], path,
              broadcast_schema_.IndexOf(name) >= 0
                  ? fmt::format("'{}' is broadcast state, which only on-broadcast may set", name)
                  : fmt::format("no {} named '{}'; declare it under `{}:` with its initial value",
                                broadcast ? "broadcast state" : "state", name,
                                broadcast ? "broadcast-state" : "state"));
        }
        Expression e = params_.CompileExpression(set->items[i], path, scope);
        const FieldType want = targets.field(static_cast<size_t>(index)).type;
        if (!SameStorage(e.type(), want)) {
          params_.Fail(set->items[i].location, path,
                       fmt::format("'{}' holds {} (from its initial value), but \"{}\" is {}", name,
                                   ToString(want), e.text(), ToString(e.type())));
        }
        h.set.emplace_back(static_cast<size_t>(index), std::move(e));
      }
    }
    auto timer = [&](const char* k, std::optional<Expression>* into) {
      if (const ParamNode* t = node->Find(k)) {
        Expression e = params_.CompileExpression(*t, key + "." + k, scope);
        if (e.type() != FieldType::kTimestamp && e.type() != FieldType::kInt64) {
          params_.Fail(
              t->location, key + "." + k,
              fmt::format("a timer's time must be a timestamp or int64 (ms), but \"{}\" is {}",
                          e.text(), ToString(e.type())));
        }
        *into = std::move(e);
      }
    };
    timer("event-timer", &h.event_timer);
    timer("processing-timer", &h.processing_timer);
    if (const ParamNode* c = node->Find("emit-if")) {
      Expression e = params_.CompileExpression(*c, key + ".emit-if", scope);
      if (e.type() != FieldType::kBool) {
        params_.Fail(
            c->location, key + ".emit-if",
            fmt::format("emit-if must be bool, but \"{}\" is {}", e.text(), ToString(e.type())));
      }
      h.emit_if = std::move(e);
    }
    if (const ParamNode* e = node->Find("emit")) {
      std::vector<std::string> names;
      params_.CompileColumns(*e, key + ".emit", scope, &names, &h.emit);
      for (size_t i = 0; i < names.size(); ++i) {
        output->Add(names[i], h.emit[i].type());
      }
      emit_locations_[key] = e->location;
    } else if (h.emit_if) {
      params_.Fail(node->Find("emit-if")->location, key + ".emit-if", "emit-if without emit");
    }
    if (const ParamNode* c = node->Find("clear")) {
      if (c->kind == ParamNode::Kind::kScalar && !c->quoted &&
          (c->scalar == "true" || c->scalar == "false")) {
        h.clear = c->scalar == "true";
      } else {
        Expression e = params_.CompileExpression(*c, key + ".clear", scope);
        if (e.type() != FieldType::kBool) {
          params_.Fail(
              c->location, key + ".clear",
              fmt::format("clear must be true, false or a bool expression, but \"{}\" is {}",
                          e.text(), ToString(e.type())));
        }
        h.clear_if = std::move(e);
      }
    }
    return h;
  }

  void CheckSameOutput(const Schema& record_out, const Schema& timer_out) {
    bool same = record_out.size() == timer_out.size();
    for (size_t i = 0; same && i < record_out.size(); ++i) {
      same = record_out.field(i).name == timer_out.field(i).name &&
             SameStorage(record_out.field(i).type, timer_out.field(i).type);
    }
    if (!same) {
      auto describe = [](const Schema& s) {
        std::string out;
        for (const Field& f : s.fields()) {
          out += fmt::format("{}{} {}", out.empty() ? "" : ", ", f.name, ToString(f.type));
        }
        return out;
      };
      params_.Fail(
          emit_locations_["on-timer"], "on-timer.emit",
          fmt::format("on-record and on-timer emit into one stream, so they need the same columns: "
                      "on-record emits ({}), on-timer ({})",
                      describe(record_out), describe(timer_out)));
    }
  }

  const CompileContext& ctx_;
  OperatorParams params_;
  int broadcast_input_ = -1;
  int keyed_input_ = 0;
  std::vector<int> key_slots_;
  Schema state_schema_;
  Schema broadcast_schema_;
  std::map<std::string, SourceLocation> locations_;
  std::map<std::string, std::string>
      paths_;  // state name -> "state.<name>" / "broadcast-state.<name>"
  std::map<std::string, SourceLocation> emit_locations_;
};

}  // namespace

void RegisterExpressionProcess(OperatorRegistry& registry) {
  registry.Register("process",
                    [](const CompileContext& ctx) { return ProcessCompiler(ctx).Compile(); });
}

}  // namespace tidemark
