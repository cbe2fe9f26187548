#pragma once

#include <array>
#include <string_view>

#include "config/block_reader.h"

namespace tidemark {

/// The keys only an exactly-once file sink takes (Flink's OutputFileConfig and rolling policy).
inline constexpr auto kExactlyOnceSinkKeys =
    std::to_array<std::string_view>({"part-prefix", "part-suffix", "rolling-policy"});

/// Reads an exactly-once file sink's `part-prefix`, `part-suffix` and `rolling-policy` from
/// `map` (a `sink:` block) into `sink`, reporting problems through `r`.
void ReadExactlyOnceFileSinkKeys(BlockReader& r, const BlockMap& map, SinkSpec& sink);

}  // namespace tidemark
