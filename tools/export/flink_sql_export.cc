#include "tools/export/flink_sql_export.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "config/diagnostic.h"
#include "config/job_loader.h"
#include "operators/expression.h"
#include "runtime/core/logging.h"

namespace tidemark {

std::string ExportProblem::ToString() const {
  return FormatDiagnostic(location, path,
                          fmt::format("{} has no Flink SQL form; nearest: {}", feature, nearest));
}

namespace {

// ---- SQL text ----

std::string Quote(std::string_view name) {
  std::string out = "`";
  for (char c : name) {
    out += c;
    if (c == '`') {
      out += '`';
    }
  }
  return out + "`";
}

std::string SqlString(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    out += c;
    if (c == '\'') {
      out += '\'';
    }
  }
  return out + "'";
}

// Comments must stay on their line: a newline in a YAML value would end the comment early.
/// A name from outside (a job's file name, ids, names) in a `--` comment: control characters are
/// escaped, so it can never end the comment and write a statement.
std::string OneLine(const std::string& s) {
  return EscapeControlCharacters(s);
}

std::string SqlType(FieldType t) {
  switch (t) {
    case FieldType::kInt64:
    case FieldType::kTimestamp:  // epoch milliseconds, as tidemark keeps them
      return "BIGINT";
    case FieldType::kDouble:
      return "DOUBLE";
    case FieldType::kBool:
      return "BOOLEAN";
    case FieldType::kString:
      return "STRING";
  }
  return "STRING";
}

/// `1s`, `500ms`, `-8h` for comments and messages.
std::string Duration(int64_t ms) {
  const int64_t m = ms < 0 ? -ms : ms;
  const char* sign = ms < 0 ? "-" : "";
  if (m != 0 && m % 86400000 == 0) {
    return fmt::format("{}{}d", sign, m / 86400000);
  }
  if (m != 0 && m % 3600000 == 0) {
    return fmt::format("{}{}h", sign, m / 3600000);
  }
  if (m != 0 && m % 60000 == 0) {
    return fmt::format("{}{}min", sign, m / 60000);
  }
  if (m != 0 && m % 1000 == 0) {
    return fmt::format("{}{}s", sign, m / 1000);
  }
  return fmt::format("{}{}ms", sign, m);
}

/// Seconds with up to 3 decimals and no trailing zeros: 1001 -> "1.001", 500 -> "0.5".
std::string Seconds(int64_t ms) {
  std::string s = fmt::format("{}.{:03}", ms / 1000, ms % 1000);
  while (s.back() == '0') {
    s.pop_back();
  }
  if (s.back() == '.') {
    s.pop_back();
  }
  return s;
}

/// A SQL interval literal for `ms`. Calcite gives every unit a leading precision of 2 digits
/// (`INTERVAL '100' SECOND` is rejected), so a whole number of one unit below 100 uses that unit,
/// a fraction of a second below 100 s uses SECOND with decimals, and longer spans use
/// HOUR TO SECOND or DAY TO SECOND.
std::string Interval(int64_t ms) {
  const char* sign = ms < 0 ? "-" : "";
  const int64_t m = ms < 0 ? -ms : ms;
  struct Unit {
    int64_t ms;
    const char* name;
  };
  static constexpr Unit kUnits[] = {
      {86400000, "DAY"}, {3600000, "HOUR"}, {60000, "MINUTE"}, {1000, "SECOND"}};
  for (const Unit& u : kUnits) {
    if (m != 0 && m % u.ms == 0 && m / u.ms < 100) {
      return fmt::format("INTERVAL '{}{}' {}", sign, m / u.ms, u.name);
    }
  }
  if (m < 100000) {
    return fmt::format("INTERVAL '{}{}' SECOND", sign, Seconds(m));
  }
  const int64_t days = m / 86400000;
  const int64_t hours = m / 3600000 % 24;
  const int64_t minutes = m / 60000 % 60;
  const std::string secs = Seconds(m % 60000);
  const std::string padded = (m % 60000 < 10000 ? "0" : "") + secs;
  if (m < 100 * int64_t{3600000}) {
    return fmt::format("INTERVAL '{}{}:{:02}:{}' HOUR TO SECOND", sign, m / 3600000, minutes,
                       padded);
  }
  return fmt::format("INTERVAL '{}{} {:02}:{:02}:{}' DAY TO SECOND", sign, days, hours, minutes,
                     padded);
}

std::string Loc(const SourceLocation& l) {
  return fmt::format("{}:{}:{}", OneLine(l.file), l.line, l.column);
}

// ---- expressions: tidemark's YAML expression language -> Flink SQL ----

/// kMillis: a BIGINT holding a tidemark timestamp (epoch ms); kTimestamp: a SQL TIMESTAMP(3).
enum class Kind { kInt, kDouble, kBool, kString, kNull, kMillis, kTimestamp, kOther };

Kind KindOfSqlType(const std::string& t) {
  if (t == "BIGINT") {
    return Kind::kInt;
  }
  if (t == "DOUBLE") {
    return Kind::kDouble;
  }
  if (t == "BOOLEAN") {
    return Kind::kBool;
  }
  if (t == "STRING") {
    return Kind::kString;
  }
  return Kind::kOther;
}

struct Column {
  std::string name;
  std::string type;     ///< Flink SQL type
  bool millis = false;  ///< a tidemark timestamp kept as BIGINT epoch milliseconds
};

struct SqlExpr {
  std::string sql;
  Kind kind = Kind::kOther;
};

/// Recursive descent over the grammar of operators/expression.h (the job compiler has already
/// type-checked the text, so errors here only guard against a mismatch between the two).
class ExpressionTranslator {
 public:
  ExpressionTranslator(std::string_view text, const std::vector<Column>& columns)
      : text_(text), columns_(columns) {}

  SqlExpr Translate() {
    Next();
    SqlExpr e = Or();
    if (tok_.kind != T::kEnd) {
      throw std::invalid_argument(fmt::format("unexpected '{}'", tok_.text));
    }
    return e;
  }

 private:
  enum class T { kEnd, kIdent, kQuotedIdent, kInt, kDouble, kString, kSymbol, kLParen, kRParen };
  struct Token {
    T kind = T::kEnd;
    std::string text;
  };

