#include "operators/json_row_formatter.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <simdjson.h>

#include <nlohmann/json.hpp>

#include "runtime/core/row.h"

namespace tidemark {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// nlohmann's escaping for the ASCII range: the short escapes, \u00xx (lower-case hex) for the
// other control characters, everything else (bytes of multi-byte UTF-8 sequences too) as is.
void AppendEscaped(std::string_view s, std::string& out) {
  out.push_back('"');
  size_t run = 0;  // start of the bytes not yet copied
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') {
      continue;
    }
    out.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out.append("\\\"");
        break;
      case '\\':
        out.append("\\\\");
        break;
      case '\b':
        out.append("\\b");
        break;
      case '\f':
        out.append("\\f");
        break;
      case '\n':
        out.append("\\n");
        break;
      case '\r':
        out.append("\\r");
        break;
      case '\t':
        out.append("\\t");
        break;
      default: {
        const char esc[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
        out.append(esc, sizeof esc);
      }
    }
  }
  out.append(s.data() + run, s.size() - run);
  out.push_back('"');
}

bool IsAscii(std::string_view s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      return false;
    }
  }
  return true;
}

void AppendCell(const Row& row, size_t slot, std::string& out) {
  if (row.IsNull(slot)) {
    out.append("null");
    return;
  }
  switch (row.type(slot)) {
    case FieldType::kInt64:
    case FieldType::kTimestamp: {
      char buf[24];
      const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, row.GetInt64(slot));
      out.append(buf, static_cast<size_t>(end - buf));
      return;
    }
    case FieldType::kBool:
      out.append(row.GetBool(slot) ? "true" : "false");
      return;
    case FieldType::kString: {
      // Valid UTF-8 is written as is (nlohmann's dump without ensure_ascii escapes only the
      // ASCII range); invalid bytes take the reference path, which replaces them with U+FFFD.
      const std::string_view s = row.GetString(slot);
      if (IsAscii(s) || simdjson::validate_utf8(s.data(), s.size())) {
        AppendEscaped(s, out);
        return;
      }
      break;
    }
    case FieldType::kDouble: {
      const double d = row.GetDouble(slot);
      if (!std::isfinite(d)) {
        // JSON has no literal for them: strings, as Flink's JSON format (Jackson) writes them.
        out.append(std::isnan(d) ? "\"NaN\"" : d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
        return;
      }
      // The digits and the layout (`1.0`, `1e+20`, `-0.0`) nlohmann's dump writes for a number,
      // from the same function it calls, into a stack buffer instead of a string per value.
      char buf[64];
      const char* end = nlohmann::detail::to_chars(buf, buf + sizeof buf, d);
      out.append(buf, static_cast<size_t>(end - buf));
      return;
    }
  }
  out.append(ValueToJson(row.Get(slot)));  // strings with invalid UTF-8: the reference formatting
}

}  // namespace

JsonRowFormatter::JsonRowFormatter(const Schema& schema) : schema_(schema) {
  for (size_t i = 0; i < schema.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      duplicate_names_ = duplicate_names_ || schema.field(j).name == schema.field(i).name;
    }
    std::string key(i == 0 ? "{" : ",");
    key += ValueToJson(Value{schema.field(i).name});  // names escaped as RowToJson escapes them
    key.push_back(':');
    keys_.push_back(std::move(key));
  }
}

void JsonRowFormatter::Append(const Row& row, std::string& out) const {
  if (duplicate_names_) {
    out.append(schema_.RowToJson(row));  // one key, the last value: the JSON object's rule
    return;
  }
  const size_t n = std::min(keys_.size(), row.size());
  if (n == 0) {
    out.append("{}");
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    out.append(keys_[i]);
    AppendCell(row, i, out);
  }
  out.push_back('}');
}

}  // namespace tidemark
