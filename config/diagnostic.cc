#include "config/diagnostic.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include <fmt/format.h>

namespace tidemark {
namespace {

std::string JoinLines(const std::vector<Diagnostic>& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    if (!out.empty()) {
      out += '\n';
    }
    out += d.ToString();
  }
  return out;
}

// `text` with its control characters (below 0x20, and 0x7f) as `\xNN`, but for those `named`
// maps to a short escape (`\n`) and those it maps to nothing, which stay as they are.
template <typename Named>
std::string EscapeControls(std::string_view text, Named named) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (const std::optional<std::string_view> escape = named(c)) {
      out += escape->empty() ? std::string_view(&c, 1) : *escape;
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xf]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

}  // namespace

std::string EscapeControlCharacters(std::string_view text) {
  return EscapeControls(text, [](char c) -> std::optional<std::string_view> {
    switch (c) {
      case '\\':
        return "\\\\";
      case '\n':
        return "\\n";
      case '\r':
        return "\\r";
      case '\t':
        return "\\t";
      default:
        return std::nullopt;
    }
  });
}

std::string ShowControlCharacters(std::string_view text) {
  return EscapeControls(text, [](char c) -> std::optional<std::string_view> {
    return c == '\n' || c == '\t' ? std::optional<std::string_view>("") : std::nullopt;
  });
}

std::string FormatDiagnostic(const SourceLocation& location, const std::string& path,
                             const std::string& message) {
  std::string out;
  if (!location.file.empty()) {
    // A file name is the user's: a newline in it must not start a second diagnostic line (nor
    // a second entry of a REST `errors` array, which is one line each).
    out += EscapeControlCharacters(location.file);
    if (location.line > 0) {
      out += fmt::format(":{}", location.line);
      if (location.column > 0) {
        out += fmt::format(":{}", location.column);
      }
    }
    out += ": ";
  }
  out += "error: ";
  if (!path.empty()) {
    out += path;
    out += ": ";
  }
  out += message;
  return out;
}

std::string Diagnostic::ToString() const {
  return FormatDiagnostic(SourceLocation{file, line, column}, path, message);
}

ConfigError::ConfigError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(JoinLines(diagnostics)), diagnostics_(std::move(diagnostics)) {}

void DiagnosticCollector::Add(Diagnostic diagnostic) {
  diagnostics_.push_back(std::move(diagnostic));
}

void DiagnosticCollector::Add(const SourceLocation& location, std::string path,
                              std::string message) {
  diagnostics_.push_back(Diagnostic{location.file, location.line, location.column, std::move(path),
                                    std::move(message)});
}

void DiagnosticCollector::ThrowIfAny() const {
  if (diagnostics_.empty()) {
    return;
  }
  std::vector<Diagnostic> sorted = diagnostics_;
  // Unknown positions (line 0: file-level problems) first, then source order, like a compiler.
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tie(a.file, a.line, a.column) < std::tie(b.file, b.line, b.column);
  });
  throw ConfigError(std::move(sorted));
}

}  // namespace tidemark
