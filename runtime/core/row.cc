#include "runtime/core/row.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace tidemark {

const char* ToString(FieldType t) {
  switch (t) {
    case FieldType::kInt64:
      return "int64";
    case FieldType::kDouble:
      return "double";
    case FieldType::kBool:
      return "bool";
    case FieldType::kString:
      return "string";
    case FieldType::kTimestamp:
      return "timestamp";
  }
  return "?";
}

std::optional<FieldType> ParseFieldType(std::string_view s) {
  if (s == "int64" || s == "long" || s == "int") {
    return FieldType::kInt64;
  }
  if (s == "double") {
    return FieldType::kDouble;
  }
  if (s == "bool") {
    return FieldType::kBool;
  }
  if (s == "string") {
    return FieldType::kString;
  }
  if (s == "timestamp") {
    return FieldType::kTimestamp;
  }
  return std::nullopt;
}

namespace {
nlohmann::json ToJson(const Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, double>) {
          return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr);
        } else {
          return x;
        }
      },
      v);
}

// Strings hold whatever bytes the input had (a CSV field, a constant); invalid UTF-8 becomes
// U+FFFD instead of throwing, so one bad record cannot fail the sink that prints it.
template <typename Json>
std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

std::string ValueToJson(const Value& v) { return Dump(ToJson(v)); }

std::optional<double> AsDouble(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return static_cast<double>(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return *d;
  }
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b ? 1.0 : 0.0;
  }
  return std::nullopt;
}

std::optional<int64_t> AsInt64(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return *i;
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return static_cast<int64_t>(*d);
  }
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b ? 1 : 0;
  }
  return std::nullopt;
}

int Schema::IndexOf(std::string_view name) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Schema::Add(std::string name, FieldType type) {
  fields_.push_back(Field{std::move(name), type});
  return static_cast<int>(fields_.size() - 1);
}

std::string Schema::RowToJson(const Row& row) const {
  nlohmann::ordered_json obj = nlohmann::ordered_json::object();
  for (size_t i = 0; i < fields_.size() && i < row.size(); ++i) {
    obj[fields_[i].name] = ToJson(row[i]);
  }
  return Dump(obj);
}

}  // namespace tidemark
