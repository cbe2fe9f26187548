#include "operators/sink_block.h"

#include <fmt/format.h>

#include "config/block_registry.h"
#include "operators/file_sink/file_sink_block.h"
#include "operators/kafka_sink/kafka_sink_block.h"

// The `sink:` block of a `type: sink` operator: the types, the keys every sink takes (`type`,
// `format`), and the keys of file and kafka sinks, read by their folders' parsers.

namespace tidemark {
namespace {

// Every sink key, in the order an unknown-key error lists them: the file sink's, then the kafka
// sink's own.
constexpr auto kSinkKeys = std::to_array<std::string_view>(
    {"type", "path", "create-dirs", "format", "delivery-guarantee", "write-mode", "part-prefix",
     "part-suffix", "rolling-policy",
     // type: kafka
     "bootstrap-servers", "topic", "properties", "key-field", "partition-field",
     "transactional-id-prefix", "commit-log", "timeout"});
constexpr auto kSinkTypes =
    std::to_array<std::string_view>({"print", "file", "collect", "checksum", "kafka"});
constexpr auto kSinkFormats = std::to_array<std::string_view>({"json", "fire"});
constexpr auto kDeliveryGuarantees = std::to_array<std::string_view>({"none", "exactly-once"});
// A plain file sink's fresh start over an existing file (Flink's FileSystem.WriteMode names).
constexpr auto kWriteModes = std::to_array<std::string_view>({"overwrite", "no-overwrite"});

SinkSpec ParseSinkBlock(BlockReader& r, const BlockField& field) {
  SinkSpec sink;
  sink.location = r.ValueLoc(field);
  std::optional<BlockMap> map = r.OpenMap(field, kSinkKeys);
  if (!map) {
    return sink;
  }
  if (std::optional<BlockField> f = r.Require(*map, "type")) {
    sink.type = r.ReadEnum(*f, kSinkTypes).value_or("");
  }
  if (sink.type == "file") {
    if (std::optional<BlockField> f = r.Require(*map, "path")) {
      sink.path = r.ReadString(*f).value_or("");
    }
    r.Optional(*map, "create-dirs", sink.create_dirs,
               [&](const BlockField& f) { return r.ReadBool(f); });
    r.Optional(*map, "delivery-guarantee", sink.delivery_guarantee,
               [&](const BlockField& f) { return r.ReadEnum(f, kDeliveryGuarantees); });
    if (sink.delivery_guarantee == "exactly-once") {
      r.Forbid(*map, "write-mode",
               "applies only to a file sink with delivery-guarantee: none (an exactly-once sink "
               "never overwrites: it writes new part files)");
      ReadExactlyOnceFileSinkKeys(r, *map, sink);
    } else {
      r.Optional(*map, "write-mode", sink.write_mode,
                 [&](const BlockField& f) { return r.ReadEnum(f, kWriteModes); });
      for (std::string_view key : kExactlyOnceSinkKeys) {
        r.Forbid(*map, std::string(key),
                 "applies only to a file sink with delivery-guarantee: exactly-once");
      }
    }
  } else if (sink.type == "kafka") {
    ReadKafkaSinkKeys(r, *map, sink);
  } else if (!sink.type.empty()) {
    r.Forbid(*map, "path", "applies only to a sink of type file, not " + sink.type);
    r.Forbid(*map, "create-dirs", "applies only to a sink of type file, not " + sink.type);
    r.Forbid(*map, "write-mode", "applies only to a sink of type file, not " + sink.type);
    r.Forbid(*map, "delivery-guarantee",
             "applies only to a sink of type file or kafka, not " + sink.type);
    for (std::string_view key : kExactlyOnceSinkKeys) {
      r.Forbid(*map, std::string(key), "applies only to a sink of type file, not " + sink.type);
    }
  }
  if (sink.type != "kafka") {
    for (std::string_view key : kKafkaSinkKeys) {
      r.Forbid(*map, std::string(key), "applies only to a sink of type kafka");
    }
  }
  r.Optional(*map, "format", sink.format,
             [&](const BlockField& f) { return r.ReadEnum(f, kSinkFormats); });
  if (sink.type == "kafka" && sink.format != "json") {
    if (std::optional<BlockField> f = map->Get("format")) {
      r.ValueError(*f, "a kafka sink writes each record's value as JSON; format must be json");
    }
  }
  return sink;
}

}  // namespace

void RegisterSinkBlock(BlockRegistry& registry) {
  registry.SetSinkBlock(ParseSinkBlock);
}

}  // namespace tidemark
