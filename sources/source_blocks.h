#pragma once

namespace tidemark {

class BlockRegistry;

/// Registers the `source:` blocks of types sequence and generator (one parser: a block whose type
/// is missing or unknown is read as a sequence). sources/sequence_source_block.cc.
void RegisterSequenceSourceBlocks(BlockRegistry& registry);
/// Registers the `source:` blocks of types file, datagen and replay.
/// sources/input_source_block.cc.
void RegisterInputSourceBlocks(BlockRegistry& registry);
/// Every built-in source type, in the order diagnostics list them: sequence, generator, file,
/// datagen, replay, kafka (sources/kafka/kafka_source_block.h). Explicit; no static initialiser.
void RegisterSourceBlocks(BlockRegistry& registry);

}  // namespace tidemark