  void Next() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])) != 0) {
      ++pos_;
    }
    tok_ = Token{};
    if (pos_ >= text_.size()) {
      return;
    }
    const char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
      size_t end = pos_;
      bool dbl = false;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) != 0 || text_[end] == '.' ||
              ((text_[end] == '+' || text_[end] == '-') &&
               (text_[end - 1] == 'e' || text_[end - 1] == 'E')))) {
        dbl = dbl || text_[end] == '.' || text_[end] == 'e' || text_[end] == 'E';
        ++end;
      }
      tok_ = Token{dbl ? T::kDouble : T::kInt, std::string(text_.substr(pos_, end - pos_))};
      pos_ = end;
      return;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
      size_t end = pos_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) != 0 || text_[end] == '_')) {
        ++end;
      }
      tok_ = Token{T::kIdent, std::string(text_.substr(pos_, end - pos_))};
      pos_ = end;
      return;
    }
    if (c == '`') {
      const size_t close = text_.find('`', pos_ + 1);
      if (close == std::string_view::npos) {
        throw std::invalid_argument("unterminated quoted name");
      }
      tok_ = Token{T::kQuotedIdent, std::string(text_.substr(pos_ + 1, close - pos_ - 1))};
      pos_ = close + 1;
      return;
    }
    if (c == '"' || c == '\'') {
      std::string s;
      size_t i = pos_ + 1;
      for (; i < text_.size(); ++i) {
        if (text_[i] == c) {
          if (i + 1 < text_.size() && text_[i + 1] == c) {  // SQL's ''
            s.push_back(c);
            ++i;
            continue;
          }
          break;
        }
        if (text_[i] == '\\' && i + 1 < text_.size()) {
          // As the compiler (operators/expression.cc): other escapes are kept as written.
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
        throw std::invalid_argument("unterminated string");
      }
      tok_ = Token{T::kString, std::move(s)};
      pos_ = i + 1;
      return;
    }
    if (c == '(' || c == ')') {
      tok_ = Token{c == '(' ? T::kLParen : T::kRParen, std::string(1, c)};
      ++pos_;
      return;
    }
    for (std::string_view two : {"==", "!=", "<=", ">=", "&&", "||"}) {
      if (text_.substr(pos_, 2) == two) {
        tok_ = Token{T::kSymbol, std::string(two)};
        pos_ += 2;
        return;
      }
    }
    // As the expression compiler reads them: `<>` is `!=`, a single `=` is `==`.
    if (text_.substr(pos_, 2) == "<>") {
      tok_ = Token{T::kSymbol, "!="};
      pos_ += 2;
      return;
    }
    if (c == '=') {
      tok_ = Token{T::kSymbol, "=="};
      ++pos_;
      return;
    }
    tok_ = Token{T::kSymbol, std::string(1, c)};
    ++pos_;
  }

  bool Is(std::string_view symbol) const {
    if (tok_.kind == T::kSymbol) {
      return tok_.text == symbol;
    }
    return (symbol == "||" && IsWord("OR")) || (symbol == "&&" && IsWord("AND")) ||
           (symbol == "!" && IsWord("NOT"));
  }
  /// An unquoted identifier equal to `word` (upper case) in any case: a SQL keyword.
  bool IsWord(std::string_view word) const {
    return tok_.kind == T::kIdent && Upper(tok_.text) == word;
  }
  static std::string Upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) {
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
    return out;
  }
  void ExpectWord(std::string_view word) {
    if (!IsWord(word)) {
      throw std::invalid_argument(fmt::format("expected {}", word));
    }
    Next();
  }
  void ExpectSymbol(std::string_view symbol) {
    if (!(tok_.kind == T::kSymbol && tok_.text == symbol) &&
        !(symbol == "(" && tok_.kind == T::kLParen) &&
        !(symbol == ")" && tok_.kind == T::kRParen)) {
      throw std::invalid_argument(fmt::format("expected '{}'", symbol));
    }
    Next();
  }
  bool IsComma() const { return tok_.kind == T::kSymbol && tok_.text == ","; }

  /// A tidemark timestamp as a SQL TIMESTAMP(3) (UTC, the script's session time zone).
  static std::string Ts(const SqlExpr& e) {
    return e.kind == Kind::kMillis
               ? fmt::format("CAST(TO_TIMESTAMP_LTZ({}, 3) AS TIMESTAMP(3))", e.sql)
               : e.sql;
  }
  /// A SQL TIMESTAMP(3) as tidemark keeps it: BIGINT epoch milliseconds.
  static SqlExpr Ms(SqlExpr e) {
    if (e.kind != Kind::kTimestamp) {
      return e;
    }
    return {fmt::format("(UNIX_TIMESTAMP(DATE_FORMAT({0}, 'yyyy-MM-dd HH:mm:ss')) * 1000 + "
                        "CAST(DATE_FORMAT({0}, 'SSS') AS BIGINT))",
                        e.sql),
            Kind::kMillis};
  }

 public:
  /// The result as a column value: a SQL TIMESTAMP becomes epoch milliseconds, as tidemark's
  /// timestamp columns are BIGINT in the script.
  /// A bare column keeps its type (ColumnsOf keeps TIMESTAMP(3) for a column passed through).
  SqlExpr TranslateValue() {
    SqlExpr e = Translate();
    return e.kind == Kind::kTimestamp && e.sql.front() != '`' ? Ms(e) : e;
  }

 private:
  // Every chain is read in a loop and written in one pass (openers, first operand, then each
  // operator with its operand and closer), never by re-wrapping the text so far: a chain of n
  // operators costs O(n), not O(n^2), and `!`/unary `-` chains do not recurse. Only parentheses
  // recurse, bounded by the compiler's kMaxExpressionDepth.
  SqlExpr Or() {
    return Chain([this] { return And(); }, "||", "OR");
  }
  SqlExpr And() {
    return Chain([this] { return Not(); }, "&&", "AND");
  }
  template <typename Operand>
  SqlExpr Chain(Operand operand, std::string_view symbol, std::string_view sql_op) {
    SqlExpr first = operand();
    if (!Is(symbol)) {
      return first;
    }
    std::vector<std::string> rest;
    while (Is(symbol)) {
      Next();
      rest.push_back(operand().sql);
    }
    std::string sql(rest.size(), '(');
    sql += first.sql;
    for (const std::string& r : rest) {
      sql += fmt::format(" {} {})", sql_op, r);
    }
    return {std::move(sql), Kind::kBool};
  }
  SqlExpr Not() {
    size_t n = 0;
    while (Is("!")) {
      Next();
      ++n;
    }
    if (n == 0) {
      return Comparison();
    }
    SqlExpr operand = Comparison();
    std::string sql;
    sql.reserve(n * 6 + operand.sql.size());
    for (size_t i = 0; i < n; ++i) {
      sql += "(NOT ";
    }
    sql += operand.sql;
    sql.append(n, ')');
    return {std::move(sql), Kind::kBool};
  }
  SqlExpr Comparison() {
    SqlExpr left = Additive();
    if (std::optional<SqlExpr> p = Predicate(left)) {
      return *p;
    }
    static const std::map<std::string, std::string> kOps = {
        {"==", "="}, {"!=", "<>"}, {"<", "<"}, {"<=", "<="}, {">", ">"}, {">=", ">="}};
    if (tok_.kind == T::kSymbol) {
      if (auto it = kOps.find(tok_.text); it != kOps.end()) {
        Next();
        SqlExpr right = Additive();
        if (left.kind != right.kind) {  // a TIMESTAMP beside epoch milliseconds: both as ms
          left = Ms(left);
          right = Ms(right);
        }
        return {fmt::format("({} {} {})", left.sql, it->second, right.sql), Kind::kBool};
      }
    }
    return left;
  }
  /// IS [NOT] NULL, [NOT] IN, [NOT] BETWEEN, [NOT] LIKE after `left`.
  std::optional<SqlExpr> Predicate(const SqlExpr& left) {
    if (IsWord("IS")) {
      Next();
      const bool negate = IsWord("NOT");
      if (negate) {
        Next();
      }
      ExpectWord("NULL");
      return SqlExpr{fmt::format("({} IS {}NULL)", left.sql, negate ? "NOT " : ""), Kind::kBool};
    }
    std::string negate;
    if (IsWord("NOT")) {
      Next();
      negate = "NOT ";
    }
    if (IsWord("IN")) {
      Next();
      ExpectSymbol("(");
      std::string list = Or().sql;
      while (IsComma()) {
        Next();
        list += ", " + Or().sql;
      }
      ExpectSymbol(")");
      return SqlExpr{fmt::format("({} {}IN ({}))", left.sql, negate, list), Kind::kBool};
    }
    if (IsWord("BETWEEN")) {
      Next();
      const std::string lo = Additive().sql;
      ExpectWord("AND");
      const std::string hi = Additive().sql;
      return SqlExpr{fmt::format("({} {}BETWEEN {} AND {})", left.sql, negate, lo, hi),
                     Kind::kBool};
    }
    if (IsWord("LIKE")) {
      Next();
      std::string sql = fmt::format("({} {}LIKE {}", left.sql, negate, Additive().sql);
      if (IsWord("ESCAPE")) {
        Next();
        sql += " ESCAPE " + Primary().sql;
      }
      return SqlExpr{sql + ")", Kind::kBool};
    }
    if (!negate.empty()) {
      throw std::invalid_argument("expected IN, BETWEEN or LIKE after NOT");
    }
    return std::nullopt;
  }
  static Kind Arithmetic(Kind a, Kind b) {
    if (a == Kind::kDouble || b == Kind::kDouble) {
      return Kind::kDouble;
    }
    return a == Kind::kInt || b == Kind::kInt ? Kind::kInt : a;
  }
  SqlExpr Additive() {
    SqlExpr left = Multiplicative();
    std::vector<std::string> openers;
    std::string tail;
    while (Is("+") || Is("-")) {
      const bool plus = Is("+");
      Next();
      SqlExpr right = Ms(Multiplicative());
      left = Ms(left);
      if (plus && (left.kind == Kind::kString || right.kind == Kind::kString)) {
        tail += fmt::format(" || {})", right.sql);  // string join
        left.kind = Kind::kString;
      } else {
        tail += fmt::format(" {} {})", plus ? "+" : "-", right.sql);
        left.kind = Arithmetic(left.kind, right.kind);
      }
      openers.emplace_back("(");
    }
    return {Joined(openers, left.sql, tail), left.kind};
  }
  SqlExpr Multiplicative() {
    SqlExpr left = Unary();
    std::vector<std::string> openers;
    std::string tail;
    while (Is("*") || Is("/") || Is("%")) {
      const std::string op = tok_.text;
      Next();
      SqlExpr right = Unary();
      left.kind = Arithmetic(left.kind, right.kind);
      openers.emplace_back(op == "%" ? "MOD(" : "(");
      tail += op == "%" ? fmt::format(", {})", right.sql) : fmt::format(" {} {})", op, right.sql);
    }
    return {Joined(openers, left.sql, tail), left.kind};
  }
  /// The openers innermost first, written outermost first, then `first` and `tail`.
  static std::string Joined(const std::vector<std::string>& openers, const std::string& first,
                            const std::string& tail) {
    std::string sql;
    for (auto it = openers.rbegin(); it != openers.rend(); ++it) {
      sql += *it;
    }
    return sql + first + tail;
  }
  SqlExpr Unary() {
    size_t n = 0;
    while (Is("-")) {
      Next();
      ++n;
    }
    SqlExpr operand = Primary();
    if (n == 0) {
      return operand;
    }
    std::string sql;
    for (size_t i = 0; i < n; ++i) {
      sql += "(- ";
    }
    sql += operand.sql;
    sql.append(n, ')');
    return {std::move(sql), operand.kind};
  }
  SqlExpr Primary() {
    const Token t = tok_;
    switch (t.kind) {
      case T::kInt:
        Next();
        return {t.text, Kind::kInt};
      case T::kDouble:
        Next();
        return {t.text, Kind::kDouble};
      case T::kString:
        Next();
        return {SqlString(t.text), Kind::kString};
      case T::kLParen: {
        // The compiler's bound (operators/expression.h): the only recursion the text controls.
        if (++depth_ > kMaxExpressionDepth) {
          throw std::invalid_argument(
              fmt::format("parentheses nest deeper than {} levels", kMaxExpressionDepth));
        }
        Next();
        SqlExpr inner = Or();
        if (tok_.kind != T::kRParen) {
          throw std::invalid_argument("missing ')'");
        }
        Next();
        --depth_;
        return inner;
      }
      case T::kIdent:
        if (t.text == "true" || t.text == "false") {
          Next();
          return {t.text == "true" ? "TRUE" : "FALSE", Kind::kBool};
        }
        if (Upper(t.text) == "NULL") {
          Next();
          return {"NULL", Kind::kNull};
        }
        if (Upper(t.text) == "CASE") {
          Next();
          return Case();
        }
        Next();
        if (tok_.kind == T::kLParen) {
          return Call(Upper(t.text));
        }
        for (const Column& c : columns_) {
          if (c.name == t.text) {
            const Kind k = c.millis                            ? Kind::kMillis
                           : c.type.rfind("TIMESTAMP", 0) == 0 ? Kind::kTimestamp
                                                               : KindOfSqlType(c.type);
            return {Quote(c.name), k};
          }
        }
        throw std::invalid_argument(fmt::format("unknown field '{}'", t.text));
      case T::kQuotedIdent: {
        Next();
        for (const Column& c : columns_) {
          if (c.name == t.text) {
            const Kind k = c.millis                            ? Kind::kMillis
                           : c.type.rfind("TIMESTAMP", 0) == 0 ? Kind::kTimestamp
                                                               : KindOfSqlType(c.type);
            return {Quote(c.name), k};
          }
        }
        throw std::invalid_argument(fmt::format("unknown field '{}'", t.text));
      }
      default:
        throw std::invalid_argument(fmt::format("unexpected '{}'", t.text));
    }
  }

  /// The kind all branches share (NULLs aside); a mix of kinds is written as the first.
  static Kind Common(const std::vector<SqlExpr>& branches) {
    for (const SqlExpr& b : branches) {
      if (b.kind != Kind::kNull) {
        return b.kind;
      }
    }
    return Kind::kNull;
  }
  /// Branch values: a TIMESTAMP beside epoch milliseconds is written as milliseconds.
  static void Align(std::vector<SqlExpr>& branches) {
    bool millis = false;
    bool ts = false;
    for (const SqlExpr& b : branches) {
      millis = millis || b.kind == Kind::kMillis || b.kind == Kind::kInt;
      ts = ts || b.kind == Kind::kTimestamp;
    }
    if (millis && ts) {
      for (SqlExpr& b : branches) {
        b = Ms(b);
      }
    }
  }
  SqlExpr Case() {
    ++depth_;
    std::string sql = "CASE";
    if (!IsWord("WHEN")) {
      sql += " " + Or().sql;
    }
    std::vector<SqlExpr> values;
    std::vector<std::string> conditions;
    while (IsWord("WHEN")) {
      Next();
      conditions.push_back(Or().sql);
      ExpectWord("THEN");
      values.push_back(Or());
    }
    bool has_else = false;
    if (IsWord("ELSE")) {
      Next();
      values.push_back(Or());
      has_else = true;
    }
    ExpectWord("END");
    --depth_;
    Align(values);
    for (size_t i = 0; i < conditions.size(); ++i) {
      sql += fmt::format(" WHEN {} THEN {}", conditions[i], values[i].sql);
    }
    if (has_else) {
      sql += " ELSE " + values.back().sql;
    }
    return {sql + " END", Common(values)};
  }
  std::vector<SqlExpr> Args() {
    ExpectSymbol("(");
    std::vector<SqlExpr> args;
    if (tok_.kind != T::kRParen) {
      args.push_back(Or());
      while (IsComma()) {
        Next();
        args.push_back(Or());
      }
    }
    ExpectSymbol(")");
    return args;
  }
  static std::string Join(const std::vector<SqlExpr>& args, size_t from = 0) {
    std::string out;
    for (size_t i = from; i < args.size(); ++i) {
      out += (i == from ? "" : ", ") + args[i].sql;
    }
    return out;
  }
  std::string UnitWord() {
    if (tok_.kind != T::kIdent) {
      throw std::invalid_argument("expected a time unit");
    }
    std::string unit = Upper(tok_.text);
    Next();
    return unit;
  }
  /// A call `NAME(...)` (the name upper case, the '(' next): Flink SQL's function of that name.
  SqlExpr Call(const std::string& name) {
    if (++depth_ > kMaxExpressionDepth) {
      throw std::invalid_argument(
          fmt::format("parentheses nest deeper than {} levels", kMaxExpressionDepth));
    }
    SqlExpr out = CallBody(name);
    --depth_;
    return out;
  }
  SqlExpr CallBody(const std::string& name) {
    if (name == "CAST" || name == "TRY_CAST") {
      ExpectSymbol("(");
      SqlExpr x = Or();
      ExpectWord("AS");
      std::string type = UnitWord();
      std::string length;
      if (tok_.kind == T::kLParen) {  // VARCHAR(n), CHAR(n), TIMESTAMP(3)
        Next();
        length = tok_.text;
        Next();
        ExpectSymbol(")");
      }
      ExpectSymbol(")");
      if (type == "VARCHAR" || type == "CHAR") {  // Flink's default length is 1, as tidemark's
        return {fmt::format("{}({} AS {}({}))", name, Ts(x), type, length.empty() ? "1" : length),
                Kind::kString};
      }
      static const std::map<std::string, std::pair<std::string, Kind>> kTypes = {
          {"INT", {"INT", Kind::kInt}},          {"INTEGER", {"INT", Kind::kInt}},
          {"BIGINT", {"BIGINT", Kind::kInt}},    {"DOUBLE", {"DOUBLE", Kind::kDouble}},
          {"FLOAT", {"DOUBLE", Kind::kDouble}},  {"STRING", {"STRING", Kind::kString}},
          {"BOOLEAN", {"BOOLEAN", Kind::kBool}}, {"TIMESTAMP", {"TIMESTAMP(3)", Kind::kTimestamp}}};
      const auto it = kTypes.find(type);
      if (it == kTypes.end()) {
        throw std::invalid_argument(fmt::format("unknown type {}", type));
      }
      return {fmt::format("{}({} AS {})", name, Ts(x), it->second.first), it->second.second};
    }
    if (name == "EXTRACT") {
      ExpectSymbol("(");
      const std::string unit = UnitWord();
      ExpectWord("FROM");
      SqlExpr x = Or();
      ExpectSymbol(")");
      // Flink's functions documented as "equivalent to EXTRACT(unit FROM x)" (the SQL grammars
      // of tools around Flink know them; several lack EXTRACT).
      static const std::map<std::string, std::string> kParts = {
          {"YEAR", "YEAR"},      {"QUARTER", "QUARTER"}, {"MONTH", "MONTH"},   {"WEEK", "WEEK"},
          {"DAY", "DAYOFMONTH"}, {"DOY", "DAYOFYEAR"},   {"DOW", "DAYOFWEEK"}, {"HOUR", "HOUR"},
          {"MINUTE", "MINUTE"},  {"SECOND", "SECOND"}};
      if (const auto it = kParts.find(unit); it != kParts.end()) {
        return {fmt::format("{}({})", it->second, Ts(x)), Kind::kInt};
      }
      return {fmt::format("EXTRACT({} FROM {})", unit, Ts(x)), Kind::kInt};
    }
    if (name == "FLOOR" || name == "CEIL" || name == "CEILING") {
      ExpectSymbol("(");
      SqlExpr x = Or();
      if (IsWord("TO")) {
        Next();
        const std::string unit = UnitWord();
        ExpectSymbol(")");
        return {fmt::format("{}({} TO {})", name, Ts(x), unit), Kind::kTimestamp};
      }
      ExpectSymbol(")");
      return {fmt::format("{}({})", name, x.sql), x.kind};
    }
    if (name == "TIMESTAMPADD" || name == "TIMESTAMPDIFF") {
      ExpectSymbol("(");
      const std::string unit = UnitWord();
      ExpectSymbol(",");
      SqlExpr a = Or();
      ExpectSymbol(",");
      SqlExpr b = Or();
      ExpectSymbol(")");
      if (name == "TIMESTAMPADD") {
        return {fmt::format("TIMESTAMPADD({}, {}, {})", unit, a.sql, Ts(b)), Kind::kTimestamp};
      }
      return {fmt::format("TIMESTAMPDIFF({}, {}, {})", unit, Ts(a), Ts(b)), Kind::kInt};
    }
    if (name == "TRIM") {
      ExpectSymbol("(");
      std::string mode = "BOTH";
      if (IsWord("BOTH") || IsWord("LEADING") || IsWord("TRAILING")) {
        mode = Upper(tok_.text);
        Next();
      }
      std::string chars = "' '";
      std::string subject;
      if (IsWord("FROM")) {
        Next();
        subject = Or().sql;
      } else {
        subject = Or().sql;
        if (IsWord("FROM")) {
          Next();
          chars = subject;
          subject = Or().sql;
        }
      }
      ExpectSymbol(")");
      if (chars == "' '") {  // spaces: the plain forms
        return {fmt::format("{}({})",
                            mode == "BOTH"      ? "TRIM"
                            : mode == "LEADING" ? "LTRIM"
                                                : "RTRIM",
                            subject),
                Kind::kString};
      }
      return {fmt::format("TRIM({} {} FROM {})", mode, chars, subject), Kind::kString};
    }
    if (name == "SUBSTRING" || name == "SUBSTR") {
      ExpectSymbol("(");
      const std::string subject = Or().sql;
      std::string from;
      std::string count;
      if (IsWord("FROM")) {
        Next();
        from = Or().sql;
        if (IsWord("FOR")) {
          Next();
          count = Or().sql;
        }
      } else {
        ExpectSymbol(",");
        from = Or().sql;
        if (IsComma()) {
          Next();
          count = Or().sql;
        }
      }
      ExpectSymbol(")");
      // SUBSTR is Flink's SUBSTRING with commas (the same function).
      return {count.empty() ? fmt::format("SUBSTR({}, {})", subject, from)
                            : fmt::format("SUBSTR({}, {}, {})", subject, from, count),
              Kind::kString};
    }
    std::vector<SqlExpr> args = Args();
    static const std::map<std::string, Kind> kResult = {{"LOWER", Kind::kString},
                                                        {"UPPER", Kind::kString},
                                                        {"CONCAT", Kind::kString},
                                                        {"CONCAT_WS", Kind::kString},
                                                        {"REPLACE", Kind::kString},
                                                        {"REGEXP_EXTRACT", Kind::kString},
                                                        {"REGEXP_REPLACE", Kind::kString},
                                                        {"SPLIT_INDEX", Kind::kString},
                                                        {"CHAR_LENGTH", Kind::kInt},
                                                        {"CHARACTER_LENGTH", Kind::kInt},
                                                        {"MOD", Kind::kInt},
                                                        {"UNIX_TIMESTAMP", Kind::kInt},
                                                        {"POWER", Kind::kDouble},
                                                        {"LN", Kind::kDouble},
                                                        {"LOG10", Kind::kDouble},
                                                        {"SQRT", Kind::kDouble},
                                                        {"EXP", Kind::kDouble},
                                                        {"TO_TIMESTAMP", Kind::kTimestamp}};
    if (name == "DATE_FORMAT" && !args.empty()) {
      args[0].sql = Ts(args[0]);
      return {fmt::format("DATE_FORMAT({})", Join(args)), Kind::kString};
    }
    if (name == "TO_TIMESTAMP_LTZ") {
      return {fmt::format("CAST(TO_TIMESTAMP_LTZ({}) AS TIMESTAMP(3))", Join(args)),
              Kind::kTimestamp};
    }
    if (name == "IF" || name == "COALESCE" || name == "NULLIF") {
      const size_t from = name == "IF" ? 1 : 0;
      std::vector<SqlExpr> values(args.begin() + static_cast<ptrdiff_t>(from), args.end());
      if (name != "NULLIF") {
        Align(values);
      }
      for (size_t i = 0; i < values.size(); ++i) {
        args[from + i] = values[i];
      }
      return {fmt::format("{}({})", name, Join(args)), Common(values)};
    }
    if (const auto it = kResult.find(name); it != kResult.end()) {
      return {fmt::format("{}({})", name, Join(args)), it->second};
    }
    // ABS, ROUND: the operand's kind.
    return {fmt::format("{}({})", name, Join(args)), args.empty() ? Kind::kOther : args[0].kind};
  }

  std::string_view text_;
  const std::vector<Column>& columns_;
  size_t pos_ = 0;
  int depth_ = 0;  ///< open parentheses
  Token tok_;
};

