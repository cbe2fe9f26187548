#include "config/job_loader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <span>
#include <sstream>
#include <string_view>
#include <system_error>
#include <unistd.h>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "config/block_reader.h"
#include "config/block_registry.h"
#include "config/regular_file.h"
#include "config/rocksdb_local_dir_check.h"

namespace tidemark {
namespace {

template <typename Range>
std::string Join(const Range& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) {
      out += sep;
    }
    out += item;
  }
  return out;
}

/// Appends a hint to yaml-cpp's terse syntax messages where the usual cause is known.
std::string SyntaxMessage(const std::string& yaml_message) {
  std::string message = "YAML syntax error: " + yaml_message;
  if (yaml_message == "illegal map value") {
    message += " (check the indentation, or quote a value that contains \": \")";
  } else if (yaml_message.rfind("end of map not found", 0) == 0 ||
             yaml_message.rfind("end of sequence not found", 0) == 0) {
    message += " (check the indentation)";
  }
  return message;
}

/// What graph validation needs to know about where an operator's parts were written.
struct OperatorInfo {
  bool id_ok = false;
  std::string id_path;
  SourceLocation id_location;
  bool type_ok = false;
  bool inputs_ok = true;       // no error while reading `input`/`inputs`
  bool has_input_key = false;  // `input` or `inputs` was written
  std::string input_key_path;  // path of that key
  SourceLocation input_key_location;
  std::vector<std::string> from_paths;  // per InputSpec: path of the operator reference
  std::vector<SourceLocation> from_locations;
  std::vector<std::string> side_output_paths;
  std::vector<SourceLocation> side_output_locations;
};

constexpr auto kTopKeys = std::to_array<std::string_view>(
    {"name", "pipeline", "operators", "report", "checkpointing", "restart-strategy", "faults"});
constexpr auto kFaultKeys =
    std::to_array<std::string_view>({"operator", "after-records", "action", "times", "in"});
constexpr auto kFaultActions = std::to_array<std::string_view>({"throw"});
constexpr auto kFaultPhases =
    std::to_array<std::string_view>({"process", "snapshot", "restore", "close"});
constexpr auto kCheckpointingKeys = std::to_array<std::string_view>(
    {"interval", "mode", "timeout", "min-pause", "max-concurrent-checkpoints",
     "tolerable-failed-checkpoints", "num-retained", "dir", "restore-watermarks", "incremental"});
constexpr auto kCheckpointingModes =
    std::to_array<std::string_view>({"exactly-once", "at-least-once"});
/// Flink's CheckpointCoordinatorConfiguration#MINIMAL_CHECKPOINT_TIME.
constexpr int64_t kMinimalCheckpointTimeMs = 10;
constexpr auto kRestartStrategyKeys = std::to_array<std::string_view>(
    {"type", "attempts", "delay", "initial-backoff", "max-backoff", "backoff-multiplier",
     "reset-backoff-threshold", "jitter-factor", "max-failures-per-interval",
     "failure-rate-interval"});
constexpr auto kRestartStrategyTypes =
    std::to_array<std::string_view>({"none", "fixed-delay", "exponential-delay", "failure-rate"});
constexpr auto kNoRestartKeys = std::to_array<std::string_view>({"type"});
constexpr auto kFixedDelayKeys = std::to_array<std::string_view>({"type", "attempts", "delay"});
constexpr auto kExponentialDelayKeys =
    std::to_array<std::string_view>({"type", "initial-backoff", "max-backoff", "backoff-multiplier",
                                     "reset-backoff-threshold", "jitter-factor"});
constexpr auto kFailureRateKeys = std::to_array<std::string_view>(
    {"type", "max-failures-per-interval", "failure-rate-interval", "delay"});
constexpr auto kPipelineKeys = std::to_array<std::string_view>(
    {"parallelism", "max-parallelism", "clock", "auto-watermark-interval", "channel-capacity",
     "finished-input", "state-backend", "rocksdb", "cpu-affinity"});
constexpr auto kCpuAffinities = std::to_array<std::string_view>({"none", "auto"});
// `hashmap` is Flink's name (state.backend.type) for the heap backend, read as `heap`.
constexpr auto kStateBackends = std::to_array<std::string_view>({"heap", "hashmap", "rocksdb"});
constexpr auto kRocksDbKeys =
    std::to_array<std::string_view>({"localdir", "memory.fixed-per-slot", "memory.managed",
                                     "memory.write-buffer-ratio", "timer-service.factory"});
constexpr auto kOperatorTypes = std::to_array<std::string_view>(
    {"source", "assign-timestamps-and-watermarks", "window", "map", "filter", "sink"});
constexpr auto kCommonOperatorKeys =
    std::to_array<std::string_view>({"id", "type", "parallelism", "input", "inputs"});
constexpr auto kInputKeys = std::to_array<std::string_view>({"from", "side-output", "partition"});
constexpr auto kPartitionings =
    std::to_array<std::string_view>({"forward", "rebalance", "hash", "broadcast"});
constexpr auto kMapKeys = std::to_array<std::string_view>({"field", "multiply", "add", "set"});
constexpr auto kFilterKeys = std::to_array<std::string_view>({"field", "op", "value"});
constexpr auto kFilterOps = std::to_array<std::string_view>({"gt", "ge", "lt", "le", "eq", "ne"});
constexpr auto kInterleaves = std::to_array<std::string_view>({"round-robin"});
constexpr auto kSourceErrorPolicies = std::to_array<std::string_view>({"side-output", "fail"});
constexpr auto kBroadcastWatermarks = std::to_array<std::string_view>({"exclude", "include"});
constexpr auto kClocks = std::to_array<std::string_view>({"system", "virtual"});
constexpr auto kFinishedInputs = std::to_array<std::string_view>({"exclude", "max"});
constexpr auto kReportKeys =
    std::to_array<std::string_view>({"label", "windows-sink", "late-sink", "breakdown"});
constexpr auto kBreakdownKeys = std::to_array<std::string_view>({"field", "value"});

std::vector<std::string_view> OperatorKeys(const std::string& type) {
  std::vector<std::string_view> keys(kCommonOperatorKeys.begin(), kCommonOperatorKeys.end());
  if (type == "source") {
    keys.insert(keys.end(), {"source", "watermarks"});
  } else if (type == "assign-timestamps-and-watermarks") {
    keys.insert(keys.end(), {"watermarks"});
  } else if (type == "window") {
    keys.insert(keys.end(), {"key-by", "window"});
  } else if (type == "sink") {
    keys.insert(keys.end(), {"sink"});
  } else if (type == "map") {
    keys.insert(keys.end(), {"map"});
  } else if (type == "filter") {
    keys.insert(keys.end(), {"filter"});
  } else if (!type.empty()) {
    // A type config/ does not know (a registered built-in or user operator): key-by and its
    // parameters, under `params:` or a block named like the type. Its compiler checks them.
    keys.insert(keys.end(), {"key-by", "params", "broadcast-watermarks"});
  } else {
    keys.insert(keys.end(), {"source", "watermarks", "key-by", "window", "map", "filter", "sink"});
  }
  return keys;
}

// Job names and operator ids are shown by validate, list, status, the dashboard, metrics and logs;
// past this length they are hostile input rather than a name (Flink sets no limit; its web UI
// elides long names).
constexpr size_t kMaxNameBytes = 1024;

