// LineDecoder (sources/text_input.h) against the reference decoders JsonLineToRow / CsvLineToRow:
// every line, good or hostile, must give the same row or the same reason.

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "sources/text_input.h"
#include "sources/text_input_simdjson.h"

namespace tidemark {
namespace {

const Schema& TestSchema() {
  static const Schema schema({{"ts", FieldType::kTimestamp},
                              {"user", FieldType::kString},
                              {"amount", FieldType::kDouble},
                              {"n", FieldType::kInt64},
                              {"ok", FieldType::kBool}});
  return schema;
}

// The decoder's answer for `line` as a row or "error: <reason>", decoding into `row` (reused).
std::string Decoded(LineDecoder& decoder, const std::string& line, Row& row) {
  std::string reason;
  if (!decoder.Decode(line, row, &reason)) {
    return "error: " + reason;
  }
  return TestSchema().RowToJson(row);
}

// The same through DecodeLent (nothing ahead), with the line in place as a LineReader lends it:
// followed by
// '\n' and then `after` (more input: the next line, hostile bytes) and the padding.
std::string DecodedInPlace(LineDecoder& decoder, const std::string& line, const std::string& after,
                           Row& row) {
  std::string buffer = line + "\n" + after;
  buffer.append(LineReader::kLinePadding, ' ');
  std::string reason;
  if (!decoder.DecodeLent(std::string_view(buffer.data(), line.size()), LinesAhead{}, row,
                          &reason)) {
    return "error: " + reason;
  }
  return TestSchema().RowToJson(row);
}

// What may follow a line in the reader's buffer: tokens that would extend the line's last one.
const std::vector<std::string> kAfterLine = {"",  "9999}",       "e",  "ue}",     "\"}",
                                             "]", "{\"ts\": 1}", "\\", "\x01\xff"};

std::string Reference(bool json, const std::string& line) {
  std::string reason;
  std::optional<Row> row = json ? JsonLineToRow(line, TestSchema(), &reason)
                                : CsvLineToRow(line, ',', TestSchema(), &reason);
  return row ? TestSchema().RowToJson(*row) : "error: " + reason;
}

const std::vector<std::string> kJsonLines = {
    R"({"ts": 1000, "user": "ann", "amount": 2.5, "n": 7, "ok": true})",
    R"({"user":"bob"})",
    R"({"ts": null, "user": null, "amount": 3, "n": -0, "ok": false})",
    R"({"ok": true, "n": 1, "amount": 1e3, "user": "z", "ts": 5})",  // keys out of order
    R"({"user": "a", "user": "b"})",                                 // repeated key: last wins
    R"({"us\u0065r": "esc\"aped\n\u00e9\ud83d\ude00"})",             // escapes in key and value
    R"({"ts": 1.0})",
    R"({"ts": 1e2})",
    R"({"ts": 9223372036854775807})",
    R"({"ts": 9223372036854775808})",
    R"({"ts": -9223372036854775809})",
    R"({"amount": 1e400})",
    R"({"amount": 18446744073709551616})",
    R"({"amount": "1.5"})",
    R"({"user": 5})",
    R"({"ok": "true"})",
    R"({"n": [1]})",
    R"({"n": {"a": 1}})",
    R"({"ts": 1} {"ts": 2})",
    R"({"ts": 1},{"ts": 2})",
    R"({"ts": 1}])",
    R"({"ts": 1} x)",
    R"({"ts": 1}   )",
    R"(   {"ts": 1})",
    R"([1, 2])",
    R"("just a string")",
    R"(42)",
    R"(null)",
    R"({"ts": 1,})",
    R"({"ts" 1})",
    R"({"ts": 01})",
    R"({"ts": +1})",
    R"({"ts": tru})",
    R"({"other": tru})",
    R"({"other": [1, 2, {"x": nul}]})",
    R"({"other": [1, 2, {"x": null}], "ts": 3})",
    R"({"other": "a)"
    "\x01"
    R"(b", "ts": 3})",
    "{\"ts\":\t1}",
    "{\"user\": \"\xff\xfe\"}",
    "{\"user\": \"\xc3\xa9\"}",
    "\xef\xbb\xbf{\"ts\": 1}",
    R"({"user": "\ud800"})",
    R"({"user": "\x"})",
    R"({"ts": 1)",
    R"({)",
    R"(})",
    R"({"other": 1e999999, "ts": 1})",
    R"({"other": 123456789012345678901234567890, "ts": 1})",
    R"({"": 1, "ts": 2})",
    // Integers around the fast path's 15-digit limit, signs, zeros and what may end a number.
    R"({"ts": 1767225601149, "n": -1767225601149})",
    R"({"ts": 123456789012345, "n": -999999999999999})",
    R"({"ts": 1234567890123456, "n": -1234567890123456})",
    R"({"ts": 12345678901234567, "n": 1000000000000000000})",
    R"({"ts": 0, "n": -0, "amount": 7})",
    R"({"ts": 00, "n": 1})",
    R"({"ts": -, "n": 1})",
    R"({"ts": -01})",
    R"({"ts": 12a, "n": 1})",
    R"({"ts": 1.5e3, "n": 100000000})",
    R"({"ts":42,"n":9})",
    R"({"ts" : 42 , "n" : 9 })",
    // Strings read from their token when they have no escape, and what may follow them.
    R"({"user":"plain","ts":1})",
    R"({"user" : "spaced" , "ts" : 1 })",
    R"({"user":"","ts":1})",
    R"({"user":"a string of more than thirty-two bytes, with no escape in it at all"})",
    R"({"user":"a string of more than thirty-two bytes, then an escape " at the end"})",
    R"({"user":"ends in an escaped backslash \"})",
    R"({"user":"x" "y"})",
    R"({"user":"x": 1})",
    R"({"user":"x"])",
    R"({"user":"x"y})",
    R"({"user":"été"})",
};

