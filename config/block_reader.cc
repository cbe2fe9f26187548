#include "config/block_reader.h"

#include <algorithm>
#include <charconv>
#include <functional>
#include <iterator>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "config/job_loader.h"

namespace tidemark {
namespace {

constexpr auto kFieldTypes =
    std::to_array<std::string_view>({"int64", "double", "bool", "string", "timestamp"});

// An optional '-' and one or more decimal digits.
bool IsDecimalInteger(std::string_view text) {
  const std::string_view digits = !text.empty() && text[0] == '-' ? text.substr(1) : text;
  return !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos;
}

template <typename Range>
std::string Join(const Range& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) {
      out += sep;
    }
    out += item;
  }
  return out;
}

}  // namespace

std::string JoinWords(KeyList items, std::string_view sep) {
  return Join(items, sep);
}
std::string JoinWords(const std::vector<std::string>& items, std::string_view sep) {
  return Join(items, sep);
}

std::string JoinPath(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string IndexPath(const std::string& parent, size_t index) {
  return fmt::format("{}[{}]", parent, index);
}

bool Contains(KeyList list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// The allowed key `got` is a near miss of (typo, snake_case for kebab-case), else "".
std::string NearestKey(const std::string& got, KeyList allowed) {
  std::string normalized = got;
  std::replace(normalized.begin(), normalized.end(), '_', '-');
  std::string best;
  size_t best_distance = 3;
  for (std::string_view candidate : allowed) {
    const size_t distance = EditDistance(normalized, candidate);
    // A near miss keeps part of the word: "x" or "<<" (every character changed) is not a typo of
    // "id", while "scr" is one of "src".
    if (distance < best_distance && distance < std::max(normalized.size(), candidate.size())) {
      best_distance = distance;
      best = std::string(candidate);
    }
  }
  return best;
}

/// " (did you mean "x"?)" for a near miss (typo, snake_case for kebab-case), else "".
std::string Suggestion(const std::string& got, KeyList allowed) {
  const std::string best = NearestKey(got, allowed);
  return best.empty() ? "" : fmt::format(" (did you mean \"{}\"?)", best);
}

std::string UnknownKeyMessage(const std::string& name, const std::string& context,
                              KeyList allowed) {
  if (name == "<<") {
    return "YAML merge keys (\"<<: *anchor\") are not supported: write the keys out here (an "
           "alias \"*anchor\" may stand for a whole value)";
  }
  return fmt::format("unknown key \"{}\"{}{}; allowed keys: {}", name, context,
                     Suggestion(name, allowed), Join(allowed));
}

std::optional<int64_t> ParseInt64(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) {
    return std::nullopt;
  }
  return value;
}

std::optional<double> ParseDouble(std::string_view text) {
  // from_chars also accepts "inf"/"nan"; a number in a job file has digits.
  if (text.find_first_of("0123456789") == std::string_view::npos) {
    return std::nullopt;
  }
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    return std::nullopt;
  }
  return value;
}

/// 5000 -> "5s": the largest unit that divides the amount exactly.
std::string FormatDurationMs(int64_t ms) {
  struct Unit {
    int64_t ms;
    const char* name;
  };
  for (const Unit unit :
       {Unit{86400000, "d"}, Unit{3600000, "h"}, Unit{60000, "m"}, Unit{1000, "s"}}) {
    if (ms != 0 && ms % unit.ms == 0) {
      return fmt::format("{}{}", ms / unit.ms, unit.name);
    }
  }
  return fmt::format("{}ms", ms);
}

/// How a value is shown after "got": numbers and booleans as written, text quoted.
std::string DescribeKind(ParamNode::Kind kind) {
  switch (kind) {
    case ParamNode::Kind::kNull:
      return "nothing";
    case ParamNode::Kind::kSequence:
      return "a list";
    case ParamNode::Kind::kMap:
      return "a mapping";
    case ParamNode::Kind::kScalar:
      break;
  }
  return "";
}

