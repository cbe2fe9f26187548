#include "sources/source_reader.h"

#include <fmt/format.h>

namespace tidemark {

const Schema& SourceErrorSchema() {
  static const Schema kSchema({{"split", FieldType::kString},
                               {"line", FieldType::kInt64},
                               {"offset", FieldType::kInt64},
                               {"reason", FieldType::kString},
                               {"text", FieldType::kString}});
  return kSchema;
}

Row SourceErrorRow(const SourceError& error) {
  constexpr size_t kMaxText = 200;
  std::string text = error.text.size() > kMaxText ? error.text.substr(0, kMaxText) : error.text;
  const bool record = error.unit == OffsetUnit::kRecord;
  return Row{Value{error.split_id}, record || error.line <= 0 ? Value{} : Value{error.line},
             error.offset < 0 ? Value{} : Value{error.offset}, Value{error.reason},
             Value{std::move(text)}};
}

std::string SourceError::Place() const {
  if (unit == OffsetUnit::kRecord && offset >= 0) {
    return fmt::format("partition {} offset {}: {}", split_id, offset, reason);
  }
  if (line > 0) {
    return fmt::format("{}:{}: {}", split_id, line, reason);
  }
  return split_id.empty() ? reason : fmt::format("{}: {}", split_id, reason);
}

std::string SourceError::PlaceWithOffset() const {
  if (unit == OffsetUnit::kByte && line > 0 && offset >= 0) {
    return fmt::format("{}:{} (byte {}): {}", split_id, line, offset, reason);
  }
  return Place();
}

}  // namespace tidemark