// ---- the job ----

/// One table or view of the script: the rows on one edge of the job graph.
struct Relation {
  std::string name;             ///< SQL name (the operator id)
  std::vector<Column> columns;  ///< tidemark's columns, in order
  std::string rowtime;          ///< the event-time attribute column (not in `columns`), or ""
};

bool IsGlob(std::string_view s) {
  return s.find_first_of("*?[") != std::string_view::npos;
}

/// A glob of the last path component as a Java regex over the absolute path (Flink's
/// `source.path.regex-pattern` is matched against the whole absolute file path).
std::string GlobToRegex(std::string_view glob) {
  std::string out = ".*/";
  for (char c : glob) {
    switch (c) {
      case '*':
        out += "[^/]*";
        break;
      case '?':
        out += "[^/]";
        break;
      case '[':
      case ']':
        out += c;
        break;
      default:
        if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '-') {
          out += '\\';
        }
        out += c;
    }
  }
  return out;
}

class Exporter {
 public:
  Exporter(const JobSpec& spec, const JobGraph& graph) : spec_(spec), graph_(graph) {
    for (size_t i = 0; i < spec.operators.size(); ++i) {
      spec_index_[spec.operators[i].id] = i;
    }
  }

  FlinkSqlExport Run();

 private:
  // Where an operator was written: `operators[i]` (an inserted `<id>.key-by` map: its operator's).
  std::string PathOf(const OperatorSpec& op, const std::string& suffix) const {
    std::string id = op.id;
    if (auto dot = id.find(".key-by"); dot != std::string::npos) {
      id = id.substr(0, dot);
    }
    auto it = spec_index_.find(id);
    std::string path =
        it == spec_index_.end() ? "operators" : fmt::format("operators[{}]", it->second);
    return suffix.empty() ? path : path + "." + suffix;
  }
  /// Records a problem and returns the `-- DROPPED:` comment line that marks its place.
  std::string Drop(const SourceLocation& location, const std::string& path,
                   const std::string& feature, const std::string& nearest) {
    SourceLocation loc = location;
    if (loc.file.empty()) {
      loc.file = spec_.file;
    }
    problems_.push_back(ExportProblem{loc, path, feature, nearest});
    return fmt::format("-- DROPPED ({}): {}; nearest: {}\n", Loc(loc), OneLine(feature),
                       OneLine(nearest));
  }

  std::string UniqueName(const std::string& base, const std::vector<Column>& taken) const {
    std::string name = base;
    for (int i = 1;
         std::any_of(taken.begin(), taken.end(), [&](const Column& c) { return c.name == name; });
         ++i) {
      name = fmt::format("{}_{}", base, i);
    }
    return name;
  }

  std::optional<Relation> InputRelation(const JobVertex& v, size_t input_index);
  std::vector<Column> ColumnsOf(const Schema& schema, const std::vector<Column>& input) const;
  std::string SelectList(const Relation& in) const;

  void Source(const JobVertex& v);
  void Assigner(const JobVertex& v);
  void Filter(const JobVertex& v);
  void Map(const JobVertex& v);
  void Project(const JobVertex& v);
  void Union(const JobVertex& v);
  void Window(const JobVertex& v);
  void IntervalJoin(const JobVertex& v);
  void WindowJoin(const JobVertex& v);
  void LookupJoin(const JobVertex& v);
  void WindowTopN(const JobVertex& v);
  void Sink(const JobVertex& v);
  void Unsupported(const JobVertex& v, const std::string& feature, const std::string& nearest);
  /// The WITH options of Flink SQL's kafka connector for a `kafka` source; returns the comments
  /// (and DROPPED lines) to put before its CREATE TABLE.
  std::string KafkaSourceOptions(const OperatorSpec& op, std::vector<std::string>& options);
  /// A problem (and its comment) when a duration needs 3 or more digits of days: Flink's interval
  /// literals take 2 digits per unit unless written with a precision.
  std::string CheckDurations(const OperatorSpec& op, const std::string& path,
                             const SourceLocation& location,
                             std::initializer_list<int64_t> values) {
    for (int64_t v : values) {
      if (v >= 100 * int64_t{86400000} || v <= -100 * int64_t{86400000}) {
        return Drop(
            location, PathOf(op, path),
            fmt::format("a duration of 100 days or more ({})", Duration(v)),
            "INTERVAL 'N' DAY(3), with a leading precision, which the export does not write");
      }
    }
    return "";
  }
  /// Marks an operator left out because what it reads was dropped.
  void LeftOut(const std::string& what, const JobVertex& v) {
    body_ +=
        fmt::format("-- {} '{}' is left out: its input was dropped.\n\n", what, OneLine(v.spec.id));
  }

  std::string WatermarkDdl(const WatermarkStrategySpec& wm, const OperatorSpec& op,
                           const std::string& wm_path, const std::string& rowtime, bool push_down,
                           std::vector<std::string>& options, std::string& comments);
  std::string TranslateExpression(const ExpressionSpec& e, const std::vector<Column>& columns,
                                  const OperatorSpec& op, const std::string& path,
                                  std::string& comments);
  /// The window TVF call over `in` for a tumbling or sliding `window`, e.g.
  /// `TABLE(TUMBLE(TABLE `x`, DESCRIPTOR(`rowtime`), INTERVAL '1' SECOND))`.
  std::string WindowTvf(const std::string& assigner, int64_t size_ms, int64_t slide_ms,
                        int64_t offset_ms, const Relation& in) const;

  const JobSpec& spec_;
  const JobGraph& graph_;
  std::map<std::string, size_t> spec_index_;
  std::map<int, Relation> relations_;       // vertex id -> its main output (absent: dropped)
  std::map<int, const JobVertex*> folded_;  // source vertex -> the assigner folded into it
  std::set<int> folded_assigners_;
  std::vector<ExportProblem> problems_;
  std::string sets_;
  std::string body_;
  std::vector<std::string> inserts_;
  std::string idle_timeout_;  // SET 'table.exec.source.idle-timeout' for file sources

  /// `checkpointing:` and `restart-strategy:` as Flink's configuration options (SET lines); a
  /// job that checkpoints must do so in Flink too, or an exactly-once sink never commits there.
  std::string CheckpointingOptions() const {
    std::string out;
    auto set = [&out](std::string_view key, const std::string& value) {
      out += fmt::format("SET '{}' = '{}';\n", key, value);
    };
    auto ms = [](int64_t v) {
      return fmt::format("{}ms", v);
    };
    if (const std::optional<CheckpointingSpec>& c = spec_.checkpointing) {
      const CheckpointingSpec defaults;
      set("execution.checkpointing.interval", ms(c->interval_ms));
      set("execution.checkpointing.mode",
          c->mode == "at-least-once" ? "AT_LEAST_ONCE" : "EXACTLY_ONCE");
      if (c->timeout_ms != defaults.timeout_ms) {
        set("execution.checkpointing.timeout", ms(c->timeout_ms));
      }
      if (c->min_pause_ms != defaults.min_pause_ms) {
        set("execution.checkpointing.min-pause", ms(c->min_pause_ms));
      }
      if (c->max_concurrent_checkpoints != defaults.max_concurrent_checkpoints) {
        set("execution.checkpointing.max-concurrent-checkpoints",
            std::to_string(c->max_concurrent_checkpoints));
      }
      if (c->tolerable_failed_checkpoints != defaults.tolerable_failed_checkpoints) {
        set("execution.checkpointing.tolerable-failed-checkpoints",
            std::to_string(c->tolerable_failed_checkpoints));
      }
      if (c->num_retained != defaults.num_retained) {
        set("execution.checkpointing.num-retained", std::to_string(c->num_retained));
      }
      if (c->incremental) {
        set("execution.checkpointing.incremental", "true");
      }
      if (!c->dir.empty()) {
        if (c->dir.front() == '/') {
          set("execution.checkpointing.dir", "file://" + c->dir);
        } else {
          out += fmt::format(
              "-- checkpointing.dir '{}' is relative to where tidemark runs; Flink needs a "
              "URI ('execution.checkpointing.dir' = 'file:///...').\n",
              OneLine(c->dir));
        }
      }
      if (c->restore_watermarks) {
        out +=
            "-- restore-watermarks: Flink has no such option; after a restore its watermarks "
            "start again at Long.MIN (jobs/failover_watermarks_flink.yaml).\n";
      }
    }
    if (const std::optional<RestartStrategySpec>& r = spec_.restart_strategy) {
      set("restart-strategy.type", r->type);
      if (r->type == "fixed-delay") {
        set("restart-strategy.fixed-delay.attempts", std::to_string(r->attempts));
        set("restart-strategy.fixed-delay.delay", ms(r->delay_ms));
      } else if (r->type == "exponential-delay") {
        set("restart-strategy.exponential-delay.initial-backoff", ms(r->initial_backoff_ms));
        set("restart-strategy.exponential-delay.max-backoff", ms(r->max_backoff_ms));
        set("restart-strategy.exponential-delay.backoff-multiplier",
            fmt::format("{}", r->backoff_multiplier));
        set("restart-strategy.exponential-delay.reset-backoff-threshold",
            ms(r->reset_backoff_threshold_ms));
        set("restart-strategy.exponential-delay.jitter-factor",
            fmt::format("{}", r->jitter_factor));
      } else if (r->type == "failure-rate") {
        set("restart-strategy.failure-rate.max-failures-per-interval",
            std::to_string(r->max_failures_per_interval));
        set("restart-strategy.failure-rate.failure-rate-interval", ms(r->failure_rate_interval_ms));
        set("restart-strategy.failure-rate.delay", ms(r->delay_ms));
      }
    }
    return out;
  }
};

std::optional<Relation> Exporter::InputRelation(const JobVertex& v, size_t input_index) {
  const std::vector<const JobEdge*> inputs = graph_.InputsOf(v.id);
  for (const JobEdge* e : inputs) {
    if (static_cast<size_t>(e->input_index) != input_index) {
      continue;
    }
    if (!e->side_output.empty()) {
      return std::nullopt;  // side outputs have no SQL form; reported where they are made
    }
    auto it = relations_.find(e->from);
    if (it == relations_.end()) {
      return std::nullopt;
    }
    return it->second;
  }
  return std::nullopt;
}

// tidemark's schema as SQL columns: a column passed through keeps its SQL type (window_start
// stays TIMESTAMP(3)); a new one gets the type of its tidemark type.
std::vector<Column> Exporter::ColumnsOf(const Schema& schema,
                                        const std::vector<Column>& input) const {
  std::vector<Column> out;
  for (const Field& f : schema.fields()) {
    std::string type = SqlType(f.type);
    for (const Column& c : input) {
      if (c.name == f.name && KindOfSqlType(c.type) == Kind::kOther &&
          f.type == FieldType::kTimestamp) {
        type = c.type;
      }
    }
    out.push_back(Column{f.name, type, f.type == FieldType::kTimestamp && type == "BIGINT"});
  }
  return out;
}

std::string Exporter::SelectList(const Relation& in) const {
  std::string out;
  for (const Column& c : in.columns) {
    out += (out.empty() ? "" : ", ") + Quote(c.name);
  }
  if (!in.rowtime.empty()) {
    out += (out.empty() ? "" : ", ") + Quote(in.rowtime);
  }
  return out;
}

std::string Exporter::TranslateExpression(const ExpressionSpec& e,
                                          const std::vector<Column>& columns,
                                          const OperatorSpec& op, const std::string& path,
                                          std::string& comments) {
  try {
    return ExpressionTranslator(e.text, columns).TranslateValue().sql;
  } catch (const std::invalid_argument& error) {
    comments += Drop(e.location, PathOf(op, path),
                     fmt::format("expression \"{}\" ({})", e.text, error.what()),
                     "a SQL expression written by hand");
    return "NULL";
  }
}