bool IsValidId(const std::string& id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

class Loader : public BlockReader {
 public:
  Loader(std::string file, const BlockRegistry& blocks) : file_(std::move(file)), blocks_(blocks) {}

  JobSpec Load(const std::string& yaml);

 private:
  SourceLocation Loc(const YAML::Node& node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) {
      return SourceLocation{file_, 0, 0};
    }
    return SourceLocation{file_, mark.line + 1, mark.column + 1};
  }

  // Every built-in operator type: those config/ reads itself, then the others the engine
  // registered (BlockRegistry::operator_types).
  std::vector<std::string_view> BuiltinTypes() const {
    std::vector<std::string_view> all(kOperatorTypes.begin(), kOperatorTypes.end());
    for (const std::string& t : blocks_.operator_types()) {
      if (!Contains(all, t)) {
        all.push_back(t);
      }
    }
    return all;
  }

  // A directory key's string (pipeline.rocksdb.localdir, checkpointing.dir); an absolute path
  // that cannot serve (DirectoryProblemMessage) is an error at its value. A relative path means
  // the working directory of the process that runs the job (a daemon's worker), not this one's:
  // judged where the job runs (WorkingDirectoryProblems, or when it starts).
  std::optional<std::string> ReadDirectory(const BlockField& field, std::string_view use) {
    std::optional<std::string> dir = ReadString(field);
    if (dir && std::filesystem::path(*dir).is_absolute()) {
      if (std::string message = DirectoryProblemMessage(*dir, use); !message.empty()) {
        Error(ValueLoc(field), field.path, std::move(message));
        return std::nullopt;
      }
    }
    return dir;
  }

  PipelineSpec ParsePipeline(const BlockField& field);
  CheckpointingSpec ParseCheckpointing(const BlockField& field);
  RestartStrategySpec ParseRestartStrategy(const BlockField& field);
  std::vector<FaultSpec> ParseFaults(const BlockField& field, const JobSpec& job);
  void ParseOperator(const ParamNode& node, const std::string& path, OperatorSpec& op,
                     OperatorInfo& info);
  void ParseInputs(const BlockMap& map, OperatorSpec& op, OperatorInfo& info);
  std::optional<InputSpec> ParseInput(const ParamNode& node, const SourceLocation& location,
                                      const std::string& path, OperatorInfo& info);
  SourceSpec ParseSource(const BlockField& field);
  WatermarkStrategySpec ParseWatermarks(const BlockField& field, bool on_source);
  WindowSpec ParseWindow(const BlockField& field);
  std::vector<std::string> ParseKeyBy(const BlockField& field);
  SinkSpec ParseSink(const BlockField& field);
  MapSpec ParseMap(const BlockField& field);
  FilterSpec ParseFilter(const BlockField& field);
  ReportSpec ParseReport(const BlockField& field, std::optional<BlockMap>& map);
  ParamNode ToParamNode(const YAML::Node& node) const;

  void ValidateGraph(const JobSpec& job, const std::vector<OperatorInfo>& infos);
  void ValidateReport(const JobSpec& job, const BlockMap& report);

  std::string file_;
  const BlockRegistry& blocks_;
  std::vector<SourceLocation> key_by_locations_;  // of the last ParseKeyBy, parallel to its result
};

