#pragma once

#include <string>
#include <vector>

#include "runtime/core/row.h"

namespace tidemark {

/// Appends rows as JSON objects (`{"a":1,"b":"x"}`) to a caller's buffer, byte for byte what
/// `Schema::RowToJson` writes, without building a JSON tree or allocating per field: keys are
/// rendered once, int64 and bool with `std::to_chars`, doubles with the shortest-digits routine
/// nlohmann's dump itself uses (`1.0`, `1e+20`; NaN and infinities as `null`), valid UTF-8 strings
/// escaped in place. Only a string with invalid UTF-8 (whose bytes become U+FFFD) takes the
/// `RowToJson` path for that one value, so the output never differs from it.
/// Immutable after construction; any thread. Cost per row: one pass over its fields.
class JsonRowFormatter {
 public:
  explicit JsonRowFormatter(const Schema& schema);

  /// Appends the row (no trailing newline). A row shorter than the schema stops at its end, as
  /// `RowToJson` does.
  void Append(const Row& row, std::string& out) const;

 private:
  Schema schema_;
  bool duplicate_names_ = false;   ///< then every row takes `RowToJson`
  std::vector<std::string> keys_;  ///< `{"name":` for the first field, `,"name":` for the others
};

}  // namespace tidemark
