#include "operators/builtins.h"

#include "operators/sink_operator.h"
#include "runtime/core/errors.h"
#include "runtime/graph/job_resources.h"

namespace tidemark {
namespace {

CompiledOperator CompileSink(const CompileContext& ctx) {
  if (!ctx.spec.sink) {
    throw CompileError("sink", "a sink operator needs a `sink:` block");
  }
  const SinkSpec& sink = *ctx.spec.sink;
  if (sink.type != "print" && sink.type != "file" && sink.type != "collect") {
    throw CompileError("sink.type", "unknown sink type '" + sink.type + "' (known: print, file, collect)");
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
  out.factory = [sink, schema, result, resources](int subtask, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<SinkOperator>(sink, schema, result, *resources, subtask);
  };
  return out;
}

}  // namespace

void RegisterOperatorBuiltins(OperatorRegistry& registry) {
  registry.Register("sink", CompileSink);
}

}  // namespace tidemark
