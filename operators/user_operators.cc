#include "operators/user_operators.h"

#include <fmt/format.h>

namespace tidemark {

void RegisterKeyedProcessType(OperatorRegistry& registry, const std::string& type,
                              KeyedProcessCompiler compile) {
  registry.Register(type, [compile = std::move(compile)](const CompileContext& ctx) {
    if (ctx.input_schemas.size() != 1) {
      throw CompileError("inputs",
                         fmt::format("a {} operator takes exactly one input", ctx.spec.type));
    }
    const Schema& input = ctx.input_schemas.front();
    const std::vector<int> slots = ResolveKeyBy(ctx.spec, input);
    OperatorParams params(ctx.spec);
    UserFunctionPlan<KeyedProcessFunction> plan = compile(input, params);
    CompiledOperator out;
    out.output_schema = plan.output_schema;
    out.side_output_schemas = plan.side_output_schemas;
    out.input_key_slots = slots;
    out.hash_input = true;
    if (slots.empty()) {
      out.forced_parallelism = 1;
    }
    auto factory = plan.factory;
    const RowLayout* output = out.output_schema.layout();
    out.factory = [factory, slots, output](int, int) -> std::unique_ptr<StreamOperator> {
      KeyedProcessOperator::Options options;
      options.key_slots[0] = slots;
      options.output_layout = output;
      return std::make_unique<KeyedProcessOperator>(factory(), options);
    };
    return out;
  });
}

void RegisterKeyedCoProcessType(OperatorRegistry& registry, const std::string& type,
                                KeyedCoProcessCompiler compile) {
  registry.Register(type, [compile = std::move(compile)](const CompileContext& ctx) {
    if (ctx.input_schemas.size() != 2) {
      throw CompileError("inputs", fmt::format("a {} operator takes exactly two inputs, got {}",
                                               ctx.spec.type, ctx.input_schemas.size()));
    }
    OperatorParams params(ctx.spec);
    bool broadcast[2] = {false, false};
    std::vector<int> slots[2];
    for (int i = 0; i < 2; ++i) {
      broadcast[i] =
          ctx.spec.inputs[static_cast<size_t>(i)].partitioning == Partitioning::kBroadcast;
    }
    if (broadcast[0] && broadcast[1]) {
      throw CompileError("inputs", "at most one input of a connect may be broadcast");
    }
    for (int i = 0; i < 2; ++i) {
      if (broadcast[i]) {
        continue;
      }
      const char* side_key = i == 0 ? "left-key" : "right-key";
      slots[i] = params.Has(side_key)
                     ? params.FieldList(side_key, ctx.input_schemas[static_cast<size_t>(i)])
                     : ResolveKeyBy(ctx.spec, ctx.input_schemas[static_cast<size_t>(i)]);
    }
    if (!broadcast[0] && !broadcast[1] && slots[0].size() != slots[1].size()) {
      throw CompileError("key-by", "both inputs of a connect need the same number of key fields");
    }
    UserFunctionPlan<KeyedCoProcessFunction> plan =
        compile(ctx.input_schemas[0], ctx.input_schemas[1], params);
    CompiledOperator out;
    out.output_schema = plan.output_schema;
    out.side_output_schemas = plan.side_output_schemas;
    out.num_inputs = 2;
    const std::vector<int>& keyed = broadcast[0] ? slots[1] : slots[0];
    out.input_key_slots = keyed;
    out.input_key_slots_per_input = {slots[0], slots[1]};
    out.hash_input = true;
    if (keyed.empty()) {
      out.forced_parallelism = 1;
    }
    KeyedProcessOperator::Options options;
    options.key_slots[0] = slots[0];
    options.key_slots[1] = slots[1];
    const bool include = ctx.spec.broadcast_watermarks == "include";
    for (int i = 0; i < 2; ++i) {
      options.excluded_from_min[i] = broadcast[i] && !include;
    }
    options.broadcast_input = broadcast[0] ? 0 : (broadcast[1] ? 1 : -1);
    options.output_layout = out.output_schema.layout();
    auto factory = plan.factory;
    out.factory = [factory, options](int, int) -> std::unique_ptr<StreamOperator> {
      return std::make_unique<KeyedProcessOperator>(factory(), options);
    };
    return out;
  });
}

}  // namespace tidemark
