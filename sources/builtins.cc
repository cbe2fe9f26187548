#include "sources/builtins.h"

#include <algorithm>

#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "runtime/eventtime/make_watermark_strategy.h"
#include "sources/datagen_source.h"
#include "sources/file_source.h"
#include "sources/generator_source.h"
#include "sources/kafka/kafka_source.h"
#include "sources/kafka/kafka_source_block.h"
#include "sources/replay_source.h"
#include "sources/sequence_source.h"
#include "sources/source_blocks.h"
#include "sources/source_operator.h"
#include "sources/stdin_source.h"
#include "sources/text_input.h"

namespace tidemark {
namespace {

// A source's KeyedInvalidArgument ("path: 'x' does not exist", "schema.v: unknown type 'y'") is
// reported at that key's value, as the loader's value errors are, instead of at the operator;
// any other InvalidArgument at the source block.
CompileError KeyedSourceError(const SourceSpec& spec, const InvalidArgument& error) {
  if (const auto* keyed = dynamic_cast<const KeyedInvalidArgument*>(&error); keyed != nullptr) {
    const std::string& key_path = keyed->key_path();
    const std::string key = key_path.substr(0, key_path.find_first_of(".["));
    if (auto it = spec.key_locations.values.find(key); it != spec.key_locations.values.end()) {
      return CompileError("source." + key_path, keyed->reason(), it->second);
    }
  }
  return CompileError("source", error.what());
}

}  // namespace

std::shared_ptr<const Source> MakeSource(const OperatorSpec& spec, const JobSpec& job) {
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
  } else if (spec.source->type == "generator") {
    try {
      source = std::make_shared<GeneratorSource>(*spec.source);
    } catch (const InvalidArgument& e) {
      throw KeyedSourceError(*spec.source, e);
    }
  } else if (spec.source->type == "file" || spec.source->type == "replay" ||
             spec.source->type == "datagen") {
    SourceSpec resolved = *spec.source;
    resolved.file.path = ResolveAgainstJobFile(resolved.file.path, job.file);
    resolved.replay.path = ResolveAgainstJobFile(resolved.replay.path, job.file);
    try {
      if (resolved.type == "file") {
        source = std::make_shared<FileSource>(resolved);
      } else if (resolved.type == "replay") {
        source = std::make_shared<ReplaySource>(resolved);
      } else {
        source = std::make_shared<DatagenSource>(resolved);
      }
    } catch (const ReplayUntilError& e) {
      throw CompileError("source.until", e.what(), resolved.replay.until_location);
    } catch (const InvalidArgument& e) {
      throw KeyedSourceError(resolved, e);
    } catch (const IoError& e) {
      throw CompileError("source.path", e.what(),
                         resolved.key_locations.Of("path", resolved.location));
    }
  } else if (spec.source->type == "stdin") {
    // Standard input is one stream: two sources would each take a part of it, lines torn apart.
    const auto first = std::find_if(job.operators.begin(), job.operators.end(), [](const auto& op) {
      return op.source && op.source->type == "stdin";
    });
    if (first != job.operators.end() && first->id != spec.id) {
      throw CompileError("source.type",
                         fmt::format("a job has one stdin source; '{}' already reads the "
                                     "standard input (join or union its stream instead)",
                                     first->id),
                         spec.source->key_locations.Of("type", spec.source->location));
    }
    if (job.checkpointing) {
      // Its input cannot be read again from an offset: a restore could not continue it.
      throw CompileError("source.type",
                         "a stdin source cannot be restored from a checkpoint (its input cannot be "
                         "read again from an offset): remove `checkpointing:`, or read a file",
                         spec.source->key_locations.Of("type", spec.source->location));
    }
    try {
      source = std::make_shared<StdinSource>(*spec.source);
    } catch (const InvalidArgument& e) {
      throw KeyedSourceError(*spec.source, e);
    }
  } else if (spec.source->type == "kafka") {
    SourceSpec resolved = *spec.source;
    if (resolved.kafka.mock) {
      resolved.kafka.mock->load = ResolveAgainstJobFile(resolved.kafka.mock->load, job.file);
    }
    try {
      source = std::make_shared<KafkaSource>(resolved);
    } catch (const InvalidArgument& e) {
      throw CompileError("source", e.what());
    } catch (const IoError& e) {
      throw CompileError("source.mock-cluster", e.what(),
                         resolved.kafka.mock ? resolved.kafka.mock->location : resolved.location);
    }
  } else {
    throw CompileError("source.type", "unknown source type '" + spec.source->type +
                                          "' (known: sequence, generator, file, stdin, datagen, "
                                          "replay, kafka)");
  }
  return source;
}

void RegisterSourceBlocks(BlockRegistry& registry) {
  RegisterSequenceSourceBlocks(registry);
  RegisterInputSourceBlocks(registry);
  RegisterKafkaSourceBlock(registry);
}

void RegisterSourceBuiltins(OperatorRegistry& registry) {
  registry.Register("source", [](const CompileContext& ctx) {
    const OperatorSpec& spec = ctx.spec;
    std::shared_ptr<const Source> source = MakeSource(spec, ctx.job);
    std::optional<WatermarkStrategy> strategy;
    if (spec.watermarks) {
      try {
        strategy = MakeWatermarkStrategy(*spec.watermarks, source->schema());
      } catch (const InvalidArgument& e) {
        throw WatermarksCompileError(*spec.watermarks, e);
      }
    }
    CompiledOperator out;
    out.is_source = true;
    out.num_inputs = 0;
    out.output_schema = source->schema();
    out.side_output_schemas["errors"] = SourceErrorSchema();
    SourceOperatorOptions options;
    options.fail_on_input_error = spec.source->errors == "fail";
    out.factory = [source, strategy, options](int, int) -> std::unique_ptr<StreamOperator> {
      return std::make_unique<SourceOperator>(source, strategy, options);
    };
    return out;
  });
}

}  // namespace tidemark
