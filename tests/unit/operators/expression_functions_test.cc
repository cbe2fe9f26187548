// The Flink SQL scalar functions of the expression language (operators/expression.h): exact
// values, NULL cases and compile errors for each. The values are Flink's (its documentation,
// Java's formatting and rounding rules); see docs/job-reference.md, "Functions".

#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "operators/expression.h"

namespace tidemark {
namespace {

// 2026-03-02 14:05:09.250 UTC, a Monday.
constexpr int64_t kTs = 1772460309250;

Schema TestSchema() {
  return Schema({{"n", FieldType::kInt64},
                 {"x", FieldType::kDouble},
                 {"s", FieldType::kString},
                 {"ts", FieldType::kTimestamp},
                 {"b", FieldType::kBool},
                 {"nn", FieldType::kInt64},
                 {"ns", FieldType::kString},
                 {"nts", FieldType::kTimestamp}});
}

Row TestRow() {
  Row r{int64_t{150},  2.675,     std::string("  Hello World  "), kTs, true, int64_t{0},
        std::string(), int64_t{0}};
  return r;
}

Value Eval(const std::string& text) {
  Row row = TestRow();
  row.SetNull(5);
  row.SetNull(6);
  row.SetNull(7);
  return Expression::Compile(text, TestSchema()).Evaluate(row);
}

FieldType TypeOf(const std::string& text) {
  return Expression::Compile(text, TestSchema()).type();
}

std::string Error(const std::string& text) {
  try {
    (void)Expression::Compile(text, TestSchema());
  } catch (const ExpressionError& e) {
    return std::to_string(e.offset()) + ": " + e.what();
  }
  return "(no error)";
}

Value S(const char* s) {
  return Value(std::string(s));
}
Value I(int64_t i) {
  return Value(i);
}
const Value kNull;

TEST(ExpressionFunctionsTest, CaseIfCoalesceNullIf) {
  EXPECT_EQ(Eval("CASE WHEN n > 100 THEN 'big' WHEN n > 10 THEN 'mid' ELSE 'small' END"), S("big"));
  EXPECT_EQ(Eval("case when n > 1000 then 'big' end"), kNull);
  EXPECT_EQ(Eval("CASE n WHEN 1 THEN 'one' WHEN 150 THEN 'many' END"), S("many"));
  EXPECT_EQ(Eval("CASE WHEN nn > 1 THEN 1 ELSE 2 END"), I(2));  // NULL condition: not taken
  // Branches int64 and double: double.
  EXPECT_EQ(Eval("CASE WHEN b THEN n ELSE 0.5 END"), Value(150.0));
  EXPECT_EQ(TypeOf("CASE WHEN b THEN n ELSE 0.5 END"), FieldType::kDouble);
  EXPECT_EQ(Eval("IF(n > 100, 'y', 'n')"), S("y"));
  EXPECT_EQ(Eval("IF(nn > 100, 'y', 'n')"), S("n"));
  EXPECT_EQ(Eval("COALESCE(ns, 'none')"), S("none"));
  EXPECT_EQ(Eval("COALESCE(nn, NULL, n)"), I(150));
  EXPECT_EQ(Eval("COALESCE(nn, 1.5)"), Value(1.5));
  EXPECT_EQ(Eval("COALESCE(n, 1.5)"), Value(150.0));
  EXPECT_EQ(Eval("COALESCE(nn, nn)"), kNull);
  EXPECT_EQ(Eval("NULLIF(n, 150)"), kNull);
  EXPECT_EQ(Eval("NULLIF(n, 7)"), I(150));
  EXPECT_EQ(Eval("NULLIF(nn, 7)"), kNull);
}

TEST(ExpressionFunctionsTest, OnlyTheBranchTakenIsEvaluated) {
  EXPECT_EQ(Eval("CASE WHEN s == 'x' THEN CAST(s AS INT) ELSE -1 END"), I(-1));
  EXPECT_EQ(Eval("IF(false, CAST(s AS INT), 0)"), I(0));
  EXPECT_EQ(Eval("COALESCE(n, CAST(s AS BIGINT))"), I(150));
}

TEST(ExpressionFunctionsTest, Cast) {
  EXPECT_EQ(Eval("CAST(' 42 ' AS INT)"), I(42));
  EXPECT_EQ(Eval("CAST('-7.9' AS BIGINT)"), I(-7));
  EXPECT_EQ(Eval("CAST(x AS INT)"), I(2));
  EXPECT_EQ(Eval("CAST(-x AS BIGINT)"), I(-2));
  EXPECT_EQ(Eval("CAST(1e30 AS INT)"), I(2147483647));
  EXPECT_EQ(Eval("CAST(4294967297 AS INT)"), I(1));  // Java (int) keeps the low 32 bits
  EXPECT_EQ(Eval("CAST(n AS DOUBLE)"), Value(150.0));
  EXPECT_EQ(Eval("CAST('1e3' AS DOUBLE)"), Value(1000.0));
  // Past double's range, as Java's Double.parseDouble: Infinity above, 0 below.
  EXPECT_EQ(Eval("CAST('1e400' AS DOUBLE)"), Value(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(Eval("CAST('-1e400' AS DOUBLE)"), Value(-std::numeric_limits<double>::infinity()));
  EXPECT_EQ(Eval("CAST('1e-400' AS DOUBLE)"), Value(0.0));
  EXPECT_EQ(Eval("TRY_CAST('1e400x' AS DOUBLE)"), kNull);
  EXPECT_EQ(Eval("CAST(n AS STRING)"), S("150"));
  EXPECT_EQ(Eval("CAST(x AS STRING)"), S("2.675"));
  EXPECT_EQ(Eval("CAST(1.0 AS STRING)"), S("1.0"));
  EXPECT_EQ(Eval("CAST(12345678.0 AS STRING)"), S("1.2345678E7"));
  EXPECT_EQ(Eval("CAST(0.0001 AS STRING)"), S("1.0E-4"));
  EXPECT_EQ(Eval("CAST(b AS STRING)"), S("TRUE"));
  EXPECT_EQ(Eval("CAST(ts AS STRING)"), S("2026-03-02 14:05:09.250"));
  EXPECT_EQ(Eval("CAST('yes' AS BOOLEAN)"), Value(true));
  EXPECT_EQ(Eval("CAST('F' AS BOOLEAN)"), Value(false));
  EXPECT_EQ(Eval("CAST(0 AS BOOLEAN)"), Value(false));
  EXPECT_EQ(Eval("CAST('2026-03-02 14:05:09.25' AS TIMESTAMP)"), I(kTs));
  EXPECT_EQ(Eval("CAST('2026-03-02' AS TIMESTAMP(3))"), I(1772409600000));
  EXPECT_EQ(TypeOf("CAST('2026-03-02' AS TIMESTAMP)"), FieldType::kTimestamp);
  EXPECT_EQ(Eval("CAST(nn AS STRING)"), kNull);
  EXPECT_EQ(Eval("CAST(NULL AS INT)"), kNull);
  EXPECT_EQ(Eval("COALESCE(CAST(ns AS INT), 0)"), I(0));
  EXPECT_EQ(Eval("TRY_CAST('abc' AS INT)"), kNull);
  EXPECT_EQ(Eval("TRY_CAST('3000000000' AS INT)"), kNull);
  EXPECT_EQ(Eval("TRY_CAST('3000000000' AS BIGINT)"), I(3000000000));
  // As Flink 2.3: a day past the month's end is its last day; no trimming; seconds required.
  EXPECT_EQ(Eval("TRY_CAST('2026-02-30' AS TIMESTAMP)"), I(1772236800000));
  EXPECT_EQ(Eval("TRY_CAST('2026-3-2' AS TIMESTAMP)"), I(1772409600000));
  EXPECT_EQ(Eval("TRY_CAST(' 2026-03-02' AS TIMESTAMP)"), kNull);
  EXPECT_EQ(Eval("TRY_CAST('2026-03-02 10:00' AS TIMESTAMP)"), kNull);
  EXPECT_EQ(Eval("TRY_CAST('2026-02-32' AS TIMESTAMP)"), kNull);
  EXPECT_EQ(Eval("TRY_CAST('.5' AS BIGINT)"), I(0));
  EXPECT_EQ(Eval("TRY_CAST('.' AS BIGINT)"), kNull);
  try {
    (void)Eval("CAST(s AS INT) + 1");
    FAIL() << "no error";
  } catch (const ExpressionEvaluationError& e) {
    EXPECT_STREQ(e.what(),
                 "CAST('  Hello World  ' AS INT) failed: not a valid INT (TRY_CAST gives NULL "
                 "instead) in expression \"CAST(s AS INT) + 1\"");
  }
  EXPECT_EQ(Error("CAST(n AS TIMESTAMP)"),
            "0: CAST from int64 to TIMESTAMP is not supported (as in Flink); TO_TIMESTAMP_LTZ(ms, "
            "3) makes a timestamp from epoch milliseconds");
  EXPECT_EQ(Error("CAST(n AS DECIMAL)"),
            "10: CAST: unknown type 'DECIMAL' (types: INT, BIGINT, DOUBLE, STRING, VARCHAR(n), "
            "CHAR(n), BOOLEAN, TIMESTAMP)");
  // VARCHAR(n) cuts to n code points, CHAR(n) pads to n (Flink 2.3: sql_functions.yaml v01-v09).
  EXPECT_EQ(Eval("CAST(s AS VARCHAR(4))"), S("  He"));
  EXPECT_EQ(Eval("CAST('Zürich' AS CHAR(3))"), S("Zür"));
  EXPECT_EQ(Eval("CAST('ab' AS CHAR(4))"), S("ab  "));
  EXPECT_EQ(Eval("CAST(n AS VARCHAR)"), S("1"));  // n is 150: VARCHAR is VARCHAR(1)
  EXPECT_EQ(Eval("CAST(CAST(NULL AS STRING) AS CHAR(3))"), kNull);
  EXPECT_EQ(Error("CAST(s AS VARCHAR(0))"), "18: VARCHAR length must be from 1 to 2147483647");
  EXPECT_EQ(Error("CAST(s AS CHAR(2000000))"),
            "15: CHAR length must be at most 1048576 in tidemark");
  EXPECT_EQ(Error("CAST(s AS BIGINT(5))"), "17: BIGINT takes no length");
}

// Flink SQL's `=` and `<>` are `==` and `!=`, with SQL's NULL rule (a NULL side: NULL).
TEST(ExpressionFunctionsTest, SqlEqualsAndNotEquals) {
  EXPECT_EQ(Eval("n = 150"), Value(true));
  EXPECT_EQ(Eval("n = 151"), Value(false));
  EXPECT_EQ(Eval("n <> 151"), Value(true));
  EXPECT_EQ(Eval("s <> '  Hello World  '"), Value(false));
  EXPECT_EQ(Eval("nn = 0"), kNull);
  EXPECT_EQ(Eval("CASE WHEN n = 150 AND n<>1 THEN 'yes' ELSE 'no' END"), S("yes"));
  EXPECT_EQ(Eval("n == 150 && n != 1"), Value(true));  // the C spellings still work
  EXPECT_EQ(Eval("n <= 150"), Value(true));            // `<=` is not `<` then `=`
  // Messages quote the comparison as written.
  EXPECT_EQ(Error("n = 'a'"), "2: cannot compare int64 with string using '='");
  EXPECT_EQ(Error("n <> 'a'"), "2: cannot compare int64 with string using '<>'");
  EXPECT_EQ(Error("n == 'a'"), "2: cannot compare int64 with string using '=='");
  EXPECT_EQ(Error("n = = 7"), "4: expected a value but found '='");
}

// SQL's three-valued logic, as Flink evaluates NOT / AND / OR: a NULL operand gives NULL unless
// the other side decides (FALSE AND x, TRUE OR x); a filter then drops the NULL.
TEST(ExpressionFunctionsTest, NotAndOrAreThreeValued) {
  EXPECT_EQ(Eval("NOT (ns = 'paris')"), kNull);
  EXPECT_EQ(Eval("!(nn > 1)"), kNull);
  EXPECT_EQ(Eval("NOT NOT (nn > 1)"), kNull);
  EXPECT_EQ(Eval("NOT (n > 1)"), Value(false));
  EXPECT_EQ(Eval("ns = 'x' AND true"), kNull);
  EXPECT_EQ(Eval("ns = 'x' AND false"), Value(false));
  EXPECT_EQ(Eval("false AND ns = 'x'"), Value(false));
  EXPECT_EQ(Eval("ns = 'x' AND ns = 'y'"), kNull);
  EXPECT_EQ(Eval("ns = 'x' OR false"), kNull);
  EXPECT_EQ(Eval("ns = 'x' OR true"), Value(true));
  EXPECT_EQ(Eval("true || nn > 1"), Value(true));
  EXPECT_EQ(Eval("b && n > 1"), Value(true));
  EXPECT_EQ(Eval("!b || n < 1"), Value(false));
  // NOT (x IN (...)) and x NOT IN (...) agree.
  EXPECT_EQ(Eval("NOT (ns IN ('x'))"), Eval("ns NOT IN ('x')"));
  // A filter keeps a record only when its condition is true.
  Row row = TestRow();
  row.SetNull(6);
  EXPECT_FALSE(Expression::Compile("NOT (ns = 'paris')", TestSchema()).Test(row));
  EXPECT_TRUE(Expression::Compile("ns = 'x' OR n = 150", TestSchema()).Test(row));
}

TEST(ExpressionFunctionsTest, Predicates) {
  EXPECT_EQ(Eval("nn IS NULL"), Value(true));
  EXPECT_EQ(Eval("n is not null"), Value(true));
  EXPECT_EQ(Eval("ns IS NOT NULL"), Value(false));
  EXPECT_EQ(Eval("n IN (1, 150, 3)"), Value(true));
  EXPECT_EQ(Eval("n IN (1.5, 150.0)"), Value(true));
  EXPECT_EQ(Eval("n NOT IN (1, 2)"), Value(true));
  EXPECT_EQ(Eval("n IN (1, nn)"), kNull);  // SQL: no match and a NULL in the list
  EXPECT_EQ(Eval("n IN (150, nn)"), Value(true));
  EXPECT_EQ(Eval("nn IN (1)"), kNull);
  EXPECT_EQ(Eval("TRIM(s) IN ('Hello World', 'x')"), Value(true));
  EXPECT_EQ(Eval("n BETWEEN 100 AND 150"), Value(true));
  EXPECT_EQ(Eval("n BETWEEN 151 AND 200"), Value(false));
  EXPECT_EQ(Eval("n NOT BETWEEN 151 AND 200"), Value(true));
  EXPECT_EQ(Eval("n BETWEEN 1 AND 200 AND b"), Value(true));
  EXPECT_EQ(Eval("n BETWEEN nn AND 100"), Value(false));  // n <= 100 is false
  EXPECT_EQ(Eval("n BETWEEN nn AND 200"), kNull);
  EXPECT_EQ(Eval("TRIM(s) LIKE 'Hello%'"), Value(true));
  EXPECT_EQ(Eval("TRIM(s) LIKE 'H_llo W%d'"), Value(true));
  EXPECT_EQ(Eval("TRIM(s) LIKE 'hello%'"), Value(false));
  EXPECT_EQ(Eval("TRIM(s) NOT LIKE '%x%'"), Value(true));
  EXPECT_EQ(Eval("'50%' LIKE '50!%' ESCAPE '!'"), Value(true));
  EXPECT_EQ(Eval("'500' LIKE '50!%' ESCAPE '!'"), Value(false));
  EXPECT_EQ(Eval("'a.c' LIKE 'a.c'"), Value(true));
  EXPECT_EQ(Eval("'abc' LIKE 'a.c'"), Value(false));
  EXPECT_EQ(Eval("ns LIKE '%'"), kNull);
  EXPECT_EQ(Error("n LIKE '%'"),
            "0: LIKE: argument 1 must be a string, got int64; CAST(x AS "
            "STRING) makes one");
  EXPECT_EQ(Error("n IN ('a')"), "6: cannot compare int64 with string using 'IN'");
}

TEST(ExpressionFunctionsTest, Strings) {
  EXPECT_EQ(Eval("'it''s'"), S("it's"));       // SQL's doubled quote
  EXPECT_EQ(Eval("'a\\d\\\\'"), S("a\\d\\"));  // an unknown escape is kept
  EXPECT_EQ(Eval("LOWER(s)"), S("  hello world  "));
  EXPECT_EQ(Eval("UPPER(s)"), S("  HELLO WORLD  "));
  EXPECT_EQ(Eval("LOWER('ÄÖÜ Straße')"), S("äöü straße"));
  EXPECT_EQ(Eval("UPPER('zürich ωμέγα')"), S("ZÜRICH ΩΜΈΓΑ"));
  EXPECT_EQ(Eval("TRIM(s)"), S("Hello World"));
  EXPECT_EQ(Eval("TRIM(LEADING FROM s)"), S("Hello World  "));
  EXPECT_EQ(Eval("TRIM(TRAILING FROM s)"), S("  Hello World"));
  EXPECT_EQ(Eval("TRIM(BOTH 'xy' FROM 'yxabcxx')"), S("abc"));
  EXPECT_EQ(Eval("TRIM(ns)"), kNull);
  EXPECT_EQ(Eval("CONCAT('a', 'b', TRIM(s))"), S("abHello World"));
  EXPECT_EQ(Eval("CONCAT('a', ns)"), kNull);
  EXPECT_EQ(Eval("CONCAT_WS('-', 'a', ns, 'c')"), S("a-c"));
  EXPECT_EQ(Eval("CONCAT_WS(ns, 'a', 'c')"), kNull);
  EXPECT_EQ(Eval("SUBSTRING('abcdef' FROM 2 FOR 3)"), S("bcd"));
  EXPECT_EQ(Eval("SUBSTRING('abcdef' FROM 4)"), S("def"));
  EXPECT_EQ(Eval("SUBSTRING('abcdef', 0, 2)"), S("ab"));
  EXPECT_EQ(Eval("SUBSTRING('abcdef', -2)"), S("ef"));
  EXPECT_EQ(Eval("SUBSTRING('abcdef', 5, 10)"), S("ef"));
  EXPECT_EQ(Eval("SUBSTR('abcdef', 9)"), S(""));
  EXPECT_EQ(Eval("SUBSTRING('abcdef', 2, -1)"), kNull);
  EXPECT_EQ(Eval("SUBSTRING('Zürich', 2, 2)"), S("ür"));
  EXPECT_EQ(Eval("SUBSTRING(ns, 1)"), kNull);
  EXPECT_EQ(Eval("CHAR_LENGTH(s)"), I(15));
  EXPECT_EQ(Eval("CHAR_LENGTH('Zürich')"), I(6));
  EXPECT_EQ(Eval("CHAR_LENGTH(ns)"), kNull);
  EXPECT_EQ(Eval("REPLACE('a-b-c', '-', '+')"), S("a+b+c"));
  EXPECT_EQ(Eval("REPLACE('ab', '', '.')"), S(".a.b."));
  EXPECT_EQ(Eval("REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 2)"), S("bar"));
  EXPECT_EQ(Eval("REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)')"), S("foothebar"));
  EXPECT_EQ(Eval("REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 1)"), S("the"));
  EXPECT_EQ(Eval("REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 0)"), S("foothebar"));
  EXPECT_EQ(Eval("REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 3)"), kNull);
  EXPECT_EQ(Eval("REGEXP_EXTRACT('xyz', 'a(b)')"), kNull);
  EXPECT_EQ(Eval("REGEXP_EXTRACT('flight LH123', '[A-Z]{2}(\\d+)', 1)"), S("123"));
  // Flink takes the replacement literally (no $1 groups).
  EXPECT_EQ(Eval("REGEXP_REPLACE('2026-03-02', '(\\d+)-(\\d+)-(\\d+)', '$3.$2.$1')"),
            S("$3.$2.$1"));
  EXPECT_EQ(Eval("REGEXP_REPLACE('a.b', '[.]', '\\\\')"), S("a\\b"));
  EXPECT_EQ(Eval("REGEXP_REPLACE('a1b22', '[0-9]+', '#')"), S("a#b#"));
  EXPECT_EQ(Eval("REGEXP_REPLACE(ns, 'a', 'b')"), kNull);
  EXPECT_EQ(Eval("SPLIT_INDEX('a,b,,d', ',', 0)"), S("a"));
  EXPECT_EQ(Eval("SPLIT_INDEX('a,b,,d', ',', 2)"), S(""));
  EXPECT_EQ(Eval("SPLIT_INDEX('a,b,,d', ',', 3)"), S("d"));
  EXPECT_EQ(Eval("SPLIT_INDEX('a,b,,d', ',', 4)"), kNull);
  EXPECT_EQ(Eval("SPLIT_INDEX('a::b', '::', 1)"), S("b"));
  EXPECT_EQ(Eval("SPLIT_INDEX('a,b', ',', -1)"), kNull);
  EXPECT_EQ(Error("REGEXP_EXTRACT(s, '(')"),
            "18: REGEXP_EXTRACT: bad regular expression '(': missing ): (");
  EXPECT_EQ(Error("REGEXP_EXTRACT(s, ns)"),
            "18: REGEXP_EXTRACT: the regular expression must be a string literal");
  EXPECT_EQ(Error("CONCAT(s, n)"),
            "10: CONCAT: argument 2 must be a string, got int64; CAST(x AS STRING) makes one");
}

TEST(ExpressionFunctionsTest, Numbers) {
  EXPECT_EQ(Eval("ABS(-n)"), I(150));
  EXPECT_EQ(Eval("ABS(-2.5)"), Value(2.5));
  EXPECT_EQ(Eval("ABS(nn)"), kNull);
  EXPECT_EQ(Eval("ROUND(x, 2)"), Value(2.68));  // BigDecimal.valueOf(2.675): HALF_UP
  EXPECT_EQ(Eval("ROUND(2.5)"), Value(3.0));
  EXPECT_EQ(Eval("ROUND(-2.5)"), Value(-3.0));
  EXPECT_EQ(Eval("ROUND(1234.5678, -2)"), Value(1200.0));
  EXPECT_EQ(Eval("ROUND(0.0049, 2)"), Value(0.0));
  EXPECT_EQ(Eval("ROUND(9.995, 2)"), Value(10.0));
  // Near a half the decimal text decides (slow path); elsewhere the binary value (fast path).
  EXPECT_EQ(Eval("ROUND(1.005, 2)"), Value(1.01));
  EXPECT_EQ(Eval("ROUND(1.0049999, 2)"), Value(1.0));
  EXPECT_EQ(Eval("ROUND(123.456, 1)"), Value(123.5));
  EXPECT_EQ(Eval("ROUND(-0.001, 2)"), Value(0.0));
  EXPECT_EQ(Eval("ROUND(0.1 + 0.2, 15)"), Value(0.3));
  EXPECT_EQ(Eval("ROUND(1e300, 2)"), Value(1e300));
  EXPECT_EQ(Eval("ROUND(125, -1)"), I(130));
  EXPECT_EQ(Eval("ROUND(-125, -1)"), I(-130));
  EXPECT_EQ(Eval("ROUND(n, 2)"), I(150));
  EXPECT_EQ(TypeOf("ROUND(n)"), FieldType::kInt64);
  EXPECT_EQ(Eval("ROUND(nn, 1)"), kNull);
  EXPECT_EQ(Eval("FLOOR(-2.5)"), Value(-3.0));
  EXPECT_EQ(Eval("CEIL(2.1)"), Value(3.0));
  EXPECT_EQ(Eval("CEILING(n)"), I(150));
  EXPECT_EQ(Eval("POWER(2, 10)"), Value(1024.0));
  EXPECT_EQ(Eval("POWER(nn, 2)"), kNull);
  EXPECT_EQ(Eval("LN(1)"), Value(0.0));
  EXPECT_EQ(Eval("LOG10(1000)"), Value(3.0));
  EXPECT_EQ(Eval("SQRT(16)"), Value(4.0));
  EXPECT_EQ(Eval("SQRT(nn)"), kNull);
  EXPECT_EQ(Eval("MOD(7, 3)"), I(1));
  EXPECT_EQ(Eval("MOD(-7, 3)"), I(-1));  // Java's %: the dividend's sign
  EXPECT_EQ(Eval("MOD(7, 0)"), kNull);
  EXPECT_EQ(Error("MOD(x, 2)"), "4: MOD: argument 1 must be an int64, got double");
  EXPECT_EQ(Error("ROUND(s)"), "6: ROUND: argument 1 must be a number, got string");
  EXPECT_EQ(Error("ROUND(x, 1, 2)"), "0: ROUND takes 1 or 2 arguments, got 3");
}

TEST(ExpressionFunctionsTest, Time) {
  EXPECT_EQ(Eval("DATE_FORMAT(ts, 'yyyy-MM-dd HH:mm:ss')"), S("2026-03-02 14:05:09"));
  EXPECT_EQ(Eval("DATE_FORMAT(ts, 'EEE d MMM yy, h:mm a, SSS')"), S("Mon 2 Mar 26, 2:05 PM, 250"));
  EXPECT_EQ(Eval("DATE_FORMAT(ts, 'yyyy''T''D')"), S("2026T61"));
  EXPECT_EQ(Eval("DATE_FORMAT(ts, 'yyyy-MM-dd''T''HH:mmX')"), S("2026-03-02T14:05Z"));
  EXPECT_EQ(Eval("DATE_FORMAT(nts, 'yyyy')"), kNull);
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026-03-02 14:05:09')"), I(kTs - 250));
  EXPECT_EQ(Eval("TO_TIMESTAMP('02/03/2026 14:05:09.250', 'dd/MM/yyyy HH:mm:ss.SSS')"), I(kTs));
  EXPECT_EQ(Eval("TO_TIMESTAMP('20260302', 'yyyyMMdd')"), I(1772409600000));
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026-03-02')"), I(1772409600000));  // CAST's syntax, as Flink
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026-03-02 10:00')"), kNull);
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026-13-02', 'yyyy-MM-dd')"), kNull);
  EXPECT_EQ(Eval("TO_TIMESTAMP(ns)"), kNull);
  EXPECT_EQ(TypeOf("TO_TIMESTAMP('2026-03-02 14:05:09')"), FieldType::kTimestamp);
  EXPECT_EQ(Eval("UNIX_TIMESTAMP('2026-03-02 14:05:09')"), I(1772460309));
  EXPECT_EQ(Eval("UNIX_TIMESTAMP('1970-01-01', 'yyyy-MM-dd')"), I(0));
  EXPECT_EQ(Eval("UNIX_TIMESTAMP('nope')"), I(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(Eval("UNIX_TIMESTAMP('2026-03-02')"), I(std::numeric_limits<int64_t>::min()));
  // Flink's lenient SimpleDateFormat: Feb 30 rolls over to Mar 2.
  EXPECT_EQ(Eval("UNIX_TIMESTAMP('2026-02-30 10:00:00')"), I(1772445600));
  EXPECT_EQ(Eval("UNIX_TIMESTAMP(ns)"), kNull);
  EXPECT_EQ(Eval("UNIX_TIMESTAMP() > 1700000000"), Value(true));
  EXPECT_EQ(Eval("TO_TIMESTAMP_LTZ(1772460309, 0)"), I(kTs - 250));
  EXPECT_EQ(Eval("TO_TIMESTAMP_LTZ(n, 3)"), I(150));
  EXPECT_EQ(Eval("EXTRACT(HOUR FROM ts)"), I(14));
  EXPECT_EQ(Eval("EXTRACT(year FROM ts)"), I(2026));
  EXPECT_EQ(Eval("EXTRACT(MONTH FROM ts)"), I(3));
  EXPECT_EQ(Eval("EXTRACT(DAY FROM ts)"), I(2));
  EXPECT_EQ(Eval("EXTRACT(MINUTE FROM ts)"), I(5));
  EXPECT_EQ(Eval("EXTRACT(SECOND FROM ts)"), I(9));
  EXPECT_EQ(Eval("EXTRACT(MILLISECOND FROM ts)"), I(250));
  EXPECT_EQ(Eval("EXTRACT(QUARTER FROM ts)"), I(1));
  EXPECT_EQ(Eval("EXTRACT(WEEK FROM ts)"), I(10));
  EXPECT_EQ(Eval("EXTRACT(DOW FROM ts)"), I(2));  // Sunday = 1
  EXPECT_EQ(Eval("EXTRACT(DOY FROM ts)"), I(61));
  EXPECT_EQ(Eval("EXTRACT(HOUR FROM nts)"), kNull);
  EXPECT_EQ(Eval("TIMESTAMPADD(HOUR, 2, ts)"), I(kTs + 7200000));
  EXPECT_EQ(Eval("TIMESTAMPADD(MONTH, -1, TO_TIMESTAMP('2026-03-31', 'yyyy-MM-dd'))"),
            I(1772236800000));  // 2026-02-28: the day is clamped
  EXPECT_EQ(Eval("TIMESTAMPADD(YEAR, 1, nts)"), kNull);
  EXPECT_EQ(Eval("TIMESTAMPDIFF(MINUTE, ts, TIMESTAMPADD(SECOND, 150, ts))"), I(2));
  EXPECT_EQ(Eval("TIMESTAMPDIFF(MINUTE, TIMESTAMPADD(SECOND, 150, ts), ts)"), I(-2));
  EXPECT_EQ(Eval("TIMESTAMPDIFF(MONTH, TO_TIMESTAMP('2026-01-31', 'yyyy-MM-dd'), "
                 "TO_TIMESTAMP('2026-02-28', 'yyyy-MM-dd'))"),
            I(1));  // Feb 28 is Jan 31 + 1 month (clamped), as in Flink
  EXPECT_EQ(Eval("TIMESTAMPDIFF(MONTH, TO_TIMESTAMP('2026-01-30', 'yyyy-MM-dd'), "
                 "TO_TIMESTAMP('2026-02-27', 'yyyy-MM-dd'))"),
            I(0));
  EXPECT_EQ(Eval("TIMESTAMPDIFF(YEAR, TO_TIMESTAMP('2026-03-02', 'yyyy-MM-dd'), "
                 "TO_TIMESTAMP('2024-03-03', 'yyyy-MM-dd'))"),
            I(-1));
  EXPECT_EQ(Eval("TIMESTAMPDIFF(MONTH, TO_TIMESTAMP('2026-01-15', 'yyyy-MM-dd'), "
                 "TO_TIMESTAMP('2026-03-15', 'yyyy-MM-dd'))"),
            I(2));
  EXPECT_EQ(Eval("TIMESTAMPDIFF(DAY, nts, ts)"), kNull);
  EXPECT_EQ(Eval("FLOOR(ts TO HOUR)"), I(1772460000000));
  EXPECT_EQ(Eval("CEIL(ts TO HOUR)"), I(1772463600000));
  EXPECT_EQ(Eval("FLOOR(ts TO DAY)"), I(1772409600000));
  EXPECT_EQ(Eval("FLOOR(ts TO MONTH)"), I(1772323200000));
  EXPECT_EQ(Eval("FLOOR(ts TO YEAR)"), I(1767225600000));
  EXPECT_EQ(Eval("CEIL(FLOOR(ts TO HOUR) TO HOUR)"), I(1772460000000));
  EXPECT_EQ(Eval("FLOOR(nts TO HOUR)"), kNull);
  // Extreme values are defined (clamped), never undefined behaviour.
  EXPECT_EQ(Eval("TIMESTAMPDIFF(SECOND, TO_TIMESTAMP_LTZ(-9223372036854775807 - 1, 3), "
                 "TO_TIMESTAMP_LTZ(9223372036854775807, 3))"),
            I(18446744073709551));
  EXPECT_EQ(Eval("EXTRACT(YEAR FROM TIMESTAMPADD(YEAR, 9223372036854775807, ts))"), I(29000));
  EXPECT_EQ(Eval("EXTRACT(YEAR FROM TO_TIMESTAMP_LTZ(9223372036854775807, 3))"), I(31950));
  EXPECT_EQ(Eval("TO_TIMESTAMP('99999-01-01', 'yyyy-MM-dd')"), kNull);
  EXPECT_EQ(TypeOf("FLOOR(ts TO HOUR)"), FieldType::kTimestamp);
  EXPECT_EQ(Error("DATE_FORMAT(n, 'yyyy')"),
            "12: DATE_FORMAT: argument 1 must be a timestamp, got int64; TO_TIMESTAMP_LTZ(x, 3) "
            "makes one from epoch milliseconds");
  EXPECT_EQ(Error("DATE_FORMAT(ts, 'yyyy-QQ')"),
            "16: DATE_FORMAT: bad format 'yyyy-QQ': pattern letter 'Q' is not supported "
            "(supported: y M d D H h m s S E a X Z and 'quoted text')");
  // Java's reserved characters, unbalanced optional sections and more than 19 'y' are errors.
  EXPECT_EQ(Error("DATE_FORMAT(ts, 'yyyy{MM}')"),
            "16: DATE_FORMAT: bad format 'yyyy{MM}': the pattern includes the reserved character "
            "'{'");
  EXPECT_EQ(Error("DATE_FORMAT(ts, 'yyyy#')"),
            "16: DATE_FORMAT: bad format 'yyyy#': the pattern includes the reserved character '#'");
  EXPECT_EQ(Error("DATE_FORMAT(ts, 'yyyy]')"),
            "16: DATE_FORMAT: bad format 'yyyy]': the pattern has a ']' without a '[' before it");
  EXPECT_EQ(Error("DATE_FORMAT(ts, 'yyyyyyyyyyyyyyyyyyyy')"),
            "16: DATE_FORMAT: bad format 'yyyyyyyyyyyyyyyyyyyy': too many pattern letters: y");
  EXPECT_EQ(Error("DATE_FORMAT(ts, '" + std::string(33, '[') + "')"),
            "16: DATE_FORMAT: bad format '" + std::string(33, '[') +
                "': optional sections nest deeper than 32 levels");
  // Optional sections (checked on Flink 2.3 in tests/flink_reference/sql_functions.yaml):
  // printed when formatting, skipped when parsing if absent; an unclosed '[' ends the pattern.
  EXPECT_EQ(Eval("DATE_FORMAT(ts, 'yyyy[-MM[-dd]]')"), S("2026-03-02"));
  EXPECT_EQ(Eval("DATE_FORMAT(ts, 'yyyy[-MM')"), S("2026-03"));
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026', 'yyyy[-MM[-dd]]')"), I(1767225600000));
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026-03', 'yyyy[-MM[-dd]]')"), I(1772323200000));
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026-03-', 'yyyy[-MM[-dd]]')"), kNull);  // '-' left unparsed
  // Offsets are read in every Java form; TO_TIMESTAMP keeps the local fields, UNIX_TIMESTAMP
  // (SimpleDateFormat) applies the offset; a malformed offset does not parse.
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026-03-02 10:00 GMT+1:30', 'yyyy-MM-dd HH:mm ZZZZ')"),
            I(1772445600000));
  EXPECT_EQ(Eval("UNIX_TIMESTAMP('2026-03-02 10:00:00+01:30', 'yyyy-MM-dd HH:mm:ssXXX')"),
            I(1772440200));
  EXPECT_EQ(Eval("UNIX_TIMESTAMP('2026-03-02 10:00:00-0130', 'yyyy-MM-dd HH:mm:ssZ')"),
            I(1772451000));
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026-03-02 10:00:00+1', 'yyyy-MM-dd HH:mm:ssX')"), kNull);
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026-03-02 10:00:00+01:3', 'yyyy-MM-dd HH:mm:ssXXX')"), kNull);
  EXPECT_EQ(Eval("TO_TIMESTAMP('2026-03-02 10:00:00Z', 'yyyy-MM-dd HH:mm:ssZ')"), kNull);
  // A day of the week must be the date's (2026-03-02 is a Monday).
  EXPECT_EQ(Eval("TO_TIMESTAMP('Monday 2026-03-02', 'EEEE yyyy-MM-dd')"), I(1772409600000));
  EXPECT_EQ(Eval("TO_TIMESTAMP('Sunday 2026-03-02', 'EEEE yyyy-MM-dd')"), kNull);
  EXPECT_EQ(Error("EXTRACT(HOURS FROM ts)"),
            "8: EXTRACT: unknown time unit 'HOURS' (units: MILLISECOND SECOND MINUTE HOUR DAY "
            "WEEK MONTH QUARTER YEAR DOW DOY)");
  EXPECT_EQ(Error("FLOOR(ts TO WEEK)"),
            "12: FLOOR: unknown time unit 'WEEK' (units: MILLISECOND SECOND MINUTE HOUR DAY MONTH "
            "QUARTER YEAR)");
}

TEST(ExpressionFunctionsTest, UnknownFunctionsSuggestTheNearestName) {
  EXPECT_EQ(Error("n + LOWR(s)"), "4: unknown function 'LOWR' (did you mean LOWER?)");
  EXPECT_EQ(Error("concat_w('-', s)"), "0: unknown function 'concat_w' (did you mean CONCAT_WS?)");
  EXPECT_EQ(Error("COALESC(n, 1)"), "0: unknown function 'COALESC' (did you mean COALESCE?)");
  EXPECT_EQ(Error("frobnicate(n)"),
            "0: unknown function 'frobnicate' (functions are listed in docs/job-reference.md, "
            "\"Functions\")");
}

TEST(ExpressionFunctionsTest, TypeErrorsNameTheOffendingOperand) {
  EXPECT_EQ(Error("CASE WHEN n THEN 1 END"), "10: CASE WHEN needs a bool condition, got int64");
  EXPECT_EQ(Error("CASE WHEN b THEN 1 ELSE 'x' END"),
            "24: CASE mixes int64 (at offset 17) with string");
  EXPECT_EQ(Error("IF(b, 1)"), "7: expected ',' but found ')'");
  EXPECT_EQ(Error("CASE WHEN b THEN 1"),
            "18: expected END to close CASE but found 'end of "
            "expression'");
  EXPECT_EQ(Error("COALESCE(NULL, NULL)"),
            "9: COALESCE has only NULL results; write CAST(NULL AS <type>)");
  EXPECT_EQ(Error("NULL"), "0: the expression is NULL of no type; write CAST(NULL AS <type>)");
  EXPECT_EQ(Error("LOWER(s, s)"), "0: LOWER takes 1 argument, got 2");
  EXPECT_EQ(Error("n NOT 5"), "6: expected IN, BETWEEN or LIKE after NOT but found '5'");
}

TEST(ExpressionFunctionsTest, NestedCallsCountTowardsTheDepthLimit) {
  std::string text;
  for (int i = 0; i < kMaxExpressionDepth; ++i) {
    text += "ABS(";
  }
  text += "n";
  text.append(static_cast<size_t>(kMaxExpressionDepth), ')');
  EXPECT_EQ(Eval(text), I(150));
  EXPECT_EQ(Error("ABS(" + text + ")"), "1027: parentheses nest deeper than 256 levels");
}

TEST(ExpressionFunctionsTest, EvaluateIntoWritesTypedCells) {
  const Schema schema = TestSchema();
  const Expression e =
      Expression::Compile("CONCAT(LOWER(TRIM(s)), '@', DATE_FORMAT(ts, 'HH:mm'))", schema);
  Row row = TestRow();
  Row out{std::string()};
  for (int i = 0; i < 3; ++i) {  // the per-thread pool is reused from call to call
    e.EvaluateInto(row, out, 0);
    EXPECT_EQ(out.GetString(0), "hello world@14:05");
  }
}

}  // namespace
}  // namespace tidemark
