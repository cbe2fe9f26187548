// SliceAggregates: the window operator's narrow slice accumulators give, after Expand, exactly the
// general AggregateAccumulators of the same elements (adds, merges, snapshot round trips).

#include <bit>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_aggregates.h"
#include "runtime/core/errors.h"

namespace tidemark {
namespace {

// Fields: id int64, ts timestamp, name string, flag bool, x double.
Schema InputSchema() {
  return Schema({{"id", FieldType::kInt64},
                 {"ts", FieldType::kTimestamp},
                 {"name", FieldType::kString},
                 {"flag", FieldType::kBool},
                 {"x", FieldType::kDouble}});
}

std::vector<ResolvedAggregate> AllPreAggregating() {
  const Schema input = InputSchema();
  std::vector<ResolvedAggregate> out;
  auto add = [&](const std::string& function, const std::string& field) {
    AggregateSpec spec;
    spec.function = function;
    spec.field = field;
    spec.as = function + "_" + (field.empty() ? "all" : field) + std::to_string(out.size());
    out.push_back(ResolveAggregate(spec, input));
  };
  add("count", "");
  add("count", "name");
  add("sum", "id");
  add("sum", "ts");
  for (const char* f : {"min", "max", "first", "last"}) {
    add(f, "id");
    add(f, "ts");
    add(f, "name");
    add(f, "flag");
  }
  add("first", "x");
  add("last", "x");
  return out;
}

void ExpectSame(const AggregateAccumulator& a, const AggregateAccumulator& b, size_t i) {
  EXPECT_EQ(a.count, b.count) << "aggregate " << i;
  EXPECT_EQ(a.int_sum, b.int_sum) << "aggregate " << i;
  EXPECT_EQ(std::bit_cast<uint64_t>(a.double_sum), std::bit_cast<uint64_t>(b.double_sum))
      << "aggregate " << i;
  EXPECT_EQ(a.value, b.value) << "aggregate " << i;
  EXPECT_EQ(a.seq, b.seq) << "aggregate " << i;
}

// Rows with NULLs, negative and wrapping int64s, repeated and shrinking strings, both bools.
std::vector<Row> Rows() {
  std::vector<Row> rows;
  const Value null;
  rows.push_back(Row{Value(int64_t{5}), Value(int64_t{100}), Value(std::string("mango")),
                     Value(true), Value(0.1)});
  rows.push_back(Row{Value(int64_t{-7}), null, Value(std::string("apple-longer-than-sso-buffer")),
                     Value(false), Value(-0.0)});
  rows.push_back(Row{null, Value(int64_t{-3}), null, null, null});
  rows.push_back(Row{Value(INT64_MAX), Value(int64_t{7}), Value(std::string("zebra")), Value(true),
                     Value(1e300)});
  rows.push_back(Row{Value(int64_t{2}), Value(int64_t{7}), Value(std::string("apple")),
                     Value(false), Value(2.5)});
  return rows;
}

TEST(SliceAggregatesTest, AddThenExpandEqualsTheGeneralAccumulators) {
  const std::vector<ResolvedAggregate> aggs = AllPreAggregating();
  AggregatingWindowFunction function(
      aggs, false, AggregatingWindowFunction::OutputLayout({}, aggs, false, false));
  ASSERT_TRUE(function.CanPreAggregate());
  const SliceAggregates narrow(aggs);
  // count 1 + 1, sums 3 + 3, min/max 2 each (8), first/last 3 each (8 + 2).
  EXPECT_EQ(narrow.words(), 2u + 6u + 16u + 30u);
  EXPECT_TRUE(narrow.has_strings());

  const std::vector<Row> rows = Rows();
  std::vector<AggregateAccumulator> general(aggs.size());
  std::vector<uint64_t> words(narrow.words(), 0);
  AccumulatorStrings strings;
  for (const Row& row : rows) {
    const StreamRecord record(row, 0);
    function.Accumulate(general.data(), record);
    // Accumulate numbered the element; the narrow form gets the same number.
    narrow.Add(words.data(), row, function.NextArrival() - 1, strings);
  }
  std::vector<AggregateAccumulator> expanded(aggs.size());
  narrow.Expand(words.data(), expanded.data(), strings);
  for (size_t i = 0; i < aggs.size(); ++i) {
    ExpectSame(expanded[i], general[i], i);
  }
  // Spot checks of real values: min / max / first / last of the strings, the wrapped int sum.
  EXPECT_EQ(expanded[6].value, Value(std::string("apple")));   // min name
  EXPECT_EQ(expanded[10].value, Value(std::string("zebra")));  // max name
  EXPECT_EQ(expanded[14].value, Value(std::string("mango")));  // first name
  EXPECT_EQ(expanded[18].value, Value(std::string("apple")));  // last name
  EXPECT_EQ(expanded[4].value, Value(int64_t{-7}));            // min id
  EXPECT_EQ(expanded[7].value, Value(false));                  // min flag
  EXPECT_EQ(expanded[11].value, Value(true));                  // max flag
  EXPECT_EQ(expanded[2].int_sum, static_cast<int64_t>(uint64_t{5} - 7 + uint64_t{INT64_MAX} + 2));
  EXPECT_EQ(expanded[1].count, 4);  // count(name): one NULL
  EXPECT_EQ(strings.live(), 4u);    // one string per string min / max / first / last
  narrow.Release(words.data(), strings);
  EXPECT_EQ(strings.live(), 0u);
}

TEST(SliceAggregatesTest, MergeEqualsTheGeneralMergeInBothOrders) {
  const std::vector<ResolvedAggregate> aggs = AllPreAggregating();
  AggregatingWindowFunction function(
      aggs, false, AggregatingWindowFunction::OutputLayout({}, aggs, false, false));
  const SliceAggregates narrow(aggs);
  const std::vector<Row> rows = Rows();
  // Two groups: rows 0, 2, 4 and rows 1, 3 (arrival order interleaved).
  std::vector<AggregateAccumulator> ga(aggs.size());
  std::vector<AggregateAccumulator> gb(aggs.size());
  std::vector<uint64_t> wa(narrow.words(), 0);
  std::vector<uint64_t> wb(narrow.words(), 0);
  AccumulatorStrings strings;
  for (size_t r = 0; r < rows.size(); ++r) {
    const StreamRecord record(rows[r], 0);
    const bool a = r % 2 == 0;
    function.Accumulate(a ? ga.data() : gb.data(), record);
    narrow.Add(a ? wa.data() : wb.data(), rows[r], function.NextArrival() - 1, strings);
  }
  for (const bool a_into_b : {false, true}) {
    std::vector<AggregateAccumulator> general(aggs.size());
    std::vector<uint64_t> merged(narrow.words(), 0);
    function.MergeAccumulators(general.data(), a_into_b ? ga.data() : gb.data());
    function.MergeAccumulators(general.data(), a_into_b ? gb.data() : ga.data());
    narrow.Merge(merged.data(), a_into_b ? wa.data() : wb.data(), strings);
    narrow.Merge(merged.data(), a_into_b ? wb.data() : wa.data(), strings);
    std::vector<AggregateAccumulator> expanded(aggs.size());
    narrow.Expand(merged.data(), expanded.data(), strings);
    for (size_t i = 0; i < aggs.size(); ++i) {
      ExpectSame(expanded[i], general[i], i);
    }
    narrow.Release(merged.data(), strings);
  }
  EXPECT_EQ(strings.live(), 8u);  // the two groups' strings only (4 of each)
}

TEST(SliceAggregatesTest, CompressIsTheInverseOfExpandAndRejectsOtherTypes) {
  const std::vector<ResolvedAggregate> aggs = AllPreAggregating();
  const SliceAggregates narrow(aggs);
  AccumulatorStrings strings;
  std::vector<uint64_t> words(narrow.words(), 0);
  for (const Row& row : Rows()) {
    narrow.Add(words.data(), row, 42, strings);
  }
  std::vector<AggregateAccumulator> expanded(aggs.size());
  narrow.Expand(words.data(), expanded.data(), strings);
  std::vector<uint64_t> again(narrow.words(), 0);
  narrow.Compress(expanded.data(), again.data(), strings);
  std::vector<AggregateAccumulator> twice(aggs.size());
  narrow.Expand(again.data(), twice.data(), strings);
  for (size_t i = 0; i < aggs.size(); ++i) {
    ExpectSame(twice[i], expanded[i], i);
  }
  // Empty accumulators compress to zero words.
  std::vector<AggregateAccumulator> empty(aggs.size());
  std::vector<uint64_t> zero(narrow.words(), 1);
  narrow.Compress(empty.data(), zero.data(), strings);
  EXPECT_EQ(zero, std::vector<uint64_t>(narrow.words(), 0));
  // A min of int64 holding a string is not this aggregate list's state.
  expanded[8].value = Value(std::string("not an int"));
  EXPECT_THROW(narrow.Compress(expanded.data(), again.data(), strings), StateCorrupt);
}

TEST(SliceAggregatesTest, OrderDependentAggregatesMatchTooForSessions) {
  // Double sums, averages and double min / max (the flat session path's aggregates): the same
  // additions in the same order, NaN and -0.0 / 0.0 kept as CompareValues keeps them.
  const Schema input = InputSchema();
  std::vector<ResolvedAggregate> aggs;
  for (const auto& [function, field] :
       std::vector<std::pair<std::string, std::string>>{{"sum", "x"},
                                                        {"avg", "x"},
                                                        {"avg", "id"},
                                                        {"sum", "flag"},
                                                        {"min", "x"},
                                                        {"max", "x"}}) {
    AggregateSpec spec;
    spec.function = function;
    spec.field = field;
    aggs.push_back(ResolveAggregate(spec, input));
  }
  AggregatingWindowFunction function(
      aggs, false, AggregatingWindowFunction::OutputLayout({}, aggs, false, false));
  EXPECT_FALSE(function.CanPreAggregate());
  const SliceAggregates narrow(aggs);
  EXPECT_EQ(narrow.words(), 4u * 3u + 2u * 2u);
  std::vector<Row> rows = Rows();
  const Value null;
  rows.push_back(Row{Value(int64_t{1}), null, null, Value(true), Value(std::nan(""))});
  rows.push_back(Row{Value(int64_t{1}), null, null, Value(true), Value(0.0)});
  rows.push_back(Row{Value(int64_t{1}), null, null, Value(true), Value(-1e300)});
  std::vector<AggregateAccumulator> ga(aggs.size());
  std::vector<AggregateAccumulator> gb(aggs.size());
  std::vector<uint64_t> wa(narrow.words(), 0);
  std::vector<uint64_t> wb(narrow.words(), 0);
  AccumulatorStrings strings;
  for (size_t r = 0; r < rows.size(); ++r) {
    const StreamRecord record(rows[r], 0);
    const bool a = r < 4;
    function.Accumulate(a ? ga.data() : gb.data(), record);
    narrow.Add(a ? wa.data() : wb.data(), rows[r], function.NextArrival() - 1, strings);
  }
  std::vector<AggregateAccumulator> expanded(aggs.size());
  narrow.Expand(wb.data(), expanded.data(), strings);
  for (size_t i = 0; i < aggs.size(); ++i) {
    ExpectSame(expanded[i], gb[i], i);
  }
  function.MergeAccumulators(ga.data(), gb.data());
  narrow.Merge(wa.data(), wb.data(), strings);
  narrow.Expand(wa.data(), expanded.data(), strings);
  for (size_t i = 0; i < aggs.size(); ++i) {
    ExpectSame(expanded[i], ga[i], i);
  }
  EXPECT_EQ(expanded[4].value, Value(-1e300));  // min x
  EXPECT_EQ(expanded[5].value, Value(1e300));   // max x
  EXPECT_EQ(expanded[3].double_sum, 5.0);       // sum(flag): five trues
}

TEST(SliceAggregatesTest, ACountIsOneWord) {
  AggregateSpec count;
  count.function = "count";
  const SliceAggregates narrow({ResolveAggregate(count, InputSchema())});
  EXPECT_EQ(narrow.words(), 1u);
  EXPECT_FALSE(narrow.has_strings());
}

}  // namespace
}  // namespace tidemark