std::string Describe(const ParamNode& node) {
  if (!node.IsScalar()) {
    return DescribeKind(node.kind);
  }
  const std::string& text = node.scalar;
  if (!node.quoted && (ParseDouble(text) || text == "true" || text == "false")) {
    return text;
  }
  return fmt::format("\"{}\"", text);
}

std::optional<ExpressionSpec> BlockReader::ReadExpression(const BlockField& field) {
  if (!field.value->IsScalar()) {
    ValueError(field, fmt::format("expected an expression like \"amount * 2\", got {}",
                                  Describe(*field.value)));
    return std::nullopt;
  }
  if (field.value->scalar.empty()) {
    ValueError(field, "expected an expression, got \"\"");
    return std::nullopt;
  }
  ExpressionSpec spec;
  spec.text = field.value->scalar;
  spec.location = ValueLoc(field);
  if (field.value->quoted) {
    spec.location.column += 1;  // past the opening quote
  }
  return spec;
}

std::optional<BlockMap> BlockReader::OpenMap(const ParamNode& node, const SourceLocation& location,
                                             const std::string& path, KeyList allowed,
                                             const std::string& context, bool any_key) {
  if (!node.IsMap()) {
    Error(location, path, fmt::format("expected a mapping, got {}", Describe(node)));
    return std::nullopt;
  }
  BlockMap view{&node, path, {}};
  std::map<std::string, SourceLocation> seen;  // key -> where it was first given
  for (size_t i = 0; i < node.keys.size(); ++i) {
    const SourceLocation& key_location = node.key_locations[i];
    if (!node.KeyIsPlain(i)) {
      Error(key_location, path,
            fmt::format("expected a plain key, got {}", DescribeKind(node.key_kinds[i])));
      continue;
    }
    const std::string& name = node.keys[i];
    const std::string key_path = JoinPath(path, name);
    if (!any_key && !Contains(allowed, name)) {
      Error(key_location, key_path, UnknownKeyMessage(name, context, allowed));
      continue;
    }
    if (auto previous = seen.find(name); previous != seen.end()) {
      Error(key_location, key_path,
            fmt::format("duplicate key \"{}\" (first given at line {})", name,
                        previous->second.line));
      continue;
    }
    seen.emplace(name, key_location);
    view.fields.push_back(BlockField{name, key_location, &node.items[i], key_path});
  }
  return view;
}

std::optional<std::string> BlockReader::ReadString(const BlockField& field, bool allow_empty) {
  if (!field.value->IsScalar()) {
    ValueError(field, fmt::format("expected a string, got {}", Describe(*field.value)));
    return std::nullopt;
  }
  if (!allow_empty && field.value->scalar.empty()) {
    ValueError(field, "must not be empty");
    return std::nullopt;
  }
  return field.value->scalar;
}

std::optional<std::string> BlockReader::ReadEnum(const BlockField& field, KeyList allowed) {
  if (!field.value->IsScalar()) {
    ValueError(field, fmt::format("expected one of {}, got {}", Join(allowed, " | "),
                                  Describe(*field.value)));
    return std::nullopt;
  }
  const std::string& text = field.value->scalar;
  if (!Contains(allowed, text)) {
    ValueError(field, fmt::format("unknown value \"{}\"{}; allowed: {}", text,
                                  Suggestion(text, allowed), Join(allowed, " | ")));
    return std::nullopt;
  }
  return text;
}

