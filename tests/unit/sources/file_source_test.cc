#include "sources/file_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/core/errors.h"
#include "runtime/core/non_recoverable_error.h"
#include "runtime/eventtime/punctuated_watermarks.h"
#include "sources/source_operator.h"
#include "sources/text_input.h"
#include "tests/testing/collecting_output.h"
#include "tests/unit/sources/fake_reader_output.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using testing::FakeReaderContext;
using testing::FakeReaderOutput;
using testing::RunReader;

class FileSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tidemark_file_source_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  static SourceSpec Spec(const std::string& path, const std::string& format) {
    SourceSpec spec;
    spec.type = "file";
    spec.file.path = path;
    spec.file.format = format;
    spec.file.schema = {{"ts", "timestamp", {}}, {"user", "string", {}}, {"amount", "double", {}}};
    return spec;
  }

  fs::path dir_;
};

TEST_F(FileSourceTest, ReadsCsvWithDeclaredTypesAndSourceTimestamp) {
  const std::string path =
      Write("a.csv", "ts,user,amount\n1000,ann,2.5\n2000,\"b,\"\"c\"\"\",-1\n");
  SourceSpec spec = Spec(path, "csv");
  spec.file.csv_header = true;
  FileSource source(spec);
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  EXPECT_EQ(
      out.events,
      (std::vector<std::string>{
          "register " + path,
          "rec " + path + " @0 ts=1000 {\"ts\":1000,\"user\":\"ann\",\"amount\":2.5}",
          "rec " + path + " @0 ts=2000 {\"ts\":2000,\"user\":\"b,\\\"c\\\"\",\"amount\":-1.0}",
          "release " + path}));
}

TEST_F(FileSourceTest, BadCsvLinesGoToErrorsWithFileLineAndReasonAndReadingGoesOn) {
  const std::string path = Write("bad.csv",
                                 "1000,ann,1\n"
                                 "2000,bob\n"      // line 2: one field short
                                 "abc,carl,3\n"    // line 3: non-numeric timestamp
                                 "4000,dan,x\n"    // line 4: non-numeric amount
                                 "\n"              // line 5: blank, skipped
                                 "5000,\"eve,5\n"  // line 6: unterminated quote
                                 "6000,fay,6\n");
  FileSource source(Spec(path, "csv"));
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  ASSERT_EQ(out.records.size(), 2u);
  ASSERT_EQ(out.errors.size(), 4u);
  EXPECT_EQ(out.errors[0].split_id, path);
  EXPECT_EQ(out.errors[0].line, 2);
  EXPECT_EQ(out.errors[0].reason, "expected 3 fields, got 2");
  EXPECT_EQ(out.errors[0].text, "2000,bob");
  EXPECT_EQ(out.errors[1].line, 3);
  EXPECT_EQ(out.errors[1].reason, "field 1 \"ts\": expected timestamp, got \"abc\"");
  EXPECT_EQ(out.errors[2].line, 4);
  EXPECT_EQ(out.errors[2].reason, "field 3 \"amount\": expected double, got \"x\"");
  EXPECT_EQ(out.errors[3].line, 6);
  EXPECT_EQ(out.errors[3].reason, "unterminated quote in field 2");
}

TEST_F(FileSourceTest, ErrorsCarryTheLinesByteOffset) {
  const std::string path = Write("bad.csv", "1000,ann,1\n2000,bob\n\n3000,c,x\n");
  FileSource source(Spec(path, "csv"));
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  ASSERT_EQ(out.errors.size(), 2u);
  EXPECT_EQ(out.errors[0].line, 2);
  EXPECT_EQ(out.errors[0].offset, 11);
  EXPECT_EQ(out.errors[1].line, 4);
  EXPECT_EQ(out.errors[1].offset, 21);
  EXPECT_EQ(out.errors[1].PlaceWithOffset(),
            path + ":4 (byte 21): field 3 \"amount\": expected double, got \"x\"");
  EXPECT_EQ(SourceErrorSchema().RowToJson(SourceErrorRow(out.errors[1])),
            "{\"split\":\"" + path +
                "\",\"line\":4,\"offset\":21,\"reason\":\"field 3 \\\"amount\\\": expected double, "
                "got \\\"x\\\"\",\"text\":\"3000,c,x\"}");
}

// `columns: by-name`: each file's header is resolved once; two files with their columns in
// different orders (and one extra column) give the same rows.
TEST_F(FileSourceTest, ColumnsByNameReadsEachFileByItsOwnHeader) {
  const std::string a = Write("a.csv", "amount,ts,user\n2.5,1000,ann\n");
  const std::string b = Write("b.csv", "user,extra,amount,ts\nbob,zz,-1,2000\ncarl,,x,3000\n");
  SourceSpec spec = Spec(dir_.string(), "csv");
  spec.file.csv_header = true;
  spec.file.columns = "by-name";
  FileSource source(spec);
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  EXPECT_EQ(
      out.events,
      (std::vector<std::string>{
          "register " + a, "register " + b,
          "rec " + a + " @0 ts=1000 {\"ts\":1000,\"user\":\"ann\",\"amount\":2.5}",
          "rec " + b + " @0 ts=2000 {\"ts\":2000,\"user\":\"bob\",\"amount\":-1.0}", "release " + a,
          "err " + b + ":3 field 3 \"amount\": expected double, got \"x\"", "release " + b}));
}

TEST_F(FileSourceTest, ACsvHeaderIsCheckedAgainstTheSchemaAtConstruction) {
  const std::string path = Write("a.csv", "ts, amount ,user\n1000,1,ann\n");
  SourceSpec spec = Spec(path, "csv");
  spec.file.csv_header = true;
  try {
    FileSource source(spec);
    FAIL() << "expected an error";
  } catch (const KeyedInvalidArgument& e) {
    EXPECT_EQ(e.key_path(), "csv-header");
    EXPECT_EQ(e.reason(), "the header of '" + path +
                              "' names ts, amount, user; the schema declares ts, user, amount "
                              "(fields are read by position: declare them in the header's order, "
                              "or read them by name with columns: by-name)");
  }
  spec.file.columns = "by-name";  // the same header, by name: spaces around names are trimmed
  EXPECT_NO_THROW(FileSource{spec});
  Write("a.csv", "ts,user,ts\n");
  try {
    FileSource source(spec);
    FAIL() << "expected an error";
  } catch (const KeyedInvalidArgument& e) {
    EXPECT_EQ(e.key_path(), "columns");
    EXPECT_EQ(e.reason(), "the header of '" + path +
                              "' names ts more than once (ts, user, ts); the schema declares ts, "
                              "user, amount");
  }
  // An empty file has no header to check.
  Write("a.csv", "");
  spec.file.columns = "by-position";
  EXPECT_NO_THROW(FileSource{spec});
}

