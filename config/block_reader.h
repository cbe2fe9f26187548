#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "config/diagnostic.h"
#include "config/job_spec.h"

namespace tidemark {

/// The one way a job's YAML is read (docs/development.md, "Blocks and the block registry"): the
/// loader turns the YAML text into a `ParamNode` tree (config/job_spec.h: every node keeps its
/// file:line:column) and everything after it — the job envelope in config/job_loader.cc and every
/// `type:`-keyed block's factory in sources/ and operators/ — reads that tree through a
/// `BlockReader`. No yaml-cpp type appears here, so a block's parser lives beside its block
/// without including yaml-cpp.
///
/// Reading collects diagnostics instead of throwing: each `Read*` reports a bad value at its
/// position (`file:line:column: error: <path>: <message>`) and returns nullopt, so one load
/// reports every problem at once. The message texts are pinned by the tests
/// (tests/unit/config): keep them.

/// A list of allowed words (keys or enum values); views of constants or of a live vector.
using KeyList = std::span<const std::string_view>;

/// One key/value pair of a mapping (or one item of a list, whose "key" is the item itself), with
/// the YAML path of the value (`operators[1].source.splits[0].count`). Borrows the tree.
struct BlockField {
  std::string name;                  ///< the key as written; "" for a list item or a non-plain key
  SourceLocation key_location;       ///< where the key (a list item: the item) was written
  const ParamNode* value = nullptr;  ///< never null once made by the reader
  std::string path;
};

/// A mapping whose keys were checked against an allowed list (`BlockReader::OpenMap`).
struct BlockMap {
  const ParamNode* node = nullptr;
  std::string path;
  std::vector<BlockField> fields;  ///< in YAML order, without unknown or duplicate keys

  std::optional<BlockField> Get(const std::string& key) const {
    for (const BlockField& field : fields) {
      if (field.name == key) {
        return field;
      }
    }
    return std::nullopt;
  }
};

enum class Sign { kAny, kNonNegative, kPositive };

/// `"a, b, c"`: the items joined by `sep`.
std::string JoinWords(KeyList items, std::string_view sep = ", ");
std::string JoinWords(const std::vector<std::string>& items, std::string_view sep = ", ");
/// `parent.key` (`key` when `parent` is empty) and `parent[index]`.
std::string JoinPath(const std::string& parent, const std::string& key);
std::string IndexPath(const std::string& parent, size_t index);
bool Contains(KeyList list, std::string_view item);
/// The allowed word `got` is a near miss of (typo, snake_case for kebab-case), else "".
std::string NearestKey(const std::string& got, KeyList allowed);
/// " (did you mean "x"?)" for a near miss, else "".
std::string Suggestion(const std::string& got, KeyList allowed);
/// The error for a key `name` that is not among `allowed`: `unknown key "x"` with `context` (" for
/// a source of type file", or ""), a near miss and the allowed keys. A YAML merge key (`<<`, which
/// the YAML parser reads as a plain key named "<<") is told so instead.
std::string UnknownKeyMessage(const std::string& name, const std::string& context, KeyList allowed);
/// How a value is shown after "got": numbers and booleans as written, text quoted, "a list",
/// "a mapping", "nothing".
std::string Describe(const ParamNode& node);
std::string DescribeKind(ParamNode::Kind kind);
/// 5000 -> "5s": the largest unit that divides the amount exactly.
std::string FormatDurationMs(int64_t ms);
/// A whole decimal int64 / a number with digits (no "inf"/"nan"), or nullopt.
std::optional<int64_t> ParseInt64(std::string_view text);
std::optional<double> ParseDouble(std::string_view text);

/// Reads a `ParamNode` tree with the loader's diagnostics. Not thread-safe; one reader per load.
class BlockReader {
 public:
  BlockReader() = default;

  /// The value's position; an empty value (`key:`) has no useful position, so its key's.
  static SourceLocation ValueLoc(const BlockField& field) {
    return field.value->kind == ParamNode::Kind::kNull ? field.key_location : field.value->location;
  }
  /// A list item as a field (its own position stands for the key's).
  static BlockField Item(const ParamNode& item, std::string path) {
    return BlockField{"", item.location, &item, std::move(path)};
  }

