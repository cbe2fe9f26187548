#include "operators/expression.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <optional>
#include <re2/re2.h>
#include <utility>

#include <fmt/format.h>

#include "config/block_reader.h"
#include "runtime/core/sql_functions.h"

namespace tidemark {

/// What a call compiled once, shared by the copies of an Expression (immutable).
struct ExpressionCallData {
  bool negate = false;                     ///< NOT IN / NOT BETWEEN / NOT LIKE
  bool try_cast = false;                   ///< TRY_CAST: NULL instead of an error
  bool int32 = false;                      ///< CAST(... AS INT): Java int range
  FieldType target = FieldType::kInt64;    ///< CAST's result type
  std::string sql_type;                    ///< CAST's type as written (upper case)
  int64_t max_chars = -1;                  ///< CAST to VARCHAR(n) / CHAR(n): n code points
  bool pad_chars = false;                  ///< CHAR(n): padded with spaces to n
  TimeUnit unit = TimeUnit::kSecond;       ///< EXTRACT, TIMESTAMPADD/DIFF, FLOOR/CEIL TO
  int trim = 0;                            ///< TRIM: 0 both, 1 leading, 2 trailing
  bool trim_reversed = false;              ///< TRIM(s): operands are (s, chars)
  char escape = 0;                         ///< LIKE ... ESCAPE
  int64_t precision = 3;                   ///< TO_TIMESTAMP_LTZ
  std::shared_ptr<const RE2> regex;        ///< LIKE, REGEXP_*
  std::string rewrite;                     ///< REGEXP_REPLACE, in RE2's syntax
  std::optional<DateTimePattern> pattern;  ///< DATE_FORMAT, TO_TIMESTAMP, UNIX_TIMESTAMP
};

namespace {

using Op = Expression::Instr::Op;

enum class Tok { kEnd, kInt, kDouble, kString, kIdent, kSymbol, kLParen, kRParen };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;     // symbol, identifier or string contents
  std::string spelled;  // a symbol as written when `text` normalizes it (`=` for `==`), else empty
  int64_t int_value = 0;
  double double_value = 0;
  size_t offset = 0;
};

bool IsInteger(FieldType t) {
  return t == FieldType::kInt64 || t == FieldType::kTimestamp;
}
bool IsNumeric(FieldType t) {
  return IsInteger(t) || t == FieldType::kDouble;
}

/// The type of the `null` literal while parsing: it takes the type its context needs. Never the
/// type of a compiled expression or of a cell that is read.
constexpr auto kNullType = static_cast<FieldType>(0xFF);

enum class Fn : uint16_t {
  kIsNull,
  kIsNotNull,
  kIn,
  kBetween,
  kLike,
  kNullIf,
  kCast,
  kLower,
  kUpper,
  kTrim,
  kConcat,
  kConcatWs,
  kSubstring,
  kCharLength,
  kReplace,
  kRegexpExtract,
  kRegexpReplace,
  kSplitIndex,
  kAbs,
  kRound,
  kFloor,
  kCeil,
  kPower,
  kLn,
  kLog10,
  kSqrt,
  kExp,
  kMod,
  kDateFormat,
  kToTimestamp,
  kToTimestampLtz,
  kUnixTimestamp,
  kExtract,
  kTimestampAdd,
  kTimestampDiff,
  kFloorTime,
  kCeilTime,
};

/// A function called as NAME(args) (the special forms are parsed by hand).
struct FnInfo {
  std::string_view name;
  Fn fn;
  size_t min_args;
  size_t max_args;
};

constexpr FnInfo kFunctions[] = {
    {"NULLIF", Fn::kNullIf, 2, 2},
    {"LOWER", Fn::kLower, 1, 1},
    {"UPPER", Fn::kUpper, 1, 1},
    {"CONCAT", Fn::kConcat, 1, SIZE_MAX},
    {"CONCAT_WS", Fn::kConcatWs, 2, SIZE_MAX},
    {"CHAR_LENGTH", Fn::kCharLength, 1, 1},
    {"CHARACTER_LENGTH", Fn::kCharLength, 1, 1},
    {"REPLACE", Fn::kReplace, 3, 3},
    {"REGEXP_EXTRACT", Fn::kRegexpExtract, 2, 3},
    {"REGEXP_REPLACE", Fn::kRegexpReplace, 3, 3},
    {"SPLIT_INDEX", Fn::kSplitIndex, 3, 3},
    {"ABS", Fn::kAbs, 1, 1},
    {"ROUND", Fn::kRound, 1, 2},
    {"POWER", Fn::kPower, 2, 2},
    {"LN", Fn::kLn, 1, 1},
    {"LOG10", Fn::kLog10, 1, 1},
    {"SQRT", Fn::kSqrt, 1, 1},
    {"EXP", Fn::kExp, 1, 1},
    {"MOD", Fn::kMod, 2, 2},
    {"DATE_FORMAT", Fn::kDateFormat, 2, 2},
    {"TO_TIMESTAMP", Fn::kToTimestamp, 1, 2},
    {"TO_TIMESTAMP_LTZ", Fn::kToTimestampLtz, 1, 2},
    {"UNIX_TIMESTAMP", Fn::kUnixTimestamp, 0, 2},
};
/// Parsed by hand, listed for the did-you-mean of an unknown name.
constexpr std::string_view kSpecialForms[] = {
    "CAST",         "TRY_CAST",      "IF",   "COALESCE",  "EXTRACT", "FLOOR", "CEIL", "CEILING",
    "TIMESTAMPADD", "TIMESTAMPDIFF", "TRIM", "SUBSTRING", "SUBSTR"};

const FnInfo* FindFunction(std::string_view upper_name) {
  for (const FnInfo& f : kFunctions) {
    if (f.name == upper_name) {
      return &f;
    }
  }
  return nullptr;
}

class Parser {
 public:
  Parser(std::string_view text, const Schema& schema) : text_(text), schema_(schema) { Next(); }

  FieldType ParseAll(std::vector<Expression::Instr>& program) {
    program_ = &program;
    if (tok_.kind == Tok::kEnd) {
      throw ExpressionError(0, "empty expression");
    }
    const FieldType t = ParseOr();
    if (tok_.kind != Tok::kEnd) {
      throw ExpressionError(tok_.offset,
                            fmt::format("unexpected '{}' after the expression", Describe(tok_)));
    }
    if (t == kNullType) {
      throw ExpressionError(0, "the expression is NULL of no type; write CAST(NULL AS <type>)");
    }
    return t;
  }

 private:
  /// One parsed operand of a call.
  struct Arg {
    FieldType type = FieldType::kBool;
    size_t at = 0;
    std::optional<std::string> string_literal;  ///< when the operand is one string literal
    std::optional<int64_t> int_literal;         ///< when the operand is one integer literal
  };
  static std::string Describe(const Token& t) {
    constexpr size_t kShown = 40;  // a 100 KB literal must not become a 100 KB message
    if (!t.spelled.empty()) {
      return t.spelled;  // as the user wrote it (`=`), not as it is read (`==`)
    }
    std::string text = t.text.size() > kShown ? t.text.substr(0, kShown) + "..." : t.text;
    switch (t.kind) {
      case Tok::kEnd:
        return "end of expression";
      case Tok::kLParen:
        return "(";
      case Tok::kRParen:
        return ")";
      case Tok::kString:
        return "\"" + text + "\"";
      default:
        return text;
    }
  }