// Only an empty line is skipped in CSV: a line of tabs or spaces is fields, so a tab-delimited
// row of empty fields (NULLs) is a record and a line of spaces in a comma-delimited file an error.
// JSON lines of only whitespace hold no value and are skipped.
TEST_F(FileSourceTest, OnlyEmptyCsvLinesAreSkippedWhitespaceIsFields) {
  const std::string tsv = Write("a.tsv", "1000\tann\t1\n\t\t\n\n2000\tbob\t2\n");
  SourceSpec tab = Spec(tsv, "csv");
  tab.file.csv_delimiter = "\t";
  FileSource tab_source(tab);
  ManualProcessingTimeService clock;
  FakeReaderOutput tab_out(tab_source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(tab_source, tab_out, ctx);
  EXPECT_EQ(tab_out.records,
            (std::vector<std::string>{
                "rec " + tsv + " @0 ts=1000 {\"ts\":1000,\"user\":\"ann\",\"amount\":1.0}",
                "rec " + tsv + " @0 ts=none {\"ts\":null,\"user\":null,\"amount\":null}",
                "rec " + tsv + " @0 ts=2000 {\"ts\":2000,\"user\":\"bob\",\"amount\":2.0}"}));
  EXPECT_TRUE(tab_out.errors.empty());

  const std::string csv = Write("b.csv", "1000,ann,1\n   \n2000,bob,2\n");
  FileSource csv_source(Spec(csv, "csv"));
  FakeReaderOutput csv_out(csv_source.schema(), clock);
  RunReader(csv_source, csv_out, ctx);
  EXPECT_EQ(csv_out.records.size(), 2u);
  ASSERT_EQ(csv_out.errors.size(), 1u);
  EXPECT_EQ(csv_out.errors[0].line, 2);
  EXPECT_EQ(csv_out.errors[0].reason, "expected 3 fields, got 1");

  const std::string json = Write("c.jsonl", "{\"ts\":1000}\n \t \n{\"ts\":2000}\n");
  FileSource json_source(Spec(json, "jsonl"));
  FakeReaderOutput json_out(json_source.schema(), clock);
  RunReader(json_source, json_out, ctx);
  EXPECT_EQ(json_out.records.size(), 2u);
  EXPECT_TRUE(json_out.errors.empty());
}

TEST_F(FileSourceTest, TenMegabyteLineIsReportedWithoutBufferingAndNextLineIsRead) {
  std::string text = "{\"ts\": 1, \"user\": \"a\"}\n{\"ts\": 2, \"user\": \"";
  text += std::string(10 * 1024 * 1024, 'x');
  text += "\"}\n{\"ts\": 3, \"user\": \"c\"}";  // last line without newline
  const std::string path = Write("long.jsonl", text);
  FileSource source(Spec(path, "jsonl"));
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_NE(out.records[1].find("ts=3 "), std::string::npos) << out.records[1];
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].line, 2);
  EXPECT_EQ(out.errors[0].reason, "line longer than max-line-bytes (1048576 bytes)");
  EXPECT_EQ(out.errors[0].text.size(), 200u);
}

TEST_F(FileSourceTest, MaxLineBytesIsConfigurable) {
  const std::string path = Write("a.jsonl", "{\"ts\": 1}\n{\"ts\": 22222222}\n");
  SourceSpec spec = Spec(path, "jsonl");
  spec.file.max_line_bytes = 10;
  FileSource source(spec);
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  EXPECT_EQ(out.records.size(), 1u);
  ASSERT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.errors[0].line, 2);
}

TEST_F(FileSourceTest, JsonTypeMismatchAndInvalidJsonAreErrorsMissingFieldsAreNull) {
  const std::string path = Write("a.jsonl",
                                 "{\"ts\": 1, \"user\": \"a\", \"extra\": true}\n"
                                 "{\"ts\": \"soon\", \"user\": \"b\"}\n"
                                 "{\"ts\": 3, \"user\": \n"
                                 "[1, 2]\n"
                                 "{\"user\": \"e\"}\n");
  FileSource source(Spec(path, "jsonl"));
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  ASSERT_EQ(out.records.size(), 2u);
  EXPECT_EQ(out.records[1],
            "rec " + path + " @0 ts=none {\"ts\":null,\"user\":\"e\",\"amount\":null}");
  ASSERT_EQ(out.errors.size(), 3u);
  EXPECT_EQ(out.errors[0].reason, "field \"ts\": expected timestamp, got \"soon\"");
  EXPECT_EQ(out.errors[1].reason, "invalid JSON");
  EXPECT_EQ(out.errors[1].line, 3);
  EXPECT_EQ(out.errors[2].reason, "expected a JSON object, got \"[1,2]\"");
}

TEST_F(FileSourceTest, DirectoryAndGlobGiveOneSplitPerFileSortedByName) {
  Write("b.csv", "2,x,0\n");
  Write("a.csv", "1,x,0\n");
  Write("c.txt", "3,x,0\n");
  EXPECT_EQ(FileSource(Spec(dir_.string(), "csv")).files().size(), 3u);
  FileSource glob(Spec((dir_ / "*.csv").string(), "csv"));
  EXPECT_EQ(glob.files(),
            (std::vector<std::string>{(dir_ / "a.csv").string(), (dir_ / "b.csv").string()}));
  // Two readers: split 0 (a.csv) to subtask 0, split 1 (b.csv) to subtask 1.
  ManualProcessingTimeService clock;
  FakeReaderOutput out1(glob.schema(), clock);
  FakeReaderContext ctx1(1, 2);
  RunReader(glob, out1, ctx1, 1, 2);
  ASSERT_EQ(out1.records.size(), 1u);
  EXPECT_NE(out1.records[0].find("ts=2 "), std::string::npos);
}