PipelineSpec Loader::ParsePipeline(const BlockField& field) {
  PipelineSpec pipeline;
  pipeline.location = ValueLoc(field);
  std::optional<BlockMap> map = OpenMap(field, kPipelineKeys);
  if (!map) {
    return pipeline;
  }
  RecordKeys(*map, pipeline.key_locations);
  Optional(*map, "parallelism", pipeline.parallelism,
           [&](const BlockField& f) { return ReadInt(f, 1, kMaxParallelism); });
  Optional(*map, "clock", pipeline.clock,
           [&](const BlockField& f) { return ReadEnum(f, kClocks); });
  Optional(*map, "auto-watermark-interval", pipeline.auto_watermark_interval_ms,
           [&](const BlockField& f) { return ReadDuration(f, Sign::kNonNegative); });
  Optional(*map, "channel-capacity", pipeline.channel_capacity,
           [&](const BlockField& f) { return ReadInt(f, 1, kMaxChannelCapacity); });
  Optional(*map, "finished-input", pipeline.finished_input,
           [&](const BlockField& f) { return ReadEnum(f, kFinishedInputs); });
  Optional(*map, "max-parallelism", pipeline.max_parallelism, [&](const BlockField& f) {
    pipeline.max_parallelism_location = ValueLoc(f);
    return ReadInt(f, 1, kUpperBoundMaxParallelism);
  });
  Optional(*map, "state-backend", pipeline.state_backend,
           [&](const BlockField& f) -> std::optional<std::string> {
             std::optional<std::string> backend = ReadEnum(f, kStateBackends);
             if (backend == "hashmap") {
               backend = "heap";
             }
             return backend;
           });
  Optional(*map, "cpu-affinity", pipeline.cpu_affinity,
           [&](const BlockField& f) { return ReadEnum(f, kCpuAffinities); });
  if (std::optional<BlockField> f = map->Get("rocksdb")) {
    if (pipeline.state_backend != "rocksdb") {
      Error(f->key_location, f->path, "only with state-backend: rocksdb");
    } else if (std::optional<BlockMap> rocks = OpenMap(*f, kRocksDbKeys)) {
      // Its keys as "rocksdb.<key>" beside the pipeline's own (for localdir's errors at the job's
      // start and for the export, which names every key written).
      KeyLocations rocks_keys;
      RecordKeys(*rocks, rocks_keys);
      for (const auto& [key, location] : rocks_keys.values) {
        pipeline.key_locations.values.emplace("rocksdb." + key, location);
      }
      RocksDbSpec& spec = pipeline.rocksdb;
      Optional(*rocks, "localdir", spec.localdir,
               [&](const BlockField& g) { return ReadDirectory(g, kRocksDbLocalDirUse); });
      // Below 1 MiB RocksDB cannot hold one write buffer and its cache blocks.
      Optional(*rocks, "memory.fixed-per-slot", spec.memory_fixed_per_slot,
               [&](const BlockField& g) -> std::optional<int64_t> {
                 std::optional<int64_t> bytes = ReadMemorySize(g);
                 if (bytes && *bytes < (int64_t{1} << 20)) {
                   Error(ValueLoc(g), g.path, "must be at least 1mb");
                   return std::nullopt;
                 }
                 if (std::string problem = MemoryBudgetProblem(bytes.value_or(0));
                     bytes && !problem.empty()) {
                   Error(ValueLoc(g), g.path,
                         fmt::format("{}, got \"{}\"", problem, g.value->scalar));
                   return std::nullopt;
                 }
                 return bytes;
               });
      // Flink's state.backend.rocksdb.memory.managed (see RocksDbSpec::memory_managed).
      Optional(*rocks, "memory.managed", spec.memory_managed,
               [&](const BlockField& g) { return ReadBool(g); });
      // Flink's HEAP | ROCKSDB (its enum values are read case-insensitively): tidemark keeps
      // every timer on the heap, so only that value is accepted, and ROCKSDB is refused rather
      // than quietly run as HEAP.
      if (std::optional<BlockField> g = rocks->Get("timer-service.factory")) {
        std::string factory = g->value->IsScalar() ? g->value->scalar : std::string();
        std::transform(factory.begin(), factory.end(), factory.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        if (factory != "heap" && factory != "rocksdb") {
          ValueError(*g, fmt::format("expected HEAP (Flink's HEAP | ROCKSDB), got {}",
                                     Describe(*g->value)));
        } else if (factory == "rocksdb") {
          ValueError(*g,
                     "timers are kept on the heap with either state backend (Flink's HEAP); "
                     "timers in RocksDB are not supported, so write HEAP or leave the key out");
        }
      }
      Optional(*rocks, "memory.write-buffer-ratio", spec.write_buffer_ratio,
               [&](const BlockField& g) -> std::optional<double> {
                 std::optional<double> ratio = ReadNumber(g);
                 if (ratio && !(*ratio > 0 && *ratio < 1)) {
                   Error(ValueLoc(g), g.path, "must be between 0 and 1 (exclusive)");
                   return std::nullopt;
                 }
                 return ratio;
               });
    }
  }
  return pipeline;
}

CheckpointingSpec Loader::ParseCheckpointing(const BlockField& field) {
  CheckpointingSpec spec;
  spec.location = ValueLoc(field);
  std::optional<BlockMap> map = OpenMap(field, kCheckpointingKeys);
  if (!map) {
    return spec;
  }
  RecordKeys(*map, spec.key_locations);
  // Flink rejects intervals and timeouts below its minimal checkpoint time.
  auto checkpoint_time = [&](const BlockField& f) -> std::optional<int64_t> {
    std::optional<int64_t> ms = ReadDuration(f, Sign::kPositive);
    if (ms && *ms < kMinimalCheckpointTimeMs) {
      ValueError(f, fmt::format("must be at least {}ms, got {}ms", kMinimalCheckpointTimeMs, *ms));
      return std::nullopt;
    }
    return ms;
  };
  if (std::optional<BlockField> f = Require(*map, "interval")) {
    spec.interval_ms = checkpoint_time(*f).value_or(0);
  }
  Optional(*map, "mode", spec.mode,
           [&](const BlockField& f) { return ReadEnum(f, kCheckpointingModes); });
  Optional(*map, "timeout", spec.timeout_ms, checkpoint_time);
  Optional(*map, "min-pause", spec.min_pause_ms,
           [&](const BlockField& f) { return ReadDuration(f, Sign::kNonNegative); });
  Optional(*map, "max-concurrent-checkpoints", spec.max_concurrent_checkpoints,
           [&](const BlockField& f) { return ReadInt(f, 1, 1000); });
  Optional(*map, "tolerable-failed-checkpoints", spec.tolerable_failed_checkpoints,
           [&](const BlockField& f) { return ReadInt(f, 0, std::numeric_limits<int32_t>::max()); });
  Optional(*map, "num-retained", spec.num_retained,
           [&](const BlockField& f) { return ReadInt(f, 1, 1000); });
  Optional(*map, "dir", spec.dir,
           [&](const BlockField& f) { return ReadDirectory(f, kCheckpointDirUse); });
  Optional(*map, "restore-watermarks", spec.restore_watermarks,
           [&](const BlockField& f) { return ReadBool(f); });
  Optional(*map, "incremental", spec.incremental, [&](const BlockField& f) { return ReadBool(f); });
  return spec;
}

std::vector<FaultSpec> Loader::ParseFaults(const BlockField& field, const JobSpec& job) {
  std::vector<FaultSpec> faults;
  if (!field.value->IsSequence()) {
    ValueError(
        field,
        fmt::format(
            "expected a list of faults like [{{operator: windows, after-records: 100}}], got {}",
            Describe(*field.value)));
    return faults;
  }
  for (size_t i = 0; i < field.value->size(); ++i) {
    const ParamNode& node = field.value->items[i];
    std::optional<BlockMap> map =
        OpenMap(node, node.location, IndexPath(field.path, i), kFaultKeys);
    if (!map) {
      continue;
    }
    FaultSpec fault;
    fault.location = node.location;
    if (std::optional<BlockField> f = Require(*map, "operator")) {
      fault.operator_id = ReadString(*f).value_or("");
      bool known = false;
      for (const OperatorSpec& op : job.operators) {
        known = known || op.id == fault.operator_id;
      }
      if (!fault.operator_id.empty() && !known && !job.operators.empty()) {
        ValueError(*f, fmt::format("no operator \"{}\" in the job", fault.operator_id));
      }
    }
    Optional(*map, "after-records", fault.after_records,
             [&](const BlockField& f) { return ReadInt(f, 0); });
    Optional(*map, "action", fault.action,
             [&](const BlockField& f) { return ReadEnum(f, kFaultActions); });
    Optional(*map, "times", fault.times, [&](const BlockField& f) {
      return ReadInt(f, 1, std::numeric_limits<int32_t>::max());
    });
    Optional(*map, "in", fault.phase,
             [&](const BlockField& f) { return ReadEnum(f, kFaultPhases); });
    faults.push_back(std::move(fault));
  }
  return faults;
}

RestartStrategySpec Loader::ParseRestartStrategy(const BlockField& field) {
  RestartStrategySpec spec;
  spec.location = ValueLoc(field);
  std::optional<BlockMap> map = OpenMap(field, kRestartStrategyKeys);
  if (!map) {
    return spec;
  }
  RecordKeys(*map, spec.key_locations);
  if (std::optional<BlockField> f = Require(*map, "type")) {
    std::optional<std::string> type = ReadEnum(*f, kRestartStrategyTypes);
    if (!type) {
      return spec;
    }
    spec.type = *type;
  } else {
    return spec;
  }
  const KeyList allowed = spec.type == "fixed-delay"         ? KeyList(kFixedDelayKeys)
                          : spec.type == "exponential-delay" ? KeyList(kExponentialDelayKeys)
                          : spec.type == "failure-rate"      ? KeyList(kFailureRateKeys)
                                                             : KeyList(kNoRestartKeys);
  for (const BlockField& f : map->fields) {
    if (!Contains(allowed, f.name)) {
      Error(f.key_location, f.path,
            fmt::format("does not apply to restart strategy {}; allowed keys: {}", spec.type,
                        Join(allowed)));
    }
  }
  auto duration = [&](const BlockField& f) {
    return ReadDuration(f, Sign::kNonNegative);
  };
  auto positive_duration = [&](const BlockField& f) {
    return ReadDuration(f, Sign::kPositive);
  };
  if (spec.type == "fixed-delay") {
    Optional(*map, "attempts", spec.attempts, [&](const BlockField& f) {
      return ReadInt(f, 0, std::numeric_limits<int32_t>::max());
    });
    Optional(*map, "delay", spec.delay_ms, duration);
  } else if (spec.type == "exponential-delay") {
    Optional(*map, "initial-backoff", spec.initial_backoff_ms, positive_duration);
    Optional(*map, "max-backoff", spec.max_backoff_ms, positive_duration);
    Optional(*map, "backoff-multiplier", spec.backoff_multiplier,
             [&](const BlockField& f) -> std::optional<double> {
               std::optional<double> v = ReadNumber(f);
               if (v && !(*v >= 1.0 && *v <= 1e6)) {
                 ValueError(f, fmt::format("must be at least 1 (and at most 1e6), got {}", *v));
                 return std::nullopt;
               }
               return v;
             });
    Optional(*map, "reset-backoff-threshold", spec.reset_backoff_threshold_ms, positive_duration);
    Optional(*map, "jitter-factor", spec.jitter_factor,
             [&](const BlockField& f) -> std::optional<double> {
               std::optional<double> v = ReadNumber(f);
               if (v && !(*v >= 0.0 && *v <= 1.0)) {
                 ValueError(f, fmt::format("must be between 0 and 1, got {}", *v));
                 return std::nullopt;
               }
               return v;
             });
    if (spec.max_backoff_ms < spec.initial_backoff_ms) {
      Error(spec.key_locations.Of("max-backoff", spec.location), JoinPath(map->path, "max-backoff"),
            fmt::format("must be at least initial-backoff ({}ms), got {}ms",
                        spec.initial_backoff_ms, spec.max_backoff_ms));
    }
  } else if (spec.type == "failure-rate") {
    Optional(
        *map, "max-failures-per-interval", spec.max_failures_per_interval,
        [&](const BlockField& f) { return ReadInt(f, 1, std::numeric_limits<int32_t>::max()); });
    Optional(*map, "failure-rate-interval", spec.failure_rate_interval_ms, positive_duration);
    Optional(*map, "delay", spec.delay_ms, duration);
  }
  return spec;
}

std::optional<InputSpec> Loader::ParseInput(const ParamNode& node, const SourceLocation& location,
                                            const std::string& path, OperatorInfo& info) {
  InputSpec input;
  input.location = location;
  if (node.IsScalar()) {
    if (node.scalar.empty()) {
      Error(location, path, "expected an operator id, got \"\"");
      return std::nullopt;
    }
    input.from = node.scalar;
    info.from_paths.push_back(path);
    info.from_locations.push_back(location);
    info.side_output_paths.emplace_back();
    info.side_output_locations.emplace_back();
    return input;
  }
  if (!node.IsMap()) {
    Error(
        location, path,
        fmt::format("expected an operator id or a mapping with \"from\", got {}", Describe(node)));
    return std::nullopt;
  }
  std::optional<BlockMap> map = OpenMap(node, location, path, kInputKeys);
  if (!map) {
    return std::nullopt;
  }
  bool ok = true;
  std::optional<BlockField> from = Require(*map, "from");
  std::optional<std::string> from_id = from ? ReadString(*from) : std::nullopt;
  ok = ok && from_id.has_value();
  std::string side_output_path;
  SourceLocation side_output_location;
  if (std::optional<BlockField> side = map->Get("side-output")) {
    if (std::optional<std::string> tag = ReadString(*side)) {
      input.side_output = *tag;
      side_output_path = side->path;
      side_output_location = ValueLoc(*side);
    } else {
      ok = false;
    }
  }
  if (std::optional<BlockField> partition = map->Get("partition")) {
    std::optional<std::string> name = ReadEnum(*partition, kPartitionings);
    if (!name) {
      ok = false;
    } else if (*name == "forward") {
      input.partitioning = Partitioning::kForward;
    } else if (*name == "rebalance") {
      input.partitioning = Partitioning::kRebalance;
    } else if (*name == "hash") {
      input.partitioning = Partitioning::kHash;
    } else {
      input.partitioning = Partitioning::kBroadcast;
    }
  }
  if (!ok) {
    return std::nullopt;
  }
  input.from = *from_id;
  info.from_paths.push_back(from->path);
  info.from_locations.push_back(ValueLoc(*from));
  info.side_output_paths.push_back(side_output_path);
  info.side_output_locations.push_back(side_output_location);
  return input;
}

void Loader::ParseInputs(const BlockMap& map, OperatorSpec& op, OperatorInfo& info) {
  std::optional<BlockField> single = map.Get("input");
  std::optional<BlockField> list = map.Get("inputs");
  if (single && list) {
    Error(list->key_location, list->path, "give either \"input\" or \"inputs\", not both");
    info.inputs_ok = false;
    return;
  }
  if (single) {
    info.has_input_key = true;
    info.input_key_path = single->path;
    info.input_key_location = single->key_location;
    if (std::optional<InputSpec> input =
            ParseInput(*single->value, ValueLoc(*single), single->path, info)) {
      op.inputs.push_back(std::move(*input));
    } else {
      info.inputs_ok = false;
    }
    return;
  }
  if (!list) {
    return;
  }
  info.has_input_key = true;
  info.input_key_path = list->path;
  info.input_key_location = list->key_location;
  if (!list->value->IsSequence()) {
    ValueError(*list, fmt::format("expected a list of inputs, got {}", Describe(*list->value)));
    info.inputs_ok = false;
    return;
  }
  if (list->value->size() == 0) {
    ValueError(*list, "must list at least one input");
    info.inputs_ok = false;
    return;
  }
  for (size_t i = 0; i < list->value->size(); ++i) {
    const ParamNode& item = list->value->items[i];
    if (std::optional<InputSpec> input =
            ParseInput(item, item.location, IndexPath(list->path, i), info)) {
      op.inputs.push_back(std::move(*input));
    } else {
      info.inputs_ok = false;
    }
  }
}

SourceSpec Loader::ParseSource(const BlockField& field) {
  SourceSpec source;
  source.location = ValueLoc(field);
  // Keys are checked here rather than by OpenMap: an unknown key's error lists the keys of the
  // source's own type, read ahead of the rest, not those of every type.
  const KeyList all_keys = blocks_.SourceKeys();
  std::optional<BlockMap> map =
      OpenMap(*field.value, ValueLoc(field), field.path, all_keys, "", /*any_key=*/true);
  if (!map) {
    return source;
  }
  {
    const ParamNode* type = field.value->Find("type");
    const SourceBlockType* known =
        type && type->IsScalar() ? blocks_.FindSource(type->scalar) : nullptr;
    const std::string type_name = known ? known->type : "";
    const KeyList listed = known ? KeyList(known->keys) : all_keys;
    std::erase_if(map->fields, [&](const BlockField& f) {
      const std::string& name = f.name;
      if (Contains(all_keys, name)) {
        return false;
      }
      Error(f.key_location, f.path,
            UnknownKeyMessage(name, type_name.empty() ? "" : " for a source of type " + type_name,
                              listed));
      return true;
    });
  }
  RecordKeys(*map, source.key_locations);
  if (std::optional<BlockField> f = Require(*map, "type")) {
    const std::vector<std::string_view> types = blocks_.SourceTypes();
    source.type = ReadEnum(*f, types).value_or("");
  }
  Optional(*map, "interleave", source.interleave,
           [&](const BlockField& f) { return ReadEnum(f, kInterleaves); });
  Optional(*map, "pacing", source.pacing_ms,
           [&](const BlockField& f) { return ReadDuration(f, Sign::kNonNegative); });
  Optional(*map, "timestamp-field", source.timestamp_field_name,
           [&](const BlockField& f) { return ReadString(f); });
  Optional(*map, "errors", source.errors,
           [&](const BlockField& f) { return ReadEnum(f, kSourceErrorPolicies); });
  // The type's factory reads the rest; a missing or unknown type is read as the first
  // registered type's block, so its other errors are still found.
  const SourceBlockType* reader = blocks_.FindSource(source.type);
  if (reader == nullptr) {
    reader = blocks_.FallbackSource();
  }
  if (reader != nullptr) {
    reader->parse(blocks_, *this, *map, source);
  }
  return source;
}

WatermarkStrategySpec Loader::ParseWatermarks(const BlockField& field, bool on_source) {
  if (!blocks_.watermarks()) {
    Error(ValueLoc(field), field.path, "no reader for watermarks blocks is registered");
    return WatermarkStrategySpec{};
  }
  return blocks_.watermarks()(*this, field, on_source);
}

WindowSpec Loader::ParseWindow(const BlockField& field) {
  if (!blocks_.window()) {
    Error(ValueLoc(field), field.path, "no reader for window blocks is registered");
    return WindowSpec{};
  }
  return blocks_.window()(*this, field);
}

std::vector<std::string> Loader::ParseKeyBy(const BlockField& field) {
  std::vector<std::string> keys;
  key_by_locations_.clear();
  if (field.value->IsScalar()) {
    if (std::optional<std::string> key = ReadString(field)) {
      keys.push_back(*key);
      key_by_locations_.push_back(ValueLoc(field));
    }
    return keys;
  }
  if (!field.value->IsSequence() || field.value->size() == 0) {
    ValueError(field, fmt::format("expected a list of field names like [user], got {}",
                                  field.value->IsSequence() ? "[]" : Describe(*field.value)));
    return keys;
  }
  for (size_t i = 0; i < field.value->size(); ++i) {
    const BlockField item = Item(field.value->items[i], IndexPath(field.path, i));
    if (std::optional<std::string> key = ReadString(item)) {
      if (std::find(keys.begin(), keys.end(), *key) != keys.end()) {
        ValueError(item, fmt::format("duplicate key field \"{}\"", *key));
      } else {
        keys.push_back(*key);
        key_by_locations_.push_back(ValueLoc(item));
      }
    }
  }
  return keys;
}

SinkSpec Loader::ParseSink(const BlockField& field) {
  if (!blocks_.sink()) {
    Error(ValueLoc(field), field.path, "no reader for sink blocks is registered");
    return SinkSpec{};
  }
  return blocks_.sink()(*this, field);
}

MapSpec Loader::ParseMap(const BlockField& field) {
  MapSpec spec;
  spec.location = ValueLoc(field);
  std::optional<BlockMap> map = OpenMap(field, kMapKeys);
  if (!map) {
    return spec;
  }
  if (std::optional<BlockField> set = map->Get("set")) {
    for (const char* other : {"field", "multiply", "add"}) {
      Forbid(*map, other, "give either \"set\" (expressions) or \"field\" with multiply/add");
    }
    if (std::optional<BlockMap> columns = OpenMap(*set->value, ValueLoc(*set), set->path,
                                                  /*allowed=*/{}, /*context=*/"", true)) {
      for (const BlockField& column : columns->fields) {
        if (std::optional<ExpressionSpec> e = ReadExpression(column)) {
          spec.set.emplace_back(column.name, std::move(*e));
        }
      }
      if (columns->fields.empty()) {
        ValueError(*set, "must set at least one column, like {cents: \"amount * 100\"}");
      }
    }
    return spec;
  }
  if (std::optional<BlockField> f = Require(*map, "field")) {
    spec.field = ReadString(*f).value_or("");
  }
  Optional(*map, "multiply", spec.multiply, [&](const BlockField& f) { return ReadNumber(f); });
  Optional(*map, "add", spec.add, [&](const BlockField& f) { return ReadNumber(f); });
  return spec;
}

FilterSpec Loader::ParseFilter(const BlockField& field) {
  FilterSpec spec;
  spec.location = ValueLoc(field);
  if (field.value->IsScalar()) {
    spec.condition = ReadExpression(field);
    return spec;
  }
  std::optional<BlockMap> map = OpenMap(field, kFilterKeys);
  if (!map) {
    return spec;
  }
  if (std::optional<BlockField> f = Require(*map, "field")) {
    spec.field = ReadString(*f).value_or("");
  }
  Optional(*map, "op", spec.op, [&](const BlockField& f) { return ReadEnum(f, kFilterOps); });
  if (std::optional<BlockField> f = Require(*map, "value")) {
    spec.value = ReadNumber(*f).value_or(0.0);
  }
  return spec;
}

ReportSpec Loader::ParseReport(const BlockField& field, std::optional<BlockMap>& map) {
  ReportSpec report;
  report.location = ValueLoc(field);
  map = OpenMap(field, kReportKeys);
  if (!map) {
    return report;
  }
  Optional(*map, "label", report.label, [&](const BlockField& f) { return ReadString(f, true); });
  if (std::optional<BlockField> f = Require(*map, "windows-sink")) {
    report.windows_sink = ReadString(*f).value_or("");
  }
  Optional(*map, "late-sink", report.late_sink, [&](const BlockField& f) { return ReadString(f); });
  if (std::optional<BlockField> f = map->Get("breakdown")) {
    if (!map->Get("late-sink")) {
      Error(f->key_location, f->path, "needs late-sink (breakdown counts late records)");
    }
    if (std::optional<BlockMap> breakdown = OpenMap(*f, kBreakdownKeys)) {
      if (std::optional<BlockField> bf = Require(*breakdown, "field")) {
        report.breakdown_field = ReadString(*bf).value_or("");
      }
      if (std::optional<BlockField> bv = Require(*breakdown, "value")) {
        report.breakdown_value = ReadString(*bv, true).value_or("");
      }
    }
  }
  return report;
}

void Loader::ParseOperator(const ParamNode& node, const std::string& path, OperatorSpec& op,
                           OperatorInfo& info) {
  op.location = node.location;
  if (!node.IsMap()) {
    Error(node.location, path,
          fmt::format("expected an operator mapping (id, type, ...), got {}", Describe(node)));
    return;
  }
  // The type decides which keys are allowed, so read it before checking keys.
  std::string context;
  std::vector<std::string_view> allowed = OperatorKeys("");
  std::string extra_type_key;  // an unknown type's parameter block, named like the type
  std::string type_typo;       // a near miss of a built-in type: reported once, at the type
  std::string typo_block;      // the block named like the built-in type the typo is near
  const std::vector<std::string_view> builtin = BuiltinTypes();
  if (const ParamNode* type = node.Find("type");
      type && type->IsScalar() && Contains(kOperatorTypes, type->scalar)) {
    allowed = OperatorKeys(type->scalar);
    context = fmt::format(" for an operator of type {}", type->scalar);
  } else if (std::string nearest = type && type->IsScalar() && !Contains(builtin, type->scalar)
                                       ? NearestKey(type->scalar, builtin)
                                       : "";
             !nearest.empty() && node.Find(nearest) != nullptr) {
    // `type: windw` beside a `window:` block, `type: interval_join` beside `interval-join:`:
    // check the keys as the built-in type's, so the one error is the type (and not "unknown key
    // window, did you mean windw"). Without the block it may be a type registered in C++
    // (operators/user_operators.h), which the compiler checks.
    type_typo = type->scalar;
    allowed = OperatorKeys(nearest);
    if (!Contains(kOperatorTypes, nearest)) {
      typo_block = nearest;  // a registered type's parameters: a block named like it
      allowed.push_back(typo_block);
    }
  } else if (type && type->IsScalar() && IsValidId(type->scalar)) {
    allowed = OperatorKeys(type->scalar);
    extra_type_key = type->scalar;
    allowed.push_back(extra_type_key);
    context = fmt::format(" for an operator of type {}", type->scalar);
  }
  std::optional<BlockMap> map = OpenMap(node, node.location, path, allowed, context);
  if (!map) {
    return;
  }
  RecordKeys(*map, op.key_locations);
  if (std::optional<BlockField> f = Require(*map, "id")) {
    if (std::optional<std::string> id = ReadString(*f)) {
      if (id->size() > kMaxNameBytes) {
        ValueError(*f, fmt::format("an operator id is at most {} bytes; this one has {} bytes",
                                   kMaxNameBytes, id->size()));
      } else if (!IsValidId(*id)) {
        ValueError(*f, fmt::format("operator ids use letters, digits, '-', '_' and '.', got \"{}\"",
                                   EscapeControlCharacters(AbbreviatedPath(*id))));
      } else {
        op.id = *id;
        info.id_ok = true;
        info.id_path = f->path;
        info.id_location = ValueLoc(*f);
      }
    }
  }
  if (std::optional<BlockField> f = Require(*map, "type")) {
    if (std::optional<std::string> type = ReadString(*f)) {
      if (!type_typo.empty()) {
        ValueError(*f, fmt::format("unknown operator type \"{}\"{}; built-in types: {}", *type,
                                   Suggestion(*type, builtin), Join(builtin)));
      } else if (Contains(kOperatorTypes, *type) || IsValidId(*type)) {
        // Unknown types load; the job compiler reports a type nobody registered.
        op.type = *type;
        op.type_location = ValueLoc(*f);
        info.type_ok = true;
      } else {
        ValueError(*f, fmt::format("an operator type uses letters, digits, '-', '_' and '.', got "
                                   "\"{}\" (built-in types: {})",
                                   EscapeControlCharacters(AbbreviatedPath(*type)), Join(builtin)));
      }
    }
  }
  Optional(*map, "parallelism", op.parallelism,
           [&](const BlockField& f) { return ReadInt(f, 1, kMaxParallelism); });
  ParseInputs(*map, op, info);

  if (op.type == "source") {
    if (std::optional<BlockField> f = Require(*map, "source")) {
      op.source = ParseSource(*f);
    }
    if (std::optional<BlockField> f = map->Get("watermarks")) {
      op.watermarks = ParseWatermarks(*f, /*on_source=*/true);
    }
  } else if (op.type == "assign-timestamps-and-watermarks") {
    if (std::optional<BlockField> f = Require(*map, "watermarks")) {
      op.watermarks = ParseWatermarks(*f, /*on_source=*/false);
    }
  } else if (op.type == "window") {
    if (std::optional<BlockField> f = map->Get("key-by")) {
      op.key_by = ParseKeyBy(*f);
      op.key_by_locations = key_by_locations_;
    }
    if (std::optional<BlockField> f = Require(*map, "window")) {
      op.window = ParseWindow(*f);
    }
  } else if (op.type == "sink") {
    if (std::optional<BlockField> f = Require(*map, "sink")) {
      op.sink = ParseSink(*f);
    }
  } else if (op.type == "map") {
    if (std::optional<BlockField> f = Require(*map, "map")) {
      op.map = ParseMap(*f);
    }
  } else if (op.type == "filter") {
    if (std::optional<BlockField> f = Require(*map, "filter")) {
      op.filter = ParseFilter(*f);
    }
  } else if (!op.type.empty()) {
    if (std::optional<BlockField> f = map->Get("key-by")) {
      op.key_by = ParseKeyBy(*f);
      op.key_by_locations = key_by_locations_;
    }
    Optional(*map, "broadcast-watermarks", op.broadcast_watermarks,
             [&](const BlockField& f) { return ReadEnum(f, kBroadcastWatermarks); });
    std::optional<BlockField> params = map->Get("params");
    std::optional<BlockField> block =
        extra_type_key.empty() ? std::nullopt : map->Get(extra_type_key);
    if (params && block) {
      Error(block->key_location, block->path,
            fmt::format("give the parameters either under \"params\" or under \"{}\", not both",
                        extra_type_key));
    } else if (params || block) {
      op.params = *(params ? *params : *block).value;
    }
  }
}

ParamNode Loader::ToParamNode(const YAML::Node& node) const {
  ParamNode out;
  out.location = Loc(node);
  if (node.IsScalar()) {
    out.kind = ParamNode::Kind::kScalar;
    out.scalar = node.Scalar();
    out.quoted = node.Tag() == "!";  // yaml-cpp tags plain scalars "?", quoted ones "!"
  } else if (node.IsSequence()) {
    out.kind = ParamNode::Kind::kSequence;
    for (size_t i = 0; i < node.size(); ++i) {
      out.items.push_back(ToParamNode(node[i]));
    }
  } else if (node.IsMap()) {
    out.kind = ParamNode::Kind::kMap;
    for (auto it = node.begin(); it != node.end(); ++it) {
      const YAML::Node key = it->first;  // copies: the iterator's pair is a temporary proxy
      const YAML::Node value = it->second;
      out.keys.push_back(key.IsScalar() ? key.Scalar() : std::string());
      out.key_locations.push_back(Loc(key));
      out.key_kinds.push_back(key.IsScalar()     ? ParamNode::Kind::kScalar
                              : key.IsSequence() ? ParamNode::Kind::kSequence
                              : key.IsMap()      ? ParamNode::Kind::kMap
                                                 : ParamNode::Kind::kNull);
      out.items.push_back(ToParamNode(value));
    }
  }
  return out;
}

void Loader::ValidateGraph(const JobSpec& job, const std::vector<OperatorInfo>& infos) {
  // Ids: the first definition wins; later ones are errors.
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < job.operators.size(); ++i) {
    if (!infos[i].id_ok) {
      continue;
    }
    auto [it, inserted] = index.emplace(job.operators[i].id, i);
    if (!inserted) {
      const OperatorInfo& first = infos[it->second];
      Error(infos[i].id_location, infos[i].id_path,
            fmt::format("duplicate operator id \"{}\" (first defined at line {}, {})",
                        job.operators[i].id, first.id_location.line, first.id_path));
    }
  }
  std::vector<std::string_view> known;
  known.reserve(index.size());
  for (const auto& [id, i] : index) {
    known.push_back(id);
  }

  // Edges: upstream exists, is not a sink, and has the side output; sources take no input.
  // Valid edges per operator: (index into inputs, upstream operator index).
  std::vector<std::vector<std::pair<size_t, size_t>>> upstreams(job.operators.size());
  for (size_t i = 0; i < job.operators.size(); ++i) {
    const OperatorSpec& op = job.operators[i];
    const OperatorInfo& info = infos[i];
    if (!info.type_ok) {
      continue;
    }
    if (op.type == "source") {
      if (info.has_input_key) {
        Error(info.input_key_location, info.input_key_path,
              fmt::format("a source takes no input; remove \"{}\"",
                          info.input_key_path.substr(info.input_key_path.rfind('.') + 1)));
      }
      continue;
    }
    if (!info.has_input_key) {
      Error(op.location, IndexPath("operators", i) + ".input",
            fmt::format("missing required key (a {} operator reads from an upstream operator: "
                        "\"input: <id>\" or \"inputs: [...]\")",
                        op.type));
      continue;
    }
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const InputSpec& input = op.inputs[k];
      auto it = index.find(input.from);
      if (it == index.end()) {
        Error(info.from_locations[k], info.from_paths[k],
              fmt::format("unknown operator \"{}\"{}; operators: {}", input.from,
                          Suggestion(input.from, known), Join(known)));
        continue;
      }
      const OperatorSpec& up = job.operators[it->second];
      if (up.type == "sink") {
        Error(info.from_locations[k], info.from_paths[k],
              fmt::format("\"{}\" is a sink and has no output to read", input.from));
        continue;
      }
      if (!input.side_output.empty() && !up.type.empty()) {  // no type: reported at the type
        // A source's `errors` holds its bad input (sources/source_reader.h: SourceError).
        // Operator types config/ does not know (`params`, e.g. interval-join's
        // left-late-output) declare their side outputs when compiled; the compiler checks those.
        const bool has_tag = (up.window && !up.window->late_output.empty() &&
                              up.window->late_output == input.side_output) ||
                             (up.type == "source" && input.side_output == "errors") ||
                             up.params.has_value();
        if (!has_tag) {
          const std::string available =
              up.window && !up.window->late_output.empty()
                  ? fmt::format("; it has \"{}\" (window.late-output)", up.window->late_output)
                  : "";
          Error(info.side_output_locations[k], info.side_output_paths[k],
                fmt::format("operator \"{}\" has no side output \"{}\"{}", input.from,
                            input.side_output, available));
        }
      }
      upstreams[i].emplace_back(k, it->second);
    }
  }

  // Cycles: depth-first along inputs; each cycle is reported once, at the edge that closes it.
  enum class Color { kWhite, kGray, kBlack };
  std::vector<Color> color(job.operators.size(), Color::kWhite);
  std::vector<size_t> stack;
  std::function<void(size_t)> visit = [&](size_t i) {
    color[i] = Color::kGray;
    stack.push_back(i);
    for (const auto& [k, up] : upstreams[i]) {
      if (color[up] == Color::kGray) {
        // stack = [..., up, x1, ..., i] where each entry reads from the next: data flows
        // i -> ... -> x1 -> up, and up -> i closes the cycle.
        std::vector<size_t> cycle(std::find(stack.begin(), stack.end(), up), stack.end());
        std::reverse(cycle.begin(), cycle.end());
        // Start the loop at the operator written first, so it reads in file order.
        std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
        std::vector<std::string> names;
        names.reserve(cycle.size() + 1);
        for (size_t c : cycle) {
          names.push_back(job.operators[c].id);
        }
        names.push_back(names.front());
        Error(infos[i].from_locations[k], infos[i].from_paths[k],
              fmt::format("cycle in the operator graph: {}", Join(names, " -> ")));
      } else if (color[up] == Color::kWhite) {
        visit(up);
      }
    }
    stack.pop_back();
    color[i] = Color::kBlack;
  };
  for (size_t i = 0; i < job.operators.size(); ++i) {
    if (color[i] == Color::kWhite && infos[i].id_ok && index.at(job.operators[i].id) == i) {
      visit(i);
    }
  }
}