  // ---- lexer ----
  void Next() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
    tok_ = Token{};
    tok_.offset = pos_;
    if (pos_ >= text_.size()) {
      return;
    }
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && pos_ + 1 < text_.size() &&
         std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))) {
      size_t end = pos_;
      bool is_double = false;
      while (end < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[end])) ||
                                    text_[end] == '.' || text_[end] == 'e' || text_[end] == 'E' ||
                                    ((text_[end] == '+' || text_[end] == '-') &&
                                     (text_[end - 1] == 'e' || text_[end - 1] == 'E')))) {
        if (text_[end] == '.' || text_[end] == 'e' || text_[end] == 'E') {
          is_double = true;
        }
        ++end;
      }
      const std::string number(text_.substr(pos_, end - pos_));
      tok_.text = number;
      try {
        size_t used = 0;
        if (is_double) {
          tok_.kind = Tok::kDouble;
          tok_.double_value = std::stod(number, &used);
        } else {
          tok_.kind = Tok::kInt;
          tok_.int_value = std::stoll(number, &used);
        }
        if (used != number.size()) {
          throw std::invalid_argument("trailing");
        }
      } catch (const std::exception&) {
        throw ExpressionError(pos_, fmt::format("bad number '{}'", number));
      }
      pos_ = end;
      return;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t end = pos_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
        ++end;
      }
      tok_.kind = Tok::kIdent;
      tok_.text = std::string(text_.substr(pos_, end - pos_));
      pos_ = end;
      return;
    }
    if (c == '`') {
      const size_t close = text_.find('`', pos_ + 1);
      if (close == std::string_view::npos) {
        throw ExpressionError(pos_, "unterminated `quoted field name`");
      }
      tok_.kind = Tok::kIdent;
      tok_.text = std::string(text_.substr(pos_ + 1, close - pos_ - 1));
      tok_.int_value = 1;  // marks a quoted name: never a keyword
      pos_ = close + 1;
      return;
    }
    if (c == '"' || c == '\'') {
      std::string s;
      size_t i = pos_ + 1;
      for (; i < text_.size(); ++i) {
        if (text_[i] == c) {
          if (i + 1 < text_.size() && text_[i + 1] == c) {  // SQL's '' inside '...'
            s.push_back(c);
            ++i;
            continue;
          }
          break;
        }
        if (text_[i] == '\\' && i + 1 < text_.size()) {
          // \n \t \\ and an escaped quote; any other escape is kept as written, so a regular
          // expression's `\d` stays `\d`.
          const char e = text_[++i];
          if (e == 'n' || e == 't' || e == '\\' || e == '"' || e == '\'') {
            s.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e);
          } else {
            s.push_back('\\');
            s.push_back(e);
          }
        } else {
          s.push_back(text_[i]);
        }
      }
      if (i >= text_.size()) {
        throw ExpressionError(pos_, "unterminated string literal");
      }
      tok_.kind = Tok::kString;
      tok_.text = std::move(s);
      pos_ = i + 1;
      return;
    }
    if (c == '(' || c == ')') {
      tok_.kind = c == '(' ? Tok::kLParen : Tok::kRParen;
      ++pos_;
      return;
    }
    static constexpr std::string_view kTwo[] = {"==", "!=", "<=", ">=", "&&", "||"};
    for (std::string_view two : kTwo) {
      if (text_.substr(pos_, 2) == two) {
        tok_.kind = Tok::kSymbol;
        tok_.text = std::string(two);
        pos_ += 2;
        return;
      }
    }
    // Flink SQL's spellings of the comparisons: `=` is `==` and `<>` is `!=` (nothing is
    // assigned inside an expression).
    if (text_.substr(pos_, 2) == "<>") {
      tok_.kind = Tok::kSymbol;
      tok_.text = "!=";
      tok_.spelled = "<>";
      pos_ += 2;
      return;
    }
    if (c == '=') {
      tok_.kind = Tok::kSymbol;
      tok_.text = "==";
      tok_.spelled = "=";
      ++pos_;
      return;
    }
    if (std::string_view("+-*/%<>!,").find(c) != std::string_view::npos) {
      tok_.kind = Tok::kSymbol;
      tok_.text = std::string(1, c);
      ++pos_;
      return;
    }
    throw ExpressionError(pos_, fmt::format("unexpected character '{}'", c));
  }

  bool IsSymbol(std::string_view s) const {
    if (tok_.kind == Tok::kSymbol && tok_.text == s) {
      return true;
    }
    // Word forms of the logical operators.
    if (tok_.kind == Tok::kIdent && tok_.int_value == 0) {
      return (s == "&&" && IsWord("AND")) || (s == "||" && IsWord("OR")) ||
             (s == "!" && IsWord("NOT"));
    }
    return false;
  }

  void Emit(Op op, bool dbl = false, FieldType left = FieldType::kBool,
            FieldType right = FieldType::kBool) {
    Expression::Instr in;
    in.op = op;
    in.dbl = dbl;
    in.left = left;
    in.right = right;
    program_->push_back(std::move(in));
  }

  static std::string TypeName(FieldType t) { return t == kNullType ? "NULL" : ToString(t); }

  // ---- grammar ----
  FieldType ParseOr() {
    FieldType left = ParseAnd();
    while (IsSymbol("||")) {
      const size_t at = tok_.offset;
      Next();
      const size_t right_at = tok_.offset;
      const FieldType right = ParseAnd();
      RequireBool(left, at, "||", "left");
      RequireBool(right, right_at, "||", "right");
      Emit(Op::kOr);
      left = FieldType::kBool;
    }
    return left;
  }

  FieldType ParseAnd() {
    FieldType left = ParseNot();
    while (IsSymbol("&&")) {
      const size_t at = tok_.offset;
      Next();
      const size_t right_at = tok_.offset;
      const FieldType right = ParseNot();
      RequireBool(left, at, "&&", "left");
      RequireBool(right, right_at, "&&", "right");
      Emit(Op::kAnd);
      left = FieldType::kBool;
    }
    return left;
  }

  static void RequireBool(FieldType t, size_t at, std::string_view op, std::string_view side) {
    if (t != FieldType::kBool && t != kNullType) {
      throw ExpressionError(at, fmt::format("'{}' needs bool operands, but its {} operand is {}",
                                            op, side, TypeName(t)));
    }
  }

  // `!` and unary `-` chains are read in a loop, not by recursion, so `!!!...x` costs no stack.
  FieldType ParseNot() {
    size_t count = 0;
    size_t innermost = 0;
    while (IsSymbol("!")) {
      innermost = tok_.offset;
      ++count;
      Next();
    }
    const FieldType t = ParseComparison();
    if (count > 0 && t != FieldType::kBool) {
      throw ExpressionError(innermost,
                            fmt::format("'!' needs a bool operand, got {}", TypeName(t)));
    }
    for (size_t i = 0; i < count; ++i) {
      Emit(Op::kNot);
    }
    return count > 0 ? FieldType::kBool : t;
  }

  FieldType ParseComparison() {
    const size_t left_at = tok_.offset;
    FieldType left = ParseAdditive();
    if (std::optional<FieldType> p = ParsePredicate(left, left_at)) {
      return *p;
    }
    static constexpr std::pair<std::string_view, Op> kOps[] = {{"==", Op::kEq}, {"!=", Op::kNe},
                                                               {"<=", Op::kLe}, {">=", Op::kGe},
                                                               {"<", Op::kLt},  {">", Op::kGt}};
    for (const auto& [sym, op] : kOps) {
      if (tok_.kind == Tok::kSymbol && tok_.text == sym) {
        const size_t at = tok_.offset;
        const std::string shown = tok_.spelled.empty() ? std::string(sym) : tok_.spelled;
        Next();
        const FieldType right = ParseAdditive();
        CheckComparable(left, right, at, shown);
        if (left == FieldType::kBool && right == FieldType::kBool && op != Op::kEq &&
            op != Op::kNe) {
          throw ExpressionError(at, fmt::format("'{}' cannot order bools; use == or !=", sym));
        }
        const bool dbl = left == FieldType::kDouble || right == FieldType::kDouble;
        Emit(op, dbl, left == kNullType ? right : left, right == kNullType ? left : right);
        if (tok_.kind == Tok::kSymbol &&
            (tok_.text == "==" || tok_.text == "!=" || tok_.text == "<" || tok_.text == "<=" ||
             tok_.text == ">" || tok_.text == ">=")) {
          throw ExpressionError(tok_.offset, "comparisons do not chain; combine them with '&&'");
        }
        return FieldType::kBool;
      }
    }
    return left;
  }

  /// `x IS [NOT] NULL`, `x [NOT] IN (...)`, `x [NOT] BETWEEN a AND b`, `x [NOT] LIKE p`, after
  /// the operand `x` of type `left`; nullopt if none follows.
  std::optional<FieldType> ParsePredicate(FieldType left, size_t left_at) {
    const size_t at = tok_.offset;
    std::vector<Arg> args{Arg{left, left_at, std::nullopt, std::nullopt}};
    auto data = std::make_shared<ExpressionCallData>();
    if (IsWord("IS")) {
      Next();
      const bool negate = IsWord("NOT");
      if (negate) {
        Next();
      }
      ExpectWord("NULL", "after IS [NOT]");
      EmitCall(negate ? Fn::kIsNotNull : Fn::kIsNull, args);
      return FieldType::kBool;
    }
    if (IsWord("NOT")) {
      Next();
      data->negate = true;
      if (!IsWord("IN") && !IsWord("BETWEEN") && !IsWord("LIKE")) {
        throw ExpressionError(tok_.offset, fmt::format("expected IN, BETWEEN or LIKE after NOT "
                                                       "but found '{}'",
                                                       Describe(tok_)));
      }
    }
    if (IsWord("IN")) {
      Next();
      Open(tok_.offset);
      Expect(Tok::kLParen, "(");
      while (true) {
        args.push_back(ParseArg());
        CheckComparable(left, args.back().type, args.back().at, "IN");
        if (!IsComma()) {
          break;
        }
        Next();
      }
      Expect(Tok::kRParen, ")");
      --depth_;
      EmitCall(Fn::kIn, args, std::move(data));
      return FieldType::kBool;
    }
    if (IsWord("BETWEEN")) {
      Next();
      args.push_back(Arg{FieldType::kBool, tok_.offset, std::nullopt, std::nullopt});
      args.back().type = ParseAdditive();
      CheckComparable(left, args.back().type, args.back().at, "BETWEEN");
      ExpectWord("AND", "in BETWEEN a AND b");
      args.push_back(Arg{FieldType::kBool, tok_.offset, std::nullopt, std::nullopt});
      args.back().type = ParseAdditive();
      CheckComparable(left, args.back().type, args.back().at, "BETWEEN");
      if (left == FieldType::kBool) {
        throw ExpressionError(at, "BETWEEN cannot order bools");
      }
      EmitCall(Fn::kBetween, args, std::move(data));
      return FieldType::kBool;
    }
    if (IsWord("LIKE")) {
      Next();
      args.push_back(ParseArg0());
      Need("LIKE", args, 0, Want::kString);
      const std::string& pattern = Literal("LIKE", args[1], "pattern");
      std::optional<char> escape;
      if (IsWord("ESCAPE")) {
        Next();
        if (tok_.kind != Tok::kString || tok_.text.size() != 1) {
          throw ExpressionError(tok_.offset, "ESCAPE needs a one-character string literal");
        }
        escape = tok_.text[0];
        data->escape = *escape;
        Next();
      }
      std::string re = "(?s)";
      for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (escape && c == *escape) {
          if (i + 1 >= pattern.size()) {
            throw ExpressionError(args[1].at, "LIKE: the pattern ends with the escape character");
          }
          re += RE2::QuoteMeta(std::string_view(&pattern[++i], 1));
        } else if (c == '%') {
          re += ".*";
        } else if (c == '_') {
          re += ".";
        } else {
          re += RE2::QuoteMeta(std::string_view(&c, 1));
        }
      }
      data->regex = std::make_shared<const RE2>(re, RE2::Quiet);
      EmitCall(Fn::kLike, args, std::move(data));
      return FieldType::kBool;
    }
    if (data->negate) {
      throw ExpressionError(at, "expected IN, BETWEEN or LIKE after NOT");
    }
    return std::nullopt;
  }
  /// A LIKE pattern: one additive operand (`x LIKE 'a%' AND ...` must not take the AND).
  Arg ParseArg0() {
    Arg a;
    a.at = tok_.offset;
    const size_t first = program_->size();
    a.type = ParseAdditive();
    if (program_->size() == first + 1 && (*program_)[first].op == Op::kConst) {
      if (const auto* str = std::get_if<std::string>(&(*program_)[first].constant)) {
        a.string_literal = *str;
      }
    }
    return a;
  }

  FieldType Arithmetic(FieldType left, FieldType right, const std::string& sym, size_t at) {
    // NULL takes the other operand's type (the result is NULL whatever it is).
    if (left == kNullType && right != kNullType) {
      left = right == FieldType::kTimestamp ? FieldType::kInt64 : right;
    } else if (right == kNullType && left != kNullType) {
      right = left == FieldType::kTimestamp ? FieldType::kInt64 : left;
    }
    if (sym == "+" && left == FieldType::kString && right == FieldType::kString) {
      Emit(Op::kConcat, false, left, right);
      return FieldType::kString;
    }
    if (!IsNumeric(left) || !IsNumeric(right)) {
      throw ExpressionError(at, fmt::format("operator '{}' cannot be applied to {} and {}", sym,
                                            TypeName(left), TypeName(right)));
    }
    const bool dbl = left == FieldType::kDouble || right == FieldType::kDouble;
    const Op op = sym == "+"   ? Op::kAdd
                  : sym == "-" ? Op::kSub
                  : sym == "*" ? Op::kMul
                  : sym == "/" ? Op::kDiv
                               : Op::kMod;
    if (op == Op::kMod && dbl) {
      throw ExpressionError(at, "'%' needs integer operands");
    }
    Emit(op, dbl, left, right);
    if (dbl) {
      return FieldType::kDouble;
    }
    if ((op == Op::kAdd || op == Op::kSub) && left == FieldType::kTimestamp &&
        right == FieldType::kInt64) {
      return FieldType::kTimestamp;
    }
    return FieldType::kInt64;
  }

  FieldType ParseAdditive() {
    FieldType left = ParseMultiplicative();
    while (tok_.kind == Tok::kSymbol && (tok_.text == "+" || tok_.text == "-")) {
      const std::string sym = tok_.text;
      const size_t at = tok_.offset;
      Next();
      const FieldType right = ParseMultiplicative();
      left = Arithmetic(left, right, sym, at);
    }
    return left;
  }

  FieldType ParseMultiplicative() {
    FieldType left = ParseUnary();
    while (tok_.kind == Tok::kSymbol &&
           (tok_.text == "*" || tok_.text == "/" || tok_.text == "%")) {
      const std::string sym = tok_.text;
      const size_t at = tok_.offset;
      Next();
      const FieldType right = ParseUnary();
      left = Arithmetic(left, right, sym, at);
    }
    return left;
  }

  FieldType ParseUnary() {
    size_t count = 0;
    size_t innermost = 0;
    while (tok_.kind == Tok::kSymbol && tok_.text == "-") {
      innermost = tok_.offset;
      ++count;
      Next();
    }
    const FieldType t = ParsePrimary();
    if (count == 0) {
      return t;
    }
    if (!IsNumeric(t)) {
      throw ExpressionError(innermost,
                            fmt::format("unary '-' needs a number, got {}", TypeName(t)));
    }
    for (size_t i = 0; i < count; ++i) {
      Emit(Op::kNeg, t == FieldType::kDouble, t);
    }
    return t == FieldType::kDouble ? FieldType::kDouble : FieldType::kInt64;
  }

  void EmitConst(Value v) {
    Expression::Instr in;
    in.op = Op::kConst;
    in.left = v.index() == 0   ? kNullType
              : v.index() == 1 ? FieldType::kInt64
              : v.index() == 2 ? FieldType::kDouble
              : v.index() == 4 ? FieldType::kString
                               : FieldType::kBool;
    in.constant = std::move(v);
    program_->push_back(std::move(in));
  }

  // ---- SQL words and calls ----

  /// An unquoted identifier equal to `word` in any case (SQL keywords are case-insensitive).
  bool IsWord(std::string_view word) const { return IsWord(tok_, word); }
  static bool IsWord(const Token& t, std::string_view word) {
    if (t.kind != Tok::kIdent || t.int_value != 0 || t.text.size() != word.size()) {
      return false;
    }
    for (size_t i = 0; i < word.size(); ++i) {
      if (std::toupper(static_cast<unsigned char>(t.text[i])) != word[i]) {
        return false;
      }
    }
    return true;
  }
  void ExpectWord(std::string_view word, std::string_view where) {
    if (!IsWord(word)) {
      throw ExpressionError(
          tok_.offset, fmt::format("expected {} {} but found '{}'", word, where, Describe(tok_)));
    }
    Next();
  }
  void Expect(Tok kind, std::string_view what) {
    if (tok_.kind != kind || (kind == Tok::kSymbol && tok_.text != what)) {
      throw ExpressionError(tok_.offset,
                            fmt::format("expected '{}' but found '{}'", what, Describe(tok_)));
    }
    Next();
  }
  bool IsComma() const { return tok_.kind == Tok::kSymbol && tok_.text == ","; }
  /// Enters one level of parentheses (a call's or a group's), bounded by kMaxExpressionDepth.
  void Open(size_t at) {
    if (++depth_ > kMaxExpressionDepth) {
      throw ExpressionError(
          at, fmt::format("parentheses nest deeper than {} levels", kMaxExpressionDepth));
    }
  }

  Arg ParseArg() {
    Arg a;
    a.at = tok_.offset;
    const size_t first = program_->size();
    a.type = ParseOr();
    if (program_->size() == first + 1 && (*program_)[first].op == Op::kConst) {
      const Value& v = (*program_)[first].constant;
      if (const auto* str = std::get_if<std::string>(&v)) {
        a.string_literal = *str;
      } else if (const auto* i = std::get_if<int64_t>(&v)) {
        a.int_literal = *i;
      }
    }
    return a;
  }
  /// `(a, b, ...)` after a function name; `at` is the name's offset.
  std::vector<Arg> ParseArgs() {
    Open(tok_.offset);
    Expect(Tok::kLParen, "(");
    std::vector<Arg> args;
    if (tok_.kind != Tok::kRParen) {
      args.push_back(ParseArg());
      while (IsComma()) {
        Next();
        args.push_back(ParseArg());
      }
    }
    if (tok_.kind != Tok::kRParen) {
      throw ExpressionError(tok_.offset,
                            fmt::format("expected ',' or ')' but found '{}'", Describe(tok_)));
    }
    Next();
    --depth_;
    return args;
  }

  enum class Want { kAny, kString, kNumber, kInteger, kTimestamp, kBool };
  static bool Fits(FieldType t, Want w) {
    switch (w) {
      case Want::kAny:
        return true;
      case Want::kString:
        return t == FieldType::kString || t == kNullType;
      case Want::kNumber:
        return IsNumeric(t) || t == kNullType;
      case Want::kInteger:
        return t == FieldType::kInt64 || t == kNullType;
      case Want::kTimestamp:
        return t == FieldType::kTimestamp || t == kNullType;
      case Want::kBool:
        return t == FieldType::kBool || t == kNullType;
    }
    return false;
  }
  static const char* WantName(Want w) {
    switch (w) {
      case Want::kString:
        return "a string";
      case Want::kNumber:
        return "a number";
      case Want::kInteger:
        return "an int64";
      case Want::kTimestamp:
        return "a timestamp";
      case Want::kBool:
        return "a bool";
      default:
        return "a value";
    }
  }
  static void Need(const std::string& fn, const std::vector<Arg>& args, size_t i, Want w) {
    if (!Fits(args[i].type, w)) {
      std::string hint;
      if (w == Want::kTimestamp && IsInteger(args[i].type)) {
        hint = "; TO_TIMESTAMP_LTZ(x, 3) makes one from epoch milliseconds";
      } else if (w == Want::kString) {
        hint = "; CAST(x AS STRING) makes one";
      }
      throw ExpressionError(
          args[i].at, fmt::format("{}: argument {} must be {}, got {}{}", fn, i + 1, WantName(w),
                                  TypeName(args[i].type), hint));
    }
  }
  static void Arity(const std::string& fn, const std::vector<Arg>& args, size_t at, size_t min,
                    size_t max) {
    if (args.size() < min || args.size() > max) {
      const std::string want = min == max        ? std::to_string(min)
                               : max == SIZE_MAX ? fmt::format("at least {}", min)
                               : min + 1 == max  ? fmt::format("{} or {}", min, max)
                                                 : fmt::format("{} to {}", min, max);
      throw ExpressionError(at, fmt::format("{} takes {} argument{}, got {}", fn, want,
                                            want == "1" ? "" : "s", args.size()));
    }
  }
  static const std::string& Literal(const std::string& fn, const Arg& a, std::string_view what) {
    if (!a.string_literal) {
      throw ExpressionError(a.at, fmt::format("{}: the {} must be a string literal", fn, what));
    }
    return *a.string_literal;
  }

  void EmitCall(Fn fn, const std::vector<Arg>& args,
                std::shared_ptr<const ExpressionCallData> data = nullptr) {
    Expression::Instr in;
    in.op = Op::kCall;
    in.fn = static_cast<uint16_t>(fn);
    in.argc = static_cast<uint16_t>(args.size());
    for (const Arg& a : args) {
      in.args.push_back(a.type);
    }
    in.data = std::move(data);
    program_->push_back(std::move(in));
  }
  void EmitConvert(FieldType from, FieldType to) {
    Expression::Instr in;
    in.op = Op::kConvert;
    in.left = from;
    in.right = to;
    program_->push_back(std::move(in));
  }
  size_t EmitJump(Op op) {
    Expression::Instr in;
    in.op = op;
    program_->push_back(std::move(in));
    return program_->size() - 1;
  }
  void PatchHere(size_t jump) {
    (*program_)[jump].target = static_cast<uint32_t>(program_->size());
  }

  /// The common type of CASE / IF / COALESCE results: NULLs take the others' type, int64 and
  /// double give double, int64 and timestamp give int64; anything else is an error at `at`.
  static FieldType Unify(const std::vector<std::pair<FieldType, size_t>>& branches,
                         std::string_view what) {
    FieldType t = kNullType;
    size_t first_at = 0;
    for (const auto& [b, at] : branches) {
      if (b == kNullType) {
        continue;
      }
      if (t == kNullType) {
        t = b;
        first_at = at;
      } else if (t != b) {
        if (IsNumeric(t) && IsNumeric(b)) {
          t = t == FieldType::kDouble || b == FieldType::kDouble ? FieldType::kDouble
                                                                 : FieldType::kInt64;
        } else {
          throw ExpressionError(at, fmt::format("{} mixes {} (at offset {}) with {}", what,
                                                TypeName(t), first_at, TypeName(b)));
        }
      }
    }
    if (t == kNullType && !branches.empty()) {
      throw ExpressionError(
          branches.front().second,
          fmt::format("{} has only NULL results; write CAST(NULL AS <type>)", what));
    }
    return t;
  }
  /// Sets the kConvert placeholders after each branch to `to`.
  void PatchConverts(const std::vector<size_t>& converts, FieldType to) {
    for (size_t c : converts) {
      (*program_)[c].right = to;
    }
  }

  // CASE [x] WHEN a THEN b ... [ELSE c] END
  FieldType ParseCase(size_t at) {
    Open(at);
    std::optional<FieldType> subject;
    std::vector<Expression::Instr> subject_code;
    if (!IsWord("WHEN")) {
      // Simple CASE: the subject is compared with each WHEN value. It is evaluated once per
      // comparison (expressions have no side effects).
      const size_t from = program_->size();
      subject = ParseOr();
      subject_code.assign(program_->begin() + static_cast<ptrdiff_t>(from), program_->end());
      program_->resize(from);
      for (const Expression::Instr& in : subject_code) {
        if (in.op == Op::kJump || in.op == Op::kJumpIfNotTrue || in.op == Op::kJumpIfNotNull) {
          throw ExpressionError(at,
                                "the subject of CASE x WHEN ... may not contain CASE, IF or "
                                "COALESCE; write CASE WHEN x = ... instead");
        }
      }
    }
    std::vector<std::pair<FieldType, size_t>> results;
    std::vector<size_t> converts;
    std::vector<size_t> ends;
    if (!IsWord("WHEN")) {
      throw ExpressionError(tok_.offset,
                            fmt::format("expected WHEN but found '{}'", Describe(tok_)));
    }
    while (IsWord("WHEN")) {
      Next();
      const size_t cond_at = tok_.offset;
      if (subject) {
        program_->insert(program_->end(), subject_code.begin(), subject_code.end());
        const FieldType v = ParseOr();
        CheckComparable(*subject, v, cond_at, "=");
        Expression::Instr eq;
        eq.op = Op::kEq;
        eq.dbl = (*subject == FieldType::kDouble || v == FieldType::kDouble);
        eq.left = *subject;
        eq.right = v;
        program_->push_back(std::move(eq));
      } else {
        const FieldType c = ParseOr();
        if (!Fits(c, Want::kBool)) {
          throw ExpressionError(
              cond_at, fmt::format("CASE WHEN needs a bool condition, got {}", TypeName(c)));
        }
      }
      const size_t skip = EmitJump(Op::kJumpIfNotTrue);
      ExpectWord("THEN", "after the WHEN condition");
      const size_t value_at = tok_.offset;
      results.emplace_back(ParseOr(), value_at);
      converts.push_back(program_->size());
      EmitConvert(results.back().first, results.back().first);
      ends.push_back(EmitJump(Op::kJump));
      PatchHere(skip);
    }
    if (IsWord("ELSE")) {
      Next();
      const size_t value_at = tok_.offset;
      results.emplace_back(ParseOr(), value_at);
    } else {
      EmitConst(Value{});
      results.emplace_back(kNullType, tok_.offset);
    }
    converts.push_back(program_->size());
    EmitConvert(results.back().first, results.back().first);
    ExpectWord("END", "to close CASE");
    for (size_t e : ends) {
      PatchHere(e);
    }
    const FieldType t = Unify(results, "CASE");
    PatchConverts(converts, t);
    --depth_;
    return t;
  }

  void CheckComparable(FieldType a, FieldType b, size_t at, std::string_view sym) {
    if (a == kNullType || b == kNullType || (IsNumeric(a) && IsNumeric(b)) ||
        (a == b && (a == FieldType::kString || a == FieldType::kBool))) {
      return;
    }
    throw ExpressionError(
        at, fmt::format("cannot compare {} with {} using '{}'", TypeName(a), TypeName(b), sym));
  }

  // IF(c, a, b): CASE WHEN c THEN a ELSE b END.
  FieldType ParseIf() {
    Open(tok_.offset);
    Expect(Tok::kLParen, "(");
    const size_t cond_at = tok_.offset;
    const FieldType c = ParseOr();
    if (!Fits(c, Want::kBool)) {
      throw ExpressionError(cond_at, fmt::format("IF needs a bool condition, got {}", TypeName(c)));
    }
    const size_t skip = EmitJump(Op::kJumpIfNotTrue);
    Expect(Tok::kSymbol, ",");
    std::vector<std::pair<FieldType, size_t>> results;
    std::vector<size_t> converts;
    results.emplace_back(FieldType::kBool, tok_.offset);
    results.back().first = ParseOr();
    converts.push_back(program_->size());
    EmitConvert(results.back().first, results.back().first);
    const size_t end = EmitJump(Op::kJump);
    PatchHere(skip);
    Expect(Tok::kSymbol, ",");
    results.emplace_back(FieldType::kBool, tok_.offset);
    results.back().first = ParseOr();
    converts.push_back(program_->size());
    EmitConvert(results.back().first, results.back().first);
    Expect(Tok::kRParen, ")");
    PatchHere(end);
    const FieldType t = Unify(results, "IF");
    PatchConverts(converts, t);
    --depth_;
    return t;
  }

  // COALESCE(a, b, ...): the first that is not NULL; later ones are not evaluated.
  FieldType ParseCoalesce() {
    Open(tok_.offset);
    Expect(Tok::kLParen, "(");
    std::vector<std::pair<FieldType, size_t>> results;
    std::vector<size_t> converts;
    std::vector<size_t> ends;
    while (true) {
      const size_t value_at = tok_.offset;
      results.emplace_back(ParseOr(), value_at);
      converts.push_back(program_->size());
      EmitConvert(results.back().first, results.back().first);
      if (!IsComma()) {
        break;
      }
      Next();
      ends.push_back(EmitJump(Op::kJumpIfNotNull));
    }
    Expect(Tok::kRParen, ")");
    for (size_t e : ends) {
      PatchHere(e);
    }
    const FieldType t = Unify(results, "COALESCE");
    PatchConverts(converts, t);
    --depth_;
    return t;
  }

  // CAST(x AS type) / TRY_CAST(x AS type)
  FieldType ParseCast(const std::string& name, size_t at) {
    Open(tok_.offset);
    Expect(Tok::kLParen, "(");
    Arg a;
    a.at = tok_.offset;
    a.type = ParseOr();
    ExpectWord("AS", fmt::format("in {}", name));
    const Token type_tok = tok_;
    auto data = std::make_shared<ExpressionCallData>();
    data->try_cast = name == "TRY_CAST";
    std::string type_name;
    if (type_tok.kind == Tok::kIdent) {
      AppendAsciiUpper(type_tok.text, type_name);
    }
    Next();
    if (type_name == "INT" || type_name == "INTEGER") {
      data->target = FieldType::kInt64;
      data->int32 = true;
    } else if (type_name == "BIGINT") {
      data->target = FieldType::kInt64;
    } else if (type_name == "DOUBLE" || type_name == "FLOAT") {
      data->target = FieldType::kDouble;
    } else if (type_name == "STRING") {
      data->target = FieldType::kString;
    } else if (type_name == "VARCHAR" || type_name == "CHAR") {
      // Flink (since 1.15) truncates to n characters, CHAR(n) pads to n; n defaults to 1.
      data->target = FieldType::kString;
      data->max_chars = 1;
      data->pad_chars = type_name == "CHAR";
    } else if (type_name == "BOOLEAN") {
      data->target = FieldType::kBool;
    } else if (type_name == "TIMESTAMP") {
      data->target = FieldType::kTimestamp;
    } else {
      throw ExpressionError(type_tok.offset,
                            fmt::format("{}: unknown type '{}' (types: INT, BIGINT, DOUBLE, "
                                        "STRING, VARCHAR(n), CHAR(n), BOOLEAN, TIMESTAMP)",
                                        name, Describe(type_tok)));
    }
    data->sql_type = type_name;
    if (tok_.kind == Tok::kLParen) {  // VARCHAR(n), TIMESTAMP(3): the length is not kept
      Next();
      if (tok_.kind != Tok::kInt) {
        throw ExpressionError(tok_.offset, "expected a length");
      }
      if (type_name == "TIMESTAMP" && tok_.int_value != 3) {
        throw ExpressionError(tok_.offset, "timestamps have millisecond precision: TIMESTAMP(3)");
      }
      if (data->max_chars > 0) {
        if (tok_.int_value < 1 || tok_.int_value > 2147483647) {
          throw ExpressionError(tok_.offset,
                                fmt::format("{} length must be from 1 to 2147483647", type_name));
        }
        if (data->pad_chars && tok_.int_value > (int64_t{1} << 20)) {
          // Every result would be padded to n: a hostile length must not exhaust memory.
          throw ExpressionError(tok_.offset, "CHAR length must be at most 1048576 in tidemark");
        }
        data->max_chars = tok_.int_value;
      } else if (type_name != "TIMESTAMP") {
        throw ExpressionError(tok_.offset, fmt::format("{} takes no length", type_name));
      }
      Next();
      Expect(Tok::kRParen, ")");
    }
    Expect(Tok::kRParen, ")");
    --depth_;
    const bool numeric_to_ts = data->target == FieldType::kTimestamp && a.type != kNullType &&
                               a.type != FieldType::kString && a.type != FieldType::kTimestamp;
    const bool ts_to_numeric = a.type == FieldType::kTimestamp &&
                               data->target != FieldType::kString &&
                               data->target != FieldType::kTimestamp;
    if (numeric_to_ts || ts_to_numeric ||
        (a.type == FieldType::kBool && data->target == FieldType::kTimestamp)) {
      throw ExpressionError(at, fmt::format("{} from {} to {} is not supported (as in Flink); "
                                            "TO_TIMESTAMP_LTZ(ms, 3) makes a timestamp from "
                                            "epoch milliseconds",
                                            name, TypeName(a.type), type_name));
    }
    EmitCall(Fn::kCast, {a}, std::move(data));
    return (*program_).back().data->target;
  }

  /// EXTRACT(unit FROM ts)
  FieldType ParseExtract() {
    Open(tok_.offset);
    Expect(Tok::kLParen, "(");
    auto data = std::make_shared<ExpressionCallData>();
    data->unit = Unit("EXTRACT", false);
    ExpectWord("FROM", "in EXTRACT(unit FROM timestamp)");
    std::vector<Arg> args{ParseArg()};
    Need("EXTRACT", args, 0, Want::kTimestamp);
    Expect(Tok::kRParen, ")");
    --depth_;
    EmitCall(Fn::kExtract, args, std::move(data));
    return FieldType::kInt64;
  }

  TimeUnit Unit(std::string_view fn, bool floor) {
    const Token t = tok_;
    std::optional<TimeUnit> unit;
    if (t.kind == Tok::kIdent && t.int_value == 0) {
      unit = ParseTimeUnit(t.text);
    }
    if (!unit || (floor && (*unit == TimeUnit::kWeek || *unit == TimeUnit::kDayOfWeek ||
                            *unit == TimeUnit::kDayOfYear))) {
      throw ExpressionError(
          t.offset, fmt::format("{}: unknown time unit '{}' (units: {})", fn, Describe(t),
                                floor ? "MILLISECOND SECOND MINUTE HOUR DAY MONTH QUARTER YEAR"
                                      : "MILLISECOND SECOND MINUTE HOUR DAY WEEK MONTH QUARTER "
                                        "YEAR DOW DOY"));
    }
    Next();
    return *unit;
  }

  /// FLOOR/CEIL(x) on numbers and FLOOR/CEIL(ts TO unit).
  FieldType ParseFloorCeil(const std::string& name) {
    Open(tok_.offset);
    Expect(Tok::kLParen, "(");
    std::vector<Arg> args{ParseArg()};
    FieldType result = FieldType::kDouble;
    if (IsWord("TO")) {
      Next();
      auto data = std::make_shared<ExpressionCallData>();
      data->unit = Unit(name, true);
      Need(name, args, 0, Want::kTimestamp);
      Expect(Tok::kRParen, ")");
      EmitCall(name == "FLOOR" ? Fn::kFloorTime : Fn::kCeilTime, args, std::move(data));
      result = FieldType::kTimestamp;
    } else {
      Expect(Tok::kRParen, ")");
      Need(name, args, 0, Want::kNumber);
      EmitCall(name == "FLOOR" ? Fn::kFloor : Fn::kCeil, args);
      result = args[0].type == FieldType::kDouble ? FieldType::kDouble : FieldType::kInt64;
    }
    --depth_;
    return result;
  }

  /// TIMESTAMPADD(unit, n, ts) / TIMESTAMPDIFF(unit, ts1, ts2)
  FieldType ParseTimestampArith(const std::string& name, size_t at) {
    Open(tok_.offset);
    Expect(Tok::kLParen, "(");
    auto data = std::make_shared<ExpressionCallData>();
    data->unit = Unit(name, false);
    if (data->unit == TimeUnit::kDayOfWeek || data->unit == TimeUnit::kDayOfYear) {
      throw ExpressionError(at, fmt::format("{}: DOW and DOY are not units of time", name));
    }
    Expect(Tok::kSymbol, ",");
    std::vector<Arg> args{ParseArg()};
    Expect(Tok::kSymbol, ",");
    args.push_back(ParseArg());
    Expect(Tok::kRParen, ")");
    --depth_;
    const bool add = name == "TIMESTAMPADD";
    Need(name, args, 0, add ? Want::kInteger : Want::kTimestamp);
    Need(name, args, 1, Want::kTimestamp);
    EmitCall(add ? Fn::kTimestampAdd : Fn::kTimestampDiff, args, std::move(data));
    return add ? FieldType::kTimestamp : FieldType::kInt64;
  }

  /// TRIM(s), TRIM([BOTH|LEADING|TRAILING] [chars] FROM s): emitted as (chars, s).
  FieldType ParseTrim() {
    Open(tok_.offset);
    Expect(Tok::kLParen, "(");
    auto data = std::make_shared<ExpressionCallData>();
    bool mode = false;
    if (IsWord("BOTH") || IsWord("LEADING") || IsWord("TRAILING")) {
      data->trim = IsWord("BOTH") ? 0 : IsWord("LEADING") ? 1 : 2;
      mode = true;
      Next();
    }
    std::vector<Arg> args;
    if (IsWord("FROM")) {
      Next();
      EmitConst(std::string(" "));
      args.push_back(Arg{FieldType::kString, tok_.offset, " ", std::nullopt});
      args.push_back(ParseArg());
    } else {
      Arg first = ParseArg();
      if (IsWord("FROM")) {
        Next();
        args.push_back(first);
        args.push_back(ParseArg());
      } else {
        if (mode) {
          throw ExpressionError(tok_.offset, "expected FROM in TRIM(... FROM string)");
        }
        // TRIM(s): the runtime reads (s, chars) when `trim_reversed`.
        EmitConst(std::string(" "));
        args.push_back(first);
        args.push_back(Arg{FieldType::kString, first.at, " ", std::nullopt});
        data->trim_reversed = true;
      }
    }
    Expect(Tok::kRParen, ")");
    --depth_;
    Need("TRIM", args, 0, Want::kString);
    Need("TRIM", args, 1, Want::kString);
    EmitCall(Fn::kTrim, args, std::move(data));
    return FieldType::kString;
  }

  /// SUBSTRING(s FROM i [FOR n]) and SUBSTRING(s, i [, n]) (also SUBSTR).
  FieldType ParseSubstring(const std::string& name, size_t at) {
    Open(tok_.offset);
    Expect(Tok::kLParen, "(");
    std::vector<Arg> args{ParseArg()};
    if (IsWord("FROM")) {
      Next();
      args.push_back(ParseArg());
      if (IsWord("FOR")) {
        Next();
        args.push_back(ParseArg());
      }
    } else {
      while (IsComma()) {
        Next();
        args.push_back(ParseArg());
      }
    }
    Expect(Tok::kRParen, ")");
    --depth_;
    Arity(name, args, at, 2, 3);
    Need(name, args, 0, Want::kString);
    Need(name, args, 1, Want::kInteger);
    if (args.size() == 3) {
      Need(name, args, 2, Want::kInteger);
    }
    EmitCall(Fn::kSubstring, args);
    return FieldType::kString;
  }

  FieldType ParseCall(const Token& name_tok) {
    std::string name;
    AppendAsciiUpper(name_tok.text, name);
    const size_t at = name_tok.offset;
    if (name == "CAST" || name == "TRY_CAST") {
      return ParseCast(name, at);
    }
    if (name == "IF") {
      return ParseIf();
    }
    if (name == "COALESCE") {
      return ParseCoalesce();
    }
    if (name == "EXTRACT") {
      return ParseExtract();
    }
    if (name == "FLOOR" || name == "CEIL" || name == "CEILING") {
      return ParseFloorCeil(name == "CEILING" ? "CEIL" : name);
    }
    if (name == "TIMESTAMPADD" || name == "TIMESTAMPDIFF") {
      return ParseTimestampArith(name, at);
    }
    if (name == "TRIM") {
      return ParseTrim();
    }
    if (name == "SUBSTRING" || name == "SUBSTR") {
      return ParseSubstring(name, at);
    }
    const FnInfo* info = FindFunction(name);
    if (info == nullptr) {
      // NearestKey reads '_' as '-' (YAML keys): compare dashed names and give back the SQL one.
      std::vector<std::string> dashed;
      for (const FnInfo& f : kFunctions) {
        dashed.emplace_back(f.name);
      }
      for (std::string_view f : kSpecialForms) {
        dashed.emplace_back(f);
      }
      for (std::string& d : dashed) {
        std::replace(d.begin(), d.end(), '_', '-');
      }
      const std::vector<std::string_view> names(dashed.begin(), dashed.end());
      std::string best = NearestKey(name, names);
      std::replace(best.begin(), best.end(), '-', '_');
      throw ExpressionError(
          at, fmt::format("unknown function '{}'{}", name_tok.text,
                          best.empty() ? std::string(" (functions are listed in "
                                                     "docs/job-reference.md, \"Functions\")")
                                       : fmt::format(" (did you mean {}?)", best)));
    }
    std::vector<Arg> args = ParseArgs();
    Arity(name, args, at, info->min_args, info->max_args);
    return TypeCall(*info, args, at);
  }

  FieldType TypeCall(const FnInfo& f, std::vector<Arg>& args, size_t at) {
    const std::string name(f.name);
    auto data = std::make_shared<ExpressionCallData>();
    FieldType result = FieldType::kString;
    switch (f.fn) {
      case Fn::kLower:
      case Fn::kUpper:
      case Fn::kCharLength:
        Need(name, args, 0, Want::kString);
        result = f.fn == Fn::kCharLength ? FieldType::kInt64 : FieldType::kString;
        break;
      case Fn::kConcat:
      case Fn::kConcatWs:
      case Fn::kReplace:
        for (size_t i = 0; i < args.size(); ++i) {
          Need(name, args, i, Want::kString);
        }
        break;
      case Fn::kRegexpExtract:
      case Fn::kRegexpReplace: {
        Need(name, args, 0, Want::kString);
        const std::string& re = Literal(name, args[1], "regular expression");
        data->regex = std::make_shared<const RE2>(re, RE2::Quiet);
        if (!data->regex->ok()) {
          throw ExpressionError(args[1].at, fmt::format("{}: bad regular expression '{}': {}", name,
                                                        re, data->regex->error()));
        }
        if (f.fn == Fn::kRegexpExtract) {
          if (args.size() == 3) {
            Need(name, args, 2, Want::kInteger);
          }
        } else {
          Need(name, args, 2, Want::kString);
          if (args[2].string_literal) {
            data->rewrite = JavaReplacementToRe2(*args[2].string_literal);
          } else {
            throw ExpressionError(
                args[2].at, fmt::format("{}: the replacement must be a string literal", name));
          }
        }
        break;
      }
      case Fn::kSplitIndex:
        Need(name, args, 0, Want::kString);
        Need(name, args, 1, Want::kString);
        Need(name, args, 2, Want::kInteger);
        break;
      case Fn::kAbs:
      case Fn::kRound:
        Need(name, args, 0, Want::kNumber);
        if (args.size() == 2) {
          Need(name, args, 1, Want::kInteger);
        }
        result = args[0].type == FieldType::kDouble ? FieldType::kDouble : FieldType::kInt64;
        break;
      case Fn::kPower:
      case Fn::kLn:
      case Fn::kLog10:
      case Fn::kSqrt:
      case Fn::kExp:
        for (size_t i = 0; i < args.size(); ++i) {
          Need(name, args, i, Want::kNumber);
        }
        result = FieldType::kDouble;
        break;
      case Fn::kMod:
        Need(name, args, 0, Want::kInteger);
        Need(name, args, 1, Want::kInteger);
        result = FieldType::kInt64;
        break;
      case Fn::kNullIf:
        CheckComparable(args[0].type, args[1].type, args[1].at, "NULLIF");
        if (args[0].type == kNullType) {
          throw ExpressionError(args[0].at, "NULLIF(NULL, ...) has no type");
        }
        result = args[0].type;
        break;
      case Fn::kDateFormat: {
        Need(name, args, 0, Want::kTimestamp);
        data->pattern = CompilePattern(name, args[1]);
        break;
      }
      case Fn::kToTimestamp:
      case Fn::kUnixTimestamp: {
        if (!args.empty()) {
          Need(name, args, 0, Want::kString);
        }
        std::string pattern = "yyyy-MM-dd HH:mm:ss";
        if (args.size() == 2) {
          pattern = Literal(name, args[1], "format");
        }
        std::string error;
        data->pattern = DateTimePattern::Compile(pattern, &error);
        if (!data->pattern) {
          throw ExpressionError(args.size() == 2 ? args[1].at : at,
                                fmt::format("{}: bad format '{}': {}", name, pattern, error));
        }
        result = f.fn == Fn::kToTimestamp ? FieldType::kTimestamp : FieldType::kInt64;
        break;
      }
      case Fn::kToTimestampLtz: {
        Need(name, args, 0, Want::kInteger);
        int64_t precision = 3;
        if (args.size() == 2) {
          if (!args[1].int_literal || (*args[1].int_literal != 0 && *args[1].int_literal != 3)) {
            throw ExpressionError(args[1].at,
                                  "TO_TIMESTAMP_LTZ: the precision must be 0 (seconds) or 3 "
                                  "(milliseconds)");
          }
          precision = *args[1].int_literal;
        }
        data->precision = precision;
        result = FieldType::kTimestamp;
        break;
      }
      default:
        break;
    }
    EmitCall(f.fn, args, std::move(data));
    return result;
  }

  static std::optional<DateTimePattern> CompilePattern(const std::string& fn, const Arg& a) {
    const std::string& p = Literal(fn, a, "format");
    std::string error;
    auto pattern = DateTimePattern::Compile(p, &error);
    if (!pattern) {
      throw ExpressionError(a.at, fmt::format("{}: bad format '{}': {}", fn, p, error));
    }
    return pattern;
  }

  /// Flink's REGEXP_REPLACE takes the replacement literally (no `$1` groups; checked on Flink
  /// 2.3): as an RE2 rewrite, only backslashes need escaping.
  static std::string JavaReplacementToRe2(std::string_view r) {
    std::string out;
    for (char c : r) {
      if (c == '\\') {
        out += '\\';
      }
      out += c;
    }
    return out;
  }

  FieldType ParsePrimary() {
    const Token t = tok_;
    switch (t.kind) {
      case Tok::kInt:
        Next();
        EmitConst(t.int_value);
        return FieldType::kInt64;
      case Tok::kDouble:
        Next();
        EmitConst(t.double_value);
        return FieldType::kDouble;
      case Tok::kString:
        Next();
        EmitConst(t.text);
        return FieldType::kString;
      case Tok::kLParen: {
        // The only recursion whose depth the text controls; bounded well below the stack.
        Open(t.offset);
        Next();
        const FieldType inner = ParseOr();
        if (tok_.kind != Tok::kRParen) {
          throw ExpressionError(tok_.offset,
                                fmt::format("expected ')' but found '{}'", Describe(tok_)));
        }
        Next();
        --depth_;
        return inner;
      }
      case Tok::kIdent: {
        Next();
        if (t.int_value == 0 && (t.text == "true" || t.text == "false")) {
          EmitConst(t.text == "true");
          return FieldType::kBool;
        }
        if (IsWord(t, "NULL")) {
          EmitConst(Value{});
          return kNullType;
        }
        if (IsWord(t, "CASE")) {
          return ParseCase(t.offset);
        }
        if (t.int_value == 0 && tok_.kind == Tok::kLParen) {
          return ParseCall(t);
        }
        const int slot = schema_.IndexOf(t.text);
        if (slot < 0) {
          std::string names;
          for (const Field& f : schema_.fields()) {
            names += (names.empty() ? "" : ", ") + f.name;
          }
          throw ExpressionError(t.offset,
                                fmt::format("unknown field '{}' (fields: {})", t.text, names));
        }
        Expression::Instr in;
        in.op = Op::kLoad;
        in.slot = slot;
        in.left = schema_.field(static_cast<size_t>(slot)).type;
        program_->push_back(std::move(in));
        return schema_.field(static_cast<size_t>(slot)).type;
      }
      default:
        throw ExpressionError(t.offset,
                              fmt::format("expected a value but found '{}'", Describe(t)));
    }
  }

  std::string_view text_;
  const Schema& schema_;
  size_t pos_ = 0;
  int depth_ = 0;  // open parentheses around the current token
  Token tok_;
  std::vector<Expression::Instr>* program_ = nullptr;
};

