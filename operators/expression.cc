#include "operators/expression.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace tidemark {
namespace {

using Op = Expression::Instr::Op;

enum class Tok { kEnd, kInt, kDouble, kString, kIdent, kSymbol, kLParen, kRParen };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // symbol, identifier or string contents
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
    return t;
  }

 private:
  static std::string Describe(const Token& t) {
    constexpr size_t kShown = 40;  // a 100 KB literal must not become a 100 KB message
    const std::string text = t.text.size() > kShown ? t.text.substr(0, kShown) + "..." : t.text;
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
      for (; i < text_.size() && text_[i] != c; ++i) {
        if (text_[i] == '\\' && i + 1 < text_.size()) {
          ++i;
          s.push_back(text_[i] == 'n' ? '\n' : text_[i] == 't' ? '\t' : text_[i]);
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
    if (std::string_view("+-*/%<>!").find(c) != std::string_view::npos) {
      tok_.kind = Tok::kSymbol;
      tok_.text = std::string(1, c);
      ++pos_;
      return;
    }
    if (c == '=') {
      throw ExpressionError(pos_, "'=' is not an operator; compare with '=='");
    }
    throw ExpressionError(pos_, fmt::format("unexpected character '{}'", c));
  }

  bool IsSymbol(std::string_view s) const {
    if (tok_.kind == Tok::kSymbol && tok_.text == s) {
      return true;
    }
    // Word forms of the logical operators.
    if (tok_.kind == Tok::kIdent && tok_.int_value == 0) {
      return (s == "&&" && tok_.text == "and") || (s == "||" && tok_.text == "or") ||
             (s == "!" && tok_.text == "not");
    }
    return false;
  }

  void Emit(Op op, bool dbl = false) {
    Expression::Instr in;
    in.op = op;
    in.dbl = dbl;
    program_->push_back(std::move(in));
  }

  static std::string TypeName(FieldType t) { return ToString(t); }

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
    if (t != FieldType::kBool) {
      throw ExpressionError(at, fmt::format("'{}' needs bool operands, but its {} operand is {}",
                                            op, side, ToString(t)));
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
      throw ExpressionError(innermost, fmt::format("'!' needs a bool operand, got {}", ToString(t)));
    }
    for (size_t i = 0; i < count; ++i) {
      Emit(Op::kNot);
    }
    return count > 0 ? FieldType::kBool : t;
  }

  FieldType ParseComparison() {
    const FieldType left = ParseAdditive();
    static constexpr std::pair<std::string_view, Op> kOps[] = {{"==", Op::kEq}, {"!=", Op::kNe},
                                                               {"<=", Op::kLe}, {">=", Op::kGe},
                                                               {"<", Op::kLt},  {">", Op::kGt}};
    for (const auto& [sym, op] : kOps) {
      if (tok_.kind == Tok::kSymbol && tok_.text == sym) {
        const size_t at = tok_.offset;
        Next();
        const FieldType right = ParseAdditive();
        bool dbl = false;
        if (IsNumeric(left) && IsNumeric(right)) {
          dbl = left == FieldType::kDouble || right == FieldType::kDouble;
        } else if (left == right && (left == FieldType::kString || left == FieldType::kBool)) {
          if (left == FieldType::kBool && op != Op::kEq && op != Op::kNe) {
            throw ExpressionError(at, fmt::format("'{}' cannot order bools; use == or !=", sym));
          }
        } else {
          throw ExpressionError(at, fmt::format("cannot compare {} with {} using '{}'",
                                                ToString(left), ToString(right), sym));
        }
        Emit(op, dbl);
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

  FieldType Arithmetic(FieldType left, FieldType right, const std::string& sym, size_t at) {
    if (sym == "+" && left == FieldType::kString && right == FieldType::kString) {
      Emit(Op::kConcat);
      return FieldType::kString;
    }
    if (!IsNumeric(left) || !IsNumeric(right)) {
      throw ExpressionError(at, fmt::format("operator '{}' cannot be applied to {} and {}", sym,
                                            ToString(left), ToString(right)));
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
    Emit(op, dbl);
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
      throw ExpressionError(innermost, fmt::format("unary '-' needs a number, got {}", ToString(t)));
    }
    for (size_t i = 0; i < count; ++i) {
      Emit(Op::kNeg, t == FieldType::kDouble);
    }
    return t == FieldType::kDouble ? FieldType::kDouble : FieldType::kInt64;
  }

  void EmitConst(Value v) {
    Expression::Instr in;
    in.op = Op::kConst;
    in.constant = std::move(v);
    program_->push_back(std::move(in));
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
        if (++depth_ > kMaxExpressionDepth) {
          throw ExpressionError(t.offset, fmt::format("parentheses nest deeper than {} levels",
                                                      kMaxExpressionDepth));
        }
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
        if (t.int_value == 0 && tok_.kind == Tok::kLParen) {
          throw ExpressionError(t.offset, fmt::format("unknown function '{}'", t.text));
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

bool IsNull(const Value& v) {
  return std::holds_alternative<std::monostate>(v);
}

double Num(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return static_cast<double>(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return *d;
  }
  return std::get<bool>(v) ? 1.0 : 0.0;
}

int64_t Int(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return *i;
  }
  return static_cast<int64_t>(Num(v));
}

bool Truthy(const Value& v) {
  const auto* b = std::get_if<bool>(&v);
  return b != nullptr && *b;
}

template <typename T>
Value CompareValues(Op op, const T& a, const T& b) {
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

}  // namespace

Expression Expression::Compile(std::string_view text, const Schema& input) {
  Expression e;
  e.text_ = std::string(text);
  Parser parser(text, input);
  e.type_ = parser.ParseAll(e.program_);
  if (e.program_.size() == 1 && e.program_[0].op == Op::kLoad) {
    e.field_slot_ = e.program_[0].slot;
  }
  return e;
}

Value Expression::Evaluate(const Row& row) const {
  if (field_slot_ >= 0) {
    return row[static_cast<size_t>(field_slot_)];
  }
  std::vector<Value> stack;
  stack.reserve(8);
  for (const Instr& in : program_) {
    switch (in.op) {
      case Op::kLoad:
        stack.push_back(row[static_cast<size_t>(in.slot)]);
        continue;
      case Op::kConst:
        stack.push_back(in.constant);
        continue;
      case Op::kNeg: {
        Value& v = stack.back();
        if (!IsNull(v)) {
          // -Long.MIN_VALUE wraps to itself, as in Java and the binary operators below (plain
          // negation of INT64_MIN is undefined behaviour).
          v = in.dbl ? Value(-Num(v)) : Value(static_cast<int64_t>(0 - static_cast<uint64_t>(Int(v))));
        }
        continue;
      }
      case Op::kNot: {
        Value& v = stack.back();
        v = !Truthy(v);
        continue;
      }
      default:
        break;
    }
    Value b = std::move(stack.back());
    stack.pop_back();
    Value& a = stack.back();
    switch (in.op) {
      case Op::kAnd:
        a = Truthy(a) && Truthy(b);
        continue;
      case Op::kOr:
        a = Truthy(a) || Truthy(b);
        continue;
      default:
        break;
    }
    if (IsNull(a) || IsNull(b)) {
      a = std::monostate{};
      continue;
    }
    switch (in.op) {
      case Op::kConcat:
        a = std::get<std::string>(a) + std::get<std::string>(b);
        break;
      case Op::kAdd:
      case Op::kSub:
      case Op::kMul:
      case Op::kDiv:
      case Op::kMod:
        if (in.dbl) {
          const double x = Num(a);
          const double y = Num(b);
          a = in.op == Op::kAdd   ? x + y
              : in.op == Op::kSub ? x - y
              : in.op == Op::kMul ? x * y
                                  : x / y;
        } else {
          const int64_t x = Int(a);
          const int64_t y = Int(b);
          if ((in.op == Op::kDiv || in.op == Op::kMod) && y == 0) {
            a = std::monostate{};
          } else {
            // Wrap around like Java's long arithmetic instead of undefined behaviour.
            const auto ux = static_cast<uint64_t>(x);
            const auto uy = static_cast<uint64_t>(y);
            a = in.op == Op::kAdd             ? static_cast<int64_t>(ux + uy)
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
          a = CompareValues(in.op, Num(a), Num(b));
        } else if (const auto* s = std::get_if<std::string>(&a)) {
          a = CompareValues(in.op, *s, std::get<std::string>(b));
        } else if (const auto* bl = std::get_if<bool>(&a)) {
          a = CompareValues(in.op, *bl, std::get<bool>(b));
        } else {
          a = CompareValues(in.op, Int(a), Int(b));
        }
        break;
    }
  }
  return std::move(stack.back());
}

bool Expression::Test(const Row& row) const {
  return Truthy(Evaluate(row));
}

}  // namespace tidemark