TEST(LineDecoderTest, FastPathIsTakenOnThisMachineForPlainLines) {
  std::unique_ptr<JsonFastPath> fast = MakeJsonFastPath(TestSchema());
  if (fast == nullptr) {
    GTEST_SKIP() << "CPU without AVX2: every line takes the reference path";
  }
  Row row(TestSchema().layout());
  EXPECT_TRUE(fast->Decode(R"({"ts": 1000, "user": "ann", "amount": 2.5, "n": 7, "ok": true})",
                           false, row));
  EXPECT_EQ(TestSchema().RowToJson(row),
            R"({"ts":1000,"user":"ann","amount":2.5,"n":7,"ok":true})");
  // Trailing content, a bad literal in an unused field, a raw control character: not accepted.
  EXPECT_FALSE(fast->Decode(R"({"ts": 1} {"ts": 2})", false, row));
  EXPECT_FALSE(fast->Decode(R"({"other": tru, "ts": 1})", false, row));
  EXPECT_FALSE(fast->Decode("{\"user\": \"a\x01\"}", false, row));
}

TEST(LineDecoderTest, JsonLinesGiveTheReferenceRowOrReason) {
  LineDecoder decoder(LineDecoder::Format::kJson, TestSchema());
  Row row;
  for (const std::string& line : kJsonLines) {
    EXPECT_EQ(Decoded(decoder, line, row), Reference(true, line)) << line;
    for (const std::string& after : kAfterLine) {
      EXPECT_EQ(DecodedInPlace(decoder, line, after, row), Reference(true, line))
          << line << " then " << after;
    }
  }
  EXPECT_EQ(Decoded(decoder, R"({"user": "a", "user": "b"})", row),
            R"({"ts":null,"user":"b","amount":null,"n":null,"ok":null})");
  EXPECT_EQ(Decoded(decoder, R"({"ts": 1} {"ts": 2})", row), "error: invalid JSON");
  EXPECT_EQ(Decoded(decoder, R"({"ts": 1.0})", row),
            "error: field \"ts\": expected timestamp, got 1.0");
}

// nlohmann's lexer reads a NUL byte as the end of its input: a line with a NUL after its object
// was read as that object and the rest of the line (here a second record) dropped silently.
TEST(LineDecoderTest, AJsonLineWithANulByteIsInvalid) {
  LineDecoder decoder(LineDecoder::Format::kJson, TestSchema());
  Row row;
  const std::string line = std::string(R"({"ts": 1})") + '\0' + R"({"ts": 2})";
  EXPECT_EQ(Decoded(decoder, line, row), "error: invalid JSON: a NUL byte at column 10");
  EXPECT_EQ(Decoded(decoder, line, row), Reference(true, line));
  for (const std::string& after : kAfterLine) {
    EXPECT_EQ(DecodedInPlace(decoder, line, after, row), Reference(true, line)) << after;
  }
  EXPECT_EQ(Decoded(decoder, std::string("{\"user\": \"a") + '\0' + "b\"}", row),
            "error: invalid JSON: a NUL byte at column 12");
}