FlinkSqlExport Exporter::Run() {
  // Operator mode: an assign-timestamps-and-watermarks right after a source that has no
  // watermarks of its own becomes that table's WATERMARK FOR — the only place Flink SQL takes one.
  for (const JobVertex& v : graph_.vertices) {
    if (v.spec.type != "assign-timestamps-and-watermarks") {
      continue;
    }
    const std::vector<const JobEdge*> in = graph_.InputsOf(v.id);
    if (in.size() != 1 || !in[0]->side_output.empty()) {
      continue;
    }
    const JobVertex& up = graph_.vertices[static_cast<size_t>(in[0]->from)];
    if (up.compiled.is_source && !up.spec.watermarks && !folded_.count(up.id)) {
      folded_[up.id] = &v;
      folded_assigners_.insert(v.id);
    }
  }

  for (const JobVertex& v : graph_.vertices) {
    const std::string& type = v.spec.type;
    if (type == "source") {
      Source(v);
    } else if (type == "assign-timestamps-and-watermarks") {
      Assigner(v);
    } else if (type == "filter") {
      Filter(v);
    } else if (type == "map") {
      Map(v);
    } else if (type == "project") {
      Project(v);
    } else if (type == "union") {
      Union(v);
    } else if (type == "window") {
      Window(v);
    } else if (type == "interval-join") {
      IntervalJoin(v);
    } else if (type == "window-join") {
      WindowJoin(v);
    } else if (type == "lookup-join") {
      LookupJoin(v);
    } else if (type == "window-top-n") {
      WindowTopN(v);
    } else if (type == "sink") {
      Sink(v);
    } else if (type == "dedup") {
      Unsupported(v, "dedup (first record per key within a time span, cleared by timers)",
                  "deduplication with ROW_NUMBER() OVER (PARTITION BY key ORDER BY rowtime) = 1, "
                  "which keeps the "
                  "first row per key for ever (no `within`)");
    } else if (type == "inactivity") {
      Unsupported(v, "inactivity (an event- or processing-time timer per key)",
                  "a SESSION window per key, which reports sessions, not inactivity");
    } else if (type == "timer-probe") {
      Unsupported(
          v, "timer-probe (event-time timers registered from a record)",
          "none: SQL has no timers (a ProcessTableFunction, Flink 2.1 and later, is Java code)");
    } else if (type == "process") {
      Unsupported(
          v, "process (keyed state and timers set per record; a KeyedProcessFunction)",
          "a KeyedProcessFunction in the DataStream API, or a ProcessTableFunction (Flink 2.1 and "
          "later), both Java code; SQL has no timers");
    } else {
      Unsupported(v, fmt::format("operator type {} (user code)", type),
                  "a user-defined function or ProcessTableFunction written in Java");
    }
  }

  const PipelineSpec& p = spec_.pipeline;
  std::string out;
  out += fmt::format(
      "-- Flink SQL (2.x) for the tidemark job '{}' ({}), written by `tidemark export "
      "--flink-sql`.\n",
      OneLine(spec_.name), OneLine(spec_.file));
  out +=
      "-- Same event time as tidemark: bounded out-of-orderness d becomes `rowtime - INTERVAL "
      "'d+0.001' SECOND`\n"
      "-- (DataStream emits max - d - 1 ms, SQL's expression emits max - d), so windows fire at "
      "the same\n"
      "-- watermark. Epoch-millisecond columns stay BIGINT; the event-time attribute is the "
      "computed column\n"
      "-- TO_TIMESTAMP_LTZ(ms, 3), and window_start / window_end are TIMESTAMP(3) in UTC.\n";
  if (!problems_.empty()) {
    out += fmt::format(
        "-- Best effort: {} feature(s) have no Flink SQL form; each is marked `-- DROPPED` "
        "below.\n",
        problems_.size());
  }
  out += "\n";
  out += "SET 'execution.runtime-mode' = 'streaming';\n";
  out += fmt::format("SET 'pipeline.auto-watermark-interval' = '{}ms';\n",
                     p.auto_watermark_interval_ms);
  out +=
      "-- Windows are aligned to UTC, as tidemark's (a TIMESTAMP_LTZ time attribute is windowed in "
      "the session time zone).\n";
  out += "SET 'table.local-time-zone' = 'UTC';\n";
  if (p.parallelism > 1) {
    out += fmt::format("SET 'parallelism.default' = '{}';\n", p.parallelism);
  }
  if (p.state_backend == "rocksdb") {
    out += "SET 'state.backend.type' = 'rocksdb';\n";
    // memory.managed as the job says; the fixed size, always written, takes precedence over
    // it in Flink as in tidemark.
    out += fmt::format("SET 'state.backend.rocksdb.memory.managed' = '{}';\n",
                       p.rocksdb.memory_managed ? "true" : "false");
    out += fmt::format("SET 'state.backend.rocksdb.memory.fixed-per-slot' = '{}b';\n",
                       p.rocksdb.memory_fixed_per_slot);
    // The other rocksdb keys as written (their defaults are Flink's, but for
    // timer-service.factory, whose HEAP gives Flink's ROCKSDB results).
    const KeyLocations& written = p.key_locations;  // "rocksdb.<key>" for the rocksdb block's
    if (written.values.contains("rocksdb.localdir")) {
      // Flink's path on each TaskManager; a relative one is taken from its working directory.
      out += fmt::format("SET 'state.backend.rocksdb.localdir' = {};\n",
                         SqlString(OneLine(p.rocksdb.localdir)));
    }
    if (written.values.contains("rocksdb.memory.write-buffer-ratio")) {
      out += fmt::format("SET 'state.backend.rocksdb.memory.write-buffer-ratio' = '{}';\n",
                         p.rocksdb.write_buffer_ratio);
    }
    if (written.values.contains("rocksdb.timer-service.factory")) {
      out += "SET 'state.backend.rocksdb.timer-service.factory' = 'HEAP';\n";
    }
  }
  // Pipeline keys with no SQL statement of their own: SET where Flink has the key, else a
  // comment, so that none is dropped silently
  // (FlinkSqlExportTest.EveryPipelineKeyIsSetOrCommented).
  if (p.max_parallelism > 0) {
    out += fmt::format("SET 'pipeline.max-parallelism' = '{}';\n", p.max_parallelism);
  }
  if (p.key_locations.values.contains("channel-capacity")) {
    out += fmt::format(
        "-- pipeline.channel-capacity {} is not exported: Flink sizes its channels in network "
        "buffers of bytes (taskmanager.network.memory.buffers-per-channel), not in batches.\n",
        p.channel_capacity);
  }
  if (p.key_locations.values.contains("finished-input")) {
    out += p.finished_input == "max"
               ? "-- pipeline.finished-input max is Flink's own rule: a finished input counts as "
                 "MAX in the watermark minimum.\n"
               : "-- pipeline.finished-input exclude is not exported: Flink counts a finished "
                 "input as MAX, which then wins over idle inputs.\n";
  }
  if (p.cpu_affinity != "none") {
    out += fmt::format(
        "-- pipeline.cpu-affinity {} is not exported: Flink has no key to pin task threads.\n",
        OneLine(p.cpu_affinity));
  }
  if (!idle_timeout_.empty()) {
    out += idle_timeout_;
  }
  out += CheckpointingOptions();
  std::string own_parallelism;
  for (const OperatorSpec& op : spec_.operators) {
    if (op.parallelism > 0 && op.parallelism != p.parallelism) {
      own_parallelism +=
          fmt::format("{}{} ({})", own_parallelism.empty() ? "" : ", ", op.id, op.parallelism);
    }
  }
  if (!own_parallelism.empty()) {
    out += fmt::format(
        "-- Per-operator parallelism ({}) has no SQL form: 'parallelism.default' applies to every "
        "operator.\n",
        OneLine(own_parallelism));
  }
  out += sets_;
  if (p.clock == "virtual") {
    out +=
        "-- pipeline.clock: virtual has no Flink equivalent: processing time (pacing, idleness) is "
        "the machine's clock.\n";
  }
  if (spec_.report) {
    out += fmt::format(
        "-- report '{}' (tidemark's summary line) has no Flink equivalent; read the sinks "
        "instead.\n",
        OneLine(spec_.report->label));
  }
  out += "\n" + body_;
  if (inserts_.empty()) {
    out += "-- No sink could be written: every path to a sink was dropped.\n";
  } else {
    out += "EXECUTE STATEMENT SET\nBEGIN\n";
    for (const std::string& insert : inserts_) {
      out += insert;
    }
    out += "END;\n";
  }
  // Reported in YAML order, as config/ reports its diagnostics.
  std::stable_sort(problems_.begin(), problems_.end(),
                   [](const ExportProblem& a, const ExportProblem& b) {
                     return std::pair(a.location.line, a.location.column) <
                            std::pair(b.location.line, b.location.column);
                   });
  return FlinkSqlExport{std::move(out), std::move(problems_)};
}

std::string Exporter::WatermarkDdl(const WatermarkStrategySpec& wm, const OperatorSpec& op,
                                   const std::string& wm_path, const std::string& rowtime,
                                   bool push_down, std::vector<std::string>& options,
                                   std::string& comments) {
  std::string delay;
  if (wm.strategy == "bounded-out-of-orderness") {
    comments += CheckDurations(op, wm_path + ".max-out-of-orderness",
                               wm.key_locations.Of("max-out-of-orderness", wm.location),
                               {wm.max_out_of_orderness_ms + 1});
    comments +=
        fmt::format("-- bounded out-of-orderness {}: tidemark's watermark is max(ts) - {} - 1ms.\n",
                    Duration(wm.max_out_of_orderness_ms), Duration(wm.max_out_of_orderness_ms));
    delay = Interval(wm.max_out_of_orderness_ms + 1);
  } else if (wm.strategy == "sql-interval") {
    // tidemark's sql-interval is Flink SQL's own rule: ts - INTERVAL, no 1 ms taken off.
    comments += CheckDurations(op, wm_path + ".max-out-of-orderness",
                               wm.key_locations.Of("max-out-of-orderness", wm.location),
                               {wm.max_out_of_orderness_ms});
    comments += fmt::format("-- sql-interval {}: the same rule as Flink SQL's ts - INTERVAL.\n",
                            Duration(wm.max_out_of_orderness_ms));
    delay = Interval(wm.max_out_of_orderness_ms);
  } else if (wm.strategy == "adaptive-out-of-orderness") {
    const int64_t bound = wm.adaptive ? wm.adaptive->max_ms : 0;
    comments +=
        Drop(wm.key_locations.Of("strategy", wm.location), PathOf(op, wm_path + ".strategy"),
             "an adaptive out-of-orderness bound (a sliding percentile of lateness)",
             "a fixed WATERMARK FOR rowtime AS rowtime - INTERVAL; its max is the safe choice");
    comments += fmt::format("-- (written with the adaptive strategy's max, {}, as a fixed bound)\n",
                            Duration(bound));
    delay = Interval(bound + 1);
  } else if (wm.strategy == "monotonous") {
    comments += "-- monotonous: tidemark's watermark is max(ts) - 1ms.\n";
    delay = Interval(1);
  } else if (wm.strategy == "punctuated") {
    comments += Drop(
        wm.key_locations.Of("strategy", wm.location), PathOf(op, wm_path + ".strategy"),
        fmt::format("punctuated watermarks (from field {})", wm.watermark_field),
        "a periodic WATERMARK FOR; 'scan.watermark.emit.strategy' = 'on-event' emits per record on "
        "sources with watermark push-down (kafka)");
    comments += "-- (written as monotonous instead)\n";
    delay = Interval(1);
  } else {
    return "";  // strategy none
  }
  // A connector with watermark push-down (SupportsWatermarkPushDown, e.g. kafka) takes idleness and
  // alignment as table options and applies them per split; the others (filesystem, datagen) run
  // the WATERMARK after the scan, where only the job-wide idle timeout applies.
  if (wm.idleness_ms && push_down) {
    options.push_back(fmt::format("'scan.watermark.idle-timeout' = '{}ms'", *wm.idleness_ms));
    comments += fmt::format("-- idleness {}: a split without records for {} is idle.\n",
                            Duration(*wm.idleness_ms), Duration(*wm.idleness_ms));
  } else if (wm.idleness_ms) {
    const std::string set =
        fmt::format("SET 'table.exec.source.idle-timeout' = '{}ms';\n", *wm.idleness_ms);
    if (!idle_timeout_.empty() && idle_timeout_ != set) {
      comments +=
          Drop(wm.key_locations.Of("idleness", wm.location), PathOf(op, wm_path + ".idleness"),
               "a second, different idleness among sources without watermark push-down",
               "one job-wide 'table.exec.source.idle-timeout'");
    } else {
      idle_timeout_ = set;
      comments += fmt::format(
          "-- idleness {}: 'table.exec.source.idle-timeout' (set above) marks a source subtask "
          "idle after {} without records.\n",
          Duration(*wm.idleness_ms), Duration(*wm.idleness_ms));
    }
  }
  if (wm.idle_advance_ms) {
    // Like pipeline.clock: a processing-time behaviour with no Flink form; the SQL stays valid
    // and gives the same rows whenever input never pauses that long.
    comments += fmt::format(
        "-- idle-advance {}: no Flink equivalent (beyond Flink): tidemark moves this source's "
        "watermark on with processing time once it has had no record for {}; Flink's watermark "
        "waits for the next record, so windows close later (or only at end of input).\n",
        Duration(*wm.idle_advance_ms), Duration(*wm.idle_advance_ms));
  }
  if (wm.alignment && push_down) {
    options.push_back(
        fmt::format("'scan.watermark.alignment.group' = {}", SqlString(wm.alignment->group)));
    options.push_back(
        fmt::format("'scan.watermark.alignment.max-drift' = '{}ms'", wm.alignment->max_drift_ms));
    options.push_back(fmt::format("'scan.watermark.alignment.update-interval' = '{}ms'",
                                  wm.alignment->update_interval_ms));
  } else if (wm.alignment) {
    comments += Drop(
        wm.key_locations.Of("alignment", wm.location), PathOf(op, wm_path + ".alignment"),
        fmt::format("watermark alignment (group {}, max drift {}) on a source without watermark "
                    "push-down",
                    wm.alignment->group, Duration(wm.alignment->max_drift_ms)),
        "'scan.watermark.alignment.group' / '.max-drift' / '.update-interval', which only sources "
        "with "
        "watermark push-down (kafka) honour");
  }
  return fmt::format("  WATERMARK FOR {} AS {} - {}", Quote(rowtime), Quote(rowtime), delay);
}