TEST_F(FileSourceTest, ReaderRegistersAllSplitsFirstAndInterleavesThemRoundRobin) {
  const std::string a = Write("a.csv", "1,a,0\n2,a,0\n");
  const std::string b = Write("b.csv", "10,b,0\n");
  FileSource source(Spec(dir_.string(), "csv"));
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  ASSERT_EQ(out.events.size(), 7u);
  EXPECT_EQ(out.events[0], "register " + a);
  EXPECT_EQ(out.events[1], "register " + b);
  EXPECT_NE(out.events[2].find("ts=1 "), std::string::npos);
  EXPECT_NE(out.events[3].find("ts=10 "), std::string::npos);
  // End of file is seen on the split's next turn.
  EXPECT_NE(out.events[4].find("ts=2 "), std::string::npos);
  EXPECT_EQ(out.events[5], "release " + b);
  EXPECT_EQ(out.events[6], "release " + a);
}

TEST_F(FileSourceTest, PacingSpacesRecordsInProcessingTime) {
  Write("a.csv", "1,a,0\n2,a,0\n3,a,0\n");
  SourceSpec spec = Spec(dir_.string(), "csv");
  spec.pacing_ms = 30;
  FileSource source(spec);
  FakeReaderContext ctx;
  FakeReaderOutput out(source.schema(), ctx.time);
  RunReader(source, out, ctx);
  ASSERT_EQ(out.records.size(), 3u);
  EXPECT_NE(out.records[0].find("@0 "), std::string::npos);
  EXPECT_NE(out.records[1].find("@30 "), std::string::npos);
  EXPECT_NE(out.records[2].find("@60 "), std::string::npos);
}

TEST_F(FileSourceTest, MissingPathIsRejectedAtConstruction) {
  EXPECT_THROW(FileSource(Spec((dir_ / "nope.csv").string(), "csv")), InvalidArgument);
  EXPECT_THROW(FileSource(Spec((dir_ / "*.nope").string(), "csv")), InvalidArgument);
}

TEST_F(FileSourceTest, FileThatCannotBeOpenedFailsTheReaderWithTheCause) {
  const std::string path = Write("gone.csv", "1,a,0\n");
  FileSource source(Spec(path, "csv"));
  fs::remove(path);  // listed at compile time, gone at read time
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  try {
    RunReader(source, out, ctx);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot open input file '" + path + "': No such file or directory");
  }
}

TEST_F(FileSourceTest, DeeplyNestedJsonIsAnErrorLineNotACrash) {
  // A 200 KB line of 100,000 nested '[' used to overflow the stack (dumping it for the message).
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string path =
      Write("deep.jsonl", "{\"ts\": 1}\n" + deep + "\n{\"ts\": 2, \"user\": [" +
                              std::string(1001, '{') + "]}\n{\"ts\": 3}\n");
  FileSource source(Spec(path, "jsonl"));
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  ASSERT_EQ(out.records.size(), 2u);
  ASSERT_EQ(out.errors.size(), 2u);
  EXPECT_EQ(out.errors[0].line, 2);
  EXPECT_EQ(out.errors[0].reason, "JSON nests deeper than 1000 levels");
  EXPECT_EQ(out.errors[1].line, 3);
  EXPECT_EQ(out.errors[1].reason, "JSON nests deeper than 1000 levels");
}

TEST(TextInputTest, JsonDepthCountsBracketsOutsideStringsOnly) {
  EXPECT_TRUE(JsonDepthWithin("[[1]]", 2));
  EXPECT_FALSE(JsonDepthWithin("[[1]]", 1));
  EXPECT_TRUE(JsonDepthWithin("{\"a\": \"[[[[\\\"[[\"}", 1));
  std::string why;
  EXPECT_TRUE(ParseJsonLine(std::string(1000, '[') + std::string(1000, ']'), &why));
  EXPECT_FALSE(ParseJsonLine(std::string(1001, '[') + std::string(1001, ']'), &why));
  EXPECT_EQ(why, "JSON nests deeper than 1000 levels");
}

TEST_F(FileSourceTest, FifosAndDevicesAreRefusedAtConstructionWithoutBlocking) {
  const std::string fifo = (dir_ / "fifo.csv").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto message = [](const std::string& path) -> std::string {
    try {
      FileSource source(Spec(path, "csv"));
    } catch (const IoError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message("/dev/zero"),
            "input file '/dev/zero' is a character device; a source reads regular files only");
  EXPECT_EQ(message(fifo),
            "input file '" + fifo + "' is a FIFO; a source reads regular files only");
  // In a directory or a glob, a FIFO is an error too (it is not silently skipped).
  Write("a.csv", "1,a,0\n");
  EXPECT_EQ(message(dir_.string()),
            "input file '" + fifo + "' is a FIFO; a source reads regular files only");
  EXPECT_EQ(message((dir_ / "*.csv").string()),
            "input file '" + fifo + "' is a FIFO; a source reads regular files only");
  // A path that became a FIFO after compiling: the reader's open does not wait for a writer.
  try {
    LineReader reader(fifo, 1024);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "input file '" + fifo + "' is a FIFO; a source reads regular files only");
  }
}