// One operand on the evaluation stack: its type is known from the program, so a cell is the
// payload alone (a string as a view into the row, a constant or a pooled buffer).
// Trivially constructible (no member initializers), so the per-call stack array costs nothing
// until a cell is written.
struct Cell {
  union {
    int64_t i;
    double d;
    bool b;
  };
  const char* str;
  size_t len;
  bool null;

  std::string_view s() const { return {str, len}; }
  void set_s(std::string_view v) {
    str = v.data();
    len = v.size();
  }
};

double AsNum(const Cell& c, FieldType t) {
  return t == FieldType::kDouble ? c.d : static_cast<double>(c.i);
}

template <typename T>
bool Compare(Op op, const T& a, const T& b) {
  switch (op) {
    case Op::kEq:
      return a == b;
    case Op::kNe:
      return a != b;
    case Op::kLt:
      return a < b;
    case Op::kLe:
      return a <= b;
    case Op::kGt:
      return a > b;
    default:
      return a >= b;
  }
}

/// -1, 0, 1 comparing two non-NULL cells of comparable types (checked at compile time).
int Order(const Cell& a, FieldType ta, const Cell& b, FieldType tb) {
  if (ta == FieldType::kDouble || tb == FieldType::kDouble) {
    const double x = AsNum(a, ta);
    const double y = AsNum(b, tb);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (ta == FieldType::kString) {
    const int c = a.s().compare(b.s());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (ta == FieldType::kBool) {
    return a.b == b.b ? 0 : a.b ? 1 : -1;
  }
  return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
}

/// Strings a call builds, reused from call to call on one thread: a deque keeps the addresses
/// of earlier strings when it grows, and a cleared string keeps its capacity, so steady state
/// allocates nothing.
struct StringPool {
  std::deque<std::string> strings;
  size_t used = 0;
  std::string& Next() {
    if (used == strings.size()) {
      strings.emplace_back();
    }
    std::string& s = strings[used++];
    s.clear();
    return s;
  }
};

[[noreturn]] void CastFailed(std::string_view value, const ExpressionCallData& d) {
  throw ExpressionEvaluationError(
      fmt::format("CAST('{}' AS {}) failed: not a valid {} (TRY_CAST gives NULL instead)",
                  value.size() > 40 ? std::string(value.substr(0, 40)) + "..." : std::string(value),
                  d.sql_type, d.sql_type));
}

/// CAST to VARCHAR(n) / CHAR(n): `s` cut to n code points; CHAR pads with spaces to n.
void FitChars(const ExpressionCallData& d, std::string& s) {
  if (d.max_chars < 0) {
    return;
  }
  s.resize(Utf8Offset(s, d.max_chars));
  if (d.pad_chars) {
    const int64_t have = Utf8Length(s);
    if (have < d.max_chars) {
      s.append(static_cast<size_t>(d.max_chars - have), ' ');
    }
  }
}

/// CAST / TRY_CAST of the non-NULL cell `v` of type `from` into `r` (which may be `v`).
void Cast(const Cell& v, FieldType from, const ExpressionCallData& d, StringPool& pool, Cell& r) {
  const FieldType to = d.target;
  r.null = false;
  if (to == FieldType::kString) {
    if (from == FieldType::kString && d.max_chars < 0) {
      r.set_s(v.s());
      return;
    }
    std::string& out = pool.Next();
    if (from == FieldType::kString) {
      out.assign(v.s());
      FitChars(d, out);
      r.set_s(out);
      return;
    }
    switch (from) {
      case FieldType::kDouble:
        AppendJavaDouble(v.d, out);
        break;
      case FieldType::kBool:
        out = v.b ? "TRUE" : "FALSE";
        break;
      case FieldType::kTimestamp:
        AppendSqlTimestamp(v.i, out);
        break;
      default:
        out = std::to_string(v.i);
        break;
    }
    FitChars(d, out);
    r.set_s(out);
    return;
  }
  if (from == FieldType::kString) {
    const std::string_view s = v.s();
    bool ok = true;
    switch (to) {
      case FieldType::kDouble: {
        const auto x = ParseSqlDouble(s);
        ok = x.has_value();
        r.d = x.value_or(0);
        break;
      }
      case FieldType::kBool: {
        const auto x = ParseSqlBoolean(s);
        ok = x.has_value();
        r.b = x.value_or(false);
        break;
      }
      case FieldType::kTimestamp: {
        const auto x = ParseSqlTimestamp(s);
        ok = x.has_value();
        r.i = x.value_or(0);
        break;
      }
      default: {
        const auto x = ParseSqlInteger(s);
        ok = x.has_value() && (!d.int32 || (*x >= INT32_MIN && *x <= INT32_MAX));
        r.i = x.value_or(0);
        break;
      }
    }
    if (!ok) {
      if (!d.try_cast) {
        CastFailed(s, d);
      }
      r.null = true;
    }
    return;
  }
  // Between numbers, bools and timestamps (timestamp <-> number is rejected at compile time).
  switch (to) {
    case FieldType::kDouble:
      r.d = from == FieldType::kDouble ? v.d
            : from == FieldType::kBool ? (v.b ? 1.0 : 0.0)
                                       : static_cast<double>(v.i);
      break;
    case FieldType::kBool:
      r.b = from == FieldType::kDouble ? v.d != 0 : from == FieldType::kBool ? v.b : v.i != 0;
      break;
    case FieldType::kTimestamp:
      r.i = v.i;
      break;
    default: {
      int64_t x = 0;
      if (from == FieldType::kDouble) {
        // Java's (long) / (int) of a double: NaN is 0, out-of-range saturates.
        const double lo = d.int32 ? INT32_MIN : -9223372036854775808.0;
        const double hi = d.int32 ? INT32_MAX : 9223372036854775807.0;
        x = std::isnan(v.d) ? 0
            : v.d <= lo     ? static_cast<int64_t>(lo)
            : v.d >= hi     ? (d.int32 ? INT32_MAX : INT64_MAX)
                            : static_cast<int64_t>(v.d);
      } else if (from == FieldType::kBool) {
        x = v.b ? 1 : 0;
      } else {
        x = d.int32 ? static_cast<int32_t>(static_cast<uint32_t>(v.i)) : v.i;  // Java (int)
      }
      r.i = x;
      break;
    }
  }
}

/// Java's String.replace(target, replacement), appended to `out`.
void ReplaceAll(std::string_view s, std::string_view from, std::string_view to, std::string& out) {
  if (from.empty()) {  // Java inserts the replacement around every character
    out += to;
    for (size_t i = 0; i < s.size();) {
      size_t j = i + 1;
      while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) {
        ++j;
      }
      out.append(s.substr(i, j - i));
      out += to;
      i = j;
    }
    return;
  }
  size_t at = 0;
  while (true) {
    const size_t hit = s.find(from, at);
    if (hit == std::string_view::npos) {
      out.append(s.substr(at));
      return;
    }
    out.append(s.substr(at, hit - at));
    out.append(to);
    at = hit + from.size();
  }
}

/// Runs one kCall over its operands `a[0..argc)`; the result goes to a[0].
void Call(const Expression::Instr& in, Cell* a, StringPool& pool) {
  const auto fn = static_cast<Fn>(in.fn);
  const ExpressionCallData* d = in.data.get();
  Cell& r = a[0];
  // Functions that look at NULLs themselves.
  switch (fn) {
    case Fn::kIsNull:
    case Fn::kIsNotNull:
      r.b = a[0].null == (fn == Fn::kIsNull);
      r.null = false;
      return;
    case Fn::kConcatWs: {
      if (a[0].null) {
        return;
      }
      std::string& out = pool.Next();
      bool first = true;
      for (size_t i = 1; i < in.argc; ++i) {
        if (!a[i].null) {
          if (!first) {
            out.append(a[0].s());
          }
          out.append(a[i].s());
          first = false;
        }
      }
      r.set_s(out);
      return;
    }
    case Fn::kIn: {
      // SQL: TRUE on a match; else NULL if x or any listed value is NULL; else FALSE.
      if (a[0].null) {
        return;
      }
      bool any_null = false;
      bool found = false;
      for (size_t i = 1; i < in.argc && !found; ++i) {
        if (a[i].null) {
          any_null = true;
        } else {
          found = Order(a[0], in.args[0], a[i], in.args[i]) == 0;
        }
      }
      if (!found && any_null) {
        r.null = true;
        return;
      }
      r.b = found != d->negate;
      r.null = false;
      return;
    }
    case Fn::kBetween: {
      // x >= lo AND x <= hi, three-valued.
      if (a[0].null) {
        return;
      }
      const int lo = a[1].null ? 2 : Order(a[0], in.args[0], a[1], in.args[1]) >= 0 ? 1 : 0;
      const int hi = a[2].null ? 2 : Order(a[0], in.args[0], a[2], in.args[2]) <= 0 ? 1 : 0;
      if (lo == 0 || hi == 0) {
        r.b = d->negate;
        r.null = false;
      } else if (lo == 2 || hi == 2) {
        r.null = true;
      } else {
        r.b = !d->negate;
        r.null = false;
      }
      return;
    }
    case Fn::kNullIf:
      if (!a[0].null && !a[1].null && Order(a[0], in.args[0], a[1], in.args[1]) == 0) {
        r.null = true;
      }
      return;
    case Fn::kCast:
      if (!a[0].null) {
        Cast(a[0], in.args[0], *d, pool, r);
      }
      return;
    case Fn::kUnixTimestamp:
      if (in.argc == 0) {
        r.null = false;
        r.i = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::system_clock::now().time_since_epoch())
                  .count();
        return;
      }
      break;
    default:
      break;
  }
  // Every other function is NULL when an operand is.
  for (size_t i = 0; i < in.argc; ++i) {
    if (a[i].null) {
      r.null = true;
      return;
    }
  }
  r.null = false;
  switch (fn) {
    case Fn::kLike:
      r.b = RE2::FullMatch(a[0].s(), *d->regex) != d->negate;
      return;
    case Fn::kLower:
    case Fn::kUpper: {
      std::string& out = pool.Next();
      fn == Fn::kLower ? AppendLower(a[0].s(), out) : AppendUpper(a[0].s(), out);
      r.set_s(out);
      return;
    }
    case Fn::kTrim: {
      const std::string_view s = d->trim_reversed ? a[0].s() : a[1].s();
      const std::string_view chars = d->trim_reversed ? a[1].s() : a[0].s();
      size_t b = 0;
      size_t e = s.size();
      if (d->trim != 2) {
        while (b < e && chars.find(s[b]) != std::string_view::npos) {
          ++b;
        }
      }
      if (d->trim != 1) {
        while (e > b && chars.find(s[e - 1]) != std::string_view::npos) {
          --e;
        }
      }
      r.set_s(s.substr(b, e - b));
      return;
    }
    case Fn::kConcat: {
      std::string& out = pool.Next();
      for (size_t i = 0; i < in.argc; ++i) {
        out.append(a[i].s());
      }
      r.set_s(out);
      return;
    }
    case Fn::kSubstring: {
      // Flink's SUBSTRING: a position below 1 counts from the end (0 is 1); the result is
      // clamped to the string; a negative length is NULL.
      const std::string_view s = a[0].s();
      const int64_t len = Utf8Length(s);
      const int64_t pos = a[1].i;
      int64_t start = pos > 0 ? pos - 1 : pos < 0 ? len + pos : 0;
      const int64_t count = in.argc == 3 ? a[2].i : INT64_MAX;
      if (count < 0) {  // Flink: NULL (checked on Flink 2.3)
        r.null = true;
        return;
      }
      int64_t end = count == INT64_MAX || count > INT64_MAX - std::max<int64_t>(start, 0)
                        ? len
                        : start + count;
      start = std::max<int64_t>(start, 0);
      end = std::min(end, len);
      if (end <= start) {
        r.set_s({});
        return;
      }
      const size_t b = Utf8Offset(s, start);
      const size_t e = Utf8Offset(s, end);
      r.set_s(s.substr(b, e - b));
      return;
    }
    case Fn::kCharLength:
      r.i = Utf8Length(a[0].s());
      return;
    case Fn::kReplace: {
      std::string& out = pool.Next();
      ReplaceAll(a[0].s(), a[1].s(), a[2].s(), out);
      r.set_s(out);
      return;
    }
    case Fn::kRegexpExtract: {
      // Java's Matcher.find() then group(index): NULL when nothing matches, the index is past
      // the groups, or the group did not take part.
      const int64_t index = in.argc == 3 ? a[2].i : 0;  // Flink: the whole match by default
      const RE2& re = *d->regex;
      if (index < 0 || index > re.NumberOfCapturingGroups()) {
        r.null = true;
        return;
      }
      constexpr int kMaxGroups = 16;
      re2::StringPiece groups[kMaxGroups + 1];
      const auto n = static_cast<int>(index) + 1;
      const std::string_view s = a[0].s();
      if (n > kMaxGroups + 1 ||
          !re.Match(re2::StringPiece(s.data(), s.size()), 0, s.size(), RE2::UNANCHORED, groups,
                    n) ||
          groups[index].data() == nullptr) {
        r.null = true;
        return;
      }
      r.set_s(std::string_view(groups[index].data(), groups[index].size()));
      return;
    }
    case Fn::kRegexpReplace: {
      std::string& out = pool.Next();
      out.assign(a[0].s());
      RE2::GlobalReplace(&out, *d->regex, d->rewrite);
      r.set_s(out);
      return;
    }
    case Fn::kSplitIndex: {
      // Flink: StringUtils.splitByWholeSeparatorPreserveAllTokens(s, sep)[index], or NULL.
      const std::string_view s = a[0].s();
      const std::string_view sep = a[1].s();
      int64_t index = a[2].i;
      if (index < 0 || s.empty() || sep.empty()) {
        r.null = true;
        return;
      }
      size_t at = 0;
      while (index > 0) {
        const size_t hit = s.find(sep, at);
        if (hit == std::string_view::npos) {
          r.null = true;
          return;
        }
        at = hit + sep.size();
        --index;
      }
      const size_t end = s.find(sep, at);
      r.set_s(s.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
      return;
    }
    case Fn::kAbs:
      if (in.args[0] == FieldType::kDouble) {
        r.d = std::fabs(a[0].d);
      } else {
        r.i = a[0].i < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a[0].i)) : a[0].i;
      }
      return;
    case Fn::kRound: {
      const int64_t digits = in.argc == 2 ? a[1].i : 0;
      if (in.args[0] == FieldType::kDouble) {
        r.d = RoundHalfUp(a[0].d, digits);
      } else {
        r.i = RoundHalfUp(a[0].i, digits);
      }
      return;
    }
    case Fn::kFloor:
    case Fn::kCeil:
      if (in.args[0] == FieldType::kDouble) {
        r.d = fn == Fn::kFloor ? std::floor(a[0].d) : std::ceil(a[0].d);
      }
      return;  // integers are their own floor and ceiling
    case Fn::kPower:
      r.d = std::pow(AsNum(a[0], in.args[0]), AsNum(a[1], in.args[1]));
      return;
    case Fn::kLn:
      r.d = std::log(AsNum(a[0], in.args[0]));
      return;
    case Fn::kLog10:
      r.d = std::log10(AsNum(a[0], in.args[0]));
      return;
    case Fn::kSqrt:
      r.d = std::sqrt(AsNum(a[0], in.args[0]));
      return;
    case Fn::kExp:
      r.d = std::exp(AsNum(a[0], in.args[0]));
      return;
    case Fn::kMod:
      if (a[1].i == 0) {
        r.null = true;  // as tidemark's '%' (Flink fails the job)
      } else {
        r.i = a[1].i == -1 ? 0 : a[0].i % a[1].i;
      }
      return;
    case Fn::kDateFormat: {
      std::string& out = pool.Next();
      d->pattern->Format(a[0].i, out);
      r.set_s(out);
      return;
    }
    case Fn::kToTimestamp: {
      const auto t = in.argc == 1 ? ParseSqlTimestamp(a[0].s()) : d->pattern->Parse(a[0].s());
      r.null = !t;
      r.i = t.value_or(0);
      return;
    }
    case Fn::kUnixTimestamp: {
      // Flink returns Long.MIN_VALUE for text that does not parse.
      const auto t = d->pattern->Parse(a[0].s(), /*lenient=*/true);
      r.i = t ? *t / 1000 : INT64_MIN;  // Java's long division
      return;
    }
    case Fn::kToTimestampLtz:
      r.i =
          d->precision == 0 ? static_cast<int64_t>(static_cast<uint64_t>(a[0].i) * 1000U) : a[0].i;
      return;
    case Fn::kExtract:
      r.i = ExtractField(d->unit, a[0].i);
      return;
    case Fn::kTimestampAdd:
      r.i = TimestampAdd(d->unit, a[0].i, a[1].i);
      return;
    case Fn::kTimestampDiff:
      r.i = TimestampDiff(d->unit, a[0].i, a[1].i);
      return;
    case Fn::kFloorTime:
    case Fn::kCeilTime:
      r.i = FloorTimestamp(d->unit, a[0].i, fn == Fn::kCeilTime);
      return;
    default:
      return;
  }
}

}  // namespace