void Exporter::Source(const JobVertex& v) {
  const OperatorSpec& op = v.spec;
  const SourceSpec& src = *op.source;
  const JobVertex* assigner = folded_.count(v.id) ? folded_[v.id] : nullptr;
  const WatermarkStrategySpec* wm = op.watermarks         ? &*op.watermarks
                                    : assigner != nullptr ? &*assigner->spec.watermarks
                                                          : nullptr;
  const OperatorSpec& wm_op = assigner != nullptr ? assigner->spec : op;
  const bool file = src.type == "file";

  Relation rel;
  rel.name = op.id;
  rel.columns = ColumnsOf(v.compiled.output_schema, {});
  std::string comments =
      fmt::format("-- Source '{}' ({}): {} source.\n", OneLine(op.id), Loc(op.location), src.type);
  std::vector<std::string> options;

  if (file) {
    const FileSourceSpec& f = src.file;
    std::filesystem::path path(f.path);
    if (path.is_relative()) {
      path = std::filesystem::path(spec_.file).parent_path() / path;
    }
    path = path.lexically_normal();
    std::string dir = path.string();
    if (IsGlob(path.filename().string())) {
      dir = path.parent_path().string();
      options.push_back(fmt::format("'source.path.regex-pattern' = {}",
                                    SqlString(GlobToRegex(path.filename().string()))));
    }
    options.insert(options.begin(), fmt::format("'path' = {}", SqlString(dir.empty() ? "." : dir)));
    options.insert(options.begin(), "'connector' = 'filesystem'");
    comments += fmt::format(
        "-- The path is the job's, resolved against the job file's folder as given to export; on a "
        "cluster use a shared "
        "file system (s3://, hdfs://).\n");
    const std::string fmt_name = f.format == "csv" ? "csv" : "json";
    options.push_back(fmt::format("'format' = '{}'", fmt_name));
    if (f.format == "csv" && f.csv_delimiter != ",") {
      options.push_back(fmt::format("'csv.field-delimiter' = {}", SqlString(f.csv_delimiter)));
    }
    // By default tidemark never stops on a bad line (it is counted, or sent to side output
    // `errors`); Flink fails the job unless the format skips it. `errors: fail` is Flink's default.
    if (src.errors == "fail") {
      options.push_back(fmt::format("'{}.ignore-parse-errors' = 'false'", fmt_name));
    } else {
      options.push_back(fmt::format("'{}.ignore-parse-errors' = 'true'", fmt_name));
      comments +=
          "-- Bad lines are skipped ('ignore-parse-errors'), as tidemark counts and drops them.\n";
    }
    if (f.format == "csv" && f.csv_header) {
      // Flink's csv format has no header option, and 'csv.ignore-parse-errors' does not skip a
      // line that does not parse: it sets the fields that fail to NULL (Flink 2.3, checked by
      // `flink-reference.sh sql`). The header becomes a row of NULLs and column names, and its
      // NULL event time fails the job ("RowTime field should not be null").
      comments +=
          Drop(src.key_locations.Of("csv-header", src.location), PathOf(op, "source.csv-header"),
               "csv-header (Flink's csv format has no header option; with "
               "'csv.ignore-parse-errors' the header line becomes a row whose unparsable "
               "fields are NULL, and a NULL event time fails the job)",
               "the files without their header line");
    }
    if (f.format == "csv" && f.columns == "by-name") {
      comments += Drop(src.key_locations.Of("columns", src.location), PathOf(op, "source.columns"),
                       "columns: by-name (Flink's csv format reads the columns by position)",
                       "the schema declared in each file's column order");
    }
    if (src.key_locations.values.count("pacing") != 0) {
      comments +=
          "-- pacing (processing time per record) has no Flink equivalent; the files are read at "
          "full speed.\n";
    }
    if (src.key_locations.values.count("max-line-bytes") != 0) {
      comments += "-- max-line-bytes has no Flink equivalent.\n";
    }
    if (src.key_locations.values.count("split-bytes") != 0) {
      comments += "-- split-bytes: Flink's filesystem source cuts files into splits itself.\n";
    }
  } else if (src.type == "kafka") {
    comments += KafkaSourceOptions(op, options);
  } else if (src.type == "stdin") {
    comments += Drop(src.key_locations.Of("type", src.location), PathOf(op, "source.type"),
                     "source type stdin (Flink has no standard-input connector)",
                     "'connector' = 'filesystem' over the file piped in (datagen rows here)");
    options.push_back("'connector' = 'datagen'");
  } else {
    comments +=
        Drop(src.key_locations.Of("type", src.location), PathOf(op, "source.type"),
             fmt::format("source type {} (no Flink connector makes these records)", src.type),
             "'connector' = 'datagen' (random rows)");
    options.push_back("'connector' = 'datagen'");
    int64_t rows = -1;
    if (src.type == "sequence") {
      rows = 0;
      for (const SequenceSplitSpec& s : src.splits) {
        rows += s.count;
      }
    } else if (src.type == "generator") {
      rows = src.count;
    } else if (src.type == "datagen") {
      rows = src.datagen.split_count * src.datagen.count;
    }
    if (rows >= 0) {
      options.push_back(fmt::format("'number-of-rows' = '{}'", rows));
    }
  }

  std::string ddl_columns;
  for (const Column& c : rel.columns) {
    ddl_columns += fmt::format("  {} {},\n", Quote(c.name), c.type);
  }
  std::string watermark;
  if (wm != nullptr && wm->strategy != "none") {
    const std::string wm_path = "watermarks";
    std::string ts_field = wm->timestamp_field;
    const bool kafka_time = src.type == "kafka" && ts_field.empty();
    if (ts_field.empty() && !kafka_time) {
      // The source's own timestamp: the first `timestamp` column (file, replay), else `ts`.
      for (const Field& f : v.compiled.output_schema.fields()) {
        if (f.type == FieldType::kTimestamp) {
          ts_field = f.name;
          break;
        }
      }
    }
    if (assigner != nullptr) {
      comments += fmt::format(
          "-- Operator mode: the assign-timestamps-and-watermarks '{}' ({}) after this source is "
          "its WATERMARK FOR.\n",
          OneLine(assigner->spec.id), Loc(assigner->spec.location));
    }
    if (file) {
      comments +=
          "-- Flink SQL assigns this WATERMARK after the scan, in each source subtask: operator "
          "mode, one\n"
          "-- watermark per subtask over all the files it reads, not one per file (split) as in "
          "tidemark's\n"
          "-- split mode. Records of one file that is far behind another can be late here.\n";
    }
    rel.rowtime = UniqueName("rowtime", rel.columns);
    if (kafka_time) {
      // The record's timestamp (CreateTime or LogAppendTime), as tidemark's kafka source.
      ddl_columns += fmt::format("  {} TIMESTAMP_LTZ(3) METADATA FROM 'timestamp' VIRTUAL,\n",
                                 Quote(rel.rowtime));
      comments += "-- The event time is the Kafka record's timestamp (metadata 'timestamp').\n";
      watermark =
          WatermarkDdl(*wm, wm_op, wm_path, rel.rowtime, /*push_down=*/true, options, comments);
    } else if (ts_field.empty()) {
      comments +=
          Drop(wm->location, PathOf(wm_op, "watermarks"), "watermarks without a timestamp field",
               "WATERMARK FOR a TIMESTAMP_LTZ(3) column");
      rel.rowtime.clear();
    } else if (!wm->timestamp_format.empty()) {
      // The string column stays; the rowtime is Flink SQL's TO_TIMESTAMP(str, pattern) (the same
      // Java DateTimeFormatter pattern, UTC), as TIMESTAMP_LTZ in the session's UTC.
      ddl_columns +=
          fmt::format("  {} AS CAST(TO_TIMESTAMP({}, {}) AS TIMESTAMP_LTZ(3)),\n",
                      Quote(rel.rowtime), Quote(ts_field), SqlString(wm->timestamp_format));
      comments += fmt::format(
          "-- timestamp-format \"{}\": the rowtime is TO_TIMESTAMP({}, pattern). A value that does "
          "not match\n-- is NULL there, and Flink fails the job on a NULL rowtime; tidemark "
          "counts it as bad input.\n",
          OneLine(wm->timestamp_format), OneLine(ts_field));
      watermark = WatermarkDdl(*wm, wm_op, wm_path, rel.rowtime, /*push_down=*/src.type == "kafka",
                               options, comments);
    } else if (wm->timestamp_unit == "iso8601") {
      comments += Drop(wm->key_locations.Of("timestamp-unit", wm->location),
                       PathOf(wm_op, "watermarks.timestamp-unit"), "ISO-8601 string timestamps",
                       "TO_TIMESTAMP_LTZ(field, format) or TO_TIMESTAMP(field, format)");
      rel.rowtime.clear();
    } else {
      std::string ms = Quote(ts_field);
      int precision = 3;
      if (wm->timestamp_unit == "s") {
        precision = 0;
      } else if (wm->timestamp_unit == "us") {
        ms = fmt::format("{} / 1000", ms);
      } else if (wm->timestamp_unit == "ns") {
        ms = fmt::format("{} / 1000000", ms);
      }
      ddl_columns +=
          fmt::format("  {} AS TO_TIMESTAMP_LTZ({}, {}),\n", Quote(rel.rowtime), ms, precision);
      // Flink's kafka connector pushes the watermark into the source (per partition); the
      // filesystem and datagen connectors do not.
      watermark = WatermarkDdl(*wm, wm_op, wm_path, rel.rowtime, /*push_down=*/src.type == "kafka",
                               options, comments);
    }
  }
  std::string ddl = ddl_columns + watermark;
  if (watermark.empty() && ddl.size() >= 2) {
    ddl.resize(ddl.size() - 2);  // the last column's ",\n"
  }
  std::string with;
  for (size_t i = 0; i < options.size(); ++i) {
    with += fmt::format("  {}{}\n", options[i], i + 1 < options.size() ? "," : "");
  }
  body_ += comments +
           fmt::format("CREATE TABLE {} (\n{}\n) WITH (\n{});\n\n", Quote(rel.name), ddl, with);
  relations_[v.id] = rel;
}

void Exporter::Assigner(const JobVertex& v) {
  const std::vector<const JobEdge*> in = graph_.InputsOf(v.id);
  if (folded_assigners_.count(v.id) != 0) {
    relations_[v.id] = relations_[in[0]->from];  // it is the source table's WATERMARK FOR
    return;
  }
  std::optional<Relation> input = InputRelation(v, 0);
  body_ += Drop(
      v.spec.location, PathOf(v.spec, "type"),
      "assign-timestamps-and-watermarks after a transformation or a source with its own watermarks",
      "WATERMARK FOR in the source table's CREATE TABLE (Flink SQL takes watermarks only there)");
  if (input) {
    relations_[v.id] = *input;
  }
  body_ += "\n";
}

std::string Exporter::KafkaSourceOptions(const OperatorSpec& op,
                                         std::vector<std::string>& options) {
  const SourceSpec& src = *op.source;
  const KafkaSourceSpec& k = src.kafka;
  std::string comments;
  auto at = [&](const char* key) {
    return src.key_locations.Of(key, src.location);
  };
  options.push_back("'connector' = 'kafka'");
  if (!k.topic_pattern.empty()) {
    options.push_back(fmt::format("'topic-pattern' = {}", SqlString(k.topic_pattern)));
  } else {
    std::string topics;
    for (const std::string& t : k.topics) {
      topics += (topics.empty() ? "" : ";") + t;
    }
    options.push_back(fmt::format("'topic' = {}", SqlString(topics)));
  }
  if (k.mock) {
    comments +=
        Drop(at("mock-cluster"), PathOf(op, "source.mock-cluster"),
             "mock-cluster (an in-process librdkafka mock cluster loaded from a file)",
             "a Kafka cluster at 'properties.bootstrap.servers' (written as localhost:9092), "
             "with the file produced into the topic");
    options.push_back("'properties.bootstrap.servers' = 'localhost:9092'");
  } else {
    options.push_back(
        fmt::format("'properties.bootstrap.servers' = {}", SqlString(k.bootstrap_servers)));
  }
  if (!k.group_id.empty()) {
    options.push_back(fmt::format("'properties.group.id' = {}", SqlString(k.group_id)));
  }
  const std::string topic = k.topics.size() == 1 ? k.topics.front() : "";
  // "partition:0,offset:42;partition:1,offset:300" of the one topic, or "" when a split id names
  // another topic (Flink SQL's specific offsets are for a single topic).
  auto partition_offsets =
      [&](const std::map<std::string, int64_t>& offsets) -> std::optional<std::string> {
    std::string out;
    for (const auto& [id, offset] : offsets) {
      const size_t dash = id.rfind('-');
      if (topic.empty() || id.substr(0, dash) != topic) {
        return std::nullopt;
      }
      out += fmt::format("{}partition:{},offset:{}", out.empty() ? "" : ";", id.substr(dash + 1),
                         offset);
    }
    return out;
  };
  const std::string& start = k.starting_offsets;
  if (start == "earliest" || start == "latest") {
    options.push_back(fmt::format("'scan.startup.mode' = '{}-offset'", start));
  } else if (start == "committed") {
    options.push_back("'scan.startup.mode' = 'group-offsets'");
    options.push_back(fmt::format("'properties.auto.offset.reset' = '{}'", k.offset_reset));
  } else if (start == "timestamp") {
    options.push_back("'scan.startup.mode' = 'timestamp'");
    options.push_back(
        fmt::format("'scan.startup.timestamp-millis' = '{}'", k.starting_timestamp_ms));
  } else if (start == "specific") {
    const std::optional<std::string> offsets = partition_offsets(k.starting_specific);
    if (!offsets) {
      comments +=
          Drop(at("starting-specific-offsets"), PathOf(op, "source.starting-specific-offsets"),
               "specific starting offsets over more than one topic",
               "'scan.startup.specific-offsets', which names partitions of the one 'topic'");
      options.push_back("'scan.startup.mode' = 'earliest-offset'");
    } else {
      options.push_back("'scan.startup.mode' = 'specific-offsets'");
      options.push_back(fmt::format("'scan.startup.specific-offsets' = {}", SqlString(*offsets)));
      if (k.offset_reset != "earliest") {
        comments += Drop(
            at("starting-offsets-reset"), PathOf(op, "source.starting-offsets-reset"),
            fmt::format("starting-offsets-reset: {} for the partitions not listed", k.offset_reset),
            "Flink SQL starts an unlisted partition at the group's committed offset, "
            "else the earliest");
      } else {
        comments +=
            "-- Partitions not listed: Flink SQL starts them at the group's committed offset, "
            "else the earliest.\n";
      }
    }
  }
  if (k.bounded == "latest") {
    options.push_back("'scan.bounded.mode' = 'latest-offset'");
  } else if (k.bounded == "specific") {
    const std::optional<std::string> offsets = partition_offsets(k.bounded_specific);
    if (!offsets) {
      comments +=
          Drop(at("bounded-specific-offsets"), PathOf(op, "source.bounded-specific-offsets"),
               "specific stopping offsets over more than one topic",
               "'scan.bounded.specific-offsets', which names partitions of the one 'topic'");
    } else {
      options.push_back("'scan.bounded.mode' = 'specific-offsets'");
      options.push_back(fmt::format("'scan.bounded.specific-offsets' = {}", SqlString(*offsets)));
    }
  } else {
    options.push_back(
        fmt::format("'scan.topic-partition-discovery.interval' = '{}ms'", k.discovery_interval_ms));
  }
  if (k.format == "raw") {
    options.push_back("'format' = 'raw'");
  } else {
    options.push_back("'format' = 'json'");
    if (src.errors == "fail") {
      options.push_back("'json.ignore-parse-errors' = 'false'");
    } else {
      options.push_back("'json.ignore-parse-errors' = 'true'");
      comments +=
          "-- Bad values are skipped ('ignore-parse-errors'), as tidemark counts and drops them.\n";
    }
  }
  if (!k.key_field.empty()) {
    options.push_back("'key.format' = 'raw'");
    options.push_back(fmt::format("'key.fields' = {}", SqlString(k.key_field)));
    options.push_back("'value.fields-include' = 'EXCEPT_KEY'");
  }
  for (const auto& [name, value] : k.properties) {
    options.push_back(fmt::format("{} = {}", SqlString("properties." + name), SqlString(value)));
  }
  if (src.key_locations.values.count("pacing") != 0) {
    comments +=
        "-- pacing (processing time per record) has no Flink equivalent; the topic is read at full "
        "speed.\n";
  }
  return comments;
}