TEST(TextInputTest, ParsesValuesStrictly) {
  std::string why;
  EXPECT_EQ(ParseTextValue("42", FieldType::kInt64, &why), Value{int64_t{42}});
  EXPECT_EQ(ParseTextValue("", FieldType::kInt64, &why), Value{});
  EXPECT_FALSE(ParseTextValue("42x", FieldType::kInt64, &why));
  EXPECT_EQ(why, "expected int64, got \"42x\"");
  EXPECT_FALSE(ParseTextValue("1.5", FieldType::kTimestamp, &why));
  EXPECT_EQ(ParseTextValue("1.5", FieldType::kDouble, &why), Value{1.5});
  EXPECT_EQ(ParseTextValue("true", FieldType::kBool, &why), Value{true});
  EXPECT_FALSE(ParseTextValue("yes", FieldType::kBool, &why));
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

using testing::FakeReaderContext;
using testing::FakeReaderOutput;

// The records and errors of `out` (not the register/release events, which a restored reader
// repeats for its splits).
std::vector<std::string> Emitted(const FakeReaderOutput& out) {
  std::vector<std::string> v;
  for (const std::string& e : out.events) {
    if (e.rfind("rec ", 0) == 0 || e.rfind("err ", 0) == 0) {
      v.push_back(e);
    }
  }
  return v;
}

// Polls a reader of `source` `polls` times into `out` and returns its splits' snapshot bytes.
std::string SnapshotAfter(const FileSource& source, int polls, FakeReaderOutput& out) {
  FakeReaderContext ctx;
  auto reader = source.CreateReader(0);
  reader->Start(ctx);
  reader->AddSplits(source.CreateSplits());
  reader->NotifyNoMoreSplits();
  for (int i = 0; i < polls; ++i) {
    if (reader->PollNext(out) == InputStatus::kEndOfInput) {
      break;
    }
  }
  StateWriter w;
  std::vector<std::unique_ptr<SourceSplit>> splits = reader->SnapshotState(1);
  w.WriteU32(static_cast<uint32_t>(splits.size()));
  for (const auto& s : splits) {
    s->WriteTo(w);
  }
  return w.Release();
}

// Restores the splits in `bytes` into a fresh reader and polls it to its end into `out`; false
// when it did not end.
bool RestoreAndReadToEnd(const FileSource& source, const std::string& bytes,
                         FakeReaderOutput& out) {
  FakeReaderContext ctx;
  StateReader r(bytes);
  std::vector<std::unique_ptr<SourceSplit>> restored;
  for (uint32_t n = r.ReadU32(); n > 0; --n) {
    restored.push_back(source.RestoreSplit(r));
  }
  EXPECT_TRUE(r.AtEnd());
  auto reader = source.CreateReader(0);
  reader->Start(ctx);
  reader->AddSplits(std::move(restored));
  reader->NotifyNoMoreSplits();
  for (int i = 0; i < 100000; ++i) {
    if (reader->PollNext(out) == InputStatus::kEndOfInput) {
      return true;
    }
  }
  return false;
}

// Reads `polls` polls, snapshots the reader's splits through the serializer, restores them into
// a fresh reader and reads the rest: the emitted records and errors of both parts.
std::vector<std::string> ReadWithRestoreAfter(const FileSource& source, int polls) {
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  const std::string bytes = SnapshotAfter(source, polls, out);
  if (!RestoreAndReadToEnd(source, bytes, out)) {
    ADD_FAILURE() << "restored reader did not end";
    return {};
  }
  return Emitted(out);
}

class FileSnapshotTest : public FileSourceTest {};

TEST_F(FileSnapshotTest, RestoredSplitsContinueExactlyWhereTheSnapshotWas) {
  Write("a.jsonl",
        "{\"ts\": 1, \"user\": \"a\", \"amount\": 1}\n\n{\"ts\": 2, \"user\": 5}\n"
        "{\"ts\": 3, \"user\": \"\xc3\xa9\", \"amount\": 3}\r\nnot json\n{\"ts\": 4}");
  Write("b.jsonl", "{\"ts\": 10, \"user\": \"b\"}\n{\"ts\": 11, \"user\": \"b\"}\n");
  FileSource source(Spec(dir_.string(), "jsonl"));
  ManualProcessingTimeService clock;
  FakeReaderOutput whole(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, whole, ctx);
  const std::vector<std::string> expected = Emitted(whole);
  ASSERT_EQ(expected.size(), 7u);  // 5 records, 2 errors
  EXPECT_EQ(expected[2],
            "err " + (dir_ / "a.jsonl").string() + ":3 field \"user\": expected string, got 5");
  for (int polls = 0; polls <= 12; ++polls) {
    EXPECT_EQ(ReadWithRestoreAfter(source, polls), expected)
        << "restored after " << polls << " polls";
  }
}

TEST_F(FileSnapshotTest, CsvHeaderIsNotReadAgainAfterARestore) {
  Write("a.csv", "ts,user,amount\n1,a,1\n2,a,x\n3,a,3\n");
  SourceSpec spec = Spec(dir_.string(), "csv");
  spec.file.csv_header = true;
  FileSource source(spec);
  const std::string f = (dir_ / "a.csv").string();
  const std::vector<std::string> expected = {
      "rec " + f + " @0 ts=1 {\"ts\":1,\"user\":\"a\",\"amount\":1.0}",
      "err " + f + ":3 field 3 \"amount\": expected double, got \"x\"",
      "rec " + f + " @0 ts=3 {\"ts\":3,\"user\":\"a\",\"amount\":3.0}"};
  for (int polls = 0; polls <= 5; ++polls) {
    EXPECT_EQ(ReadWithRestoreAfter(source, polls), expected)
        << "restored after " << polls << " polls";
  }
}

// Restores `bytes` and reads to the end: the cause the reader failed with ("" when it ended),
// and whether that was a NonRecoverableError (no restart strategy retries it).
std::pair<std::string, bool> RestoreAndRead(const FileSource& source, const std::string& bytes) {
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  try {
    return {RestoreAndReadToEnd(source, bytes, out) ? "" : "did not end", false};
  } catch (const NonRecoverableError& e) {
    return {e.what(), true};
  } catch (const std::exception& e) {
    return {e.what(), false};
  }
}

// Snapshot bytes of a reader of `source` after `polls` polls.
std::string SnapshotAfter(const FileSource& source, int polls) {
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  return SnapshotAfter(source, polls, out);
}

// `n` JSON lines with ts 0 .. n-1.
std::string NumberedLines(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += "{\"ts\": " + std::to_string(i) + ", \"user\": \"u\", \"amount\": 1}\n";
  }
  return text;
}

// The tester's silent loss (session 28): a checkpoint taken, the input truncated, the job
// restored: the split's position lay past the new end, the reader read nothing and the job
// FINISHED on part of its input. A file smaller than when its split's reading began fails the
// restored job, and no restart strategy retries it.
TEST_F(FileSnapshotTest, ARestoredSplitWhoseFileShrankFailsTheJobForGood) {
  const std::string text = NumberedLines(2000);
  Write("a.jsonl", text);
  const std::string path = (dir_ / "a.jsonl").string();
  FileSource source(Spec(dir_.string(), "jsonl"));
  const std::string bytes = SnapshotAfter(source, 1500);
  // Cut before the restored position: the position lies past the end.
  std::filesystem::resize_file(path, 1000);
  auto [past_end, past_end_final] = RestoreAndRead(source, bytes);
  EXPECT_TRUE(past_end_final);
  EXPECT_NE(past_end.find("input file '" + path + "' has 1000 bytes, fewer than the position "),
            std::string::npos)
      << past_end;
  EXPECT_NE(past_end.find("it was truncated or replaced after that position was taken"),
            std::string::npos)
      << past_end;
  // Cut after the restored position: the reader would read on to the new end and stop there.
  Write("a.jsonl", text);
  const std::string bytes2 = SnapshotAfter(source, 10);
  std::filesystem::resize_file(path, text.size() - 100);
  auto [shrank, shrank_final] = RestoreAndRead(source, bytes2);
  EXPECT_TRUE(shrank_final);
  EXPECT_EQ(shrank, fmt::format("input file '{}' has {} bytes, fewer than the {} it had when it "
                                "was first read: it was truncated or replaced since, and the rest "
                                "of its input is gone",
                                path, text.size() - 100, text.size()));
  // A file that grew since is read on to its new end.
  Write("a.jsonl", text + "{\"ts\": 5000, \"user\": \"u\", \"amount\": 1}\n");
  const std::string bytes3 = SnapshotAfter(source, 10);
  std::ofstream(path, std::ios::binary | std::ios::app)
      << "{\"ts\": 5001, \"user\": \"u\", \"amount\": 1}\n";
  EXPECT_EQ(RestoreAndRead(source, bytes3), std::make_pair(std::string(), false));
}