std::optional<int64_t> BlockReader::ReadInt(const BlockField& field, int64_t min, int64_t max) {
  std::optional<int64_t> value;
  if (field.value->IsScalar() && !field.value->quoted) {
    value = ParseInt64(field.value->scalar);
  }
  if (!value) {
    const std::string text =
        field.value->IsScalar() && !field.value->quoted ? field.value->scalar : "";
    if (IsDecimalInteger(text)) {  // a whole number beyond int64
      const bool negative = text[0] == '-';
      ValueError(field, fmt::format("must be at {} {}, got {}", negative ? "least" : "most",
                                    negative ? min : max, text));
    } else {
      ValueError(field, fmt::format("expected an integer, got {}", Describe(*field.value)));
    }
    return std::nullopt;
  }
  if (*value < min) {
    ValueError(field, fmt::format("must be at least {}, got {}", min, *value));
    return std::nullopt;
  }
  if (*value > max) {
    ValueError(field, fmt::format("must be at most {}, got {}", max, *value));
    return std::nullopt;
  }
  return value;
}

std::optional<bool> BlockReader::ReadBool(const BlockField& field) {
  if (field.value->IsScalar() && !field.value->quoted) {
    if (field.value->scalar == "true") {
      return true;
    }
    if (field.value->scalar == "false") {
      return false;
    }
  }
  ValueError(field, fmt::format("expected true or false, got {}", Describe(*field.value)));
  return std::nullopt;
}

std::optional<int64_t> BlockReader::ReadDuration(const BlockField& field, Sign sign) {
  constexpr std::string_view kExpected = "expected a duration like \"5s\"";
  if (!field.value->IsScalar()) {
    ValueError(field, fmt::format("{}, got {}", kExpected, Describe(*field.value)));
    return std::nullopt;
  }
  const std::string& text = field.value->scalar;
  if (!field.value->quoted && ParseDouble(text)) {
    // A bare number: the unit is never implicit.
    ValueError(field, fmt::format("{}, got {}", kExpected, text));
    return std::nullopt;
  }
  std::string reason;
  std::optional<int64_t> ms = ParseDurationMs(text, &reason);
  if (!ms) {
    ValueError(field, fmt::format("{}, got \"{}\" ({})", kExpected, text, reason));
    return std::nullopt;
  }
  if (sign != Sign::kAny && *ms < 0) {
    ValueError(field, fmt::format("must not be negative, got \"{}\"", text));
    return std::nullopt;
  }
  if (sign == Sign::kPositive && *ms == 0) {
    ValueError(field, fmt::format("must be greater than 0, got \"{}\"", text));
    return std::nullopt;
  }
  return ms;
}

std::optional<int64_t> BlockReader::ReadMemorySize(const BlockField& field) {
  constexpr std::string_view kExpected = "expected a memory size like \"128mb\"";
  if (!field.value->IsScalar()) {
    ValueError(field, fmt::format("{}, got {}", kExpected, Describe(*field.value)));
    return std::nullopt;
  }
  const std::string& text = field.value->scalar;
  std::string error;
  std::optional<int64_t> bytes = ParseMemorySize(text, &error);
  if (!bytes) {
    ValueError(field, error);
    return std::nullopt;
  }
  if (*bytes <= 0) {
    ValueError(field, fmt::format("must be greater than 0, got \"{}\"", text));
    return std::nullopt;
  }
  return bytes;
}

std::optional<ConfigValue> BlockReader::ReadConstant(const BlockField& field) {
  if (!field.value->IsScalar()) {
    ValueError(field, fmt::format("expected a number, true, false or a string, got {}",
                                  Describe(*field.value)));
    return std::nullopt;
  }
  const std::string& text = field.value->scalar;
  if (field.value->quoted) {
    return ConfigValue{text};  // "123" is the string 123
  }
  if (std::optional<int64_t> i = ParseInt64(text)) {
    return ConfigValue{*i};
  }
  if (std::optional<double> d = ParseDouble(text)) {
    return ConfigValue{*d};
  }
  if (text == "true" || text == "false") {
    return ConfigValue{text == "true"};
  }
  return ConfigValue{text};
}

