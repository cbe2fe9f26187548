#pragma once

namespace tidemark {

class BlockRegistry;

/// Registers the `source:` block of `type: kafka` (its keys and parser, Flink's KafkaSource
/// options; docs/job-reference.md) with the job loader's block registry (config/block_registry.h).
void RegisterKafkaSourceBlock(BlockRegistry& registry);

}  // namespace tidemark