void Loader::ValidateReport(const JobSpec& job, const BlockMap& report) {
  std::vector<std::string_view> sinks;
  for (const OperatorSpec& op : job.operators) {
    if (op.type == "sink" && !op.id.empty()) {
      sinks.push_back(op.id);
    }
  }
  for (const char* key : {"windows-sink", "late-sink"}) {
    std::optional<BlockField> f = report.Get(key);
    if (!f || !f->value->IsScalar() || f->value->scalar.empty()) {
      continue;
    }
    const std::string& id = f->value->scalar;
    if (Contains(sinks, id)) {
      continue;
    }
    auto op = std::find_if(job.operators.begin(), job.operators.end(),
                           [&](const OperatorSpec& o) { return o.id == id; });
    if (op != job.operators.end()) {
      if (!op->type.empty()) {  // no type: already reported at the operator's type
        ValueError(*f, fmt::format("\"{}\" is a {} operator, not a sink", id, op->type));
      }
    } else {
      ValueError(*f, fmt::format("unknown sink \"{}\"{}; sinks: {}", id, Suggestion(id, sinks),
                                 sinks.empty() ? "(none)" : Join(sinks)));
    }
  }
}

// Checks the shape of a YAML text before it becomes nodes: nesting at most kMaxYamlDepth levels,
// and at most kMaxYamlNodes nodes once aliases are expanded (an alias is a reference, so ten
// levels of ten aliases each would make 10^10 nodes for whoever walks them: "billion laughs").
// One pass over yaml-cpp's events, linear in the text.
class YamlShapeCheck : public YAML::EventHandler {
 public:
  struct Exceeded {
    YAML::Mark mark;
    std::string message;
  };

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Leaf(mark, anchor); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = sizes_.find(anchor);
    Add(mark, it == sizes_.end() ? 1 : it->second);
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                const std::string&) override {
    Leaf(mark, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  void Add(const YAML::Mark& mark, uint64_t nodes) {
    // yaml-cpp 0.7 can emit nodes forever without reading on (a stray ',' before a comment at
    // the start of a line gives an endless run of nulls at one mark): stop at the first sign.
    if (mark.pos == last_pos_ && mark.pos >= 0) {
      if (++same_pos_ > kMaxNodesAtOnePosition) {
        throw Exceeded{mark,
                       "YAML syntax error: the parser reads no further here (a stray ',' outside "
                       "[...] or {...}?)"};
      }
    } else {
      last_pos_ = mark.pos;
      same_pos_ = 0;
    }
    total_ += nodes;
    if (total_ > static_cast<uint64_t>(kMaxYamlNodes)) {
      throw Exceeded{mark, fmt::format("the job has more than {} YAML nodes (counting each use "
                                       "of an alias)",
                                       kMaxYamlNodes)};
    }
  }
  void Leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    Add(mark, 1);
    if (anchor != YAML::NullAnchor) {
      sizes_[anchor] = 1;
    }
  }
  void Open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    if (static_cast<int>(open_.size()) >= kMaxYamlDepth) {
      throw Exceeded{mark, fmt::format("YAML nests deeper than {} levels", kMaxYamlDepth)};
    }
    Add(mark, 1);
    open_.push_back({anchor, total_ - 1});
  }
  void Close() {
    const auto [anchor, start] = open_.back();
    open_.pop_back();
    if (anchor != YAML::NullAnchor) {
      sizes_[anchor] = total_ - start;
    }
  }

  // More nodes than this at one text position is yaml-cpp going round in circles: nothing real
  // starts that many nodes at one character (an empty flow sequence or map is a handful).
  static constexpr int kMaxNodesAtOnePosition = 1000;
  int last_pos_ = -1;
  int same_pos_ = 0;
  uint64_t total_ = 0;
  std::vector<std::pair<YAML::anchor_t, uint64_t>>
      open_;                                  // open collections: anchor, total at start
  std::map<YAML::anchor_t, uint64_t> sizes_;  // anchored node -> its expanded size
};