  void Error(const SourceLocation& location, std::string path, std::string message) {
    diags_.Add(location, std::move(path), std::move(message));
  }
  void ValueError(const BlockField& field, std::string message) {
    Error(ValueLoc(field), field.path, std::move(message));
  }
  /// Keeps where each key of `map` was written (KeyLocations).
  void RecordKeys(const BlockMap& map, KeyLocations& out) const {
    for (const BlockField& field : map.fields) {
      out.values[field.name] = ValueLoc(field);
    }
  }

  /// Checks that `node` is a mapping whose keys are plain, in `allowed` and not repeated, and
  /// reports each that is not ("unknown key "x"<context> (did you mean "y"?); allowed keys: ...").
  /// `any_key`: accept every plain key (a mapping of user-chosen names, like map `set:`).
  std::optional<BlockMap> OpenMap(const ParamNode& node, const SourceLocation& location,
                                  const std::string& path, KeyList allowed,
                                  const std::string& context = "", bool any_key = false);
  std::optional<BlockMap> OpenMap(const BlockField& field, KeyList allowed,
                                  const std::string& context = "") {
    return OpenMap(*field.value, ValueLoc(field), field.path, allowed, context);
  }
  /// The field `key`, or nullopt and "missing required key" at the mapping.
  std::optional<BlockField> Require(const BlockMap& map, const std::string& key) {
    std::optional<BlockField> field = map.Get(key);
    if (!field) {
      Error(map.node->location, JoinPath(map.path, key), "missing required key");
    }
    return field;
  }
  /// Reports `key` as not applicable (`why`) at the key when it is present.
  void Forbid(const BlockMap& map, const std::string& key, const std::string& why) {
    if (std::optional<BlockField> field = map.Get(key)) {
      Error(field->key_location, field->path, why);
    }
  }

  std::optional<std::string> ReadString(const BlockField& field, bool allow_empty = false);
  std::optional<std::string> ReadEnum(const BlockField& field, KeyList allowed);
  std::optional<int64_t> ReadInt(const BlockField& field, int64_t min,
                                 int64_t max = std::numeric_limits<int64_t>::max());
  std::optional<bool> ReadBool(const BlockField& field);
  std::optional<int64_t> ReadDuration(const BlockField& field, Sign sign);
  /// Flink's `MemorySize` syntax (`ParseMemorySize`: "128mb", "64 kb", "1gb", "512"; 1024-based),
  /// above 0.
  std::optional<int64_t> ReadMemorySize(const BlockField& field);
  /// A scalar constant: int64, double, true/false, else (or quoted) a string.
  std::optional<ConfigValue> ReadConstant(const BlockField& field);
  std::optional<double> ReadNumber(const BlockField& field);
  /// An expression written as a YAML scalar; its location is its first character.
  std::optional<ExpressionSpec> ReadExpression(const BlockField& field);
  /// `schema: {name: type, ...}` of a file / replay / kafka source, in YAML order.
  std::vector<SchemaFieldSpec> ReadSchema(const BlockField& field);
  /// `properties:` of a Kafka source or sink: Kafka client property names to values (read as
  /// strings, passed through to librdkafka). A name in `reserved` (the connector sets it) is an
  /// error at its key with the mapped message. Fills `locations` (of each value) when non-null.
  void ReadKafkaProperties(const BlockField& block,
                           const std::map<std::string, std::string>& reserved,
                           std::map<std::string, std::string>& out,
                           std::map<std::string, SourceLocation>* locations = nullptr);

  /// Stores `read(field)` into `out` when `key` is present and the read succeeds.
  template <typename T, typename Reader>
  void Optional(const BlockMap& map, const std::string& key, T& out, Reader read) {
    if (std::optional<BlockField> field = map.Get(key)) {
      if (auto value = read(*field)) {
        out = *value;
      }
    }
  }

  const DiagnosticCollector& diagnostics() const { return diags_; }

 protected:
  DiagnosticCollector diags_;
};

}  // namespace tidemark
