// `interval-join` and `window-join`: two-input operator types (inputs[0] = left,
// inputs[1] = right). Their YAML parameters are documented in docs/job-reference.md.

#include <fmt/format.h>

#include "operators/builtins.h"
#include "operators/interval_join_operator.h"
#include "operators/operator_params.h"
#include "operators/window/window_operator.h"
#include "operators/window_join_operator.h"

namespace tidemark {
namespace {

struct JoinKeys {
  std::vector<int> left;
  std::vector<int> right;
};

void RequireTwoInputs(const CompileContext& ctx) {
  if (ctx.input_schemas.size() != 2) {
    throw CompileError("inputs", fmt::format("a {} takes exactly two inputs (left, right), got {}",
                                             ctx.spec.type, ctx.input_schemas.size()));
  }
}

/// `key-by: [f]` (the same field names on both sides) or `left-key` / `right-key`.
JoinKeys ResolveJoinKeys(const CompileContext& ctx, const OperatorParams& params) {
  JoinKeys keys;
  const Schema& left = ctx.input_schemas[0];
  const Schema& right = ctx.input_schemas[1];
  if (params.Has("left-key") || params.Has("right-key")) {
    if (!ctx.spec.key_by.empty()) {
      params.Fail(params.Get(params.Has("left-key") ? "left-key" : "right-key")->location,
                  "left-key", "give either key-by or left-key / right-key, not both");
    }
    keys.left = params.FieldList("left-key", left);
    keys.right = params.FieldList("right-key", right);
  } else {
    keys.left = ResolveKeyBy(ctx.spec, left);
    keys.right = ResolveKeyBy(ctx.spec, right);
  }
  if (keys.left.size() != keys.right.size()) {
    params.Fail(params.Get("right-key") ? params.Get("right-key")->location : ctx.spec.location,
                "right-key",
                fmt::format("left-key has {} fields but right-key has {}", keys.left.size(),
                            keys.right.size()));
  }
  for (size_t i = 0; i < keys.left.size(); ++i) {
    const FieldType lt = left.field(static_cast<size_t>(keys.left[i])).type;
    const FieldType rt = right.field(static_cast<size_t>(keys.right[i])).type;
    const bool both_int = (lt == FieldType::kInt64 || lt == FieldType::kTimestamp) &&
                          (rt == FieldType::kInt64 || rt == FieldType::kTimestamp);
    if (lt != rt && !both_int) {
      throw CompileError("right-key",
                         fmt::format("key field {} is {} on the left but {} on the right", i,
                                     ToString(lt), ToString(rt)));
    }
  }
  return keys;
}

/// Left fields, then right fields; a right field whose name is taken gets the prefix `right_`.
Schema JoinedSchema(const Schema& left, const Schema& right) {
  Schema out = left;
  for (const Field& f : right.fields()) {
    std::string name = f.name;
    while (out.IndexOf(name) >= 0) {
      name.insert(0, "right_");
    }
    out.Add(name, f.type);
  }
  return out;
}

void SetTwoInputKeying(CompiledOperator& out, const JoinKeys& keys) {
  out.num_inputs = 2;
  out.hash_input = true;
  out.input_key_slots = keys.left;
  out.input_key_slots_per_input = {keys.left, keys.right};
  if (keys.left.empty()) {
    out.forced_parallelism = 1;
  }
}

CompiledOperator CompileIntervalJoin(const CompileContext& ctx) {
  RequireTwoInputs(ctx);
  OperatorParams params(ctx.spec);
  params.CheckKeys({"lower", "upper", "lower-inclusive", "upper-inclusive", "left-key", "right-key",
                    "left-late-output", "right-late-output"});
  IntervalJoinOperator::Options options;
  options.lower_bound_ms = params.DurationMs("lower", std::nullopt, /*allow_negative=*/true);
  options.upper_bound_ms = params.DurationMs("upper", std::nullopt, /*allow_negative=*/true);
  options.lower_inclusive = params.Bool("lower-inclusive", true);
  options.upper_inclusive = params.Bool("upper-inclusive", true);
  const int64_t lo = options.lower_bound_ms + (options.lower_inclusive ? 0 : 1);
  const int64_t hi = options.upper_bound_ms - (options.upper_inclusive ? 0 : 1);
  if (lo > hi) {
    params.Fail(params.Get("upper")->location, "upper",
                fmt::format("the interval is empty: lower {}ms{} is above upper {}ms{}",
                            options.lower_bound_ms, options.lower_inclusive ? "" : " (exclusive)",
                            options.upper_bound_ms, options.upper_inclusive ? "" : " (exclusive)"));
  }
  const JoinKeys keys = ResolveJoinKeys(ctx, params);
  options.left_key_slots = keys.left;
  options.right_key_slots = keys.right;
  options.left_late_output_tag = params.String("left-late-output", "");
  options.right_late_output_tag = params.String("right-late-output", "");
  options.left_layout = ctx.input_schemas[0].layout();
  options.right_layout = ctx.input_schemas[1].layout();
  CompiledOperator out;
  out.output_schema = JoinedSchema(ctx.input_schemas[0], ctx.input_schemas[1]);
  if (!options.left_late_output_tag.empty()) {
    out.side_output_schemas[options.left_late_output_tag] = ctx.input_schemas[0];
  }
  if (!options.right_late_output_tag.empty()) {
    out.side_output_schemas[options.right_late_output_tag] = ctx.input_schemas[1];
  }
  SetTwoInputKeying(out, keys);
  out.factory = [options](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<IntervalJoinOperator>(options, nullptr);
  };
  return out;
}

CompiledOperator CompileWindowJoin(const CompileContext& ctx) {
  RequireTwoInputs(ctx);
  OperatorParams params(ctx.spec);
  params.CheckKeys({"assigner", "time", "size", "slide", "gap", "offset", "left-key", "right-key"});
  WindowSpec window;
  window.assigner = params.Enum("assigner", {"tumbling", "sliding", "session"}, std::nullopt);
  window.time = params.Enum("time", {"event", "processing"}, "event");
  const auto positive = [&](const std::string& key) {
    const int64_t ms = params.DurationMs(key, std::nullopt);
    if (ms <= 0) {
      params.Fail(params.Get(key)->location, key, "must be greater than 0");
    }
    return ms;
  };
  const auto forbid = [&](const std::string& key) {
    if (const ParamNode* n = params.Get(key)) {
      params.Fail(n->location, key, fmt::format("does not apply to a {} window", window.assigner));
    }
  };
  if (window.assigner == "session") {
    window.gap_ms = positive("gap");
    forbid("size");
    forbid("slide");
    forbid("offset");
  } else {
    window.size_ms = positive("size");
    forbid("gap");
    if (window.assigner == "sliding") {
      window.slide_ms = positive("slide");
      if (window.slide_ms > window.size_ms) {
        params.Fail(params.Get("slide")->location, "slide",
                    fmt::format("the slide ({}ms) must not be larger than the size ({}ms)",
                                window.slide_ms, window.size_ms));
      }
    } else {
      forbid("slide");
    }
    window.offset_ms = params.DurationMs("offset", 0, /*allow_negative=*/true);
  }
  try {
    (void)MakeWindowAssigner(window);
  } catch (const InvalidArgument& e) {
    params.Fail(ctx.spec.params ? ctx.spec.params->location : ctx.spec.location, "", e.what());
  }
  const JoinKeys keys = ResolveJoinKeys(ctx, params);
  CompiledOperator out;
  out.output_schema = JoinedSchema(ctx.input_schemas[0], ctx.input_schemas[1]);
  for (const char* name : {"window_start", "window_end"}) {
    if (out.output_schema.IndexOf(name) >= 0) {
      throw CompileError("inputs", fmt::format("the joined row already has a field '{}'", name));
    }
    out.output_schema.Add(name, FieldType::kTimestamp);
  }
  SetTwoInputKeying(out, keys);
  WindowJoinOperator::Options options;
  options.left_key_slots = keys.left;
  options.right_key_slots = keys.right;
  options.left_layout = ctx.input_schemas[0].layout();
  options.right_layout = ctx.input_schemas[1].layout();
  out.factory = [window, options](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<WindowJoinOperator>(MakeWindowAssigner(window), options);
  };
  return out;
}

}  // namespace

void RegisterJoinBuiltins(OperatorRegistry& registry) {
  registry.Register("interval-join", CompileIntervalJoin);
  registry.Register("window-join", CompileWindowJoin);
}

}  // namespace tidemark