void Exporter::Unsupported(const JobVertex& v, const std::string& feature,
                           const std::string& nearest) {
  body_ += Drop(v.spec.type_location.line > 0 ? v.spec.type_location : v.spec.location,
                PathOf(v.spec, "type"), feature, nearest);
  body_ += fmt::format("-- Operator '{}' is left out; what reads it is left out too.\n\n",
                       OneLine(v.spec.id));
}

void Exporter::Filter(const JobVertex& v) {
  std::optional<Relation> in = InputRelation(v, 0);
  if (!in) {
    LeftOut("Filter", v);
    return;
  }
  const FilterSpec& f = *v.spec.filter;
  std::string comments;
  std::string condition;
  if (f.condition) {
    condition = TranslateExpression(*f.condition, in->columns, v.spec, "filter", comments);
  } else {
    static const std::map<std::string, std::string> kOps = {
        {"gt", ">"}, {"ge", ">="}, {"lt", "<"}, {"le", "<="}, {"eq", "="}, {"ne", "<>"}};
    condition = fmt::format("{} {} {}", Quote(f.field), kOps.at(f.op), f.value);
  }
  Relation rel = *in;
  rel.name = v.spec.id;
  body_ += comments + fmt::format("CREATE TEMPORARY VIEW {} AS\nSELECT {}\nFROM {}\nWHERE {};\n\n",
                                  Quote(rel.name), SelectList(*in), Quote(in->name), condition);
  relations_[v.id] = rel;
}

void Exporter::Map(const JobVertex& v) {
  std::optional<Relation> in = InputRelation(v, 0);
  if (!in) {
    LeftOut("Map", v);
    return;
  }
  const MapSpec& m = *v.spec.map;
  Relation rel;
  rel.name = v.spec.id;
  rel.columns = ColumnsOf(v.compiled.output_schema, in->columns);
  rel.rowtime = in->rowtime;
  std::string comments;
  std::string select;
  for (const Column& c : rel.columns) {
    std::string item = Quote(c.name);
    auto set =
        std::find_if(m.set.begin(), m.set.end(), [&](const auto& s) { return s.first == c.name; });
    if (set != m.set.end()) {
      item = fmt::format(
          "{} AS {}",
          TranslateExpression(set->second, in->columns, v.spec, "map.set." + c.name, comments),
          Quote(c.name));
    } else if (m.set.empty() && c.name == m.field) {
      const std::string value = fmt::format("{} * {} + {}", Quote(c.name), m.multiply, m.add);
      item = c.type == "DOUBLE" ? fmt::format("{} AS {}", value, Quote(c.name))
                                : fmt::format("CAST({} AS BIGINT) AS {}", value, Quote(c.name));
    }
    select += (select.empty() ? "" : ", ") + item;
  }
  if (!rel.rowtime.empty()) {
    select += ", " + Quote(rel.rowtime);
  }
  if (v.spec.id.find(".key-by") != std::string::npos) {
    comments +=
        fmt::format("-- The key-by expression of '{}' as a column (as tidemark's inserted map).\n",
                    OneLine(v.spec.id.substr(0, v.spec.id.find(".key-by"))));
  }
  body_ += comments + fmt::format("CREATE TEMPORARY VIEW {} AS\nSELECT {}\nFROM {};\n\n",
                                  Quote(rel.name), select, Quote(in->name));
  relations_[v.id] = rel;
}

void Exporter::Project(const JobVertex& v) {
  std::optional<Relation> in = InputRelation(v, 0);
  if (!in || !v.spec.params) {
    LeftOut("Project", v);
    return;
  }
  // The items in order: a field name, or name: expression.
  std::vector<std::pair<std::string, std::optional<ExpressionSpec>>> items;
  const ParamNode& p = *v.spec.params;
  auto add_map = [&](const ParamNode& node) {
    for (size_t i = 0; i < node.keys.size(); ++i) {
      items.emplace_back(node.keys[i],
                         ExpressionSpec{node.items[i].scalar, node.items[i].location});
    }
  };
  if (p.kind == ParamNode::Kind::kMap) {
    add_map(p);
  } else {
    for (const ParamNode& item : p.items) {
      if (item.kind == ParamNode::Kind::kScalar) {
        items.emplace_back(item.scalar, std::nullopt);
      } else {
        add_map(item);
      }
    }
  }
  Relation rel;
  rel.name = v.spec.id;
  rel.columns = ColumnsOf(v.compiled.output_schema, in->columns);
  rel.rowtime = in->rowtime;
  std::string comments;
  std::string select;
  for (const auto& [name, expr] : items) {
    const std::string item = expr ? fmt::format("{} AS {}",
                                                TranslateExpression(*expr, in->columns, v.spec,
                                                                    "project." + name, comments),
                                                Quote(name))
                                  : Quote(name);
    select += (select.empty() ? "" : ", ") + item;
  }
  if (!rel.rowtime.empty()) {
    select += ", " + Quote(rel.rowtime);
  }
  body_ += comments + fmt::format("CREATE TEMPORARY VIEW {} AS\nSELECT {}\nFROM {};\n\n",
                                  Quote(rel.name), select, Quote(in->name));
  relations_[v.id] = rel;
}

void Exporter::Union(const JobVertex& v) {
  std::vector<Relation> ins;
  for (const JobEdge* e : graph_.InputsOf(v.id)) {  // a union's edges all feed its input 0
    auto it = relations_.find(e->from);
    if (!e->side_output.empty() || it == relations_.end()) {
      LeftOut("Union", v);
      return;
    }
    ins.push_back(it->second);
  }
  Relation rel = ins.front();
  rel.name = v.spec.id;
  bool same_rowtime = std::all_of(ins.begin(), ins.end(),
                                  [&](const Relation& r) { return r.rowtime == rel.rowtime; });
  if (!same_rowtime) {
    rel.rowtime.clear();
  }
  std::string body;
  for (const Relation& in : ins) {
    Relation shape = in;
    if (!same_rowtime) {
      shape.rowtime.clear();
    }
    body += fmt::format("{}SELECT {} FROM {}\n", body.empty() ? "" : "UNION ALL\n",
                        SelectList(shape), Quote(in.name));
  }
  body_ += fmt::format(
      "-- union: the watermark is the minimum over the inputs, in Flink as in tidemark.\n"
      "CREATE TEMPORARY VIEW {} AS\n{};\n\n",
      Quote(rel.name), body.substr(0, body.size() - 1));
  relations_[v.id] = rel;
}

std::string Exporter::WindowTvf(const std::string& assigner, int64_t size_ms, int64_t slide_ms,
                                int64_t offset_ms, const Relation& in) const {
  std::string args = fmt::format("TABLE {}, DESCRIPTOR({}), ", Quote(in.name), Quote(in.rowtime));
  std::string fn;
  if (assigner == "tumbling") {
    fn = "TUMBLE";
    args += Interval(size_ms);
  } else {
    fn = "HOP";  // slide before size
    args += Interval(slide_ms) + ", " + Interval(size_ms);
  }
  if (offset_ms != 0) {
    args += ", " + Interval(offset_ms);
  }
  return fmt::format("TABLE({}({}))", fn, args);
}