// Invalid UTF-8 inside a JSON string was a bare "invalid JSON": the reason names it and the
// column (1-based, in bytes) of the first byte of the ill-formed sequence, on the file and Kafka
// sources' path (LineDecoder) and the reference one alike. A syntax error before it stays one.
TEST(LineDecoderTest, InvalidUtf8InAJsonLineIsNamedWithItsColumn) {
  LineDecoder decoder(LineDecoder::Format::kJson, TestSchema());
  Row row;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{\"user\": \"caf\xC3\x28\"}", "error: invalid UTF-8 at column 14"},   // bad 2nd byte
      {"{\"user\": \"x\xFF\"}", "error: invalid UTF-8 at column 12"},         // never a lead
      {"{\"user\": \"x\xE2\x82\"}", "error: invalid UTF-8 at column 12"},     // truncated
      {"{\"user\": \"\xED\xA0\x80\"}", "error: invalid UTF-8 at column 11"},  // a surrogate
      {"{\"user\": \"\xC0\xAF\"}", "error: invalid UTF-8 at column 11"},      // overlong
      {"{\"\xF5\x80\x80\x80\": 1}", "error: invalid UTF-8 at column 3"},      // in a key
      {"{\"user\": \"\xE2\x82\xAC\", \"n\": 1, \"x\": \"\x80\"}",
       "error: invalid UTF-8 at column 31"},                        // after a valid one
      {"{\"ts\": 1,, \"user\": \"\xFF\"}", "error: invalid JSON"},  // the syntax error first
  };
  for (const auto& [line, want] : cases) {
    EXPECT_EQ(Decoded(decoder, line, row), want) << line;
    EXPECT_EQ(Decoded(decoder, line, row), Reference(true, line)) << line;
  }
  // Valid multi-byte UTF-8 is no error.
  EXPECT_EQ(Decoded(decoder, "{\"user\": \"\xE2\x82\xAC\xF0\x9F\x98\x80\"}", row),
            "{\"ts\":null,\"user\":\"\xE2\x82\xAC\xF0\x9F\x98\x80\",\"amount\":null,\"n\":null,"
            "\"ok\":null}");
}

// std::from_chars reads "nan", "inf" and "infinity": a CSV double field took them, and the
// sinks wrote them as null. They are no decimal numbers (JSON refuses NaN and 1e400 too).
// Java's spellings of NaN and the infinities are doubles (Flink's CSV and JSON formats read and
// write them; tidemark's sinks write them as JSON strings); other spellings are bad values.
TEST(LineDecoderTest, CsvDoublesTakeOnlyJavasNonFiniteSpellings) {
  LineDecoder decoder(LineDecoder::Format::kCsv, TestSchema());
  LineDecoder json(LineDecoder::Format::kJson, TestSchema());
  Row row;
  EXPECT_EQ(Decoded(decoder, "1000,ann,NaN,7,true", row),
            R"({"ts":1000,"user":"ann","amount":"NaN","n":7,"ok":true})");
  EXPECT_EQ(Decoded(decoder, "1000,ann,-Infinity,7,true", row),
            R"({"ts":1000,"user":"ann","amount":"-Infinity","n":7,"ok":true})");
  EXPECT_EQ(Decoded(decoder, "1000,ann,+Infinity,7,true", row),
            R"({"ts":1000,"user":"ann","amount":"Infinity","n":7,"ok":true})");
  EXPECT_EQ(
      Decoded(json, R"({"ts": 1000, "user": "ann", "amount": "Infinity", "n": 7, "ok": true})",
              row),
      R"({"ts":1000,"user":"ann","amount":"Infinity","n":7,"ok":true})");
  EXPECT_EQ(
      Decoded(json, R"({"ts": 1000, "user": "ann", "amount": "nan", "n": 7, "ok": true})", row),
      "error: field \"amount\": expected double, got \"nan\"");
  for (const std::string word : {"nan", "inf", "-inf", "infinity", "INF", "1e400"}) {
    const std::string line = "1000,ann," + word + ",7,true";
    EXPECT_EQ(Decoded(decoder, line, row),
              "error: field 3 \"amount\": expected double, got \"" + word + "\"")
        << line;
    EXPECT_EQ(Decoded(decoder, line, row), Reference(false, line));
  }
  EXPECT_EQ(Decoded(decoder, "1000,ann,-0.5e3,7,true", row),
            R"({"ts":1000,"user":"ann","amount":-500.0,"n":7,"ok":true})");
}