std::optional<double> BlockReader::ReadNumber(const BlockField& field) {
  std::optional<ConfigValue> value = ReadConstant(field);
  if (!value) {
    return std::nullopt;
  }
  if (const auto* i = std::get_if<int64_t>(&*value)) {
    return static_cast<double>(*i);
  }
  if (const auto* d = std::get_if<double>(&*value)) {
    return *d;
  }
  ValueError(field, fmt::format("expected a number, got {}", Describe(*field.value)));
  return std::nullopt;
}

std::vector<SchemaFieldSpec> BlockReader::ReadSchema(const BlockField& field) {
  std::vector<SchemaFieldSpec> schema;
  if (!field.value->IsMap() || field.value->size() == 0) {
    ValueError(field,
               fmt::format("expected a mapping of field names to types like {{ts: "
                           "timestamp, user: string}}, got {}",
                           field.value->IsMap() ? "an empty mapping" : Describe(*field.value)));
    return schema;
  }
  std::set<std::string> names;
  const ParamNode& map = *field.value;
  for (size_t i = 0; i < map.keys.size(); ++i) {
    const std::string& name = map.keys[i];
    const SourceLocation& key_location = map.key_locations[i];
    if (!map.KeyIsPlain(i) || name.empty()) {
      Error(key_location, field.path, "expected a field name");
      continue;
    }
    const BlockField entry{name, key_location, &map.items[i], JoinPath(field.path, name)};
    if (!names.insert(name).second) {
      Error(key_location, entry.path, fmt::format("duplicate field \"{}\"", name));
      continue;
    }
    if (std::optional<std::string> type = ReadEnum(entry, kFieldTypes)) {
      schema.push_back(SchemaFieldSpec{name, *type, key_location});
    }
  }
  return schema;
}

void BlockReader::ReadKafkaProperties(const BlockField& block,
                                      const std::map<std::string, std::string>& reserved,
                                      std::map<std::string, std::string>& out,
                                      std::map<std::string, SourceLocation>* locations) {
  if (!block.value->IsMap()) {
    ValueError(block, fmt::format("expected a mapping of Kafka client properties like "
                                  "{{fetch.max.bytes: 1048576}}, got {}",
                                  Describe(*block.value)));
    return;
  }
  std::optional<BlockMap> props =
      OpenMap(*block.value, ValueLoc(block), block.path, /*allowed=*/{}, /*context=*/"", true);
  if (!props) {
    return;
  }
  for (const BlockField& p : props->fields) {
    const std::string& name = p.name;
    if (name.empty()) {
      Error(p.key_location, block.path, "expected a Kafka property name");
      continue;
    }
    if (auto it = reserved.find(name); it != reserved.end()) {
      Error(p.key_location, p.path, it->second);
      continue;
    }
    if (std::optional<std::string> v = ReadString(p, true)) {
      out[name] = *v;
      if (locations != nullptr) {
        (*locations)[name] = ValueLoc(p);
      }
    }
  }
}