void Exporter::Window(const JobVertex& v) {
  const OperatorSpec& op = v.spec;
  const WindowSpec& w = *op.window;
  std::optional<Relation> in = InputRelation(v, 0);
  if (!in) {
    LeftOut("Window", v);
    return;
  }
  std::string comments;
  bool drop_whole = false;
  if (w.time == "processing") {
    comments += Drop(w.key_locations.Of("time", w.location), PathOf(op, "window.time"),
                     "a processing-time window (processing-time timers)",
                     "the same window TVF over a `proctime AS PROCTIME()` column");
    drop_whole = true;
  } else if (in->rowtime.empty()) {
    comments += Drop(w.location, PathOf(op, "window"),
                     "an event-time window over a stream without watermarks",
                     "WATERMARK FOR in the source table (window TVFs need a time attribute)");
    drop_whole = true;
  }
  if (w.assigner == "global") {
    comments += Drop(w.key_locations.Of("assigner", w.location), PathOf(op, "window.assigner"),
                     "a global window", "a non-windowed GROUP BY (an updating aggregate)");
    drop_whole = true;
  }
  if (!w.trigger.empty() && w.trigger != "event-time" && w.trigger != "event_time") {
    std::string nearest =
        "the window TVF's own firing: once, when the watermark passes window_end - 1";
    if (w.trigger.rfind("continuous", 0) == 0 && w.assigner == "tumbling") {
      nearest = fmt::format(
          "CUMULATE(TABLE t, DESCRIPTOR(rowtime), <the trigger's interval>, {}), which fires "
          "every step with the window so far",
          Interval(w.size_ms));
    } else if (w.trigger.rfind("count", 0) == 0) {
      nearest =
          "none on window TVFs (early firing exists only as the experimental "
          "'table.exec.emit.early-fire.*' "
          "options of legacy GROUP BY windows)";
    }
    comments += Drop(w.key_locations.Of("trigger", w.location), PathOf(op, "window.trigger"),
                     fmt::format("the custom trigger {}", w.trigger), nearest);
  }
  if (w.allowed_lateness_ms > 0) {
    comments += Drop(
        w.key_locations.Of("allowed-lateness", w.location), PathOf(op, "window.allowed-lateness"),
        fmt::format("allowed lateness ({}) on a window", Duration(w.allowed_lateness_ms)),
        "none on window TVFs, which drop late rows (legacy GROUP BY windows have the experimental "
        "'table.exec.emit.allow-lateness')");
  }
  if (!w.late_output.empty()) {
    comments +=
        Drop(w.key_locations.Of("late-output", w.location), PathOf(op, "window.late-output"),
             fmt::format("the late side output '{}'", w.late_output),
             "a second INSERT of the rows with rowtime <= CURRENT_WATERMARK(rowtime), taken before "
             "the window");
  }
  if (w.emit_watermark) {
    comments +=
        Drop(w.key_locations.Of("emit-watermark", w.location), PathOf(op, "window.emit-watermark"),
             "the watermark column (the watermark that fired the window)",
             "window_time, which is window_end - 1 ms, the first watermark that fires the window");
  }
  if (drop_whole) {
    body_ +=
        comments + fmt::format("-- Window '{}' is left out; what reads it is left out too.\n\n",
                               OneLine(op.id));
    return;
  }

  comments +=
      CheckDurations(op, "window", w.location, {w.size_ms, w.slide_ms, w.offset_ms, w.gap_ms});
  // A window TVF adds window_start, window_end and window_time: rows that already have such
  // columns (a window over a window) are read through a view that renames them.
  std::map<std::string, std::string> renamed;
  for (const Column& c : in->columns) {
    if (c.name == "window_start" || c.name == "window_end" || c.name == "window_time") {
      renamed[c.name] = UniqueName(c.name + "_in", in->columns);
    }
  }
  auto ref = [&](const std::string& name) {
    auto it = renamed.find(name);
    return Quote(it == renamed.end() ? name : it->second);
  };
  if (!renamed.empty()) {
    Relation view = *in;
    view.name = op.id + ".input";
    std::string select;
    for (Column& c : view.columns) {
      const std::string item = renamed.count(c.name) != 0
                                   ? fmt::format("{} AS {}", Quote(c.name), ref(c.name))
                                   : Quote(c.name);
      select += (select.empty() ? "" : ", ") + item;
      if (renamed.count(c.name) != 0) {
        c.name = renamed[c.name];
      }
    }
    if (!view.rowtime.empty()) {
      select += ", " + Quote(view.rowtime);
    }
    comments += fmt::format("CREATE TEMPORARY VIEW {} AS\nSELECT {}\nFROM {};\n\n",
                            Quote(view.name), select, Quote(in->name));
    in = view;
  }

  Relation rel;
  rel.name = op.id;
  rel.columns = ColumnsOf(v.compiled.output_schema, in->columns);
  for (Column& c : rel.columns) {
    if (c.name == "window_start" || c.name == "window_end") {
      c.type = "TIMESTAMP(3)";
    }
  }
  // Only the columns SQL computes: the watermark column is dropped above.
  rel.columns.erase(
      std::remove_if(rel.columns.begin(), rel.columns.end(),
                     [&](const Column& c) { return w.emit_watermark && c.name == "watermark"; }),
      rel.columns.end());
  rel.rowtime = UniqueName("rowtime", rel.columns);

  const bool session = w.assigner == "session";
  const std::string gap = Interval(w.gap_ms);
  std::string select;
  auto add = [&](const std::string& item) {
    select += (select.empty() ? "" : ",\n       ") + item;
  };
  std::string keys;
  for (const std::string& k : op.key_by) {
    add(renamed.count(k) != 0 ? fmt::format("{} AS {}", ref(k), Quote(k)) : Quote(k));
    keys += ", " + ref(k);
  }
  if (session) {
    add(fmt::format("SESSION_START({}, {}) AS `window_start`", Quote(in->rowtime), gap));
    add(fmt::format("SESSION_END({}, {}) AS `window_end`", Quote(in->rowtime), gap));
  } else {
    add("`window_start`");
    add("`window_end`");
  }
  for (const AggregateSpec& a : w.aggregates) {
    const std::string f = ref(a.field);
    std::string call;
    const bool by_order = a.function == "first" || a.function == "last" ||
                          a.function == "first-value" || a.function == "last-value";
    if (session && by_order) {
      // Flink's FirstValueAggFunction / LastValueAggFunction have no merge(), which a session
      // window needs: Flink rejects the query ("Could not find an implementation method
      // 'merge'"). A typed NULL keeps the column.
      std::string type = "STRING";
      for (const Column& c : rel.columns) {
        if (c.name == a.as) {
          type = c.type;
        }
      }
      comments +=
          Drop(a.location, PathOf(op, "window.aggregate"),
               fmt::format("{} of {} in a session window", a.function, a.field),
               "none: Flink's FIRST_VALUE / LAST_VALUE cannot merge sessions (a tumbling or "
               "sliding window can use them)");
      add(fmt::format("CAST(NULL AS {}) AS {}", type, Quote(a.as)));
      continue;
    }
    if (a.function == "count") {
      call = a.field.empty() ? "COUNT(*)" : fmt::format("COUNT({})", f);
    } else if (a.function == "sum") {
      call = fmt::format("SUM({})", f);
    } else if (a.function == "min") {
      call = fmt::format("MIN({})", f);
    } else if (a.function == "max") {
      call = fmt::format("MAX({})", f);
    } else if (a.function == "avg") {
      call = fmt::format("AVG(CAST({} AS DOUBLE))", f);
    } else if (a.function == "first") {
      call = fmt::format("FIRST_VALUE({})", f);
    } else if (a.function == "last") {
      call = fmt::format("LAST_VALUE({})", f);
    } else if (a.function == "first-value" || a.function == "last-value") {
      const bool first = a.function == "first-value";
      call = fmt::format("{}({})", first ? "FIRST_VALUE" : "LAST_VALUE", f);
      comments += fmt::format(
          "-- {} takes the value of the {} event time; {} the {} row to arrive: the same for "
          "rows in event-time order.\n",
          Quote(a.as), first ? "earliest" : "latest", first ? "FIRST_VALUE" : "LAST_VALUE",
          first ? "first" : "last");
    } else if (a.function == "count-distinct") {
      call = fmt::format("COUNT(DISTINCT {})", f);
    } else if (a.function == "percentile") {
      call = fmt::format("PERCENTILE({}, {})", f, a.percentage);
    } else if (a.function == "listagg") {
      call = fmt::format("LISTAGG({}, {})", f, SqlString(a.separator));
    } else if (a.function == "approx-count-distinct") {
      // The exact count stands in: Flink's APPROX_COUNT_DISTINCT is for batch jobs (streaming
      // window TVFs were proposed in FLINK-39051).
      call = fmt::format("COUNT(DISTINCT {})", f);
      comments += Drop(a.location, PathOf(op, "window.aggregate"),
                       fmt::format("approx-count-distinct of {} (a HyperLogLog estimate)", a.field),
                       "COUNT(DISTINCT x), exact, written instead (APPROX_COUNT_DISTINCT runs only "
                       "in batch mode)");
    } else {
      // approx-percentile: Flink has only the exact PERCENTILE.
      call = fmt::format("PERCENTILE({}, {})", f, a.percentage);
      comments += Drop(a.location, PathOf(op, "window.aggregate"),
                       fmt::format("approx-percentile of {} (a t-digest estimate)", a.field),
                       "PERCENTILE(x, p), exact, written instead (Flink SQL has no approximate "
                       "percentile)");
    }
    add(fmt::format("{} AS {}", call, Quote(a.as)));
  }
  if (w.emit_firing || w.allowed_lateness_ms > 0) {
    add("CAST(0 AS BIGINT) AS `firing`");  // the only firing of a window TVF
  }
  std::string from;
  std::string group;
  if (session) {
    // Flink 2.x also has the SESSION window TVF (SESSION(TABLE t PARTITION BY k,
    // DESCRIPTOR(rowtime), gap)); the group-window form below is the same per-key session window
    // and is accepted by every Flink SQL grammar.
    add(fmt::format("SESSION_ROWTIME({}, {}) AS {}", Quote(in->rowtime), gap, Quote(rel.rowtime)));
    from = Quote(in->name);
    group = fmt::format("SESSION({}, {}){}", Quote(in->rowtime), gap, keys);
    comments += fmt::format("-- session windows, gap {}{}.\n", Duration(w.gap_ms),
                            op.key_by.empty() ? "" : " per key");
  } else {
    add(fmt::format("`window_time` AS {}", Quote(rel.rowtime)));
    from = WindowTvf(w.assigner, w.size_ms, w.slide_ms, w.offset_ms, *in);
    group = "`window_start`, `window_end`, `window_time`" + keys;
    comments +=
        w.assigner == "tumbling"
            ? fmt::format("-- tumbling windows of {}{}.\n", Duration(w.size_ms),
                          w.offset_ms != 0 ? ", offset " + Duration(w.offset_ms) : "")
            : fmt::format("-- sliding windows of {} every {} (HOP takes the slide first){}.\n",
                          Duration(w.size_ms), Duration(w.slide_ms),
                          w.offset_ms != 0 ? ", offset " + Duration(w.offset_ms) : "");
  }
  body_ +=
      comments + fmt::format("CREATE TEMPORARY VIEW {} AS\nSELECT {}\nFROM {}\nGROUP BY {};\n\n",
                             Quote(rel.name), select, from, group);
  relations_[v.id] = rel;
}

// Key fields of a join: `key-by` on both sides, or `left-key` / `right-key` (a name or a list).
std::pair<std::vector<std::string>, std::vector<std::string>> JoinKeys(const OperatorSpec& op) {
  auto names = [](const ParamNode* node) {
    std::vector<std::string> out;
    if (node == nullptr) {
      return out;
    }
    if (node->kind == ParamNode::Kind::kScalar) {
      out.push_back(node->scalar);
    }
    for (const ParamNode& item : node->items) {
      out.push_back(item.scalar);
    }
    return out;
  };
  if (op.params &&
      (op.params->Find("left-key") != nullptr || op.params->Find("right-key") != nullptr)) {
    return {names(op.params->Find("left-key")), names(op.params->Find("right-key"))};
  }
  return {op.key_by, op.key_by};
}

void Exporter::IntervalJoin(const JobVertex& v) {
  const OperatorSpec& op = v.spec;
  std::optional<Relation> left = InputRelation(v, 0);
  std::optional<Relation> right = InputRelation(v, 1);
  if (!left || !right) {
    LeftOut("Interval join", v);
    return;
  }
  std::string comments;
  const ParamNode* params = op.params ? &*op.params : nullptr;
  auto param = [&](const char* key) {
    return params != nullptr ? params->Find(key) : nullptr;
  };
  for (const char* late : {"left-late-output", "right-late-output"}) {
    if (const ParamNode* n = param(late)) {
      comments += Drop(n->location, PathOf(op, fmt::format("{}.{}", op.type, late)),
                       fmt::format("the late side output '{}' of an interval join", n->scalar),
                       "none: an interval join drops late rows");
    }
  }
  if (left->rowtime.empty() || right->rowtime.empty()) {
    body_ +=
        comments + Drop(op.location, PathOf(op, "inputs"),
                        "an interval join over a stream without watermarks",
                        "WATERMARK FOR in the source table (interval joins need time attributes)");
    body_ += "\n";
    return;
  }
  auto duration = [&](const char* key) -> int64_t {
    const ParamNode* n = param(key);
    return n != nullptr ? ParseDurationMs(n->scalar).value_or(0) : 0;
  };
  auto flag = [&](const char* key) {
    const ParamNode* n = param(key);
    return n == nullptr || n->scalar == "true";
  };
  const int64_t lower = duration("lower");
  const int64_t upper = duration("upper");
  comments += CheckDurations(op, op.type, op.location, {lower, upper});
  auto bound = [&](int64_t ms) {
    if (ms == 0) {
      return fmt::format("l.{}", Quote(left->rowtime));
    }
    return fmt::format("l.{} {} {}", Quote(left->rowtime), ms < 0 ? "-" : "+",
                       Interval(ms < 0 ? -ms : ms));
  };
  const auto [left_keys, right_keys] = JoinKeys(op);
  std::string on;
  for (size_t i = 0; i < left_keys.size() && i < right_keys.size(); ++i) {
    on += fmt::format("{}l.{} = r.{}", on.empty() ? "" : " AND ", Quote(left_keys[i]),
                      Quote(right_keys[i]));
  }
  on += fmt::format("{}r.{} {} {} AND r.{} {} {}", on.empty() ? "" : "\n  AND ",
                    Quote(right->rowtime), flag("lower-inclusive") ? ">=" : ">", bound(lower),
                    Quote(right->rowtime), flag("upper-inclusive") ? "<=" : "<", bound(upper));
  Relation rel;
  rel.name = op.id;
  rel.columns = ColumnsOf(v.compiled.output_schema, {});
  std::string select;
  for (size_t i = 0; i < rel.columns.size(); ++i) {
    const bool from_left = i < left->columns.size();
    const std::string& source =
        from_left ? left->columns[i].name : right->columns[i - left->columns.size()].name;
    rel.columns[i].type =
        from_left ? left->columns[i].type : right->columns[i - left->columns.size()].type;
    select += fmt::format("{}{}.{} AS {}", select.empty() ? "" : ", ", from_left ? "l" : "r",
                          Quote(source), Quote(rel.columns[i].name));
  }
  comments += fmt::format(
      "-- interval join: l.ts + {} <= r.ts <= l.ts + {} (Flink's IntervalJoin, as tidemark's).\n",
      Duration(lower), Duration(upper));
  body_ += comments +
           fmt::format(
               "CREATE TEMPORARY VIEW {} AS\nSELECT {}\nFROM {} AS l\nJOIN {} AS r\n  ON {};\n\n",
               Quote(rel.name), select, Quote(left->name), Quote(right->name), on);
  relations_[v.id] = rel;
}

