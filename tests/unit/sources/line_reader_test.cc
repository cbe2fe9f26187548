// LineReader's two ways of handing out lines give the same lines, numbers and offsets: the
// copying Next(std::string&) and the lending Next(std::string_view&) (padded, in the buffer, or
// assembled when a line spans two reads), over lines that cross the 64 KiB read buffer.

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/core/non_recoverable_error.h"
#include "sources/text_input.h"

namespace tidemark {
namespace {

struct Step {
  LineReader::Result result;
  std::string line;
  int64_t line_number;
  int64_t bytes_read;
  bool operator==(const Step&) const = default;
};

std::vector<Step> ReadCopying(const std::string& path, int64_t max, int64_t offset, int64_t end) {
  LineReader r(path, max, offset, 0, end);
  std::vector<Step> out;
  std::string line;
  while (true) {
    const LineReader::Result res = r.Next(line);
    out.push_back({res, line, r.line_number(), r.bytes_read()});
    if (res == LineReader::Result::kEnd) {
      return out;
    }
  }
}

std::vector<Step> ReadLending(const std::string& path, int64_t max, int64_t offset, int64_t end) {
  LineReader r(path, max, offset, 0, end);
  std::vector<Step> out;
  std::string_view line;
  while (true) {
    const LineReader::Result res = r.Next(line);
    // The promised padding: readable, whitespace first.
    const char first_after = line.data()[line.size()];
    EXPECT_TRUE(first_after == '\n' || first_after == '\r' || first_after == ' ')
        << int(first_after);
    volatile char last = line.data()[line.size() + LineReader::kLinePadding - 1];
    (void)last;
    out.push_back({res, std::string(res == LineReader::Result::kEnd ? std::string_view() : line),
                   r.line_number(), r.bytes_read()});
    if (res == LineReader::Result::kEnd) {
      return out;
    }
  }
}

TEST(LineReaderTest, LendingAndCopyingGiveTheSameLines) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tm_line_reader_" + std::to_string(::getpid()) + ".txt"))
                               .string();
  std::mt19937 rng(5);
  std::string text;
  for (int i = 0; i < 3000; ++i) {
    const size_t len = rng() % 10 == 0 ? rng() % 150000 : rng() % 120;
    std::string line(len, 'a');
    for (char& c : line) {
      c = static_cast<char>('a' + rng() % 26);
    }
    if (rng() % 5 == 0) {
      line += '\r';
    }
    text += line;
    text += '\n';
  }
  text += "last line without newline";
  std::ofstream(path, std::ios::binary) << text;
  const auto size = static_cast<int64_t>(text.size());
  for (const int64_t max : {int64_t{1048576}, int64_t{100}, int64_t{70000}}) {
    for (const auto& [offset, end] :
         std::vector<std::pair<int64_t, int64_t>>{{0, -1}, {0, size / 2}}) {
      SCOPED_TRACE("max " + std::to_string(max) + " end " + std::to_string(end));
      const std::vector<Step> copying = ReadCopying(path, max, offset, end);
      const std::vector<Step> lending = ReadLending(path, max, offset, end);
      ASSERT_EQ(copying.size(), lending.size());
      for (size_t i = 0; i < copying.size(); ++i) {
        ASSERT_EQ(copying[i], lending[i]) << "step " << i;
      }
      EXPECT_GT(copying.size(), 1000u);
    }
  }
  std::filesystem::remove(path);
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("tm_line_reader_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// A UTF-8 byte order mark (as spreadsheet programs write CSV) used to stay in the first line, so
// that the first record of a CSV file without header failed with `expected timestamp, got
// "\xEF\xBB\xBF1000"` (the mark invisible in the error). Offsets still count its 3 bytes.
TEST(LineReaderTest, AByteOrderMarkAtTheStartOfTheFileIsSkipped) {
  const std::string path = TempPath("bom.csv");
  std::ofstream(path, std::ios::binary) << "\xEF\xBB\xBF"
                                           "1000,a\n1001,b\n";
  for (const auto& steps : {ReadCopying(path, 1048576, 0, -1), ReadLending(path, 1048576, 0, -1)}) {
    ASSERT_EQ(steps.size(), 3u);
    EXPECT_EQ(steps[0], (Step{LineReader::Result::kLine, "1000,a", 1, 10}));
    EXPECT_EQ(steps[1], (Step{LineReader::Result::kLine, "1001,b", 2, 17}));
    EXPECT_EQ(steps[2].result, LineReader::Result::kEnd);
  }
  // Only at the start of the file: a reader resumed at a later line, or the same bytes inside a
  // line, keep them.
  std::ofstream(path, std::ios::binary) << "x\n\xEF\xBB\xBFy\n";
  const std::vector<Step> later = ReadCopying(path, 1048576, 2, -1);
  EXPECT_EQ(later[0].line, "\xEF\xBB\xBFy");
  std::filesystem::remove(path);
}

// A file truncated while it is read used to end the read quietly where the file now ends: the
// job FINISHED with the rest of its input missing. It fails the job, and for good: a restart
// would read whatever the file holds now.
TEST(LineReaderTest, AFileTruncatedWhileBeingReadIsAReadError) {
  const std::string path = TempPath("trunc.jsonl");
  std::string text;
  for (int i = 0; i < 20000; ++i) {
    text += "{\"ts\": " + std::to_string(i) + "}\n";
  }
  std::ofstream(path, std::ios::binary) << text;
  LineReader reader(path, 1048576);
  std::string line;
  ASSERT_EQ(reader.Next(line), LineReader::Result::kLine);  // the first 64 KiB are read
  std::filesystem::resize_file(path, 1000);
  try {
    while (reader.Next(line) != LineReader::Result::kEnd) {
    }
    FAIL() << "expected a NonRecoverableError after " << reader.bytes_read() << " bytes";
  } catch (const NonRecoverableError& e) {
    EXPECT_NE(
        std::string(e.what()).find("input file '" + path + "' shrank while being read: it had " +
                                   std::to_string(text.size()) + " bytes when opened"),
        std::string::npos)
        << e.what();
  }
  // A file that grows while it is read is fine (read to where it ends).
  std::ofstream(path, std::ios::binary) << "{\"ts\": 1}\n";
  LineReader growing(path, 1048576);
  std::ofstream(path, std::ios::binary | std::ios::app) << "{\"ts\": 2}\n";
  ASSERT_EQ(growing.Next(line), LineReader::Result::kLine);
  ASSERT_EQ(growing.Next(line), LineReader::Result::kLine);
  EXPECT_EQ(growing.Next(line), LineReader::Result::kEnd);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tidemark