JobSpec Loader::Load(const std::string& yaml) {
  JobSpec job;
  job.file = file_;
  YAML::Node root;
  if (static_cast<int64_t>(yaml.size()) > kMaxJobFileBytes) {
    Error(SourceLocation{file_, 0, 0}, "",
          fmt::format("the job is larger than {} MiB", kMaxJobFileBytes >> 20));
    diags_.ThrowIfAny();
  }
  // YAML's character set leaves out the C0 controls but tab, line feed and carriage return, and
  // DEL (YAML 1.2, 5.1 c-printable); yaml-cpp reads them on, turning a NUL into other bytes.
  {
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < yaml.size(); ++i) {
      const auto c = static_cast<unsigned char>(yaml[i]);
      if (c == '\n') {
        ++line;
        line_start = i + 1;
      } else if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f) {
        Error(SourceLocation{file_, line, static_cast<int>(i - line_start) + 1}, "",
              fmt::format("YAML does not allow the control character {} in a job file (only tab, "
                          "line feed and carriage return); write it as an escape in a "
                          "double-quoted string where a value needs it",
                          EscapeControlCharacters(yaml.substr(i, 1))));
        diags_.ThrowIfAny();
      }
    }
  }
  try {
    std::istringstream in(yaml);
    YAML::Parser parser(in);
    YamlShapeCheck shape;
    while (parser.HandleNextDocument(shape)) {
    }
  } catch (const YamlShapeCheck::Exceeded& e) {
    Error(SourceLocation{file_, e.mark.line + 1, e.mark.column + 1}, "", e.message);
    diags_.ThrowIfAny();
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own guard (2000 levels of its recursion) is deeper than ours, so it should not
    // fire first; if it does, it is the same fault.
    Error(e.mark.is_null() ? SourceLocation{file_, 0, 0}
                           : SourceLocation{file_, e.mark.line + 1, e.mark.column + 1},
          "", fmt::format("YAML nests deeper than {} levels", kMaxYamlDepth));
    diags_.ThrowIfAny();
  } catch (const YAML::Exception&) {
    // A syntax error: LoadAll below reports it as always.
  }
  try {
    std::vector<YAML::Node> documents = YAML::LoadAll(yaml);
    if (!documents.empty()) {
      root = documents.front();
    }
    // YAML::Load would read the first document and silently drop the rest of the file.
    for (size_t i = 1; i < documents.size(); ++i) {
      if (documents[i].IsDefined() && !documents[i].IsNull()) {
        Error(Loc(documents[i]), "",
              "a job file holds one YAML document; another one starts here (after \"---\")");
        diags_.ThrowIfAny();
      }
    }
  } catch (const YAML::ParserException& e) {
    const SourceLocation where = e.mark.is_null()
                                     ? SourceLocation{file_, 0, 0}
                                     : SourceLocation{file_, e.mark.line + 1, e.mark.column + 1};
    Error(where, "", SyntaxMessage(e.msg));
    diags_.ThrowIfAny();
  } catch (const YAML::Exception& e) {
    Error(SourceLocation{file_, 0, 0}, "", SyntaxMessage(e.msg));
    diags_.ThrowIfAny();
  }
  if (root.IsNull() || !root.IsDefined()) {
    Error(SourceLocation{file_, 0, 0}, "",
          "the job is empty; it needs at least \"name\" and \"operators\"");
    diags_.ThrowIfAny();
  }
  // From here on the job is read as a yaml-free tree (config/block_reader.h).
  const ParamNode tree = ToParamNode(root);
  if (!tree.IsMap()) {
    Error(tree.location, "",
          fmt::format("a job is a mapping with \"name\", \"operators\" and optionally "
                      "\"pipeline\" and \"report\"; got {}",
                      Describe(tree)));
    diags_.ThrowIfAny();
  }
  std::optional<BlockMap> top = OpenMap(tree, tree.location, "", kTopKeys);

  if (std::optional<BlockField> f = Require(*top, "name")) {
    job.name = ReadString(*f).value_or("");
    if (job.name.size() > kMaxNameBytes) {
      ValueError(*f, fmt::format("a job name is at most {} bytes; this one has {} bytes",
                                 kMaxNameBytes, job.name.size()));
      job.name.clear();
    }
    // The name is printed by validate, list, status and in logs: a control character (an escape
    // sequence written as "\e[2J") would act on the terminal that shows it.
    if (auto bad = std::find_if(job.name.begin(), job.name.end(),
                                [](unsigned char c) { return c < 0x20 || c == 0x7f; });
        bad != job.name.end()) {
      ValueError(*f, fmt::format("a job name must not hold control characters; it holds {} at "
                                 "byte {}",
                                 EscapeControlCharacters(std::string_view(&*bad, 1)),
                                 bad - job.name.begin()));
      job.name.clear();
    }
  }
  if (std::optional<BlockField> f = top->Get("pipeline")) {
    job.pipeline = ParsePipeline(*f);
  }
  if (std::optional<BlockField> f = top->Get("checkpointing")) {
    job.checkpointing = ParseCheckpointing(*f);
  }
  if (std::optional<BlockField> f = top->Get("restart-strategy")) {
    job.restart_strategy = ParseRestartStrategy(*f);
  }
  std::vector<OperatorInfo> infos;
  if (std::optional<BlockField> f = Require(*top, "operators")) {
    if (!f->value->IsSequence()) {
      ValueError(*f, fmt::format("expected a list of operators, got {}", Describe(*f->value)));
    } else if (f->value->size() == 0) {
      ValueError(*f, "must list at least one operator");
    } else {
      job.operators.resize(f->value->size());
      infos.resize(f->value->size());
      for (size_t i = 0; i < f->value->size(); ++i) {
        ParseOperator(f->value->items[i], IndexPath("operators", i), job.operators[i], infos[i]);
      }
      ValidateGraph(job, infos);
      if (std::optional<BlockField> faults = top->Get("faults")) {
        job.faults = ParseFaults(*faults, job);
      }
    }
  }
  if (std::optional<BlockField> f = top->Get("report")) {
    std::optional<BlockMap> report_map;
    job.report = ParseReport(*f, report_map);
    if (report_map) {
      ValidateReport(job, *report_map);
    }
  }
  diags_.ThrowIfAny();
  return job;
}

}  // namespace

