#include "sources/kafka/kafka_source_block.h"

#include <algorithm>
#include <regex>

#include <fmt/format.h>

#include "config/block_registry.h"

// The `source:` block of type kafka (sources/kafka/kafka_source.h, Flink's KafkaSource options
// under their YAML names): its keys and how they are read.

namespace tidemark {
namespace {

constexpr auto kKafkaSourceKeys = std::to_array<std::string_view>(
    {"type", "bootstrap-servers", "topics", "topic-pattern", "group-id", "properties",
     "starting-offsets", "starting-offsets-reset", "starting-timestamp",
     "starting-specific-offsets", "bounded", "bounded-specific-offsets",
     "partition-discovery-interval", "format", "schema", "key-field", "pacing", "mock-cluster",
     "errors"});
constexpr auto kKafkaStartingOffsets =
    std::to_array<std::string_view>({"earliest", "latest", "committed", "timestamp", "specific"});
constexpr auto kKafkaOffsetResets = std::to_array<std::string_view>({"earliest", "latest", "none"});
constexpr auto kKafkaBounded = std::to_array<std::string_view>({"latest", "specific"});
constexpr auto kKafkaFormats = std::to_array<std::string_view>({"json", "raw"});
constexpr auto kKafkaMockKeys =
    std::to_array<std::string_view>({"partitions", "load", "partition-field", "timestamp-field"});

/// `{topic-partition: offset, ...}` of starting- / bounded-specific-offsets.
std::map<std::string, int64_t> ParseSplitOffsets(BlockReader& r, const BlockField& field) {
  std::map<std::string, int64_t> out;
  if (!field.value->IsMap() || field.value->size() == 0) {
    r.ValueError(field, fmt::format("expected a mapping of topic-partition to offset like "
                                    "{{orders-0: 42}}, got {}",
                                    Describe(*field.value)));
    return out;
  }
  const ParamNode& offsets = *field.value;
  for (size_t k = 0; k < offsets.keys.size(); ++k) {
    const std::string& id = offsets.keys[k];
    const BlockField entry{id, offsets.key_locations[k], &offsets.items[k],
                           JoinPath(field.path, id)};
    const size_t dash = id.rfind('-');
    if (dash == std::string::npos || dash == 0 || dash + 1 == id.size() ||
        id.find_first_not_of("0123456789", dash + 1) != std::string::npos) {
      r.Error(entry.key_location, entry.path,
              fmt::format("expected a split id topic-partition like orders-0, got \"{}\"", id));
      continue;
    }
    if (std::optional<int64_t> offset = r.ReadInt(entry, 0)) {
      out[id] = *offset;
    }
  }
  return out;
}

void ParseKafkaSource(const BlockRegistry&, BlockReader& r, const BlockMap& map,
                      SourceSpec& source) {
  for (const BlockField& f : map.fields) {
    if (!Contains(KeyList(kKafkaSourceKeys), f.name)) {
      r.Error(f.key_location, f.path,
              fmt::format("does not apply to a source of type kafka; allowed keys: {}",
                          JoinWords(kKafkaSourceKeys)));
    }
  }
  KafkaSourceSpec& k = source.kafka;
  const std::optional<BlockField> servers = map.Get("bootstrap-servers");
  const std::optional<BlockField> mock = map.Get("mock-cluster");
  if (servers && mock) {
    r.Error(mock->key_location, mock->path,
            "give either bootstrap-servers or mock-cluster, not both");
  } else if (!servers && !mock) {
    r.Error(map.node->location, JoinPath(map.path, "bootstrap-servers"),
            "missing required key (or mock-cluster, for an in-process mock cluster)");
  }
  if (servers) {
    k.bootstrap_servers = r.ReadString(*servers).value_or("");
  }
  const std::optional<BlockField> topics = map.Get("topics");
  const std::optional<BlockField> pattern = map.Get("topic-pattern");
  if (topics && pattern) {
    r.Error(pattern->key_location, pattern->path, "give either topics or topic-pattern, not both");
  } else if (!topics && !pattern) {
    r.Error(map.node->location, JoinPath(map.path, "topics"),
            "missing required key (or topic-pattern)");
  }
  if (topics) {
    if (topics->value->IsScalar()) {
      if (std::optional<std::string> t = r.ReadString(*topics)) {
        k.topics.push_back(*t);
      }
    } else if (!topics->value->IsSequence() || topics->value->size() == 0) {
      r.ValueError(*topics,
                   fmt::format("expected a list of topic names like [orders], got {}",
                               topics->value->IsSequence() ? "[]" : Describe(*topics->value)));
    } else {
      for (size_t i = 0; i < topics->value->size(); ++i) {
        const BlockField item = r.Item(topics->value->items[i], IndexPath(topics->path, i));
        if (std::optional<std::string> t = r.ReadString(item)) {
          if (std::find(k.topics.begin(), k.topics.end(), *t) != k.topics.end()) {
            r.ValueError(item, fmt::format("duplicate topic \"{}\"", *t));
          } else {
            k.topics.push_back(*t);
          }
        }
      }
    }
  }
  if (pattern) {
    if (std::optional<std::string> p = r.ReadString(*pattern)) {
      try {
        (void)std::regex(*p, std::regex::ECMAScript);
        k.topic_pattern = *p;
      } catch (const std::regex_error& e) {
        r.ValueError(*pattern, fmt::format("not a regular expression: {}", e.what()));
      }
    }
  }
  r.Optional(map, "group-id", k.group_id, [&](const BlockField& f) { return r.ReadString(f); });
  if (std::optional<BlockField> f = map.Get("properties")) {
    const std::string use = "set it with the source key {} instead";
    r.ReadKafkaProperties(
        *f,
        {{"bootstrap.servers", fmt::format(fmt::runtime(use), "bootstrap-servers")},
         {"group.id", fmt::format(fmt::runtime(use), "group-id")},
         {"enable.auto.commit",
          "is managed by the source: offsets are committed when a checkpoint completes"}},
        k.properties);
  }
  r.Optional(map, "starting-offsets", k.starting_offsets,
             [&](const BlockField& f) { return r.ReadEnum(f, kKafkaStartingOffsets); });
  if (k.starting_offsets == "committed" && k.group_id.empty()) {
    // Flink's KafkaSourceBuilder refuses committed offsets without group.id.
    r.ValueError(*map.Get("starting-offsets"),
                 "committed offsets need group-id (the consumer group whose committed offsets the "
                 "source starts from)");
  }
  const bool resettable = k.starting_offsets == "committed" || k.starting_offsets == "specific";
  if (std::optional<BlockField> f = map.Get("starting-offsets-reset")) {
    if (!resettable) {
      r.Error(f->key_location, f->path, "applies only to starting-offsets: committed or specific");
    } else {
      k.offset_reset = r.ReadEnum(*f, kKafkaOffsetResets).value_or(k.offset_reset);
    }
  }
  if (std::optional<BlockField> f = map.Get("starting-timestamp")) {
    if (k.starting_offsets != "timestamp") {
      r.Error(f->key_location, f->path, "applies only to starting-offsets: timestamp");
    } else {
      k.starting_timestamp_ms = r.ReadInt(*f, 0).value_or(0);
    }
  } else if (k.starting_offsets == "timestamp") {
    r.Error(map.node->location, JoinPath(map.path, "starting-timestamp"),
            "missing required key (starting-offsets: timestamp needs it, in ms since the epoch)");
  }
  if (std::optional<BlockField> f = map.Get("starting-specific-offsets")) {
    if (k.starting_offsets != "specific") {
      r.Error(f->key_location, f->path, "applies only to starting-offsets: specific");
    } else {
      k.starting_specific = ParseSplitOffsets(r, *f);
    }
  } else if (k.starting_offsets == "specific") {
    r.Error(map.node->location, JoinPath(map.path, "starting-specific-offsets"),
            "missing required key (starting-offsets: specific needs it)");
  }
  r.Optional(map, "bounded", k.bounded,
             [&](const BlockField& f) { return r.ReadEnum(f, kKafkaBounded); });
  if (std::optional<BlockField> f = map.Get("bounded-specific-offsets")) {
    if (k.bounded != "specific") {
      r.Error(f->key_location, f->path, "applies only to bounded: specific");
    } else {
      k.bounded_specific = ParseSplitOffsets(r, *f);
    }
  } else if (k.bounded == "specific") {
    r.Error(map.node->location, JoinPath(map.path, "bounded-specific-offsets"),
            "missing required key (bounded: specific needs it)");
  }
  if (std::optional<BlockField> f = map.Get("partition-discovery-interval")) {
    if (!k.bounded.empty()) {
      r.Error(f->key_location, f->path,
              "does not apply to a bounded source (its partitions are discovered once, at start)");
    } else {
      k.discovery_interval_ms =
          r.ReadDuration(*f, Sign::kNonNegative).value_or(k.discovery_interval_ms);
    }
  }
  r.Optional(map, "format", k.format,
             [&](const BlockField& f) { return r.ReadEnum(f, kKafkaFormats); });
  if (std::optional<BlockField> f = map.Get("schema")) {
    if (k.format != "json") {
      r.Error(f->key_location, f->path,
              "applies only to format json (format raw has one string field "
              "`value`)");
    } else {
      k.schema = r.ReadSchema(*f);
    }
  } else if (k.format == "json") {
    r.Error(map.node->location, JoinPath(map.path, "schema"),
            "missing required key (format json needs the value's fields)");
  }
  if (std::optional<BlockField> f = map.Get("key-field")) {
    if (std::optional<std::string> name = r.ReadString(*f)) {
      const bool clash =
          k.format == "raw"
              ? *name == "value"
              : std::any_of(k.schema.begin(), k.schema.end(),
                            [&](const SchemaFieldSpec& s) { return s.name == *name; });
      if (clash) {
        r.ValueError(*f, fmt::format("field \"{}\" is already a field of the value", *name));
      } else {
        k.key_field = *name;
      }
    }
  }
  if (mock) {
    if (std::optional<BlockMap> m = r.OpenMap(*mock, kKafkaMockKeys)) {
      KafkaSourceSpec::Mock spec;
      spec.location = r.ValueLoc(*mock);
      r.Optional(*m, "partitions", spec.partitions,
                 [&](const BlockField& f) { return r.ReadInt(f, 1, 10000); });
      if (std::optional<BlockField> f = r.Require(*m, "load")) {
        spec.load = r.ReadString(*f).value_or("");
      }
      r.Optional(*m, "partition-field", spec.partition_field,
                 [&](const BlockField& f) { return r.ReadString(f); });
      r.Optional(*m, "timestamp-field", spec.timestamp_field,
                 [&](const BlockField& f) { return r.ReadString(f); });
      if (k.topics.size() != 1) {
        r.Error(mock->key_location, mock->path,
                "needs exactly one topic in topics (the one it creates)");
      }
      k.mock = std::move(spec);
    }
  }
}

}  // namespace

void RegisterKafkaSourceBlock(BlockRegistry& registry) {
  registry.RegisterSource("kafka", {kKafkaSourceKeys.begin(), kKafkaSourceKeys.end()},
                          ParseKafkaSource);
}

}  // namespace tidemark