std::optional<int64_t> ParseMemorySize(const std::string& text, std::string* error) {
  auto fail = [&](std::string reason) -> std::optional<int64_t> {
    if (error != nullptr) {
      *error = std::move(reason);
    }
    return std::nullopt;
  };
  // Flink's MemoryUnit: each unit's names, and its multiplier as a power of 2.
  static constexpr std::pair<std::string_view, int> kUnits[] = {
      {"b", 0},          {"bytes", 0}, {"k", 10},         {"kb", 10},       {"kibibytes", 10},
      {"m", 20},         {"mb", 20},   {"mebibytes", 20}, {"g", 30},        {"gb", 30},
      {"gibibytes", 30}, {"t", 40},    {"tb", 40},        {"tebibytes", 40}};
  auto syntax_error = [&] {
    return fail(fmt::format(
        "expected a memory size like \"128mb\" (a whole number of bytes, or one followed by a "
        "unit, in any case: b|bytes, k|kb|kibibytes, m|mb|mebibytes, g|gb|gibibytes, "
        "t|tb|tebibytes; 1024-based), got \"{}\"",
        text));
  };
  auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  };
  size_t begin = 0;
  size_t end = text.size();
  while (begin < end && is_space(text[begin])) {
    ++begin;
  }
  while (end > begin && is_space(text[end - 1])) {
    --end;
  }
  size_t i = begin;
  while (i < end && text[i] >= '0' && text[i] <= '9') {
    ++i;
  }
  if (i == begin) {
    return syntax_error();
  }
  int64_t number = 0;
  const auto [ptr, ec] = std::from_chars(text.data() + begin, text.data() + i, number);
  const auto too_large = [&] {
    return fail(fmt::format("expected a memory size of at most {} bytes, got \"{}\"",
                            std::numeric_limits<int64_t>::max(), text));
  };
  if (ec == std::errc::result_out_of_range) {
    return too_large();
  }
  if (ec != std::errc() || ptr != text.data() + i) {
    return syntax_error();
  }
  while (i < end && is_space(text[i])) {
    ++i;
  }
  std::string unit;
  for (; i < end; ++i) {
    unit.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(text[i]))));
  }
  int shift = 0;  // no unit: bytes
  if (!unit.empty()) {
    const auto* it = std::find_if(std::begin(kUnits), std::end(kUnits),
                                  [&](const auto& u) { return u.first == unit; });
    if (it == std::end(kUnits)) {
      return syntax_error();
    }
    shift = it->second;
  }
  if (number > (std::numeric_limits<int64_t>::max() >> shift)) {
    return too_large();
  }
  return number << shift;
}

std::optional<int64_t> ParseDurationMs(const std::string& text, std::string* error) {
  auto fail = [&](std::string reason) -> std::optional<int64_t> {
    if (error != nullptr) {
      *error = std::move(reason);
    }
    return std::nullopt;
  };
  size_t pos = 0;
  const size_t n = text.size();
  bool negative = false;
  if (pos < n && text[pos] == '-') {
    negative = true;
    ++pos;
  }
  const size_t digits_begin = pos;
  while (pos < n && text[pos] >= '0' && text[pos] <= '9') {
    ++pos;
  }
  if (pos == digits_begin) {
    return fail("a duration is a whole number followed by a unit: ms, s, m, h or d");
  }
  if (pos < n && text[pos] == '.') {
    return fail("fractions are not supported; use a smaller unit, e.g. 1500ms");
  }
  std::optional<int64_t> amount =
      ParseInt64(std::string_view(text).substr(digits_begin, pos - digits_begin));
  while (pos < n && text[pos] == ' ') {
    ++pos;
  }
  const std::string unit = text.substr(pos);
  if (unit.empty()) {
    return fail("missing unit: ms, s, m, h or d");
  }
  int64_t multiplier = 0;  // ms per unit; negative = units per ms
  if (unit == "ms") {
    multiplier = 1;
  } else if (unit == "s") {
    multiplier = 1000;
  } else if (unit == "m" || unit == "min") {
    multiplier = int64_t{60} * 1000;
  } else if (unit == "h") {
    multiplier = int64_t{60} * 60 * 1000;
  } else if (unit == "d") {
    multiplier = int64_t{24} * 60 * 60 * 1000;
  } else if (unit == "us") {
    multiplier = -1000;
  } else if (unit == "ns") {
    multiplier = int64_t{-1000} * 1000;
  } else {
    return fail(fmt::format("unknown unit \"{}\"; use ms, s, m, h or d", unit));
  }
  if (!amount) {
    return fail("out of range");
  }
  int64_t ms = 0;
  if (multiplier > 0) {
    if (__builtin_mul_overflow(*amount, multiplier, &ms)) {
      return fail("out of range");
    }
  } else {
    if (*amount % -multiplier != 0) {
      return fail("finer than a millisecond; durations have millisecond precision");
    }
    ms = *amount / -multiplier;
  }
  return negative ? -ms : ms;
}

}  // namespace tidemark
