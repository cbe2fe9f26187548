#pragma once

namespace tidemark {

class BlockRegistry;

/// Registers the reader of the `watermarks:` block (its keys per `strategy:`, Flink's
/// WatermarkStrategy; docs/job-reference.md) with the job loader's block registry
/// (config/block_registry.h). Explicit; no static initialiser.
void RegisterWatermarkStrategyBlock(BlockRegistry& registry);

}  // namespace tidemark