Expression Expression::Compile(std::string_view text, const Schema& input) {
  Expression e;
  e.text_ = std::string(text);
  Parser parser(text, input);
  e.type_ = parser.ParseAll(e.program_);
  // The deepest stack: jumps count as pops, so each branch of a CASE starts where the previous
  // one did (every path through the program leaves exactly one cell).
  int64_t depth = 0;
  int64_t max_depth = 0;
  for (const Instr& in : e.program_) {
    switch (in.op) {
      case Op::kLoad:
      case Op::kConst:
        ++depth;
        break;
      case Op::kNeg:
      case Op::kNot:
      case Op::kConvert:
        break;
      case Op::kCall:
        depth += 1 - static_cast<int64_t>(in.argc);
        break;
      default:  // binary operators and jumps
        --depth;
        break;
    }
    max_depth = std::max(max_depth, depth);
    e.string_ops_ += in.op == Op::kConcat || in.op == Op::kCall ? 1 : 0;
  }
  e.max_depth_ = static_cast<size_t>(std::max<int64_t>(max_depth, 1));
  if (e.program_.size() == 1 && e.program_[0].op == Op::kLoad) {
    e.field_slot_ = e.program_[0].slot;
  }
  return e;
}

// Evaluates `program` over `row`; the result is left in `out` (valid while `row`, `program` and
// `pool` are). `stack` holds at least `max_depth` cells.
namespace {
void Run(const std::vector<Expression::Instr>& program, const Row& row, Cell* stack,
         StringPool& pool, Cell& out) {
  size_t top = 0;  // cells in use
  const size_t n = program.size();
  for (size_t pc = 0; pc < n; ++pc) {
    const Expression::Instr& in = program[pc];
    switch (in.op) {
      case Op::kLoad: {
        Cell& c = stack[top++];
        const auto slot = static_cast<size_t>(in.slot);
        c.null = row.IsNull(slot);
        switch (in.left) {
          case FieldType::kDouble:
            c.d = row.GetDouble(slot);
            break;
          case FieldType::kBool:
            c.b = !c.null && row.GetBool(slot);
            break;
          case FieldType::kString:
            c.set_s(c.null ? std::string_view() : row.GetString(slot));
            break;
          default:
            c.i = row.GetInt64(slot);
            break;
        }
        continue;
      }
      case Op::kConst: {
        Cell& c = stack[top++];
        c.null = false;
        switch (in.constant.index()) {
          case 0:
            c.null = true;
            c.i = 0;
            c.set_s({});
            break;
          case 1:
            c.i = *std::get_if<int64_t>(&in.constant);
            break;
          case 2:
            c.d = *std::get_if<double>(&in.constant);
            break;
          case 3:
            c.b = *std::get_if<bool>(&in.constant);
            break;
          default:
            c.set_s(*std::get_if<std::string>(&in.constant));
            break;
        }
        continue;
      }
      case Op::kNeg: {
        Cell& v = stack[top - 1];
        if (!v.null) {
          // -Long.MIN_VALUE wraps to itself, as in Java and the binary operators below (plain
          // negation of INT64_MIN is undefined behaviour).
          if (in.dbl) {
            v.d = -v.d;
          } else {
            v.i = static_cast<int64_t>(0 - static_cast<uint64_t>(v.i));
          }
        }
        continue;
      }
      case Op::kNot: {
        Cell& v = stack[top - 1];
        if (!v.null) {  // NOT NULL is NULL (SQL); a NULL cell's b is unset, never read
          v.b = !v.b;
        }
        continue;
      }
      case Op::kConvert: {
        Cell& v = stack[top - 1];
        if (in.right == FieldType::kDouble && in.left != FieldType::kDouble &&
            in.left != kNullType && !v.null) {
          v.d = static_cast<double>(v.i);
        }
        continue;
      }
      case Op::kJump:
        pc = in.target - 1;
        continue;
      case Op::kJumpIfNotTrue: {
        const Cell& c = stack[--top];
        if (c.null || !c.b) {
          pc = in.target - 1;
        }
        continue;
      }
      case Op::kJumpIfNotNull:
        if (!stack[top - 1].null) {
          pc = in.target - 1;
        } else {
          --top;
        }
        continue;
      case Op::kCall: {
        if (in.argc == 0) {
          ++top;
          Call(in, &stack[top - 1], pool);
        } else {
          Call(in, &stack[top - in.argc], pool);
          top -= in.argc - 1;
        }
        continue;
      }
      default:
        break;
    }
    const Cell& b = stack[--top];
    Cell& a = stack[top - 1];
    switch (in.op) {
      // SQL's three-valued logic: FALSE AND x is FALSE, TRUE OR x is TRUE, whatever x is (NULL
      // included); otherwise a NULL side makes the result NULL.
      case Op::kAnd:
        if ((!a.null && !a.b) || (!b.null && !b.b)) {
          a.null = false;
          a.b = false;
        } else {
          a.null = a.null || b.null;
          a.b = true;
        }
        continue;
      case Op::kOr:
        if ((!a.null && a.b) || (!b.null && b.b)) {
          a.null = false;
          a.b = true;
        } else {
          a.null = a.null || b.null;
          a.b = false;
        }
        continue;
      default:
        break;
    }
    if (a.null || b.null) {
      a.null = true;
      continue;
    }
    switch (in.op) {
      case Op::kConcat: {
        std::string& joined = pool.Next();
        joined.append(a.s()).append(b.s());
        a.set_s(joined);
        break;
      }
      case Op::kAdd:
      case Op::kSub:
      case Op::kMul:
      case Op::kDiv:
      case Op::kMod:
        if (in.dbl) {
          const double x = AsNum(a, in.left);
          const double y = AsNum(b, in.right);
          a.d = in.op == Op::kAdd   ? x + y
                : in.op == Op::kSub ? x - y
                : in.op == Op::kMul ? x * y
                                    : x / y;
        } else {
          const int64_t x = a.i;
          const int64_t y = b.i;
          if ((in.op == Op::kDiv || in.op == Op::kMod) && y == 0) {
            a.null = true;
          } else {
            // Wrap around like Java's long arithmetic instead of undefined behaviour.
            const auto ux = static_cast<uint64_t>(x);
            const auto uy = static_cast<uint64_t>(y);
            a.i = in.op == Op::kAdd             ? static_cast<int64_t>(ux + uy)
                  : in.op == Op::kSub           ? static_cast<int64_t>(ux - uy)
                  : in.op == Op::kMul           ? static_cast<int64_t>(ux * uy)
                  : (x == INT64_MIN && y == -1) ? (in.op == Op::kDiv ? x : 0)
                  : in.op == Op::kDiv           ? x / y
                                                : x % y;
          }
        }
        break;
      default:  // comparisons
        if (in.dbl) {
          a.b = Compare(in.op, AsNum(a, in.left), AsNum(b, in.right));
        } else if (in.left == FieldType::kString) {
          a.b = Compare(in.op, a.s(), b.s());
        } else if (in.left == FieldType::kBool) {
          a.b = Compare(in.op, a.b, b.b);
        } else {
          a.b = Compare(in.op, a.i, b.i);
        }
        break;
    }
  }
  out = stack[0];
}

// Small programs (nearly all) evaluate on a stack array; deep ones on the heap.
constexpr size_t kInlineStack = 32;

thread_local StringPool tl_pool;
}  // namespace

