#include "operators/expression.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

Schema TestSchema() {
  return Schema({{"amount", FieldType::kInt64},
                 {"price", FieldType::kDouble},
                 {"status", FieldType::kString},
                 {"ts", FieldType::kTimestamp},
                 {"vip", FieldType::kBool}});
}

Row TestRow() {
  return Row{int64_t{150}, 2.5, std::string("paid"), int64_t{12345}, true};
}

Value Eval(const std::string& text, const Row& row = TestRow()) {
  return Expression::Compile(text, TestSchema()).Evaluate(row);
}

std::string ErrorMessage(const std::string& text) {
  try {
    (void)Expression::Compile(text, TestSchema());
  } catch (const ExpressionError& e) {
    return std::to_string(e.offset()) + ": " + e.what();
  }
  return "(no error)";
}

size_t ErrorOffset(const std::string& text) {
  try {
    (void)Expression::Compile(text, TestSchema());
  } catch (const ExpressionError& e) {
    return e.offset();
  }
  ADD_FAILURE() << "no error for " << text;
  return 9999;
}

TEST(ExpressionTest, ArithmeticFollowsPrecedenceAndTypes) {
  EXPECT_EQ(Eval("amount * 2"), Value(int64_t{300}));
  EXPECT_EQ(Eval("amount + 2 * 3"), Value(int64_t{156}));
  EXPECT_EQ(Eval("(amount + 2) * 3"), Value(int64_t{456}));
  EXPECT_EQ(Eval("ts / 1000"), Value(int64_t{12}));
  EXPECT_EQ(Eval("ts % 1000"), Value(int64_t{345}));
  EXPECT_EQ(Eval("amount * price"), Value(375.0));
  EXPECT_EQ(Eval("-amount"), Value(int64_t{-150}));
  EXPECT_EQ(Eval("status + \"!\""), Value(std::string("paid!")));
  EXPECT_EQ(Expression::Compile("ts / 1000", TestSchema()).type(), FieldType::kInt64);
  EXPECT_EQ(Expression::Compile("ts + 1", TestSchema()).type(), FieldType::kTimestamp);
  EXPECT_EQ(Expression::Compile("amount * 1.5", TestSchema()).type(), FieldType::kDouble);
}

TEST(ExpressionTest, Int64ArithmeticWrapsLikeJavaLongs) {
  // Unary minus of Long.MIN_VALUE was undefined behaviour (UBSan: "negation of
  // -9223372036854775808 cannot be represented"); it wraps like the binary operators.
  Row min_row = TestRow();
  min_row.Set(0, int64_t{INT64_MIN});
  EXPECT_EQ(Eval("-amount", min_row), Value(int64_t{INT64_MIN}));
  EXPECT_EQ(Eval("amount - 1", min_row), Value(int64_t{INT64_MAX}));
  EXPECT_EQ(Eval("amount / -1", min_row), Value(int64_t{INT64_MIN}));
  EXPECT_EQ(Eval("amount % -1", min_row), Value(int64_t{0}));
}

TEST(ExpressionTest, ConditionsCombine) {
  EXPECT_EQ(Eval("status == \"paid\" && amount > 100"), Value(true));
  EXPECT_EQ(Eval("status == 'paid' && amount > 200"), Value(false));
  EXPECT_EQ(Eval("status != \"paid\" || vip"), Value(true));
  EXPECT_EQ(Eval("!vip"), Value(false));
  EXPECT_EQ(Eval("not vip or amount >= 150"), Value(true));
  EXPECT_EQ(Eval("price < 3"), Value(true));
  EXPECT_EQ(Eval("\"a\" < \"b\""), Value(true));
}

TEST(ExpressionTest, NullPropagatesAndFailsFilters) {
  Row row = TestRow();
  row.Set(0, std::monostate{});
  const Expression e = Expression::Compile("amount > 100", TestSchema());
  EXPECT_EQ(e.Evaluate(row), Value(std::monostate{}));
  EXPECT_FALSE(e.Test(row));
  EXPECT_EQ(Eval("amount / 0"), Value(std::monostate{}));
}

TEST(ExpressionTest, BareFieldIsASlot) {
  EXPECT_EQ(Expression::Compile("status", TestSchema()).field_slot(), 2);
  EXPECT_EQ(Expression::Compile("amount + 1", TestSchema()).field_slot(), -1);
}

TEST(ExpressionTest, ErrorsPointAtTheOffendingToken) {
  EXPECT_EQ(ErrorOffset("amount * status"), 7u);   // the operator
  EXPECT_EQ(ErrorOffset("amount + nope"), 9u);     // the unknown field
  EXPECT_EQ(ErrorOffset("amount > 1 && 5"), 14u);  // the int64 operand of &&
  EXPECT_EQ(ErrorOffset("status == 3"), 7u);
  EXPECT_EQ(ErrorOffset("(amount"), 7u);
  EXPECT_EQ(ErrorOffset("status = 3"), 7u);  // `=` is `==`: the type error at the operator
  EXPECT_EQ(ErrorOffset("amount 3"), 7u);
  EXPECT_EQ(ErrorOffset("1 < 2 < 3"), 6u);
  try {
    (void)Expression::Compile("amount * status", TestSchema());
  } catch (const ExpressionError& e) {
    EXPECT_STREQ(e.what(), "operator '*' cannot be applied to int64 and string");
  }
}

// Hostile nesting: parentheses are bounded (the parser's only input-controlled recursion), and
// chains of `!` and unary `-` are read in a loop, so neither can overflow the stack.
TEST(ExpressionTest, ParenthesesNestAtMostTheLimitAndTheNextOneIsNamed) {
  const auto nested = [](int levels) {
    return std::string(static_cast<size_t>(levels), '(') + "amount > 1" +
           std::string(static_cast<size_t>(levels), ')');
  };
  EXPECT_EQ(Eval(nested(kMaxExpressionDepth)), Value{true});
  EXPECT_EQ(ErrorMessage(nested(kMaxExpressionDepth + 1)),
            "256: parentheses nest deeper than 256 levels");
  EXPECT_EQ(ErrorMessage(nested(10000)), "256: parentheses nest deeper than 256 levels");
  // Depth is nesting, not count: many parenthesised terms side by side are fine.
  std::string flat = "amount > 0";
  for (int i = 0; i < 2000; ++i) {
    flat += " && (amount > 0)";
  }
  EXPECT_EQ(Eval(flat), Value{true});
}

TEST(ExpressionTest, LongChainsOfNotAndMinusNeedNoRecursion) {
  EXPECT_EQ(Eval(std::string(100000, '!') + "vip"), Value{true});  // an even number of '!'
  EXPECT_EQ(Eval(std::string(100001, '!') + "vip"), Value{false});
  EXPECT_EQ(Eval("not not not vip"), Value{false});
  std::string minus;
  for (int i = 0; i < 50001; ++i) {
    minus += "- ";
  }
  EXPECT_EQ(Eval(minus + "amount"), Value{int64_t{-150}});
  EXPECT_EQ(Eval("--price"), Value{2.5});
  EXPECT_EQ(Eval("-ts"), Value{int64_t{-12345}});
  // The innermost operator is the one whose operand has the wrong type.
  EXPECT_EQ(ErrorMessage("!!!amount"), "2: '!' needs a bool operand, got int64");
  EXPECT_EQ(ErrorMessage("- -status"), "2: unary '-' needs a number, got string");
}

TEST(ExpressionTest, LongTokensAreShortenedInMessages) {
  EXPECT_EQ(ErrorMessage("amount " + std::string(1000, 'x')),
            "7: unexpected 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' after the expression");
}

}  // namespace
}  // namespace tidemark
