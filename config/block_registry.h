#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/block_reader.h"
#include "config/job_spec.h"

namespace tidemark {

class BlockRegistry;

/// Reads the type-specific keys of one `source:` block into `spec` (its `type`, `interleave`,
/// `pacing` and `timestamp-field` are already read), reporting problems through `reader`.
/// `block` holds every key some source type takes (keys no type takes were already reported);
/// `registry` is the one the job is loaded with (for hints naming the types that take a key).
using SourceBlockParser = std::function<void(const BlockRegistry& registry, BlockReader& reader,
                                             const BlockMap& block, SourceSpec& spec)>;

/// Reads a `watermarks:` block (`on_source`: of a `type: source` operator, where `alignment` is
/// allowed) into a spec, reporting problems through `reader`.
using WatermarksBlockParser = std::function<WatermarkStrategySpec(
    BlockReader& reader, const BlockField& block, bool on_source)>;
/// Reads a window operator's `window:` block into a spec, reporting problems through `reader`.
using WindowBlockParser = std::function<WindowSpec(BlockReader& reader, const BlockField& block)>;

/// Reads a sink operator's `sink:` block into a spec, reporting problems through `reader`.
using SinkBlockParser = std::function<SinkSpec(BlockReader& reader, const BlockField& block)>;

/// One source `type:`: the keys its block takes (`type` first, in the order an unknown-key error
/// lists them) and its parser.
struct SourceBlockType {
  std::string type;
  /// Views of constants with static storage duration (the factory's key arrays).
  std::vector<std::string_view> keys;
  SourceBlockParser parse;
};

/// The `type:`-keyed blocks of a job and who reads them (docs/development.md, "Blocks and the
/// block registry"). config/ reads the job envelope and hands each block to the factory
/// registered for its type; the factories live with their blocks (sources/, operators/) and are
/// registered by explicit `Register...Blocks(BlockRegistry&)` calls (tools/engine's
/// `BuiltinBlockRegistry()`), never by static initialisers.
///
/// Registration order is meaningful: it is the order in which the types and the union of their
/// keys are listed in diagnostics ("allowed: sequence | generator | ..."), and the first
/// registered source type reads a block whose `type` is missing or unknown (so its other errors
/// are still found). Not thread-safe to mutate; read-only (and then thread-safe) once jobs load.
class BlockRegistry {
 public:
  /// Registers (or replaces) source `type`.
  void RegisterSource(std::string type, std::vector<std::string_view> keys,
                      SourceBlockParser parse);
  /// The source type named `type`, or nullptr.
  const SourceBlockType* FindSource(std::string_view type) const;
  /// The first registered source type, or nullptr when none is.
  const SourceBlockType* FallbackSource() const {
    return sources_.empty() ? nullptr : &sources_.front();
  }
  /// The source type names, in registration order (views into this registry).
  std::vector<std::string_view> SourceTypes() const;
  /// Every key some source type takes, each once, in registration order.
  const std::vector<std::string_view>& SourceKeys() const { return source_keys_; }

  /// The operator types the engine registered (its OperatorRegistry's built-ins: joins,
  /// `process`, `dedup`, ...), so the loader's "built-in types" lists and type-typo hints name
  /// every one, not only the types config/ reads itself. Empty until set (then only those).
  void SetOperatorTypes(std::vector<std::string> types) { operator_types_ = std::move(types); }
  const std::vector<std::string>& operator_types() const { return operator_types_; }

  /// The reader of `watermarks:` blocks (runtime/eventtime/watermark_strategy_block.h); empty
  /// until set.
  void SetWatermarksBlock(WatermarksBlockParser parse) { watermarks_ = std::move(parse); }
  const WatermarksBlockParser& watermarks() const { return watermarks_; }
  /// The reader of `window:` blocks (operators/window/window_block.h); empty until set.
  void SetWindowBlock(WindowBlockParser parse) { window_ = std::move(parse); }
  const WindowBlockParser& window() const { return window_; }
  /// The reader of `sink:` blocks (operators/sink_block.h); empty until set.
  void SetSinkBlock(SinkBlockParser parse) { sink_ = std::move(parse); }
  const SinkBlockParser& sink() const { return sink_; }

 private:
  void Reindex();

  std::vector<SourceBlockType> sources_;
  std::vector<std::string_view> source_keys_;  // views of the factories' constants
  std::vector<std::string> operator_types_;
  WatermarksBlockParser watermarks_;
  WindowBlockParser window_;
  SinkBlockParser sink_;
};

}  // namespace tidemark
