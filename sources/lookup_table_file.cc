#include "sources/lookup_table_file.h"

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "sources/text_input.h"

namespace tidemark {

void ReadLookupTableFile(const FileSourceSpec& file, const Schema& schema,
                         const std::function<void(const Row& row, int64_t line_number)>& emit) {
  const bool csv = file.format == "csv";
  const char delimiter = file.csv_delimiter.empty() ? ',' : file.csv_delimiter[0];
  LineReader lines(file.path, file.max_line_bytes);
  LineDecoder decoder(csv ? LineDecoder::Format::kCsv : LineDecoder::Format::kJson, schema,
                      delimiter);
  Row row;
  std::string line;
  std::string reason;
  for (;;) {
    const LineReader::Result r = lines.Next(line);
    if (r == LineReader::Result::kEnd) {
      return;
    }
    const int64_t line_number = lines.line_number();
    if (r == LineReader::Result::kTooLong) {
      throw IoError(fmt::format("{}:{}: line longer than {} bytes", file.path, line_number,
                                file.max_line_bytes));
    }
    if (csv && file.csv_header && line_number == 1) {
      try {
        (void)CsvColumnsOfHeader(line, delimiter, schema, /*by_name=*/false, file.path);
      } catch (const InvalidArgument& e) {
        throw IoError(fmt::format("{}:1: {}", file.path, e.what()));
      }
      continue;
    }
    if (csv ? line.empty() : line.find_first_not_of(" \t") == std::string::npos) {
      continue;
    }
    if (!decoder.Decode(line, row, &reason)) {
      throw IoError(fmt::format("{}:{}: {}", file.path, line_number, reason));
    }
    emit(row, line_number);
  }
}

}  // namespace tidemark
