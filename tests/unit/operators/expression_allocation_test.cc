// The SQL functions of the expression language evaluate without allocating in steady state
// (operators/expression.h): string results reuse a per-thread pool, regular expressions and date
// patterns are compiled once.

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/expression.h"
#include "tests/testing/counting_allocator.h"

namespace tidemark {
namespace {

using ::tidemark::testing::AllocationCount;

Schema FlightSchema() {
  return Schema({{"ts", FieldType::kTimestamp},
                 {"flight", FieldType::kString},
                 {"origin", FieldType::kString},
                 {"dest", FieldType::kString},
                 {"delay_min", FieldType::kInt64}});
}

TEST(ExpressionAllocationTest, FunctionsAllocateNothingPerRecordOnceWarm) {
  const Schema schema = FlightSchema();
  const std::vector<std::string> texts = {
      "CONCAT(LOWER(origin), '-', LOWER(dest))",
      "DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm')",
      "CASE WHEN delay_min IS NULL THEN 'cancelled' WHEN delay_min >= 60 THEN 'severe' "
      "WHEN delay_min >= 15 THEN 'late' ELSE 'on-time' END",
      "COALESCE(CAST(delay_min AS STRING), 'n/a')",
      "UPPER(REGEXP_REPLACE(flight, ' ', '')) + '/' + REGEXP_EXTRACT(flight, '[0-9]+')",
      "SUBSTRING(TRIM(flight), 1, 2) IN ('LH', 'BA') AND flight LIKE '%4%'",
      "EXTRACT(HOUR FROM FLOOR(ts TO HOUR)) + TIMESTAMPDIFF(MINUTE, ts, TIMESTAMPADD(DAY, 1, ts))",
      "ROUND(POWER(CAST(delay_min AS DOUBLE), 0.5), 2)",
  };
  std::vector<Expression> expressions;
  for (const std::string& t : texts) {
    expressions.push_back(Expression::Compile(t, schema));
  }
  std::vector<Row> rows;
  rows.push_back(Row{int64_t{1772431500000}, std::string("LH 400"), std::string("FRA"),
                     std::string("JFK"), int64_t{12}});
  rows.push_back(Row{int64_t{1772433600000}, std::string("LH 1124"), std::string("FRA"),
                     std::string("MAD"), int64_t{0}});
  rows.back().SetNull(4);
  rows.push_back(Row{int64_t{1772435100000}, std::string("BA 903"), std::string("LHR"),
                     std::string("FRA"), int64_t{95}});
  std::vector<Row> outs;
  for (const Expression& e : expressions) {
    outs.push_back(Row{e.type() == FieldType::kString   ? Value(std::string(40, 'x'))
                       : e.type() == FieldType::kBool   ? Value(true)
                       : e.type() == FieldType::kDouble ? Value(0.0)
                                                        : Value(int64_t{0})});
  }
  auto run = [&] {
    int64_t checksum = 0;
    for (const Row& row : rows) {
      for (size_t i = 0; i < expressions.size(); ++i) {
        expressions[i].EvaluateInto(row, outs[i], 0);
        checksum += outs[i].IsNull(0) ? 1 : 2;
        checksum += expressions[i].Test(row) ? 1 : 0;
      }
    }
    return checksum;
  };
  const int64_t warm = run();
  (void)run();
  int64_t checksum = 0;
  // Per expression, so a failure names the one that allocates.
  for (size_t i = 0; i < expressions.size(); ++i) {
    // Test() runs the whole program (a non-bool result is "false"); EvaluateInto of a string
    // would measure Row's own buffer growth, so only fixed-size results are written.
    const bool write = expressions[i].type() != FieldType::kString;
    for (const Row& row : rows) {  // this expression's own warm-up (its pool slots' capacity)
      checksum += expressions[i].Test(row) ? 1 : 0;
    }
    const int64_t before = AllocationCount();
    for (int k = 0; k < 1000; ++k) {
      for (const Row& row : rows) {
        if (write) {
          expressions[i].EvaluateInto(row, outs[i], 0);
        }
        checksum += expressions[i].Test(row) ? 1 : 0;
      }
    }
    EXPECT_EQ(AllocationCount() - before, 0) << texts[i];
  }
  EXPECT_GT(checksum + warm, 0);
  EXPECT_EQ(outs[0].GetString(0), "lhr-fra");
  EXPECT_EQ(outs[4].GetString(0), "BA903/903");
  EXPECT_EQ(outs[7].GetDouble(0), 9.75);  // ROUND(SQRT(95), 2)
}

}  // namespace
}  // namespace tidemark
