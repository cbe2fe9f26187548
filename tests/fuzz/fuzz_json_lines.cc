// Fuzz target: data lines of the file and replay sources (sources/text_input.h). Each line of the
// input is read as JSON (ParseJsonLine, JsonLineToRow) and as CSV (CsvLineToRow) against a schema
// of every type. Any line must give a row or a reason, never an exception or a crash.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sources/text_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tidemark;
  static const Schema schema({{"ts", FieldType::kTimestamp},
                              {"user", FieldType::kString},
                              {"amount", FieldType::kDouble},
                              {"n", FieldType::kInt64},
                              {"ok", FieldType::kBool}});
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    const std::string_view line = text.substr(begin, end - begin);
    std::string reason;
    if (std::optional<nlohmann::json> j = ParseJsonLine(line, &reason)) {
      (void)JsonObjectToRow(*j, schema, &reason);
    }
    (void)JsonLineToRow(line, schema, &reason);
    (void)CsvLineToRow(line, ',', schema, &reason);
    begin = end + 1;
  }
  return 0;
}