// docs/checkpoints.md: a restored split reads the path its checkpoint recorded, not what the
// source's `path` lists now. A file renamed since: the split cannot open it (an IoError, so a
// restart strategy retries it), even though the source now lists the new name; back at its
// old name, the split reads on from its position.
TEST_F(FileSnapshotTest, ARestoredSplitReadsThePathItsCheckpointRecorded) {
  const std::string text = NumberedLines(100);
  Write("a.jsonl", text);
  const std::string old_path = (dir_ / "a.jsonl").string();
  const std::string new_path = (dir_ / "moved.jsonl").string();
  FileSource before(Spec(dir_.string(), "jsonl"));
  const std::string bytes = SnapshotAfter(before, 10);
  std::filesystem::rename(old_path, new_path);
  FileSource after(Spec(dir_.string(), "jsonl"));
  EXPECT_EQ(after.files(), std::vector<std::string>{new_path});
  EXPECT_EQ(RestoreAndRead(after, bytes),
            std::make_pair("cannot open input file '" + old_path + "': No such file or directory",
                           false));
  std::filesystem::rename(new_path, old_path);
  ManualProcessingTimeService clock;
  FakeReaderOutput out(before.schema(), clock);
  ASSERT_TRUE(RestoreAndReadToEnd(after, bytes, out));
  const std::vector<std::string> rest = Emitted(out);
  ASSERT_FALSE(rest.empty());
  EXPECT_LT(rest.size(), 100u);
  EXPECT_EQ(rest.back().rfind("rec " + old_path + " ", 0), 0u) << rest.back();
  EXPECT_NE(rest.back().find("ts=99 "), std::string::npos) << rest.back();
}

// `columns: by-name` and a restored split of a file the source's `path` no longer lists (the job
// now names another file): the split's fields still go by its own file's header. They went by
// position before, and every record was rejected ("expected timestamp, got ...").
TEST_F(FileSnapshotTest, ARestoredByNameSplitOfAnUnlistedFileReadsItsOwnHeader) {
  std::string text = "user,amount,ts\n";
  for (int i = 1; i <= 6; ++i) {
    text += fmt::format("u{},{}.5,{}\n", i, i, i);
  }
  const std::string old_file = Write("old.csv", text);
  const std::string new_file = Write("new.csv", "ts,amount,user\n100,1,z\n");
  SourceSpec spec = Spec(old_file, "csv");
  spec.file.csv_header = true;
  spec.file.columns = "by-name";
  FileSource before(spec);
  const std::string bytes = SnapshotAfter(before, 3);
  spec.file.path = new_file;
  FileSource after(spec);
  ASSERT_EQ(after.files(), std::vector<std::string>{new_file});
  ManualProcessingTimeService clock;
  FakeReaderOutput out(after.schema(), clock);
  ASSERT_TRUE(RestoreAndReadToEnd(after, bytes, out));
  EXPECT_EQ(Emitted(out),
            (std::vector<std::string>{
                "rec " + old_file + " @0 ts=4 {\"ts\":4,\"user\":\"u4\",\"amount\":4.5}",
                "rec " + old_file + " @0 ts=5 {\"ts\":5,\"user\":\"u5\",\"amount\":5.5}",
                "rec " + old_file + " @0 ts=6 {\"ts\":6,\"user\":\"u6\",\"amount\":6.5}"}));
  // A header that no longer has a declared field fails the split, naming the file.
  Write("old.csv", "user,ts\nu1,1\nu2,2\nu3,3\nu4,4\n");
  EXPECT_NE(RestoreAndRead(after, bytes).first.find("old.csv"), std::string::npos);
}

TEST_F(FileSnapshotTest, TruncatedOrImpossibleSplitStateIsStateCorrupt) {
  Write("a.csv", "1,a,1\n");
  FileSource source(Spec(dir_.string(), "csv"));
  StateWriter w;
  source.CreateSplits()[0]->WriteTo(w);
  const std::string bytes = w.Release();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    StateReader r(std::string_view(bytes).substr(0, cut));
    EXPECT_THROW(source.RestoreSplit(r), StateCorrupt) << "cut at " << cut;
  }
  StateWriter bad;
  bad.BeginSection("file-split", 1);
  bad.WriteString("a.csv");
  bad.WriteI64(0);
  bad.WriteI64(-1);
  bad.WriteI64(-5);  // negative offset
  bad.WriteI64(0);
  bad.WriteI64(0);
  bad.WriteBool(true);
  bad.EndSection();
  StateReader r(bad.bytes());
  EXPECT_THROW(source.RestoreSplit(r), StateCorrupt);
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

using testing::FakeReaderContext;
using testing::FakeReaderOutput;
using testing::RunReader;

class FileBlockSplitTest : public FileSourceTest {
 protected:
  // The records and errors of `source` read by `parallelism` readers, with the split id removed
  // (the file, its line numbers and the values must not depend on how the file was cut), sorted.
  static std::vector<std::string> ReadAll(const FileSource& source, int parallelism) {
    std::vector<std::string> all;
    for (int subtask = 0; subtask < parallelism; ++subtask) {
      ManualProcessingTimeService clock;
      FakeReaderOutput out(source.schema(), clock);
      FakeReaderContext ctx(subtask, parallelism);
      RunReader(source, out, ctx, subtask, parallelism);
      for (const std::string& e : out.records) {
        all.push_back(e.substr(e.find(" @")));
      }
      for (const SourceError& e : out.errors) {
        all.push_back(fmt::format("err {}:{} {}", e.split_id, e.line, e.reason));
      }
    }
    std::sort(all.begin(), all.end());
    return all;
  }
};

