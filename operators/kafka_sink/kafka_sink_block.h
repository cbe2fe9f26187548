#pragma once

#include <array>
#include <string_view>

#include "config/block_reader.h"

namespace tidemark {

/// The keys only a kafka sink takes (Flink's KafkaSink options under their YAML names).
inline constexpr auto kKafkaSinkKeys = std::to_array<std::string_view>(
    {"bootstrap-servers", "topic", "properties", "key-field", "partition-field",
     "transactional-id-prefix", "commit-log", "timeout"});

/// Reads a `type: kafka` sink's keys from `map` (its `sink:` block) into `sink`, reporting
/// problems (and keys of file sinks) through `r`.
void ReadKafkaSinkKeys(BlockReader& r, const BlockMap& map, SinkSpec& sink);

}  // namespace tidemark
