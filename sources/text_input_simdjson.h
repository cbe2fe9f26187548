#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "runtime/core/row.h"
#include "sources/text_input.h"

namespace tidemark {

/// The JSON Lines fast path of `LineDecoder` (sources/text_input.h): simdjson On-Demand, compiled
/// for AVX2 in its own translation unit (simdjson's On-Demand API is built for one CPU target)
/// and used only when the CPU has it. Internal to the sources library.
class JsonFastPath {
 public:
  virtual ~JsonFastPath() = default;
  /// Fills the schema's fields of `row` (whose layout starts with the schema's) from `line` and
  /// returns true only when the line is certainly one the nlohmann path (`JsonLineToRow`) accepts,
  /// with the same values; false means "decode it the slow way" (which gives the row or the
  /// documented reason). `in_place`: LineReader::kLinePadding readable bytes follow the line, the
  /// first of them whitespace, so it is parsed in place; otherwise it is copied into a padded
  /// buffer first.
  virtual bool Decode(std::string_view line, bool in_place, Row& row) = 0;
  /// The same for a line lent by a LineReader (in place), with what its buffer holds after it:
  /// the line is read from a document stream over the buffer's complete lines when the stream
  /// finds exactly the line's object there; otherwise (a line that is not one object, a
  /// stream that lost its way) as `Decode`. Same answers as `Decode` for every line.
  virtual bool DecodeAhead(std::string_view line, const LinesAhead& ahead, Row& row) = 0;
  /// Lines `DecodeAhead` read from a document stream so far (the rest were parsed one by one,
  /// or refused): for tests and profiles.
  virtual int64_t stream_lines() const = 0;
};

/// A fast path for `schema` (borrowed; must outlive it), or null when this CPU lacks AVX2, BMI1,
/// PCLMUL or LZCNT (every line then takes the slow path, with the same results).
std::unique_ptr<JsonFastPath> MakeJsonFastPath(const Schema& schema);

}  // namespace tidemark
