#include "sources/builtins.h"

#include "runtime/core/errors.h"
#include "runtime/eventtime/make_watermark_strategy.h"
#include "sources/sequence_source.h"
#include "sources/source_operator.h"

namespace tidemark {

void RegisterSourceBuiltins(OperatorRegistry& registry) {
  registry.Register("source", [](const CompileContext& ctx) {
    const OperatorSpec& spec = ctx.spec;
    if (!spec.source) {
      throw CompileError("source", "a source operator needs a `source:` block");
    }
    std::shared_ptr<const Source> source;
    if (spec.source->type == "sequence") {
      try {
        source = std::make_shared<SequenceSource>(*spec.source);
      } catch (const InvalidArgument& e) {
        throw CompileError("source", e.what());
      }
    } else {
      throw CompileError("source.type", "unknown source type '" + spec.source->type + "' (known: sequence)");
    }
    std::optional<WatermarkStrategy> strategy;
    if (spec.watermarks) {
      try {
        strategy = MakeWatermarkStrategy(*spec.watermarks, source->schema());
      } catch (const InvalidArgument& e) {
        throw CompileError("watermarks", e.what());
      }
    }
    CompiledOperator out;
    out.is_source = true;
    out.num_inputs = 0;
    out.output_schema = source->schema();
    out.side_output_schemas["errors"] = source->schema();
    out.factory = [source, strategy](int, int) -> std::unique_ptr<StreamOperator> {
      return std::make_unique<SourceOperator>(source, strategy);
    };
    return out;
  });
}

}  // namespace tidemark
