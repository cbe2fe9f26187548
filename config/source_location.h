#pragma once

#include <string>

namespace tidemark {

/// Where a YAML node was written, kept in the JobSpec structs so that later stages (the job
/// compiler) can report problems at the right place with `FormatDiagnostic` (config/diagnostic.h).
/// `line` and `column` are 1-based; 0 means "unknown" (e.g. a default that was never written).
/// A plain value type; copy freely.
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  bool operator==(const SourceLocation&) const = default;
};

}  // namespace tidemark
