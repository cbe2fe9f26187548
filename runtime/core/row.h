#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/core/timestamp.h"

namespace tidemark {

/// Column types a job schema may use. `kTimestamp` is an int64 of milliseconds.
enum class FieldType { kInt64, kDouble, kBool, kString, kTimestamp };

const char* ToString(FieldType t);
/// Parses "int64" | "double" | "bool" | "string" | "timestamp"; nullopt otherwise.
std::optional<FieldType> ParseFieldType(std::string_view s);

/// One cell of a row. `std::monostate` is SQL NULL (a missing value).
using Value = std::variant<std::monostate, int64_t, double, bool, std::string>;

/// Renders a value as JSON (strings quoted and escaped, NULL as `null`).
std::string ValueToJson(const Value& v);
/// Numeric view of a value: int64 and double as themselves, bool as 0/1; nullopt for strings/NULL.
std::optional<double> AsDouble(const Value& v);
std::optional<int64_t> AsInt64(const Value& v);

/// A record's payload: one Value per schema field, in schema order. Field names are resolved to
/// slot indices once, when the job is compiled; nothing looks up a name per record.
using Row = std::vector<Value>;

struct Field {
  std::string name;
  FieldType type = FieldType::kInt64;
  friend bool operator==(const Field&, const Field&) = default;
};

/// The fixed shape of the rows on one edge of the job graph.
class Schema {
 public:
  Schema() = default;
  explicit Schema(std::vector<Field> fields) : fields_(std::move(fields)) {}

  const std::vector<Field>& fields() const { return fields_; }
  size_t size() const { return fields_.size(); }
  const Field& field(size_t i) const { return fields_[i]; }
  /// Slot of `name`, or -1 when the schema has no such field.
  int IndexOf(std::string_view name) const;
  /// Appends a field and returns its slot.
  int Add(std::string name, FieldType type);
  /// `{"a": 1, "b": "x"}` for a row of this schema (JSON Lines sinks).
  std::string RowToJson(const Row& row) const;

  friend bool operator==(const Schema&, const Schema&) = default;

 private:
  std::vector<Field> fields_;
};

}  // namespace tidemark