// A lookup join against a file (docs/flink-sql-export.md): Flink 2.3's filesystem connector is
// no LookupTableSource, so `FOR SYSTEM_TIME AS OF` a processing-time attribute is rejected for
// it. The table becomes a bounded filesystem table and the join a regular join on the keys.
// INNER gives the same rows (every pair matches whatever arrives first, insert-only); LEFT
// gives them only after retractions (a record read before its table row is first emitted with
// NULLs, then retracted), and a reload has no equivalent: both are problems.
void Exporter::LookupJoin(const JobVertex& v) {
  const OperatorSpec& op = v.spec;
  std::optional<Relation> left = InputRelation(v, 0);
  if (!left) {
    LeftOut("Lookup join", v);
    return;
  }
  const ParamNode* params = op.params ? &*op.params : nullptr;
  auto param = [&](const char* key) {
    return params != nullptr ? params->Find(key) : nullptr;
  };
  auto text = [&](const char* key, const char* fallback) {
    const ParamNode* n = param(key);
    return n != nullptr ? n->scalar : std::string(fallback);
  };
  std::string comments = fmt::format(
      "-- Lookup join '{}' ({}): Flink's filesystem connector has no lookup support, so the "
      "table is a bounded\n-- filesystem table and the join a regular join on the keys (the same "
      "rows for an inner join).\n",
      OneLine(op.id), Loc(op.location));
  const bool inner = text("join-type", "inner") == "inner";
  if (!inner) {
    comments += Drop(param("join-type")->location, PathOf(op, op.type + ".join-type"),
                     "a left lookup join (a regular LEFT JOIN in streaming mode first emits a "
                     "record read before its table row with NULLs, then retracts it)",
                     "LEFT JOIN ... FOR SYSTEM_TIME AS OF on a lookup table (JDBC, HBase, Hive), "
                     "or the regular LEFT JOIN written here, whose final rows are the same");
  }
  if (const ParamNode* n = param("lookup.full-cache.periodic-reload.interval")) {
    comments +=
        Drop(n->location, PathOf(op, op.type + ".lookup.full-cache.periodic-reload.interval"),
             "reloading the lookup table when its file changes",
             "'lookup.cache' = 'FULL' with 'lookup.full-cache.periodic-reload.interval' on "
             "a lookup-capable connector (JDBC, HBase); a filesystem table is read once");
  }
  if (const ParamNode* n = param("csv-header"); n != nullptr && n->scalar == "true") {
    comments += Drop(n->location, PathOf(op, op.type + ".csv-header"),
                     "csv-header on a lookup table (Flink's csv format has no header option)",
                     "the table's file without its header line");
  }
  // The table's columns: those of the joined schema after the input's.
  const Schema& out_schema = v.compiled.output_schema;
  const size_t left_width = left->columns.size();
  std::vector<std::string> table_names;
  const ParamNode* schema = param("schema");
  if (schema != nullptr) {
    table_names = schema->keys;
  }
  const std::string table = op.id + "_table";
  std::string ddl;
  for (size_t i = 0; i < table_names.size() && left_width + i < out_schema.size(); ++i) {
    ddl += fmt::format("{}  {} {}", ddl.empty() ? "" : ",\n", Quote(table_names[i]),
                       SqlType(out_schema.field(left_width + i).type));
  }
  std::filesystem::path path(text("path", ""));
  if (path.is_relative()) {
    path = std::filesystem::path(spec_.file).parent_path() / path;
  }
  const std::string format = text("format", "jsonl") == "csv" ? "csv" : "json";
  std::string with = fmt::format("  'connector' = 'filesystem',\n  'path' = {},\n  'format' = '{}'",
                                 SqlString(path.lexically_normal().string()), format);
  if (format == "csv" && text("csv-delimiter", ",") != ",") {
    with += fmt::format(",\n  'csv.field-delimiter' = {}", SqlString(text("csv-delimiter", ",")));
  }
  comments += "-- The table is all or nothing, as tidemark's (a bad line fails the job).\n";
  body_ += comments +
           fmt::format("CREATE TABLE {} (\n{}\n) WITH (\n{}\n);\n\n", Quote(table), ddl, with);
  const auto [left_keys, right_keys] = JoinKeys(op);
  std::string on;
  for (size_t i = 0; i < left_keys.size() && i < right_keys.size(); ++i) {
    on += fmt::format("{}l.{} = t.{}", on.empty() ? "" : " AND ", Quote(left_keys[i]),
                      Quote(right_keys[i]));
  }
  Relation rel;
  rel.name = op.id;
  rel.columns = ColumnsOf(out_schema, {});
  std::string select;
  for (size_t i = 0; i < rel.columns.size(); ++i) {
    const bool from_left = i < left_width;
    if (from_left) {
      rel.columns[i].type = left->columns[i].type;
    }
    const std::string& source = from_left ? left->columns[i].name : table_names[i - left_width];
    select += fmt::format("{}{}.{} AS {}", select.empty() ? "" : ", ", from_left ? "l" : "t",
                          Quote(source), Quote(rel.columns[i].name));
  }
  if (!left->rowtime.empty()) {
    body_ += "-- A regular join does not keep the input's event-time attribute.\n";
  }
  body_ += fmt::format(
      "CREATE TEMPORARY VIEW {} AS\nSELECT {}\nFROM {} AS l\n{} {} AS t\n  ON {};\n\n",
      Quote(rel.name), select, Quote(left->name), inner ? "JOIN" : "LEFT JOIN", Quote(table), on);
  relations_[v.id] = rel;
}

void Exporter::WindowJoin(const JobVertex& v) {
  const OperatorSpec& op = v.spec;
  std::optional<Relation> left = InputRelation(v, 0);
  std::optional<Relation> right = InputRelation(v, 1);
  if (!left || !right) {
    LeftOut("Window join", v);
    return;
  }
  const ParamNode* params = op.params ? &*op.params : nullptr;
  auto param = [&](const char* key) {
    return params != nullptr ? params->Find(key) : nullptr;
  };
  auto duration = [&](const char* key) -> int64_t {
    const ParamNode* n = param(key);
    return n != nullptr ? ParseDurationMs(n->scalar).value_or(0) : 0;
  };
  const std::string assigner =
      param("assigner") != nullptr ? param("assigner")->scalar : "tumbling";
  const ParamNode* time = param("time");
  if (time != nullptr && time->scalar == "processing") {
    body_ += Drop(time->location, PathOf(op, op.type + ".time"), "a processing-time window join",
                  "the same window join over `proctime AS PROCTIME()` columns") +
             "\n";
    return;
  }
  if (assigner == "session") {
    body_ += Drop(param("assigner")->location, PathOf(op, op.type + ".assigner"),
                  "a session window join (sessions over both inputs together)",
                  "an interval join, or a window join over TUMBLE / HOP windows") +
             "\n";
    return;
  }
  if (left->rowtime.empty() || right->rowtime.empty()) {
    body_ +=
        Drop(op.location, PathOf(op, "inputs"), "a window join over a stream without watermarks",
             "WATERMARK FOR in the source table (window joins need time attributes)") +
        "\n";
    return;
  }
  const int64_t size = duration("size");
  const int64_t slide = duration("slide");
  const int64_t offset = duration("offset");
  body_ += CheckDurations(op, op.type, op.location, {size, slide, offset});
  const auto [left_keys, right_keys] = JoinKeys(op);
  std::string on;
  for (size_t i = 0; i < left_keys.size() && i < right_keys.size(); ++i) {
    on += fmt::format("l.{} = r.{} AND ", Quote(left_keys[i]), Quote(right_keys[i]));
  }
  on += "l.`window_start` = r.`window_start` AND l.`window_end` = r.`window_end`";
  Relation rel;
  rel.name = op.id;
  rel.columns = ColumnsOf(v.compiled.output_schema, {});
  std::string select;
  const size_t n_left = left->columns.size();
  const size_t n_right = right->columns.size();
  for (size_t i = 0; i < rel.columns.size(); ++i) {
    std::string source;
    std::string side = "l";
    if (i < n_left) {
      source = left->columns[i].name;
      rel.columns[i].type = left->columns[i].type;
    } else if (i < n_left + n_right) {
      source = right->columns[i - n_left].name;
      rel.columns[i].type = right->columns[i - n_left].type;
      side = "r";
    } else {
      source = rel.columns[i].name;  // window_start, window_end
      rel.columns[i].type = "TIMESTAMP(3)";
    }
    select += fmt::format("{}{}.{} AS {}", select.empty() ? "" : ", ", side, Quote(source),
                          Quote(rel.columns[i].name));
  }
  const std::string comment =
      assigner == "tumbling"
          ? fmt::format("-- window join in tumbling windows of {}.\n", Duration(size))
          : fmt::format("-- window join in sliding windows of {} every {} (HOP: slide first).\n",
                        Duration(size), Duration(slide));
  body_ += comment + fmt::format(
                         "CREATE TEMPORARY VIEW {} AS\nSELECT {}\nFROM (SELECT * FROM {}) AS l\n"
                         "JOIN (SELECT * FROM {}) AS r\n  ON {};\n\n",
                         Quote(rel.name), select, WindowTvf(assigner, size, slide, offset, *left),
                         WindowTvf(assigner, size, slide, offset, *right), on);
  relations_[v.id] = rel;
}

// Flink's window Top-N: ROW_NUMBER() over the window (and partition-by columns) of a window
// aggregate, filtered to rownum <= n. NULLs sort lowest in tidemark: written out explicitly.
void Exporter::WindowTopN(const JobVertex& v) {
  const OperatorSpec& op = v.spec;
  std::optional<Relation> in = InputRelation(v, 0);
  if (!in || !op.params) {
    LeftOut("Window Top-N", v);
    return;
  }
  const ParamNode& params = *op.params;
  auto list = [](const ParamNode* node) {
    std::vector<std::string> out;
    if (node == nullptr) {
      return out;
    }
    if (node->kind == ParamNode::Kind::kScalar) {
      out.push_back(node->scalar);
    }
    for (const ParamNode& item : node->items) {
      out.push_back(item.scalar);
    }
    return out;
  };
  std::string partition = "`window_start`, `window_end`";
  for (const std::string& c : list(params.Find("partition-by"))) {
    partition += ", " + Quote(c);
  }
  std::string order;
  for (const std::string& item : list(params.Find("order-by"))) {
    for (size_t from = 0; from <= item.size();) {
      const size_t comma = std::min(item.find(',', from), item.size());
      std::istringstream words(item.substr(from, comma - from));
      std::string field;
      std::string direction = "ASC";
      words >> field >> direction;
      std::transform(direction.begin(), direction.end(), direction.begin(),
                     [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      order += fmt::format("{}{} {} NULLS {}", order.empty() ? "" : ", ", Quote(field), direction,
                           direction == "DESC" ? "LAST" : "FIRST");
      from = comma + 1;
    }
  }
  const ParamNode* n = params.Find("n");
  Relation rel;
  rel.name = op.id;
  rel.columns = ColumnsOf(v.compiled.output_schema, in->columns);
  rel.rowtime = in->rowtime;
  const std::string inner = SelectList(*in);
  std::string outer;
  for (const Column& c : rel.columns) {
    outer += (outer.empty() ? "" : ", ") + Quote(c.name);
  }
  if (!rel.rowtime.empty()) {
    outer += ", " + Quote(rel.rowtime);
  }
  body_ += fmt::format(
      "-- window Top-N: the {} first rows by {} per window{}.\n"
      "CREATE TEMPORARY VIEW {} AS\nSELECT {}\nFROM (\n  SELECT {},\n         ROW_NUMBER() "
      "OVER (PARTITION BY {} ORDER BY {}) AS `rownum`\n  FROM {})\nWHERE `rownum` <= {};\n\n",
      n != nullptr ? n->scalar : "?", order, params.Find("partition-by") ? " and partition" : "",
      Quote(rel.name), outer, inner, partition, order, Quote(in->name),
      n != nullptr ? n->scalar : "1");
  relations_[v.id] = rel;
}

void Exporter::Sink(const JobVertex& v) {
  const OperatorSpec& op = v.spec;
  const SinkSpec& s = *op.sink;
  const std::vector<const JobEdge*> edges = graph_.InputsOf(v.id);
  std::string comments;
  for (const JobEdge* e : edges) {
    if (e->side_output == "errors" &&
        graph_.vertices[static_cast<size_t>(e->from)].compiled.is_source) {
      const InputSpec* in = nullptr;
      for (const InputSpec& i : op.inputs) {
        if (i.side_output == "errors") {
          in = &i;
        }
      }
      comments +=
          Drop(in != nullptr ? in->location : op.location, PathOf(op, "inputs"),
               "the side output 'errors' of a source (bad lines with file, line and reason)",
               "'csv.ignore-parse-errors' / 'json.ignore-parse-errors', which skip bad lines "
               "without a trace");
    }
  }
  std::optional<Relation> in = InputRelation(v, 0);
  if (!in) {
    body_ += comments +
             fmt::format("-- Sink '{}' is left out: its input was dropped.\n\n", OneLine(op.id));
    return;
  }
  std::string with;
  if (s.type == "print") {
    with = "'connector' = 'print'";
    if (s.format == "fire") {
      comments +=
          "-- format: fire (>>> FIRE lines) has no Flink equivalent; the print connector prints "
          "the rows.\n";
    }
  } else if (s.type == "file") {
    with = fmt::format("'connector' = 'filesystem',\n  'path' = {},\n  'format' = 'json'",
                       SqlString(s.path));
    comments += "-- Flink's filesystem sink writes a directory of part files at `path`.\n";
    if (s.delivery_guarantee == "exactly-once") {
      // Flink SQL's rolling defaults (30 min) differ from DefaultRollingPolicy's (60 s): explicit.
      const SinkSpec::RollingPolicySpec& p = s.rolling_policy;
      with += fmt::format(
          ",\n  'sink.rolling-policy.file-size' = '{}b',\n  "
          "'sink.rolling-policy.rollover-interval' = "
          "'{} ms',\n  'sink.rolling-policy.inactivity-interval' = '{} ms',\n  "
          "'sink.rolling-policy.check-interval' = '{} ms'",
          p.part_size_bytes, p.rollover_interval_ms, p.inactivity_interval_ms, p.check_interval_ms);
      comments +=
          "-- delivery-guarantee: exactly-once is what Flink's filesystem sink always gives "
          "with checkpointing; part-prefix/part-suffix have no SQL option.\n";
      if (p.roll_on_checkpoint) {
        comments +=
            "-- roll-on-checkpoint: Flink SQL rolls row formats on checkpoint only by size.\n";
      }
    }
  } else if (s.type == "kafka") {
    // Flink SQL's Kafka connector, same option names as the DataStream KafkaSink's builder.
    with = fmt::format(
        "'connector' = 'kafka',\n  'topic' = {},\n  'properties.bootstrap.servers' = {},\n  "
        "'format' = 'json',\n  'sink.delivery-guarantee' = {}",
        SqlString(s.topic), SqlString(s.bootstrap_servers), SqlString(s.delivery_guarantee));
    if (!s.transactional_id_prefix.empty()) {
      with += fmt::format(",\n  'sink.transactional-id-prefix' = {}",
                          SqlString(s.transactional_id_prefix));
    }
    if (!s.key_field.empty()) {
      with +=
          fmt::format(",\n  'key.format' = 'raw',\n  'key.fields' = {}", SqlString(s.key_field));
    }
    for (const auto& [name, value] : s.kafka_properties) {
      with += fmt::format(",\n  {} = {}", SqlString("properties." + name), SqlString(value));
    }
    if (!s.partition_field.empty()) {
      comments += "-- partition-field has no Kafka connector option (a custom sink.partitioner).\n";
    }
    if (!s.commit_log.empty()) {
      comments += "-- commit-log: Flink resumes transactions itself and needs none.\n";
    }
  } else {
    with = "'connector' = 'blackhole'";
    comments += fmt::format(
        "-- sink type {} (kept by tidemark for reports and tests) becomes blackhole.\n", s.type);
  }
  std::string columns;
  std::string select;
  for (const Column& c : in->columns) {
    columns += fmt::format("{}  {} {}", columns.empty() ? "" : ",\n", Quote(c.name), c.type);
    select += (select.empty() ? "" : ", ") + Quote(c.name);
  }
  body_ += comments + fmt::format("CREATE TABLE {} (\n{}\n) WITH (\n  {}\n);\n\n", Quote(op.id),
                                  columns, with);
  inserts_.push_back(
      fmt::format("INSERT INTO {}\nSELECT {}\nFROM {};\n", Quote(op.id), select, Quote(in->name)));
}

}  // namespace

FlinkSqlExport ExportFlinkSql(const JobSpec& spec, const JobGraph& graph) {
  return Exporter(spec, graph).Run();
}

}  // namespace tidemark
