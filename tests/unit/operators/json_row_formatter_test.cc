#include "operators/json_row_formatter.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

std::string Format(const Schema& schema, const Row& row) {
  std::string out = "prefix|";
  JsonRowFormatter(schema).Append(row, out);
  return out.substr(7);
}

TEST(JsonRowFormatterTest, WritesCompactObjects) {
  Schema schema({{"window_start", FieldType::kTimestamp},
                 {"key", FieldType::kString},
                 {"count", FieldType::kInt64},
                 {"ok", FieldType::kBool},
                 {"x", FieldType::kDouble}});
  EXPECT_EQ(Format(schema, {Value{int64_t{5000}}, Value{std::string("a\"b")}, Value{int64_t{-3}},
                            Value{true}, Value{std::monostate{}}}),
            R"({"window_start":5000,"key":"a\"b","count":-3,"ok":true,"x":null})");
  EXPECT_EQ(Format(Schema(), {}), "{}");
  EXPECT_EQ(Format(schema, {Value{int64_t{1}}}), R"({"window_start":1})");  // short row
}

// Byte for byte what Schema::RowToJson writes, on every kind of value it may meet.
TEST(JsonRowFormatterTest, EqualsRowToJsonOnEveryKindOfValue) {
  std::vector<Value> values = {Value{std::monostate{}},
                               Value{int64_t{0}},
                               Value{std::numeric_limits<int64_t>::min()},
                               Value{std::numeric_limits<int64_t>::max()},
                               Value{true},
                               Value{false},
                               Value{0.0},
                               Value{-0.0},
                               Value{2.0},
                               Value{1.5},
                               Value{0.1},
                               Value{1e20},
                               Value{1e-7},
                               Value{123456789012345678.0},
                               Value{std::nan("")},
                               Value{std::numeric_limits<double>::infinity()},
                               Value{std::string()},
                               Value{std::string("plain")},
                               Value{std::string("\\ \" / \b\f\n\r\t")},
                               Value{std::string("\x01\x1f\x7f", 3)},
                               Value{std::string("nul\0byte", 8)},
                               Value{std::string("caf\xc3\xa9 \xe2\x82\xac")},
                               Value{std::string("bad \xff\xfe utf8 \xc3")}};
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) {
    std::string s;
    for (int j = 0; j < 8; ++j) {
      s.push_back(static_cast<char>(rng() & 0xff));
    }
    values.push_back(Value{s});
    values.push_back(Value{static_cast<double>(static_cast<int64_t>(rng())) /
                           static_cast<double>(1 + (rng() & 0xffff))});
    values.push_back(Value{static_cast<int64_t>(rng())});
  }
  Schema schema({{"a", FieldType::kString}, {"we\"ird\n", FieldType::kString}});
  for (const Value& a : values) {
    const Row row = {a, a};
    EXPECT_EQ(Format(schema, row), schema.RowToJson(row));
  }
  // Every class of double bit pattern (subnormals, huge and tiny exponents, NaN payloads), and
  // the UTF-8 sequences a validator can get wrong: overlong forms, surrogates, past U+10FFFF,
  // truncated sequences, and 4-byte characters.
  std::vector<Value> edge;
  for (int i = 0; i < 20000; ++i) {
    const uint64_t bits = rng();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    edge.emplace_back(d);
  }
  for (const char* s : {"\xc0\x80", "\xe0\x80\x80", "\xed\xa0\x80", "\xed\x9f\xbf",
                        "\xf4\x8f\xbf\xbf", "\xf4\x90\x80\x80", "\xf0\x9f\x98\x80", "\xe2\x82",
                        "\x80", "a\xc3\xa9\x01\"\xe2\x82\xac"}) {
    edge.emplace_back(std::string(s));
  }
  for (const Value& a : edge) {
    const Row row = {a, a};
    EXPECT_EQ(Format(schema, row), schema.RowToJson(row));
  }
  Schema dup({{"a", FieldType::kInt64}, {"a", FieldType::kInt64}});
  const Row row = {Value{int64_t{1}}, Value{int64_t{2}}};
  EXPECT_EQ(Format(dup, row), dup.RowToJson(row));
}

}  // namespace
}  // namespace tidemark