// A double too close to zero is zero, as the JSON path reads it (and Java's parseDouble);
// from_chars calls it out of range, as it does 1e400, which stays a bad value.
TEST(LineDecoderTest, CsvDoublesTooSmallAreZeroAsInJson) {
  LineDecoder csv(LineDecoder::Format::kCsv, TestSchema());
  LineDecoder json(LineDecoder::Format::kJson, TestSchema());
  Row row;
  EXPECT_EQ(Decoded(csv, "1000,ann,1e-400,7,true", row),
            R"({"ts":1000,"user":"ann","amount":0.0,"n":7,"ok":true})");
  EXPECT_EQ(
      Decoded(json, R"({"ts": 1000, "user": "ann", "amount": 1e-400, "n": 7, "ok": true})", row),
      R"({"ts":1000,"user":"ann","amount":0.0,"n":7,"ok":true})");
  EXPECT_EQ(Decoded(csv, "1000,ann,-1e-400,7,true", row),
            R"({"ts":1000,"user":"ann","amount":-0.0,"n":7,"ok":true})");
  EXPECT_EQ(Decoded(csv, "1000,ann,4.9e-324,7,true", row),
            R"({"ts":1000,"user":"ann","amount":5e-324,"n":7,"ok":true})");
  EXPECT_EQ(Decoded(csv, "1000,ann,-1e400,7,true", row),
            R"(error: field 3 "amount": expected double, got "-1e400")");
}

// 1e400 is valid JSON but no double: the JSON path names the number, as CSV does, in a field of
// the schema or not; a number too long to show is cut.
TEST(LineDecoderTest, JsonNumbersOutOfTheDoubleRangeAreNamed) {
  LineDecoder json(LineDecoder::Format::kJson, TestSchema());
  Row row;
  EXPECT_EQ(Decoded(json, R"({"ts":1000,"amount":-1e400})", row),
            R"(error: a number out of the double range: "-1e400")");
  EXPECT_EQ(Decoded(json, R"({"other": 1e999999, "ts": 1})", row),
            R"(error: a number out of the double range: "1e999999")");
  EXPECT_EQ(Decoded(json, R"({"amount": 1)" + std::string(50, '0') + R"(e400})", row),
            R"(error: a number out of the double range: "1)" + std::string(39, '0') + R"(...")");
  // The first fault found is named: a syntax error before the number, the number before one.
  EXPECT_EQ(Decoded(json, R"({"amount" 1e400})", row), "error: invalid JSON");
  EXPECT_EQ(Decoded(json, R"({"amount": 1e400)", row),
            R"(error: a number out of the double range: "1e400")");
}

TEST(LineDecoderTest, DepthLimitIsKeptInFieldsTheRowDoesNotUse) {
  LineDecoder decoder(LineDecoder::Format::kJson, TestSchema());
  Row row;
  // The object is level 1, so 999 arrays inside it reach 1000 levels: allowed; 1000 are not.
  const std::string ok =
      "{\"x\": " + std::string(999, '[') + std::string(999, ']') + ", \"ts\": 4}";
  const std::string deep =
      "{\"x\": " + std::string(1000, '[') + std::string(1000, ']') + ", \"ts\": 4}";
  EXPECT_EQ(Decoded(decoder, ok, row), R"({"ts":4,"user":null,"amount":null,"n":null,"ok":null})");
  EXPECT_EQ(Decoded(decoder, deep, row), "error: JSON nests deeper than 1000 levels");
  EXPECT_EQ(Decoded(decoder, deep, row), Reference(true, deep));
}

