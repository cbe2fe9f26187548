#include "operators/kafka_sink/kafka_sink_block.h"

#include <fmt/format.h>

#include "operators/file_sink/file_sink_block.h"

namespace tidemark {
namespace {

// Flink's DeliveryGuarantee names.
constexpr auto kKafkaDeliveryGuarantees =
    std::to_array<std::string_view>({"none", "at-least-once", "exactly-once"});

}  // namespace

// type: kafka — Flink's KafkaSink options under their YAML names.
void ReadKafkaSinkKeys(BlockReader& r, const BlockMap& map, SinkSpec& sink) {
  for (const char* key : {"path", "create-dirs"}) {
    r.Forbid(map, key, "applies only to a sink of type file, not kafka");
  }
  for (std::string_view key : kExactlyOnceSinkKeys) {
    r.Forbid(map, std::string(key), "applies only to a sink of type file, not kafka");
  }
  if (std::optional<BlockField> f = r.Require(map, "bootstrap-servers")) {
    sink.bootstrap_servers = r.ReadString(*f).value_or("");
  }
  if (std::optional<BlockField> f = r.Require(map, "topic")) {
    sink.topic = r.ReadString(*f).value_or("");
  }
  r.Optional(map, "delivery-guarantee", sink.delivery_guarantee,
             [&](const BlockField& f) { return r.ReadEnum(f, kKafkaDeliveryGuarantees); });
  if (std::optional<BlockField> f = map.Get("key-field")) {
    sink.key_field = r.ReadString(*f).value_or("");
    sink.key_field_location = r.ValueLoc(*f);
  }
  if (std::optional<BlockField> f = map.Get("partition-field")) {
    sink.partition_field = r.ReadString(*f).value_or("");
    sink.partition_field_location = r.ValueLoc(*f);
  }
  r.Optional(map, "timeout", sink.kafka_timeout_ms,
             [&](const BlockField& f) { return r.ReadDuration(f, Sign::kPositive); });
  if (std::optional<BlockField> block = map.Get("properties")) {
    r.ReadKafkaProperties(
        *block,
        {{"bootstrap.servers", "\"bootstrap.servers\" is set by the sink (use bootstrap-servers)"},
         {"transactional.id",
          "\"transactional.id\" is set by the sink (use transactional-id-prefix)"}},
        sink.kafka_properties, &sink.kafka_property_locations);
  }
  const bool exactly_once = sink.delivery_guarantee == "exactly-once";
  if (exactly_once) {
    if (std::optional<BlockField> f = r.Require(map, "transactional-id-prefix")) {
      sink.transactional_id_prefix = r.ReadString(*f).value_or("");
    }
    if (std::optional<BlockField> f = r.Require(map, "commit-log")) {
      sink.commit_log = r.ReadString(*f).value_or("");
    }
  } else {
    r.Forbid(map, "transactional-id-prefix", "applies only with delivery-guarantee: exactly-once");
    r.Forbid(map, "commit-log", "applies only with delivery-guarantee: exactly-once");
  }
}

}  // namespace tidemark
