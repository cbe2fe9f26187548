#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "config/source_location.h"

namespace tidemark {

/// `text` with every control character (below 0x20, and 0x7f) and every backslash escaped as
/// `\n`, `\r`, `\t`, `\\` or `\xNN`: a name from outside (a job file name, `?file=`) written
/// into a diagnostic, a log line or a SQL comment stays on that one line and cannot forge
/// another. Pure; any thread.
std::string EscapeControlCharacters(std::string_view text);

/// `text` shown on a terminal as it is, but for its control characters other than line feed and
/// tab, written as `\xNN`: a string from outside (a job's name, a failure cause quoting input)
/// printed by the CLI cannot move the cursor, clear the screen or rewrite a line. Unlike
/// EscapeControlCharacters, backslashes stay (a JSON line's `\u001b` stays one). Pure; any
/// thread.
std::string ShowControlCharacters(std::string_view text);

/// One problem found in a job description, e.g. a bad value in the YAML or an edge to an unknown
/// operator. Printed compiler-style by `ToString()`:
///
///     jobs/wc.yaml:14:7: error: operators[2].window.size: expected a duration like "5s", got 5
///
/// `line` and `column` are 1-based (yaml-cpp marks are 0-based; config/ adds 1); 0 = unknown, and
/// then only the file is printed. `path` is the dotted/indexed YAML path of the offending key
/// (`operators[1].source.splits[0].count`), empty for syntax errors. A plain value type.
struct Diagnostic {
  std::string file;
  int line = 0;
  int column = 0;
  std::string path;
  std::string message;

  /// The one-line, compiler-style rendering shown above (no trailing newline).
  std::string ToString() const;

  bool operator==(const Diagnostic&) const = default;
};

/// Renders a diagnostic for a `SourceLocation` kept in a JobSpec, for stages after config/ (the job
/// compiler) that find a problem in an already loaded job:
/// `FormatDiagnostic({"jobs/a.yaml", 3, 5}, "operators[0].type", "unknown operator type")` →
/// `jobs/a.yaml:3:5: error: operators[0].type: unknown operator type`. An empty `path` is left out;
/// a location with `line == 0` prints only the file (or nothing when the file is empty too).
std::string FormatDiagnostic(const SourceLocation& location, const std::string& path,
                             const std::string& message);

/// Thrown once per load with every problem found (config/ collects, then throws). `what()` is the
/// diagnostics' `ToString()` lines joined by '\n' (no trailing newline). Not a `tidemark::Error`:
/// config/ sits below runtime/ and a bad job is a user error, not a runtime failure.
class ConfigError : public std::runtime_error {
 public:
  /// Precondition: `diagnostics` is not empty.
  explicit ConfigError(std::vector<Diagnostic> diagnostics);

  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

 private:
  std::vector<Diagnostic> diagnostics_;
};

/// Collects diagnostics during a validation pass and throws them together. Used by the YAML loader
/// and available to later stages (job compiler) so that they report all problems in one go:
///
///     DiagnosticCollector diags;
///     if (bad) diags.Add(op.location, "operators[2].type", "no operator registered for \"map\"");
///     diags.ThrowIfAny();
///
/// Not thread-safe; one collector per validation pass.
class DiagnosticCollector {
 public:
  void Add(Diagnostic diagnostic);
  void Add(const SourceLocation& location, std::string path, std::string message);

  bool empty() const { return diagnostics_.empty(); }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }

  /// Throws `ConfigError` with every collected diagnostic, ordered by (line, column) and otherwise
  /// in the order they were added; does nothing when none were collected.
  void ThrowIfAny() const;

 private:
  std::vector<Diagnostic> diagnostics_;
};

}  // namespace tidemark