const std::vector<std::string> kCsvLines = {
    "1000,ann,2.5,7,true",
    "1000,\"a,\"\"b\"\"\",2.5,7,false",
    ",,,,",
    "1000,\"\",2.5,7,true",
    "1000,ann,2.5,7",
    "1000,ann,2.5,7,true,extra",
    "1000,\"unterminated,2.5,7,true",
    "1000,\"x\"y,2.5,7,true",
    "1.5,ann,2.5,7,true",
    "1000,ann,abc,7,true",
    "1000,ann,2.5,7,yes",
    "1000,a\"b,2.5,7,true",
    "99999999999999999999,ann,2.5,7,true",
    "1000,ann,1e400,7,true",
    "+1,ann,2.5,7,true",
    "1000,ann,2.5,7,true,",
    "\"1000\",\"ann\",\"2.5\",\"7\",\"true\"",
};

TEST(LineDecoderTest, CsvLinesGiveTheReferenceRowOrReason) {
  LineDecoder decoder(LineDecoder::Format::kCsv, TestSchema());
  Row row;
  for (const std::string& line : kCsvLines) {
    EXPECT_EQ(Decoded(decoder, line, row), Reference(false, line)) << line;
  }
  EXPECT_EQ(Decoded(decoder, "1000,\"a,\"\"b\"\"\",2.5,7,false", row),
            R"({"ts":1000,"user":"a,\"b\"","amount":2.5,"n":7,"ok":false})");
}

// Mutations of the lines above (bytes flipped, cut, duplicated, spliced), seeded: the same
// answers as the reference, for JSON and CSV alike.
TEST(LineDecoderTest, MutatedLinesGiveTheReferenceRowOrReason) {
  std::mt19937 rng(17);
  const std::string alphabet = "{}[]\":,\\ 01-.eEtrufalsn\x01\xff\xc3\xa9u";
  for (const bool json : {true, false}) {
    LineDecoder decoder(json ? LineDecoder::Format::kJson : LineDecoder::Format::kCsv,
                        TestSchema());
    Row row;
    const std::vector<std::string>& seeds = json ? kJsonLines : kCsvLines;
    int compared = 0;
    for (int i = 0; i < 20000; ++i) {
      std::string line = seeds[rng() % seeds.size()];
      const int edits = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < edits && !line.empty(); ++e) {
        const size_t at = rng() % line.size();
        switch (rng() % 4) {
          case 0:
            line[at] = alphabet[rng() % alphabet.size()];
            break;
          case 1:
            line.erase(at, 1 + rng() % 3);
            break;
          case 2:
            line.insert(at, 1, alphabet[rng() % alphabet.size()]);
            break;
          default:
            line.insert(at, line.substr(0, at));
            break;
        }
      }
      if (line.find_first_not_of(" \t") == std::string::npos) {
        continue;  // blank lines never reach a decoder
      }
      const std::string reference = Reference(json, line);
      ASSERT_EQ(Decoded(decoder, line, row), reference) << (json ? "json: " : "csv: ") << line;
      const std::string& after =
          i % 2 == 0 ? kAfterLine[rng() % kAfterLine.size()] : seeds[rng() % seeds.size()];
      ASSERT_EQ(DecodedInPlace(decoder, line, after, row), reference)
          << (json ? "json: " : "csv: ") << line << " then " << after;
      ++compared;
    }
    EXPECT_GT(compared, 19000);
  }
}