TEST_F(FileBlockSplitTest, EveryLineIsReadOnceWhereverTheFileIsCut) {
  std::string text;
  for (int i = 1; i <= 40; ++i) {
    text += i % 7 == 0 ? fmt::format("bad line {}\n", i)
                       : fmt::format("{{\"ts\": {}, \"user\": \"u{}\", \"amount\": {}}}{}\n", i,
                                     i % 3, i, i % 5 == 0 ? "\r" : "");
    if (i % 11 == 0) {
      text += "\n";  // blank lines are skipped in every split
    }
  }
  text += "{\"ts\": 99}";  // the last line has no newline
  const std::string path = Write("big.jsonl", text);
  const FileSource whole(Spec(path, "jsonl"));
  const std::vector<std::string> expected = ReadAll(whole, 1);
  ASSERT_EQ(expected.size(), 41u);
  EXPECT_NE(std::find(expected.begin(), expected.end(),
                      "err " + path + ":" + std::to_string(14 + 1) + " invalid JSON"),
            expected.end());  // "bad line 14" is line 15: one blank line after line 11
  for (const int64_t split_bytes : {1, 2, 7, 31, 32, 33, 100, 499, 500, 1000, 5000}) {
    SourceSpec spec = Spec(path, "jsonl");
    spec.file.split_bytes = split_bytes;
    const FileSource source(spec);
    const size_t splits = source.CreateSplits().size();
    // At most 256 ranges per file.
    EXPECT_EQ(static_cast<int64_t>(splits),
              std::min<int64_t>(
                  256, std::max<int64_t>(
                           1, (static_cast<int64_t>(text.size()) + split_bytes - 1) / split_bytes)))
        << split_bytes;
    for (const int parallelism : {1, 2, 3}) {
      EXPECT_EQ(ReadAll(source, parallelism), expected)
          << "split-bytes " << split_bytes << ", parallelism " << parallelism;
    }
  }
}

TEST_F(FileBlockSplitTest, TwoReadersShareOneFileAndTheSplitsHaveTheirOwnOutputs) {
  const std::string path = Write("e.csv", "ts,user,amount\n1,a,1\n2,b,2\n3,a,3\n4,b,4\n");
  SourceSpec spec = Spec(path, "csv");
  spec.file.csv_header = true;
  spec.file.split_bytes = 13;  // 39 bytes: ranges [0,13) [13,26) [26,39)
  const FileSource source(spec);
  ASSERT_EQ(source.CreateSplits().size(), 3u);
  std::vector<std::vector<std::string>> events;
  for (int subtask = 0; subtask < 2; ++subtask) {
    ManualProcessingTimeService clock;
    FakeReaderOutput out(source.schema(), clock);
    FakeReaderContext ctx(subtask, 2);
    RunReader(source, out, ctx, subtask, 2);
    events.push_back(out.events);
  }
  // Reader 0 gets ranges 0 and 2, reader 1 range 1; a range holds the lines starting in it: the
  // first only the header (bytes 0-14), the second the lines at bytes 15 and 21, the third 27, 33.
  // Reader 0 begins range 2 (registers it) only when range 0 has ended.
  EXPECT_EQ(events[0],
            (std::vector<std::string>{
                "register " + path + "@0", "release " + path + "@0", "register " + path + "@26",
                "rec " + path + "@26 @0 ts=3 {\"ts\":3,\"user\":\"a\",\"amount\":3.0}",
                "rec " + path + "@26 @0 ts=4 {\"ts\":4,\"user\":\"b\",\"amount\":4.0}",
                "release " + path + "@26"}));
  EXPECT_EQ(events[1], (std::vector<std::string>{
                           "register " + path + "@13",
                           "rec " + path + "@13 @0 ts=1 {\"ts\":1,\"user\":\"a\",\"amount\":1.0}",
                           "rec " + path + "@13 @0 ts=2 {\"ts\":2,\"user\":\"b\",\"amount\":2.0}",
                           "release " + path + "@13"}));
}

// Lines {"ts": <ts>, "user": "u"} of 24 bytes each, for the timestamps first, first + 1, ...
std::string FixedWidthLines(int first, int count) {
  std::string text;
  for (int ts = first; ts < first + count; ++ts) {
    text += fmt::format("{{\"ts\": {}, \"user\": \"u\"}}\n", ts);
  }
  EXPECT_EQ(text.size(), 24u * static_cast<size_t>(count));
  return text;
}

std::string Rec(const std::string& split, int ts) {
  return fmt::format("rec {} @0 ts={} {{\"ts\":{},\"user\":\"u\",\"amount\":null}}", split, ts, ts);
}

// A started reader of `source` holding `splits`, told there are no more.
std::unique_ptr<SourceReader> StartedReader(const FileSource& source, FakeReaderContext& ctx,
                                            std::vector<std::unique_ptr<SourceSplit>> splits) {
  auto reader = source.CreateReader(ctx.subtask_index());
  reader->Start(ctx);
  reader->AddSplits(std::move(splits));
  reader->NotifyNoMoreSplits();
  return reader;
}

// Polls `reader` until its input ends (at most 100 polls).
void ReadToEnd(SourceReader& reader, FakeReaderOutput& out) {
  for (int i = 0; i < 100; ++i) {
    if (reader.PollNext(out) == InputStatus::kEndOfInput) {
      return;
    }
  }
  ADD_FAILURE() << "reader did not end";
}

TEST_F(FileBlockSplitTest, OneReaderReadsTheRangesOfAFileOneAfterAnotherInFileOrder) {
  const std::string path = Write("a.jsonl", FixedWidthLines(10, 12));
  SourceSpec spec = Spec(path, "jsonl");
  spec.file.split_bytes = 96;  // 288 bytes: ranges [0,96) [96,192) [192,288), four lines each
  const FileSource source(spec);
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  // Only the range being read has an output: range 1 is registered when range 0 has ended.
  std::vector<std::string> expected;
  for (int k = 0; k < 3; ++k) {
    const std::string id = path + "@" + std::to_string(96 * k);
    expected.push_back("register " + id);
    for (int ts = 10 + 4 * k; ts < 14 + 4 * k; ++ts) {
      expected.push_back(Rec(id, ts));
    }
    expected.push_back("release " + id);
  }
  EXPECT_EQ(out.events, expected);
}

