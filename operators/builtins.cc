#include "operators/builtins.h"

#include "operators/arithmetic_map_filter.h"
#include "operators/checksum_sink_operator.h"
#include "operators/sink_operator.h"
#include "operators/timestamps_and_watermarks_operator.h"
#include "operators/window/window_operator.h"
#include "runtime/eventtime/make_watermark_strategy.h"
#include "runtime/core/errors.h"
#include "runtime/graph/job_resources.h"

namespace tidemark {
namespace {

CompiledOperator CompileSink(const CompileContext& ctx) {
  if (!ctx.spec.sink) {
    throw CompileError("sink", "a sink operator needs a `sink:` block");
  }
  const SinkSpec& sink = *ctx.spec.sink;
  if (sink.type != "print" && sink.type != "file" && sink.type != "collect" && sink.type != "checksum") {
    throw CompileError("sink.type",
                       "unknown sink type '" + sink.type + "' (known: print, file, collect, checksum)");
  }
  if (sink.type == "file" && sink.path.empty()) {
    throw CompileError("sink.path", "a file sink needs `path`");
  }
  if (ctx.input_schemas.empty()) {
    throw CompileError("inputs", "a sink needs an input");
  }
  for (const Schema& s : ctx.input_schemas) {
    if (!(s == ctx.input_schemas.front())) {
      throw CompileError("inputs", "all inputs of a sink must have the same schema");
    }
  }
  CompiledOperator out;
  out.is_sink = true;
  out.output_schema = ctx.input_schemas.front();
  const bool retain = sink.type == "collect" || ctx.resources.ShouldRetainRows(ctx.spec.id);
  auto result = ctx.resources.AddSinkResult(ctx.spec.id, out.output_schema, retain);
  JobResources* resources = &ctx.resources;
  Schema schema = out.output_schema;
  if (sink.type == "checksum") {
    out.factory = [schema, result](int, int) -> std::unique_ptr<StreamOperator> {
      return std::make_unique<ChecksumSinkOperator>(schema, result);
    };
    return out;
  }
  out.factory = [sink, schema, result, resources](int subtask, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<SinkOperator>(sink, schema, result, *resources, subtask);
  };
  return out;
}

CompiledOperator CompileAssignTimestamps(const CompileContext& ctx) {
  if (!ctx.spec.watermarks) {
    throw CompileError("watermarks", "assign-timestamps-and-watermarks needs a `watermarks:` block");
  }
  if (ctx.input_schemas.size() != 1) {
    throw CompileError("inputs", "assign-timestamps-and-watermarks takes exactly one input");
  }
  CompiledOperator out;
  out.output_schema = ctx.input_schemas.front();
  out.side_output_schemas["errors"] = out.output_schema;
  WatermarkStrategy strategy = [&] {
    try {
      return MakeWatermarkStrategy(*ctx.spec.watermarks, out.output_schema);
    } catch (const InvalidArgument& e) {
      throw CompileError("watermarks", e.what());
    }
  }();
  out.factory = [strategy](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<TimestampsAndWatermarksOperator>(strategy);
  };
  return out;
}

CompiledOperator CompileWindow(const CompileContext& ctx) {
  if (!ctx.spec.window) {
    throw CompileError("window", "a window operator needs a `window:` block");
  }
  if (ctx.input_schemas.size() != 1) {
    throw CompileError("inputs", "a window operator takes exactly one input (use a union first)");
  }
  const Schema& input = ctx.input_schemas.front();
  WindowOperatorPlan plan = [&] {
    try {
      return WindowOperator::Compile(input, *ctx.spec.window, ctx.spec.key_by);
    } catch (const InvalidArgument& e) {
      throw CompileError("window", e.what());
    }
  }();
  CompiledOperator out;
  out.output_schema = plan.output_schema;
  if (!ctx.spec.window->late_output.empty()) {
    out.side_output_schemas[ctx.spec.window->late_output] = input;
  }
  for (const auto& name : ctx.spec.key_by) {
    out.input_key_slots.push_back(input.IndexOf(name));
  }
  out.hash_input = true;
  if (ctx.spec.key_by.empty()) {
    out.forced_parallelism = 1;  // all records meet in one window set
  }
  auto factory = plan.factory;
  out.factory = [factory](int, int) { return factory(); };
  return out;
}

CompiledOperator CompileArithmeticMap(const CompileContext& ctx) {
  if (!ctx.spec.map) {
    throw CompileError("map", "a map operator needs a `map:` block");
  }
  if (ctx.input_schemas.size() != 1) {
    throw CompileError("inputs", "a map operator takes exactly one input");
  }
  CompiledOperator out;
  out.output_schema = ctx.input_schemas.front();
  bool is_double = false;
  int slot = 0;
  try {
    slot = ArithmeticMapOperator::ResolveSlot(out.output_schema, ctx.spec.map->field, &is_double);
  } catch (const InvalidArgument& e) {
    throw CompileError("map", e.what());
  }
  const double multiply = ctx.spec.map->multiply;
  const double add = ctx.spec.map->add;
  out.factory = [slot, is_double, multiply, add](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<ArithmeticMapOperator>(slot, is_double, multiply, add);
  };
  return out;
}

CompiledOperator CompileComparisonFilter(const CompileContext& ctx) {
  if (!ctx.spec.filter) {
    throw CompileError("filter", "a filter operator needs a `filter:` block");
  }
  if (ctx.input_schemas.size() != 1) {
    throw CompileError("inputs", "a filter operator takes exactly one input");
  }
  CompiledOperator out;
  out.output_schema = ctx.input_schemas.front();
  bool is_double = false;
  int slot = 0;
  ComparisonFilterOperator::Op op{};
  try {
    slot = ArithmeticMapOperator::ResolveSlot(out.output_schema, ctx.spec.filter->field, &is_double);
    op = ComparisonFilterOperator::ParseOp(ctx.spec.filter->op);
  } catch (const InvalidArgument& e) {
    throw CompileError("filter", e.what());
  }
  const double value = ctx.spec.filter->value;
  out.factory = [slot, op, value](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<ComparisonFilterOperator>(slot, op, value);
  };
  return out;
}

}  // namespace

void RegisterOperatorBuiltins(OperatorRegistry& registry) {
  registry.Register("map", CompileArithmeticMap);
  registry.Register("filter", CompileComparisonFilter);
  registry.Register("sink", CompileSink);
  registry.Register("assign-timestamps-and-watermarks", CompileAssignTimestamps);
  registry.Register("window", CompileWindow);
}

}  // namespace tidemark
