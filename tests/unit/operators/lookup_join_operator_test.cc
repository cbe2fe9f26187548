#include "operators/lookup_join_operator.h"

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/time/manual_processing_time_service.h"
#include "sources/lookup_table_file.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

using testing::CollectingOutput;
using testing::DescribeRecord;

Schema MakeSchema(const std::vector<std::pair<std::string, FieldType>>& fields) {
  Schema s;
  for (const auto& [name, type] : fields) {
    s.Add(name, type);
  }
  return s;
}

/// A lookup join over a table file written by the test, with input rows {id string, n int64}
/// unless the test says otherwise.
class LookupJoinOperatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tm_lookup_join_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (op_) {
      op_->Close();
    }
    std::filesystem::remove_all(dir_);
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::trunc) << text;
    return path;
  }

  /// Opens the operator over `table_text` (CSV) with table schema `table`, joining input field
  /// slots `left_keys` to table slots `table_keys`.
  void Open(const std::string& table_text, const Schema& table, std::vector<int> left_keys,
            std::vector<int> table_keys, bool inner, int64_t reload_ms = 0) {
    LookupJoinOperator::Options o;
    o.file.path = Write("table.csv", table_text);
    o.file.format = "csv";
    o.table_schema = table;
    o.reader = ReadLookupTableFile;
    o.left_key_slots = std::move(left_keys);
    o.table_key_slots = std::move(table_keys);
    o.inner = inner;
    Schema joined = input_;
    for (const Field& f : table.fields()) {
      joined.Add("t_" + f.name, f.type);
    }
    o.output_layout = joined.layout();
    o.reload_interval_ms = reload_ms;
    path_ = o.file.path;
    op_ = std::make_unique<LookupJoinOperator>(o);
    OperatorContext ctx;
    ctx.output = &out_;
    ctx.processing_time = &clock_;
    op_->Open(ctx);
  }

  void Element(const std::vector<Value>& values, Timestamp ts) {
    StreamRecord r(Row::Of(input_.layout(), values), ts);
    op_->ProcessElement(r, 0);
  }

  static std::string Rec(const std::vector<Value>& values, Timestamp ts) {
    return DescribeRecord(StreamRecord(Row::FromValues(values), ts));
  }

  std::filesystem::path dir_;
  std::string path_;
  Schema input_ = MakeSchema({{"id", FieldType::kString}, {"n", FieldType::kInt64}});
  ManualProcessingTimeService clock_;
  CollectingOutput out_;
  std::unique_ptr<LookupJoinOperator> op_;
};

const Schema kAirports = MakeSchema({{"code", FieldType::kString}, {"name", FieldType::kString}});

TEST_F(LookupJoinOperatorTest, HitAppendsTheTableRowAndKeepsTheTimestamp) {
  Open("FRA,Frankfurt\nLHR,Heathrow\n", kAirports, {0}, {0}, /*inner=*/true);
  Element({"LHR", int64_t{7}}, 1000);
  EXPECT_EQ(out_.Describe(),
            (std::vector<std::string>{Rec({"LHR", int64_t{7}, "LHR", "Heathrow"}, 1000)}));
  EXPECT_EQ(op_->table_rows(), 2u);
  EXPECT_EQ(op_->loads(), 1);
}

TEST_F(LookupJoinOperatorTest, MissInALeftJoinGivesNullsForTheTableFields) {
  Open("FRA,Frankfurt\n", kAirports, {0}, {0}, /*inner=*/false);
  Element({"VIE", int64_t{1}}, 5);
  Element({"FRA", int64_t{2}}, 6);
  EXPECT_EQ(out_.Describe(),
            (std::vector<std::string>{Rec({"VIE", int64_t{1}, Value{}, Value{}}, 5),
                                      Rec({"FRA", int64_t{2}, "FRA", "Frankfurt"}, 6)}));
}

TEST_F(LookupJoinOperatorTest, MissInAnInnerJoinDropsTheRecord) {
  Open("FRA,Frankfurt\n", kAirports, {0}, {0}, /*inner=*/true);
  Element({"VIE", int64_t{1}}, 5);
  Element({"FRA", int64_t{2}}, 6);
  EXPECT_EQ(out_.Describe(),
            (std::vector<std::string>{Rec({"FRA", int64_t{2}, "FRA", "Frankfurt"}, 6)}));
}

// Flink's lookup function returns every table row of the key, and the join emits one row per
// returned row (a JDBC table without a unique key does the same): duplicates are kept, here in
// file order.
TEST_F(LookupJoinOperatorTest, DuplicateKeysInTheTableGiveOneRowEachInFileOrder) {
  Open("FRA,Frankfurt\nLHR,Heathrow\nFRA,Frankfurt Main\n", kAirports, {0}, {0}, true);
  Element({"FRA", int64_t{1}}, 3);
  Element({"LHR", int64_t{2}}, 4);
  EXPECT_EQ(out_.Describe(),
            (std::vector<std::string>{Rec({"FRA", int64_t{1}, "FRA", "Frankfurt"}, 3),
                                      Rec({"FRA", int64_t{1}, "FRA", "Frankfurt Main"}, 3),
                                      Rec({"LHR", int64_t{2}, "LHR", "Heathrow"}, 4)}));
}