TEST_F(FileBlockSplitTest, EachOfTwoReadersReadsItsRangesInFileOrderWhateverOrderTheyCameIn) {
  const std::string path = Write("a.jsonl", FixedWidthLines(10, 16));
  SourceSpec spec = Spec(path, "jsonl");
  spec.file.split_bytes = 96;  // 384 bytes: four ranges of four lines
  const FileSource source(spec);
  ASSERT_EQ(source.CreateSplits().size(), 4u);
  for (int subtask = 0; subtask < 2; ++subtask) {
    // Reader r holds ranges r and r + 2 (split i goes to reader i mod 2): range r first.
    std::vector<std::string> expected;
    for (const int k : {subtask, subtask + 2}) {
      const std::string id = path + "@" + std::to_string(96 * k);
      expected.push_back("register " + id);
      for (int ts = 10 + 4 * k; ts < 14 + 4 * k; ++ts) {
        expected.push_back(Rec(id, ts));
      }
      expected.push_back("release " + id);
    }
    for (const bool reversed : {false, true}) {
      SCOPED_TRACE(fmt::format("subtask {}, splits added {}", subtask,
                               reversed ? "last first" : "in order"));
      std::vector<std::unique_ptr<SourceSplit>> splits =
          SplitEnumerator::SplitsFor(source, subtask, 2);
      ASSERT_EQ(splits.size(), 2u);
      if (reversed) {
        std::swap(splits[0], splits[1]);
      }
      ManualProcessingTimeService clock;
      FakeReaderOutput out(source.schema(), clock);
      FakeReaderContext ctx(subtask, 2);
      auto reader = StartedReader(source, ctx, std::move(splits));
      // The later range waits in the reader's queue: the operator gives it no output yet.
      EXPECT_FALSE(reader->IsSplitQueued(path + "@" + std::to_string(96 * subtask)));
      EXPECT_TRUE(reader->IsSplitQueued(path + "@" + std::to_string(96 * (subtask + 2))));
      ReadToEnd(*reader, out);
      EXPECT_EQ(out.events, expected);
    }
  }
}

TEST_F(FileBlockSplitTest, RangesOfSeveralFilesAreReadRoundRobinEachFileOnItsCurrentRange) {
  const std::string a = Write("a.jsonl", FixedWidthLines(10, 4));
  const std::string b = Write("b.jsonl", FixedWidthLines(50, 4));
  SourceSpec spec = Spec(dir_.string(), "jsonl");
  spec.file.split_bytes = 48;  // each file: ranges [0,48) and [48,96), two lines each
  const FileSource source(spec);
  ASSERT_EQ(source.CreateSplits().size(), 4u);
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, out, ctx);
  EXPECT_EQ(out.events, (std::vector<std::string>{
                            "register " + a + "@0", "register " + b + "@0", Rec(a + "@0", 10),
                            Rec(b + "@0", 50), Rec(a + "@0", 11), Rec(b + "@0", 51),
                            // a's turn: its range 0 ends and range 1 begins in the same turn
                            "release " + a + "@0", "register " + a + "@48", Rec(a + "@48", 12),
                            "release " + b + "@0", "register " + b + "@48", Rec(b + "@48", 52),
                            Rec(a + "@48", 13), Rec(b + "@48", 53), "release " + a + "@48",
                            "release " + b + "@48"}));
}

TEST_F(FileBlockSplitTest, AnUnreadableFileFailsTheReaderBeforeAnyRecord) {
  Write("a.jsonl", FixedWidthLines(10, 4));
  const std::string b = Write("b.jsonl", FixedWidthLines(50, 4));
  SourceSpec spec = Spec(dir_.string(), "jsonl");
  spec.file.split_bytes = 48;
  const FileSource source(spec);
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  auto reader = StartedReader(source, ctx, source.CreateSplits());
  fs::remove(b);
  try {
    (void)reader->PollNext(out);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot open input file '" + b + "': No such file or directory");
  }
  EXPECT_TRUE(out.records.empty());
}

TEST_F(FileBlockSplitTest, ARangeNotBegunDoesNotHoldTheWatermarkBack) {
  // Subtask 0 of 2 over four ranges of a time-ordered file holds ranges 0 (times 10-13) and 2
  // (18-21). With one generator per record (watermark = its timestamp), each record's watermark
  // follows it at once: range 2 has no output, so no generator holding the minimum at Long.MIN,
  // until its reading begins after range 0's end. (Registered from the start, range 2 would hold
  // the watermark at Long.MIN while range 0 is read.)
  const std::string path = Write("a.jsonl", FixedWidthLines(10, 16));
  SourceSpec spec = Spec(path, "jsonl");
  spec.file.split_bytes = 96;
  auto source = std::make_shared<FileSource>(spec);
  WatermarkStrategy strategy(RecordTimestampAssigner(), [] {
    return std::make_unique<PunctuatedWatermarks>(
        [](const StreamRecord&, Timestamp ts) -> std::optional<Timestamp> { return ts; });
  });
  SourceOperator op(source, std::move(strategy));
  testing::CollectingOutput output;
  ManualProcessingTimeService time{0};
  OperatorContext context;
  context.name = "source";
  context.subtask_index = 0;
  context.parallelism = 2;
  context.output = &output;
  context.processing_time = &time;
  context.auto_watermark_interval_ms = 0;
  op.Open(context);
  for (int i = 0; i < 100 && op.EmitNext() != InputStatus::kEndOfInput; ++i) {
  }
  op.Close();
  std::vector<std::string> records_and_watermarks;
  for (const std::string& e : output.Describe()) {
    if (e.rfind("status(", 0) != 0) {
      records_and_watermarks.push_back(e);
    }
  }
  std::vector<std::string> expected;
  for (const int ts : {10, 11, 12, 13, 18, 19, 20, 21}) {
    expected.push_back(fmt::format("record([{},\"u\",null]@{})", ts, ts));
    expected.push_back(fmt::format("watermark({})", ts));
  }
  EXPECT_EQ(records_and_watermarks, expected);
}