template <typename F>
void Expression::WithResult(const Row& row, F&& f) const {
  Cell result{};
  StringPool& pool = tl_pool;
  pool.used = 0;
  try {
    if (max_depth_ <= kInlineStack) {
      Cell stack[kInlineStack];
      Run(program_, row, stack, pool, result);
    } else {
      std::vector<Cell> stack(max_depth_);
      Run(program_, row, stack.data(), pool, result);
    }
  } catch (const ExpressionEvaluationError& e) {
    throw ExpressionEvaluationError(fmt::format("{} in expression \"{}\"", e.what(), text_));
  }
  f(result);
}

Value Expression::Evaluate(const Row& row) const {
  if (field_slot_ >= 0) {
    return row.Get(static_cast<size_t>(field_slot_));
  }
  Value v;
  WithResult(row, [&](const Cell& c) {
    if (c.null) {
      return;
    }
    switch (type_) {
      case FieldType::kDouble:
        v = c.d;
        break;
      case FieldType::kBool:
        v = c.b;
        break;
      case FieldType::kString:
        v = std::string(c.s());
        break;
      default:
        v = c.i;
        break;
    }
  });
  return v;
}

void Expression::EvaluateInto(const Row& row, Row& out, size_t slot) const {
  if (field_slot_ >= 0) {
    out.CopyCell(slot, row, static_cast<size_t>(field_slot_));
    return;
  }
  WithResult(row, [&](const Cell& c) {
    if (c.null) {
      out.SetNull(slot);
      return;
    }
    switch (type_) {
      case FieldType::kDouble:
        out.SetDouble(slot, c.d);
        break;
      case FieldType::kBool:
        out.SetBool(slot, c.b);
        break;
      case FieldType::kString:
        out.SetString(slot, c.s());
        break;
      default:
        out.SetBits(slot, static_cast<uint64_t>(c.i));
        break;
    }
  });
}

bool Expression::Test(const Row& row) const {
  if (field_slot_ >= 0) {
    const auto slot = static_cast<size_t>(field_slot_);
    return type_ == FieldType::kBool && !row.IsNull(slot) && row.GetBool(slot);
  }
  bool r = false;
  WithResult(row, [&](const Cell& c) { r = type_ == FieldType::kBool && !c.null && c.b; });
  return r;
}

}  // namespace tidemark
