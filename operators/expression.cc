#include "operators/expression.h"

#include <algorithm>
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

  void Emit(Op op, bool dbl = false, FieldType left = FieldType::kBool,
            FieldType right = FieldType::kBool) {
    Expression::Instr in;
    in.op = op;
    in.dbl = dbl;
    in.left = left;
    in.right = right;
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
      throw ExpressionError(innermost,
                            fmt::format("'!' needs a bool operand, got {}", ToString(t)));
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
        Emit(op, dbl, left, right);
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
      Emit(Op::kConcat, false, left, right);
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
                            fmt::format("unary '-' needs a number, got {}", ToString(t)));
    }
    for (size_t i = 0; i < count; ++i) {
      Emit(Op::kNeg, t == FieldType::kDouble, t);
    }
    return t == FieldType::kDouble ? FieldType::kDouble : FieldType::kInt64;
  }

  void EmitConst(Value v) {
    Expression::Instr in;
    in.op = Op::kConst;
    in.left = v.index() == 1   ? FieldType::kInt64
              : v.index() == 2 ? FieldType::kDouble
              : v.index() == 4 ? FieldType::kString
                               : FieldType::kBool;
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
          throw ExpressionError(
              t.offset, fmt::format("parentheses nest deeper than {} levels", kMaxExpressionDepth));
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
// payload alone (a string as a view into the row, a constant or a concatenation's buffer).
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

}  // namespace

Expression Expression::Compile(std::string_view text, const Schema& input) {
  Expression e;
  e.text_ = std::string(text);
  Parser parser(text, input);
  e.type_ = parser.ParseAll(e.program_);
  size_t depth = 0;
  for (const Instr& in : e.program_) {
    if (in.op == Op::kLoad || in.op == Op::kConst) {
      e.max_depth_ = std::max(e.max_depth_, ++depth);
    } else if (in.op != Op::kNeg && in.op != Op::kNot) {
      --depth;
    }
    e.concats_ += in.op == Op::kConcat ? 1 : 0;
  }
  if (e.program_.size() == 1 && e.program_[0].op == Op::kLoad) {
    e.field_slot_ = e.program_[0].slot;
  }
  return e;
}

// Evaluates `program` over `row`; the result is left in `out` (valid while `row`, `program` and
// `strings` are). `stack` holds at least `max_depth` cells; `strings` has room reserved for every
// concatenation, so the views into it stay valid.
namespace {
void Run(const std::vector<Expression::Instr>& program, const Row& row, Cell* stack,
         std::vector<std::string>& strings, Cell& out) {
  size_t top = 0;  // cells in use
  for (const Expression::Instr& in : program) {
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
        v.b = !(!v.null && v.b);
        v.null = false;
        continue;
      }
      default:
        break;
    }
    const Cell& b = stack[--top];
    Cell& a = stack[top - 1];
    switch (in.op) {
      case Op::kAnd:
        a.b = (!a.null && a.b) && (!b.null && b.b);
        a.null = false;
        continue;
      case Op::kOr:
        a.b = (!a.null && a.b) || (!b.null && b.b);
        a.null = false;
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
        std::string& joined = strings.emplace_back();
        joined.reserve(a.len + b.len);
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
}  // namespace

template <typename F>
void Expression::WithResult(const Row& row, F&& f) const {
  Cell result{};
  std::vector<std::string> strings;
  if (concats_ > 0) {
    strings.reserve(concats_);
  }
  if (max_depth_ <= kInlineStack) {
    Cell stack[kInlineStack];
    Run(program_, row, stack, strings, result);
  } else {
    std::vector<Cell> stack(max_depth_);
    Run(program_, row, stack.data(), strings, result);
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
