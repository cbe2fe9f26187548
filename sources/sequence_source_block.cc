#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "config/block_registry.h"
#include "sources/source_blocks.h"

// The `source:` blocks of types sequence and generator (sources/sequence_source.h,
// sources/generator_source.h): their keys and how they are read. One parser for both, as the
// loader read them before the registry: a block whose type is missing or unknown is read as a
// sequence (the first registered type) so its other errors are still found.

namespace tidemark {
namespace {

constexpr auto kSequenceSourceKeys =
    std::to_array<std::string_view>({"type", "interleave", "pacing", "timestamp-field", "splits"});
constexpr auto kGeneratorSourceKeys =
    std::to_array<std::string_view>({"type", "interleave", "pacing", "timestamp-field", "count",
                                     "keys", "step", "rate", "watermark-every", "latency-every"});
constexpr auto kGeneratorOnlyKeys = std::to_array<std::string_view>(
    {"count", "keys", "step", "rate", "watermark-every", "latency-every"});
constexpr auto kSplitKeys =
    std::to_array<std::string_view>({"id", "start", "step", "count", "fields"});

// The keys of other source types a sequence or generator block reports with a hint naming the
// types that take them. The hints are pinned by tests (tests/unit/config): kafka's `format` and
// `schema` are hinted as the input sources' only, as before the registry.
constexpr auto kKafkaOnlyKeys = std::to_array<std::string_view>(
    {"bootstrap-servers", "topics", "topic-pattern", "group-id", "properties", "starting-offsets",
     "starting-offsets-reset", "starting-timestamp", "starting-specific-offsets", "bounded",
     "bounded-specific-offsets", "partition-discovery-interval", "key-field", "mock-cluster"});
constexpr auto kInputSourceOnlyKeys = std::to_array<std::string_view>(
    {"path", "format", "schema", "csv-header", "csv-delimiter", "max-line-bytes", "split-bytes",
     "start", "disorder", "max-out-of-orderness", "skew", "idle-periods", "seed", "until"});

SequenceSplitSpec ParseSplit(BlockReader& r, const ParamNode& node, const std::string& path) {
  SequenceSplitSpec split;
  split.location = node.location;
  std::optional<BlockMap> map = r.OpenMap(node, node.location, path, kSplitKeys);
  if (!map) {
    return split;
  }
  if (std::optional<BlockField> f = r.Require(*map, "id")) {
    split.id = r.ReadString(*f).value_or("");
  }
  if (std::optional<BlockField> f = r.Require(*map, "start")) {
    split.first_timestamp_ms = r.ReadDuration(*f, Sign::kAny).value_or(0);
  }
  if (std::optional<BlockField> f = r.Require(*map, "step")) {
    split.step_ms = r.ReadDuration(*f, Sign::kNonNegative).value_or(0);
  }
  if (std::optional<BlockField> f = r.Require(*map, "count")) {
    split.count = r.ReadInt(*f, 0).value_or(0);
    // The generator computes start + k * step; past int64 it would wrap to negative event times.
    int64_t span = 0;
    int64_t last = 0;
    if (split.count > 0 && (__builtin_mul_overflow(split.step_ms, split.count - 1, &span) ||
                            __builtin_add_overflow(split.first_timestamp_ms, span, &last))) {
      r.ValueError(*f, fmt::format("the last record's event time, start + step × (count − 1), is "
                                   "past the largest timestamp ({} ms)",
                                   std::numeric_limits<int64_t>::max()));
    }
  }
  if (std::optional<BlockField> f = map->Get("fields")) {
    // Any field name is allowed, so check names against nothing but duplicates.
    if (!f->value->IsMap()) {
      r.ValueError(*f, fmt::format("expected a mapping of field names to values, got {}",
                                   Describe(*f->value)));
    } else {
      std::set<std::string> names;
      const ParamNode& fields = *f->value;
      for (size_t k = 0; k < fields.keys.size(); ++k) {
        const std::string& name = fields.keys[k];
        const SourceLocation& key_location = fields.key_locations[k];
        const BlockField entry{name, key_location, &fields.items[k], JoinPath(f->path, name)};
        if (!fields.KeyIsPlain(k) || name.empty()) {
          r.Error(key_location, f->path, "expected a field name");
          continue;
        }
        if (!names.insert(name).second) {
          r.Error(key_location, entry.path, fmt::format("duplicate field \"{}\"", name));
          continue;
        }
        if (std::optional<ConfigValue> value = r.ReadConstant(entry)) {
          split.fields.emplace_back(name, std::move(*value));
        }
      }
    }
  }
  return split;
}

void ParseSequenceOrGenerator(const BlockRegistry& registry, BlockReader& r, const BlockMap& map,
                              SourceSpec& source) {
  // The input source types whose keys include `key`, for an error's hint: "file", "file or
  // replay".
  auto input_source_types_taking = [&](std::string_view key) {
    std::vector<std::string_view> names;
    for (std::string_view type : {"file", "datagen", "replay"}) {
      const SourceBlockType* t = registry.FindSource(type);
      if (t != nullptr && std::find(t->keys.begin(), t->keys.end(), key) != t->keys.end()) {
        names.push_back(type);
      }
    }
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
      out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
    }
    return out;
  };
  for (std::string_view key : kKafkaOnlyKeys) {
    r.Forbid(map, std::string(key),
             fmt::format("does not apply to a source of type {} (only to kafka)", source.type));
  }
  // Generated records are never rejected: the errors policy belongs to the sources that read.
  r.Forbid(map, "errors",
           fmt::format("does not apply to a source of type {} (only to file, replay or kafka)",
                       source.type));
  for (std::string_view key : kInputSourceOnlyKeys) {
    r.Forbid(map, std::string(key),
             fmt::format("does not apply to a source of type {} (only to {})", source.type,
                         input_source_types_taking(key)));
  }
  if (source.type == "generator") {
    r.Forbid(map, "splits", "applies only to a source of type sequence, not generator");
    if (std::optional<BlockField> f = r.Require(map, "count")) {
      source.count = r.ReadInt(*f, 0).value_or(0);
    }
    r.Optional(map, "keys", source.keys, [&](const BlockField& f) { return r.ReadInt(f, 1); });
    r.Optional(map, "step", source.step_ms,
               [&](const BlockField& f) { return r.ReadDuration(f, Sign::kNonNegative); });
    r.Optional(map, "rate", source.rate, [&](const BlockField& f) { return r.ReadInt(f, 0); });
    r.Optional(map, "watermark-every", source.watermark_every,
               [&](const BlockField& f) { return r.ReadInt(f, 0); });
    r.Optional(map, "latency-every", source.latency_every,
               [&](const BlockField& f) { return r.ReadInt(f, 0); });
    return;
  }
  if (source.type == "sequence") {
    for (std::string_view key : kGeneratorOnlyKeys) {
      r.Forbid(map, std::string(key), "does not apply to a source of type sequence");
    }
  }
  std::optional<BlockField> splits = r.Require(map, "splits");
  if (!splits) {
    return;
  }
  if (!splits->value->IsSequence()) {
    r.ValueError(*splits,
                 fmt::format("expected a list of splits, got {}", Describe(*splits->value)));
    return;
  }
  if (splits->value->size() == 0) {
    r.ValueError(*splits, "must list at least one split");
    return;
  }
  std::map<std::string, size_t> ids;
  for (size_t i = 0; i < splits->value->size(); ++i) {
    const std::string path = IndexPath(splits->path, i);
    SequenceSplitSpec split = ParseSplit(r, splits->value->items[i], path);
    if (!split.id.empty()) {
      auto [it, inserted] = ids.emplace(split.id, i);
      if (!inserted) {
        r.Error(split.location, path + ".id",
                fmt::format("duplicate split id \"{}\" (also {}[{}])", split.id, splits->path,
                            it->second));
      }
    }
    for (const auto& [name, value] : split.fields) {
      if (name == source.timestamp_field_name) {
        r.Error(split.location, fmt::format("{}.fields.{}", path, name),
                fmt::format("clashes with the generated event-time field \"{}\" (source "
                            "timestamp-field)",
                            name));
      }
    }
    source.splits.push_back(std::move(split));
  }
  return;
}

}  // namespace

void RegisterSequenceSourceBlocks(BlockRegistry& registry) {
  registry.RegisterSource("sequence", {kSequenceSourceKeys.begin(), kSequenceSourceKeys.end()},
                          ParseSequenceOrGenerator);
  registry.RegisterSource("generator", {kGeneratorSourceKeys.begin(), kGeneratorSourceKeys.end()},
                          ParseSequenceOrGenerator);
}

}  // namespace tidemark