// Two key columns in a different order than the table's; an int64 key matches a timestamp
// column holding the same number.
TEST_F(LookupJoinOperatorTest, MultipleKeyColumnsMustAllBeEqual) {
  const Schema table = MakeSchema({{"slot", FieldType::kTimestamp},
                                   {"code", FieldType::kString},
                                   {"gate", FieldType::kString}});
  Open("7,FRA,A1\n7,LHR,B2\n8,FRA,C3\n", table, {0, 1}, {1, 0}, true);
  Element({"FRA", int64_t{8}}, 1);
  Element({"LHR", int64_t{8}}, 2);  // LHR exists, but with slot 7
  Element({"LHR", int64_t{7}}, 3);
  EXPECT_EQ(out_.Describe(),
            (std::vector<std::string>{Rec({"FRA", int64_t{8}, int64_t{8}, "FRA", "C3"}, 1),
                                      Rec({"LHR", int64_t{7}, int64_t{7}, "LHR", "B2"}, 3)}));
}

// SQL's `=`: a NULL key matches nothing, on either side. The CSV's empty field is NULL.
TEST_F(LookupJoinOperatorTest, NullKeysNeverMatch) {
  const Schema table = MakeSchema({{"n", FieldType::kInt64}, {"name", FieldType::kString}});
  Open(",null key\n1,one\n", table, {1}, {0}, /*inner=*/false);
  Element({"a", Value{}}, 1);
  Element({"b", int64_t{1}}, 2);
  EXPECT_EQ(out_.Describe(),
            (std::vector<std::string>{Rec({"a", Value{}, Value{}, Value{}}, 1),
                                      Rec({"b", int64_t{1}, int64_t{1}, "one"}, 2)}));
  EXPECT_EQ(op_->table_rows(), 2u);
}

// `lookup.full-cache.periodic-reload.interval`: every interval of processing time the file is
// checked and read again when its modification time or size changed.
TEST_F(LookupJoinOperatorTest, ReloadsTheTableWhenTheFileChanges) {
  Open("FRA,Frankfurt\n", kAirports, {0}, {0}, /*inner=*/false, /*reload_ms=*/1000);
  Element({"LHR", int64_t{1}}, 1);
  clock_.AdvanceTo(1000);  // unchanged: not read again
  EXPECT_EQ(op_->loads(), 1);
  Write("table.csv", "FRA,Frankfurt\nLHR,Heathrow\n");
  clock_.AdvanceTo(1500);  // not yet due
  Element({"LHR", int64_t{2}}, 2);
  clock_.AdvanceTo(2000);
  EXPECT_EQ(op_->loads(), 2);
  EXPECT_EQ(op_->table_rows(), 2u);
  Element({"LHR", int64_t{3}}, 3);
  EXPECT_EQ(out_.Describe(),
            (std::vector<std::string>{Rec({"LHR", int64_t{1}, Value{}, Value{}}, 1),
                                      Rec({"LHR", int64_t{2}, Value{}, Value{}}, 2),
                                      Rec({"LHR", int64_t{3}, "LHR", "Heathrow"}, 3)}));
  EXPECT_EQ(clock_.NumPendingTimers(), 1u);
  op_->Close();
  EXPECT_EQ(clock_.NumPendingTimers(), 0u);
}

TEST_F(LookupJoinOperatorTest, BadTableLineIsAFileLineErrorAtOpen) {
  const Schema table = MakeSchema({{"n", FieldType::kInt64}, {"name", FieldType::kString}});
  try {
    Open("1,one\n2,two\nthree,3\n", table, {1}, {0}, true);
    FAIL() << "opened";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), path_ + ":3: field 1 \"n\": expected int64, got \"three\"");
  }
}

TEST_F(LookupJoinOperatorTest, ReadsJsonLinesTables) {
  LookupJoinOperator::Options o;
  o.file.path = Write("table.jsonl", "{\"code\":\"FRA\",\"name\":\"Frankfurt\"}\n\n");
  o.file.format = "jsonl";
  std::vector<std::string> rows;
  ReadLookupTableFile(o.file, kAirports, [&](const Row& row, int64_t line) {
    std::ostringstream text;
    text << line << " " << row;
    rows.push_back(text.str());
  });
  EXPECT_EQ(rows, (std::vector<std::string>{"1 [\"FRA\", \"Frankfurt\"]"}));
}

}  // namespace
}  // namespace tidemark
