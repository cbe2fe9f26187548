#include "sources/builtins.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <sys/stat.h>
#include <utility>
#include <vector>

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

// A plain file sink of the job whose file is one of `inputs` (the files this source reads):
// it truncates that file when the job starts (write-mode overwrite), or fails only after opening
// it (no-overwrite), or appends to it on a restore, so the job would destroy or feed back its own
// input. Refused at the source's `path`, naming the sink. Compared as files (device and inode:
// however the two paths are spelled, through symbolic or hard links), and only when one of the
// sinks' files exists, so a job without such a file stats none of its inputs. A sink's relative
// path is taken from the working directory, as the sink opens it; a sink of parallelism p > 1
// writes `path.0` ... `path.<p-1>`. An exactly-once file sink never truncates or appends to an
// existing file (it writes new part files), so it is not compared.
void CheckNoSinkWritesInput(const SourceSpec& source, const std::vector<std::string>& inputs,
                            const JobSpec& job) {
  std::map<std::pair<dev_t, ino_t>, size_t> written;  // a sink's file -> its operator index
  auto file_of = [](const std::string& path) -> std::optional<std::pair<dev_t, ino_t>> {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return std::nullopt;
    }
    return std::make_pair(st.st_dev, st.st_ino);
  };
  for (size_t i = 0; i < job.operators.size(); ++i) {
    const OperatorSpec& op = job.operators[i];
    if (!op.sink || op.sink->type != "file" || op.sink->delivery_guarantee == "exactly-once" ||
        op.sink->path.empty()) {
      continue;
    }
    const int parallelism = op.parallelism > 0 ? op.parallelism : job.pipeline.parallelism;
    std::vector<std::string> paths;
    if (parallelism <= 1) {
      paths.push_back(op.sink->path);
    }
    for (int k = 0; parallelism > 1 && k < parallelism; ++k) {
      paths.push_back(fmt::format("{}.{}", op.sink->path, k));
    }
    for (const std::string& p : paths) {
      if (auto f = file_of(p)) {
        written.emplace(*f, i);
      }
    }
  }
  if (written.empty()) {
    return;
  }
  for (const std::string& input : inputs) {
    const auto f = file_of(input);
    const auto it = f ? written.find(*f) : written.end();
    if (it == written.end()) {
      continue;
    }
    const OperatorSpec& sink = job.operators[it->second];
    throw CompileError(
        "source.path",
        fmt::format("reads '{}', which file sink '{}' writes (operators[{}].sink.path '{}', at "
                    "{}:{}): the sink would truncate the job's own input when it starts, or append "
                    "to it; write the sink's output to another file",
                    input, sink.id, it->second, sink.sink->path, sink.sink->location.line,
                    sink.sink->location.column),
        source.key_locations.Of("path", source.location));
  }
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
        auto file = std::make_shared<FileSource>(resolved);
        CheckNoSinkWritesInput(resolved, file->files(), job);
        source = std::move(file);
      } else if (resolved.type == "replay") {
        CheckNoSinkWritesInput(resolved, {resolved.replay.path}, job);
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
    if (spec.watermarks) {
      options.no_timestamp_reason = [watermarks = *spec.watermarks,
                                     schema = source->schema()](const StreamRecord& record) {
        return NoTimestampReason(watermarks, schema, record);
      };
    }
    out.factory = [source, strategy, options](int, int) -> std::unique_ptr<StreamOperator> {
      return std::make_unique<SourceOperator>(source, strategy, options);
    };
    return out;
  });
}

}  // namespace tidemark