// The records and errors of an uninterrupted read of `source` by one reader, after checking that
// a snapshot after any of the first `max_polls` polls, restored into a fresh reader, gives them.
std::vector<std::string> ExpectRestoreAnywhereGivesTheSameOutput(const FileSource& source,
                                                                 int max_polls) {
  ManualProcessingTimeService clock;
  FakeReaderOutput whole(source.schema(), clock);
  FakeReaderContext ctx;
  RunReader(source, whole, ctx);
  const std::vector<std::string> expected = Emitted(whole);
  for (int polls = 0; polls <= max_polls; ++polls) {
    EXPECT_EQ(ReadWithRestoreAfter(source, polls), expected)
        << "restored after " << polls << " polls";
  }
  return expected;
}

TEST_F(FileBlockSplitTest, ByteRangeSplitsSurviveASnapshot) {
  std::string text;
  for (int i = 1; i <= 12; ++i) {
    text += i == 6 ? "oops\n" : fmt::format("{{\"ts\": {}, \"user\": \"u\"}}\n", i);
  }
  Write("a.jsonl", text);
  SourceSpec spec = Spec(dir_.string(), "jsonl");
  spec.file.split_bytes = 60;
  const FileSource source(spec);
  ASSERT_GT(source.CreateSplits().size(), 2u);
  EXPECT_EQ(ExpectRestoreAnywhereGivesTheSameOutput(source, 16).size(), 12u);
}

TEST_F(FileBlockSplitTest, RangesOfSeveralFilesSurviveASnapshotAnywhere) {
  Write("a.jsonl", FixedWidthLines(10, 6) + "oops\n" + FixedWidthLines(16, 3));
  Write("b.jsonl", FixedWidthLines(50, 5));
  SourceSpec spec = Spec(dir_.string(), "jsonl");
  spec.file.split_bytes = 50;  // a: 221 bytes in 5 ranges; b: 120 bytes in 3
  const FileSource source(spec);
  ASSERT_EQ(source.CreateSplits().size(), 8u);
  const std::vector<std::string> expected = ExpectRestoreAnywhereGivesTheSameOutput(source, 18);
  ASSERT_EQ(expected.size(), 15u);  // 14 records, 1 error
  // Round-robin: a10 b50 a11 b51 ... b54 a15, then b has ended: oops (line 7), a16, a17, a18.
  EXPECT_EQ(expected[10], Rec((dir_ / "a.jsonl").string() + "@88", 15));
  EXPECT_EQ(expected[11], "err " + (dir_ / "a.jsonl").string() + ":7 invalid JSON");
}

TEST_F(FileBlockSplitTest, SnapshotHoldsTheRangeInProgressAtItsPositionAndLaterRangesNotBegun) {
  const std::string path = Write("a.jsonl", FixedWidthLines(10, 12));
  SourceSpec spec = Spec(path, "jsonl");
  spec.file.split_bytes = 96;
  const FileSource source(spec);
  ManualProcessingTimeService clock;
  FakeReaderOutput out(source.schema(), clock);
  FakeReaderContext ctx;
  auto reader = StartedReader(source, ctx, source.CreateSplits());
  for (int i = 0; i < 6; ++i) {  // range 0's four records, then two of range 1
    ASSERT_EQ(reader->PollNext(out), InputStatus::kMoreAvailable);
  }
  // Every split keeps its gauges: range 0 with its totals, range 1 in progress (bytes: its offset
  // in the file), range 2 not begun.
  MetricsWriter metrics;
  reader->CollectMetrics(metrics);
  const std::string id = path + "@";
  EXPECT_EQ(metrics.gauges(), (MetricsWriter::Gauges{{"split." + id + "0.records", 4},
                                                     {"split." + id + "0.lines", 4},
                                                     {"split." + id + "0.bytes", 96},
                                                     {"split." + id + "96.records", 2},
                                                     {"split." + id + "96.lines", 2},
                                                     {"split." + id + "96.bytes", 144},
                                                     {"split." + id + "192.records", 0},
                                                     {"split." + id + "192.lines", 0},
                                                     {"split." + id + "192.bytes", 0}}));
  std::vector<std::unique_ptr<SourceSplit>> splits = reader->SnapshotState(1);
  ASSERT_EQ(splits.size(), 2u);
  StateWriter w;
  for (const auto& split : splits) {
    split->WriteTo(w);
  }
  const std::string bytes = w.Release();
  StateReader r(bytes);
  // Section file-split (version 2): path, start, end, offset, line, records, aligned, size.
  auto position = [&r] {
    EXPECT_EQ(r.BeginSection("file-split", 2), 2u);
    std::string p = r.ReadString();
    const int64_t start = r.ReadI64();
    const int64_t end = r.ReadI64();
    const int64_t offset = r.ReadI64();
    const int64_t line = r.ReadI64();
    const int64_t records = r.ReadI64();
    const bool aligned = r.ReadBool();
    const int64_t size = r.ReadI64();
    r.EndSection();
    return fmt::format("{} [{},{}) offset {} line {} records {} {} size {}", p, start, end, offset,
                       line, records, aligned ? "aligned" : "not begun", size);
  };
  // Range 1 after two lines (its line number is counted only when an error needs it: -1), with
  // the file's size when its reading began; range 2 as the enumerator made it (size unknown).
  EXPECT_EQ(position(), path + " [96,192) offset 144 line -1 records 2 aligned size " +
                            std::to_string(std::filesystem::file_size(path)));
  EXPECT_EQ(position(), path + " [192,-1) offset 192 line 0 records 0 not begun size -1");
  EXPECT_TRUE(r.AtEnd());
  // Restored into a fresh reader: range 1 goes on, range 2 waits for it.
  StateReader again(bytes);
  std::vector<std::unique_ptr<SourceSplit>> restored;
  restored.push_back(source.RestoreSplit(again));
  restored.push_back(source.RestoreSplit(again));
  FakeReaderOutput rest(source.schema(), clock);
  auto fresh = StartedReader(source, ctx, std::move(restored));
  EXPECT_FALSE(fresh->IsSplitQueued(path + "@96"));
  EXPECT_TRUE(fresh->IsSplitQueued(path + "@192"));
  ReadToEnd(*fresh, rest);
  std::vector<std::string> expected = {"register " + path + "@96", Rec(path + "@96", 16),
                                       Rec(path + "@96", 17), "release " + path + "@96",
                                       "register " + path + "@192"};
  for (int ts = 18; ts < 22; ++ts) {
    expected.push_back(Rec(path + "@192", ts));
  }
  expected.push_back("release " + path + "@192");
  EXPECT_EQ(rest.events, expected);
}

}  // namespace
}  // namespace tidemark
