#pragma once

namespace tidemark {

class BlockRegistry;

/// Registers the reader of a sink operator's `sink:` block (types print, file, collect,
/// checksum, kafka; the file and kafka keys are read in operators/file_sink/ and
/// operators/kafka_sink/) with the job loader's block registry (config/block_registry.h).
/// Explicit; no static initialiser.
void RegisterSinkBlock(BlockRegistry& registry);

}  // namespace tidemark
