#pragma once

namespace tidemark {

class BlockRegistry;

/// Registers the reader of a window operator's `window:` block (its keys per `assigner:`, the
/// aggregates; docs/job-reference.md) with the job loader's block registry
/// (config/block_registry.h). Explicit; no static initialiser.
void RegisterWindowBlock(BlockRegistry& registry);

}  // namespace tidemark
