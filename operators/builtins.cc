#include "operators/builtins.h"

#include <algorithm>

#include <fmt/format.h>

#include "operators/arithmetic_map_filter.h"
#include "operators/checksum_sink_operator.h"
#include "operators/expression_operators.h"
#include "operators/file_sink/file_sink_operator.h"
#include "operators/kafka_sink/kafka_sink_operator.h"
#include "operators/operator_params.h"
#include "operators/sink_operator.h"
#include "operators/timestamps_and_watermarks_operator.h"
#include "operators/window/trigger.h"
#include "operators/window/window_aggregates.h"
#include "operators/window/window_operator.h"
#include "operators/window/window_top_n_operator.h"
#include "runtime/core/errors.h"
#include "runtime/eventtime/make_watermark_strategy.h"
#include "runtime/graph/job_resources.h"

namespace tidemark {
namespace {

CompiledOperator CompileSink(const CompileContext& ctx) {
  if (!ctx.spec.sink) {
    throw CompileError("sink", "a sink operator needs a `sink:` block");
  }
  const SinkSpec& sink = *ctx.spec.sink;
  if (sink.type != "print" && sink.type != "file" && sink.type != "collect" &&
      sink.type != "checksum" && sink.type != "kafka") {
    throw CompileError("sink.type", "unknown sink type '" + sink.type +
                                        "' (known: print, file, collect, checksum, kafka)");
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
  if (sink.type == "kafka") {
    // key-field / partition-field name input fields; the partition is an integer.
    if (!sink.key_field.empty() && schema.IndexOf(sink.key_field) < 0) {
      throw CompileError(
          "sink.key-field",
          fmt::format("unknown field '{}' (input fields: {})", sink.key_field, FieldNames(schema)),
          sink.key_field_location);
    }
    if (!sink.partition_field.empty()) {
      const int slot = schema.IndexOf(sink.partition_field);
      if (slot < 0) {
        throw CompileError("sink.partition-field",
                           fmt::format("unknown field '{}' (input fields: {})",
                                       sink.partition_field, FieldNames(schema)),
                           sink.partition_field_location);
      }
      if (schema.field(slot).type != FieldType::kInt64) {
        throw CompileError("sink.partition-field",
                           fmt::format("field '{}' is {}; a partition is an int64 field",
                                       sink.partition_field, ToString(schema.field(slot).type)),
                           sink.partition_field_location);
      }
    }
    for (const auto& [name, value] : sink.kafka_properties) {
      try {
        (void)MakeKafkaConf({{name, value}});  // unknown or invalid, before running, at its value
      } catch (const InvalidArgument& e) {
        auto at = sink.kafka_property_locations.find(name);
        throw CompileError("sink.properties." + name, e.what(),
                           at != sink.kafka_property_locations.end() ? at->second : sink.location);
      }
    }
    const bool checkpointing = ctx.job.checkpointing.has_value();
    out.factory = [sink, schema, result, checkpointing](int subtask,
                                                        int) -> std::unique_ptr<StreamOperator> {
      return std::make_unique<KafkaSinkOperator>(sink, schema, result, subtask, checkpointing);
    };
    return out;
  }
  if (sink.type == "file" && sink.delivery_guarantee == "exactly-once") {
    const bool checkpointing = ctx.job.checkpointing.has_value();
    out.factory = [sink, schema, result, checkpointing](int subtask,
                                                        int) -> std::unique_ptr<StreamOperator> {
      return std::make_unique<FileSinkOperator>(sink, schema, result, subtask, checkpointing);
    };
    return out;
  }
  const bool checkpointing = ctx.job.checkpointing.has_value();
  out.factory = [sink, schema, result, resources, checkpointing](
                    int subtask, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<SinkOperator>(sink, schema, result, *resources, subtask, checkpointing);
  };
  return out;
}

CompiledOperator CompileAssignTimestamps(const CompileContext& ctx) {
  if (!ctx.spec.watermarks) {
    throw CompileError("watermarks",
                       "assign-timestamps-and-watermarks needs a `watermarks:` block");
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
      throw WatermarksCompileError(*ctx.spec.watermarks, e);
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
  (void)ResolveKeyBy(ctx.spec, input);  // a missing key field is reported at its position
  if (const WindowSpec& w = *ctx.spec.window; !w.trigger.empty()) {
    try {
      (void)MakeTrigger(w.trigger);  // reported at the trigger's own position
    } catch (const InvalidArgument& e) {
      throw CompileError("window.trigger", e.what(), w.trigger_location);
    }
  }
  // Each aggregate on its own first, so a bad one is reported at its own position (its
  // `field:` value, or its list item), not at the operator.
  for (size_t i = 0; i < ctx.spec.window->aggregates.size(); ++i) {
    const AggregateSpec& a = ctx.spec.window->aggregates[i];
    try {
      (void)ResolveAggregate(a, input);
    } catch (const InvalidArgument& e) {
      const bool at_field = !a.field.empty() && a.field_location.line > 0;
      throw CompileError(fmt::format("window.aggregate[{}]{}", i, at_field ? ".field" : ""),
                         e.what(), at_field ? a.field_location : a.location);
    }
  }
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
    out.side_output_schemas[ctx.spec.window->late_output] = WindowOperator::LateOutputSchema(input);
  }
  for (const auto& name : ctx.spec.key_by) {
    out.input_key_slots.push_back(input.IndexOf(name));
  }
  // The fields the window can ever read: its key-by fields and its aggregates' fields (the
  // element's timestamp is the record's, not a field; result rows hold keys, window bounds and
  // aggregates only). A late-data side output emits whole input rows: then every field.
  if (ctx.spec.window->late_output.empty()) {
    std::vector<int> read = out.input_key_slots;
    for (const AggregateSpec& a : ctx.spec.window->aggregates) {
      if (const int slot = ResolveAggregate(a, input).slot; slot >= 0) {
        read.push_back(slot);
      }
    }
    std::sort(read.begin(), read.end());
    read.erase(std::unique(read.begin(), read.end()), read.end());
    out.input_fields_read = std::move(read);
  }
  out.hash_input = true;
  if (ctx.spec.key_by.empty()) {
    out.forced_parallelism = 1;  // all records meet in one window set
  }
  auto factory = plan.factory;
  out.factory = [factory](int, int) {
    return factory();
  };
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
  if (!ctx.spec.map->set.empty()) {
    const Schema& input = ctx.input_schemas.front();
    std::vector<ExpressionProjectOperator::Column> columns;
    for (const auto& [name, expression] : ctx.spec.map->set) {
      ExpressionProjectOperator::Column c;
      c.expression = CompileExpressionSpec(expression, "map.set." + name, input);
      const int existing = out.output_schema.IndexOf(name);
      if (existing >= 0) {
        // Replaced in place; its type becomes the expression's.
        std::vector<Field> fields = out.output_schema.fields();
        fields[static_cast<size_t>(existing)].type = c.expression.type();
        out.output_schema = Schema(std::move(fields));
        c.output_slot = existing;
      } else {
        c.output_slot = out.output_schema.Add(name, c.expression.type());
      }
      columns.push_back(std::move(c));
    }
    const RowLayout* layout = out.output_schema.layout();
    const size_t input_width = input.size();
    out.factory = [columns, layout, input_width](int, int) -> std::unique_ptr<StreamOperator> {
      return std::make_unique<ExpressionProjectOperator>(columns, layout, input_width,
                                                         /*keep_input=*/true);
    };
    return out;
  }
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
  if (ctx.spec.filter->condition) {
    Expression condition =
        CompileExpressionSpec(*ctx.spec.filter->condition, "filter", out.output_schema);
    if (condition.type() != FieldType::kBool) {
      throw CompileError("filter",
                         fmt::format("a filter condition must be bool, but \"{}\" is {}",
                                     condition.text(), ToString(condition.type())),
                         ctx.spec.filter->condition->location);
    }
    out.factory = [condition](int, int) -> std::unique_ptr<StreamOperator> {
      return std::make_unique<ExpressionFilterOperator>(condition);
    };
    return out;
  }
  bool is_double = false;
  int slot = 0;
  ComparisonFilterOperator::Op op{};
  try {
    slot =
        ArithmeticMapOperator::ResolveSlot(out.output_schema, ctx.spec.filter->field, &is_double);
    op = ComparisonFilterOperator::ParseOp(ctx.spec.filter->op);
  } catch (const InvalidArgument& e) {
    throw CompileError("filter", e.what());
  }
  const double value = ctx.spec.filter->value;
  out.factory = [slot, is_double, op, value](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<ComparisonFilterOperator>(slot, is_double, op, value);
  };
  return out;
}

/// `type: project` with `project:` (or `params:`): the output is exactly the listed columns.
/// Either a list whose items are field names or one-entry mappings `name: expression`, or a
/// mapping `name: expression` (a bare field name is an expression too).
CompiledOperator CompileProject(const CompileContext& ctx) {
  if (ctx.input_schemas.size() != 1) {
    throw CompileError("inputs", "a project operator takes exactly one input");
  }
  const Schema& input = ctx.input_schemas.front();
  OperatorParams params(ctx.spec);
  if (!ctx.spec.params) {
    params.Fail(ctx.spec.location, "",
                "a project operator needs a `project:` block listing columns");
  }
  std::vector<std::string> names;
  std::vector<Expression> expressions;
  params.CompileColumns(*ctx.spec.params, "", input, &names, &expressions);
  CompiledOperator out;
  std::vector<ExpressionProjectOperator::Column> columns;
  for (size_t i = 0; i < names.size(); ++i) {
    ExpressionProjectOperator::Column c;
    c.expression = std::move(expressions[i]);
    c.output_slot = out.output_schema.Add(names[i], c.expression.type());
    columns.push_back(std::move(c));
  }
  const RowLayout* layout = out.output_schema.layout();
  out.factory = [columns, layout](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<ExpressionProjectOperator>(columns, layout, 0, /*keep_input=*/false);
  };
  return out;
}

}  // namespace

void RegisterOperatorBuiltins(OperatorRegistry& registry) {
  registry.Register("project", CompileProject);
  RegisterProcessBuiltins(registry);
  RegisterJoinBuiltins(registry);
  registry.Register("map", CompileArithmeticMap);
  registry.Register("filter", CompileComparisonFilter);
  registry.Register("sink", CompileSink);
  registry.Register("assign-timestamps-and-watermarks", CompileAssignTimestamps);
  registry.Register("window", CompileWindow);
  RegisterWindowTopN(registry);
}

}  // namespace tidemark