// A file of `lines` ('\n' after each), removed with the object.
class LinesFile {
 public:
  explicit LinesFile(const std::vector<std::string>& lines) {
    static int n = 0;
    path_ = (std::filesystem::temp_directory_path() /
             ("tidemark-line-decoder-" + std::to_string(::getpid()) + "-" + std::to_string(n++) +
              ".jsonl"))
                .string();
    std::ofstream out(path_, std::ios::binary);
    for (const std::string& line : lines) {
      out << line << '\n';
    }
  }
  ~LinesFile() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Reads `files` line by line through LineReader::Next(std::string_view&), the readers taking
// turns line by line as the file source's do, decoding each non-blank line with one decoder's
// DecodeLent and the reader's Ahead(); every answer must be the reference decoder's. Returns
// the lines compared.
int64_t CompareLentLines(LineDecoder& decoder, const std::vector<const LinesFile*>& files) {
  std::vector<std::unique_ptr<LineReader>> readers;
  for (const LinesFile* f : files) {
    readers.push_back(std::make_unique<LineReader>(f->path(), 1 << 20));
  }
  Row row;
  int64_t compared = 0;
  size_t open = readers.size();
  while (open > 0) {
    for (auto& reader : readers) {
      if (!reader) {
        continue;
      }
      std::string_view line;
      if (reader->Next(line) != LineReader::Result::kLine) {
        reader.reset();
        --open;
        continue;
      }
      if (line.find_first_not_of(" \t") == std::string::npos) {
        continue;  // blank lines never reach a decoder
      }
      std::string reason;
      const std::string got = decoder.DecodeLent(line, reader->Ahead(), row, &reason)
                                  ? TestSchema().RowToJson(row)
                                  : "error: " + reason;
      const std::string want = Reference(true, std::string(line));
      EXPECT_EQ(got, want) << "line " << reader->line_number() << ": " << line;
      if (got != want) {
        return compared;
      }
      ++compared;
    }
  }
  return compared;
}

// Plain lines, many per read buffer: one stage 1 per buffer serves nearly all of them (those
// that straddle two reads are parsed alone), with the same rows as the reference.
TEST(LineDecoderTest, LentLinesAreParsedAsABufferOfDocuments) {
  if (MakeJsonFastPath(TestSchema()) == nullptr) {
    GTEST_SKIP() << "CPU without AVX2: every line takes the reference path";
  }
  std::vector<std::string> lines;
  for (int i = 0; i < 20000; ++i) {
    lines.push_back("{\"ts\": " + std::to_string(1000 + i) + ", \"user\": \"user_" +
                    std::to_string(i % 97) + "\", \"amount\": " + std::to_string(i % 13) +
                    ".5, \"n\": " + std::to_string(i) + ", \"ok\": " + (i % 2 ? "true" : "false") +
                    "}");
  }
  const LinesFile file(lines);
  LineDecoder decoder(LineDecoder::Format::kJson, TestSchema());
  EXPECT_EQ(CompareLentLines(decoder, {&file}), 20000);
  EXPECT_GT(decoder.json_stream_lines(), 19000);
}

// Every hostile line of kJsonLines and their mutations, between plain lines, with objects that
// run over two lines, blank and indented lines, CRLF endings and lines longer than a read
// buffer: the same rows and reasons as the reference, line by line, whichever lines the
// document streams vouch for. `plain_run`: plain lines between two others, on average (a
// stream gives up the rest of its buffer at a line it cannot read, so with long runs of plain
// lines most hostile lines meet a stream).
std::vector<std::string> HostileLines(uint32_t seed, int count, int plain_run) {
  std::mt19937 rng(seed);
  const std::string alphabet = "{}[]\":,\\ 01-.eEtrufalsn\x01\xff\xc3\xa9u\n\r\t";
  std::vector<std::string> lines;
  auto plain = [&](int i) {
    return "{\"ts\": " + std::to_string(i) + ", \"user\": \"u" + std::to_string(i % 7) + "\"}";
  };
  for (int i = 0; i < count; ++i) {
    if (rng() % static_cast<uint32_t>(plain_run) != 0) {
      lines.push_back(plain(i));
      continue;
    }
    switch (rng() % 8) {
      case 0:
        lines.push_back(kJsonLines[rng() % kJsonLines.size()]);
        break;
      case 1: {
        std::string line = kJsonLines[rng() % kJsonLines.size()];
        for (int e = 0; e < 2 && !line.empty(); ++e) {
          const size_t at = rng() % line.size();
          line.insert(at, 1, alphabet[rng() % alphabet.size()]);  // may cut it into two lines
        }
        lines.push_back(line);
        break;
      }
      case 2:
        lines.push_back(rng() % 2 ? "" : "   ");
        break;
      case 3:
        lines.push_back("  " + plain(i));
        break;
      case 4:
        lines.push_back(plain(i) + "\r");
        break;
      case 5:
        lines.push_back("{\"ts\": " + std::to_string(i) + ",");
        lines.push_back("\"n\": 1}");
        break;
      case 6:
        lines.push_back(plain(i) + " " + plain(i + 1));
        break;
      default:  // now and then a line longer than a read buffer
        lines.push_back(rng() % 32 == 0
                            ? "{\"user\": \"" + std::string(70000 + rng() % 100, 'x') + "\"}"
                            : plain(i) + "   ");
        break;
    }
  }
  return lines;
}

TEST(LineDecoderTest, LentHostileLinesGiveTheReferenceRowOrReason) {
  for (const int plain_run : {1, 3, 300}) {
    const LinesFile file(HostileLines(29 + static_cast<uint32_t>(plain_run), 30000, plain_run));
    LineDecoder decoder(LineDecoder::Format::kJson, TestSchema());
    const int64_t compared = CompareLentLines(decoder, {&file});
    EXPECT_GT(compared, 25000) << "plain_run " << plain_run;
    if (plain_run == 300 && MakeJsonFastPath(TestSchema()) != nullptr) {
      EXPECT_GT(decoder.json_stream_lines(), compared / 3);
    }
  }
}

// Readers taking turns line by line over their own files share the decoder: each buffer keeps
// its own document stream, and a buffer refilled in the same memory is never read with the
// documents of its earlier contents.
TEST(LineDecoderTest, ReadersTakingTurnsKeepTheirOwnStreams) {
  std::vector<std::vector<std::string>> contents(6);
  for (size_t f = 0; f < contents.size(); ++f) {
    for (int i = 0; i < 5000; ++i) {
      // Different line lengths per file, so the buffers' fills fall at different lines.
      contents[f].push_back("{\"ts\": " + std::to_string(i) + ", \"user\": \"" +
                            std::string(f * 3 + i % 5, 'a' + f) +
                            "\", \"n\": " + std::to_string(f) + "}");
    }
  }
  std::vector<std::unique_ptr<LinesFile>> files;
  std::vector<const LinesFile*> pointers;
  for (const auto& c : contents) {
    files.push_back(std::make_unique<LinesFile>(c));
    pointers.push_back(files.back().get());
  }
  LineDecoder decoder(LineDecoder::Format::kJson, TestSchema());
  EXPECT_EQ(CompareLentLines(decoder, pointers), 30000);
}

// Byte ranges of one file read one after another, each by a reader made in the memory of the
// one before (as a split reader's next range is): a buffer's document stream never serves the
// next reader's buffer, though the addresses are the same. A line with a tab ends each range,
// so the previous stream is left part-way through its documents.
TEST(LineDecoderTest, ReadersMadeInTheSameMemoryDoNotShareStreams) {
  std::vector<std::string> lines;
  for (int i = 1; i <= 300; ++i) {
    // {"user":"u","ts":N,"amount":NN}, 32 bytes for N < 10, with a tab before the amount of
    // lines 3, 9, 15, ...: the first 96-byte range ends with one (its stream stops before that
    // line's document), the second does not (its last line starts where that document did).
    const bool tab = i % 6 == 3;
    std::string amount = std::to_string(tab ? i % 10 : 10 + i % 90);
    if (tab) {
      amount.insert(amount.begin(), '\t');
    }
    lines.push_back("{\"user\":\"u\",\"ts\":" + std::to_string(i) + ",\"amount\":" + amount + "}");
  }
  const Schema schema(
      {{"user", FieldType::kString}, {"ts", FieldType::kTimestamp}, {"amount", FieldType::kInt64}});
  const LinesFile file(lines);
  LineDecoder decoder(LineDecoder::Format::kJson, schema);
  std::optional<LineReader> reader;  // every range's reader in the same storage
  int64_t offset = 0;
  int64_t line_number = 0;
  int64_t compared = 0;
  const auto size = static_cast<int64_t>(std::filesystem::file_size(file.path()));
  for (const int64_t range : {96, 96, 200, 96, 1000, 96}) {
    reader.emplace(file.path(), 1 << 20, offset, line_number, offset + range);
    std::string_view line;
    Row row;
    while (reader->Next(line) == LineReader::Result::kLine) {
      std::string reason;
      const std::string got = decoder.DecodeLent(line, reader->Ahead(), row, &reason)
                                  ? schema.RowToJson(row)
                                  : "error: " + reason;
      std::optional<Row> want_row = JsonLineToRow(std::string(line), schema, &reason);
      const std::string want = want_row ? schema.RowToJson(*want_row) : "error: " + reason;
      ASSERT_EQ(got, want) << "line " << reader->line_number() << ": " << line;
      ++compared;
    }
    offset = reader->bytes_read();
    line_number = reader->line_number();
    if (offset >= size) {
      break;
    }
  }
  EXPECT_GT(compared, 40);
  EXPECT_GT(decoder.json_stream_lines(), 0);
}

// The last complete line of a read buffer, an object followed by the start of another value:
// simdjson's stage 1 drops an unfinished value at the end of its input, so the stream shows no
// document after the object; the line is still refused, as the reference refuses it.
TEST(LineDecoderTest, TheBuffersLastLineIsCheckedWhole) {
  for (const std::string tail :
       {" [", "{", " \"abc", "{\"user\":\"x\"", "[1,", "[[", " {\"a\":", " x", ","}) {
    // Plain lines up to just before 64 KiB, the hostile one's '\n' the last in the first read.
    const std::string bad = "{\"ts\": 999999, \"n\": 1}" + tail;
    std::vector<std::string> lines;
    size_t bytes = 0;
    for (int i = 0;; ++i) {
      std::string line = "{\"ts\": " + std::to_string(i) + ", \"n\": 2}";
      if (bytes + line.size() + 1 + bad.size() + 1 > 65536 - 20) {
        lines.back().append(65536 - 20 - bytes - bad.size() - 1, ' ');
        break;
      }
      bytes += line.size() + 1;
      lines.push_back(std::move(line));
    }
    lines.push_back(bad);
    for (int i = 0; i < 50; ++i) {  // the first of them runs past the first read
      lines.push_back("{\"ts\": " + std::to_string(i) + ", \"n\": 3, \"user\": \"" +
                      std::string(40, 'v') + "\"}");
    }
    const LinesFile file(lines);
    LineDecoder decoder(LineDecoder::Format::kJson, TestSchema());
    EXPECT_EQ(CompareLentLines(decoder, {&file}), static_cast<int64_t>(lines.size())) << tail;
    // (An unterminated string fails the buffer's whole stage 1: its lines are then parsed alone.)
    if (MakeJsonFastPath(TestSchema()) != nullptr && tail.find('"') == std::string::npos) {
      EXPECT_GT(decoder.json_stream_lines(), 1000) << tail;
    }
  }
}

// Files of `{"ts": i, "n": f}` lines, file f holding sizes[f] of them.
struct NumberedFiles {
  explicit NumberedFiles(const std::vector<int>& sizes) {
    for (size_t f = 0; f < sizes.size(); ++f) {
      std::vector<std::string> lines;
      for (int i = 0; i < sizes[f]; ++i) {
        lines.push_back("{\"ts\": " + std::to_string(i) + ", \"n\": " + std::to_string(f) + "}");
      }
      files.push_back(std::make_unique<LinesFile>(lines));
      pointers.push_back(files.back().get());
    }
  }
  std::vector<std::unique_ptr<LinesFile>> files;
  std::vector<const LinesFile*> pointers;
};

// More readers taking turns than the decoder keeps streams for: the readers without one parse
// their lines one by one instead of taking a stream from another at every line (which would run
// stage 1 over the rest of a buffer per line); the streams still serve the readers that have
// them.
TEST(LineDecoderTest, ReadersBeyondTheStreamsParseLineByLine) {
  const NumberedFiles files({3000, 3000, 3000, 3000, 3000, 3000, 3000, 3000});
  LineDecoder decoder(LineDecoder::Format::kJson, TestSchema());
  EXPECT_EQ(CompareLentLines(decoder, files.pointers), 24000);
  if (MakeJsonFastPath(TestSchema()) != nullptr) {
    // Four of the eight readers have a stream: about half the lines.
    EXPECT_GT(decoder.json_stream_lines(), 10000);
    EXPECT_LT(decoder.json_stream_lines(), 14000);
  }
}

// Readers that are done leave their streams idle: the readers still reading take them over.
TEST(LineDecoderTest, StreamsOfFinishedReadersGoToTheOthers) {
  const NumberedFiles files({100, 100, 100, 100, 20000, 20000, 20000, 20000});  // short, then long
  LineDecoder decoder(LineDecoder::Format::kJson, TestSchema());
  EXPECT_EQ(CompareLentLines(decoder, files.pointers), 80400);
  if (MakeJsonFastPath(TestSchema()) != nullptr) {
    EXPECT_GT(decoder.json_stream_lines(), 70000);
  }
}

}  // namespace
}  // namespace tidemark