RestartStrategySpec EffectiveRestartStrategy(const JobSpec& job) {
  if (job.restart_strategy) {
    return *job.restart_strategy;
  }
  RestartStrategySpec spec;
  spec.type = job.checkpointing ? "exponential-delay" : "none";
  return spec;
}

JobSpec LoadJobSpecString(const std::string& yaml, const std::string& file_name,
                          const BlockRegistry& blocks) {
  return Loader(file_name, blocks).Load(yaml);
}

std::string ReadJobFile(const std::string& path) {
  // A regular file only, opened without blocking: a FIFO as the job file used to block for ever.
  std::string error;
  const int fd = OpenRegularFile(path, &error);
  if (fd < 0) {
    throw ConfigError(
        {Diagnostic{path, 0, 0, "", fmt::format("cannot read the job file: {}", error)}});
  }
  // Read in chunks up to one byte past the limit.
  std::string text;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      ::close(fd);
      throw ConfigError({Diagnostic{path, 0, 0, "", "cannot read the job file: read error"}});
    }
    if (n == 0) {
      break;
    }
    text.append(buffer, static_cast<size_t>(n));
    if (static_cast<int64_t>(text.size()) > kMaxJobFileBytes) {
      ::close(fd);
      throw ConfigError(
          {Diagnostic{path, 0, 0, "",
                      fmt::format("cannot read the job file: it is larger than {} MiB",
                                  kMaxJobFileBytes >> 20)}});
    }
  }
  ::close(fd);
  return text;
}

JobSpec LoadJobSpecFile(const std::string& path, const BlockRegistry& blocks) {
  return Loader(path, blocks).Load(ReadJobFile(path));
}

std::optional<int64_t> PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);     // NOLINT(google-runtime-int): sysconf's type
  const long page_size = sysconf(_SC_PAGE_SIZE);  // NOLINT(google-runtime-int)
  if (pages <= 0 || page_size <= 0) {
    return std::nullopt;
  }
  return static_cast<int64_t>(pages) * static_cast<int64_t>(page_size);
}

std::string MemoryBudgetProblem(int64_t bytes) {
  const std::optional<int64_t> physical = PhysicalMemoryBytes();
  if (!physical || bytes <= *physical) {
    return {};
  }
  return fmt::format(
      "must not exceed the machine's physical memory of {} MiB (a budget above it bounds "
      "nothing)",
      *physical >> 20);
}

}  // namespace tidemark
