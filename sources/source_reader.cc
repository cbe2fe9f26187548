#include "sources/source_reader.h"

#include <fmt/format.h>

namespace tidemark {

const Schema& SourceErrorSchema() {
  static const Schema schema({{"split", FieldType::kString},
                              {"line", FieldType::kInt64},
                              {"reason", FieldType::kString},
                              {"text", FieldType::kString}});
  return schema;
}

Row SourceErrorRow(const SourceError& error) {
  constexpr size_t kMaxText = 200;
  std::string text = error.text.size() > kMaxText ? error.text.substr(0, kMaxText) : error.text;
  return Row{Value{error.split_id}, Value{error.line}, Value{error.reason}, Value{std::move(text)}};
}

std::string SourceError::Place() const {
  if (line > 0) {
    return fmt::format("{}:{}: {}", split_id, line, reason);
  }
  return split_id.empty() ? reason : fmt::format("{}: {}", split_id, reason);
}

}  // namespace tidemark
