#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/errors.h"
#include "runtime/core/row.h"

namespace tidemark {

/// A problem in an expression's text, found when it is compiled. `offset` is the 0-based byte
/// offset into the expression text of the token at fault, so a caller that knows where the text
/// was written (a YAML scalar) can report file:line:column.
class ExpressionError : public InvalidArgument {
 public:
  ExpressionError(size_t offset, const std::string& message)
      : InvalidArgument(message), offset_(offset) {}
  size_t offset() const { return offset_; }

 private:
  size_t offset_;
};

/// What a function call compiled once (defined in operators/expression.cc).
struct ExpressionCallData;

/// A run-time failure of an expression (Flink fails the job likewise): `CAST('x' AS INT)`.
/// The message names the expression's text.
class ExpressionEvaluationError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// Deepest nesting of parentheses an expression may have. Parsing recurses once per level (and
/// never for chains of `!` or unary `-`), so this bounds the stack a hostile expression can use.
inline constexpr int kMaxExpressionDepth = 256;

/// A typed expression over the fields of one schema, compiled once at job-compile time into a
/// postfix program over field slots, so evaluating it never parses or looks up a name.
/// (No Flink class mirrored: Flink has SQL expressions; this is tidemark's small YAML language.)
///
/// Grammar, lowest precedence first:
///   `a || b`, `a && b`, `!a`, comparisons `== != < <= > >=` (also `=` and `<>`, Flink SQL's;
///   non-associative),
///   `+ -`, `* / %`, unary `-`, then literals (`42`, `1.5`, `"paid"` or `'paid'` with `''` for
///   a quote, `true`, `false`, `null`), field names (letters, digits, `_`; backquotes for other
///   names: `` `my-field` ``), function calls and parentheses. The word forms `and`, `or`, `not`
///   are case-insensitive. After an operand at comparison level: `IS [NOT] NULL`,
///   `[NOT] IN (...)`, `[NOT] BETWEEN a AND b`, `[NOT] LIKE 'p' [ESCAPE 'c']`.
/// Types: int64 and timestamp are integers (`ts / 1000` is integer division, as in Java);
/// an integer and a double give a double; `+` also concatenates strings; comparisons need two
/// numbers, two strings or two bools; `&& || !` need bools. A NULL field makes arithmetic and
/// comparisons NULL; `&& || !` follow SQL's three-valued logic (`false && NULL` is false,
/// `true || NULL` is true, `!NULL` and `true && NULL` are NULL); a filter keeps a record only when
/// its condition is true (NULL drops it). Integer division or modulo by zero gives NULL.
/// The result type of `timestamp ± integer` is timestamp; other integer arithmetic is int64.
///
/// Flink SQL scalar functions and forms, with Flink's names and semantics (the list, with each
/// function's types, NULL handling and differences from Flink, is in docs/job-reference.md,
/// "Functions"): `CASE`, `IF`, `COALESCE`, `NULLIF`, `CAST`/`TRY_CAST`, `IS [NOT] NULL`,
/// `[NOT] IN (...)`, `[NOT] BETWEEN a AND b`, `[NOT] LIKE`, string, numeric and time functions
/// (`DATE_FORMAT`, `TO_TIMESTAMP`, `EXTRACT(HOUR FROM ts)`, `FLOOR(ts TO HOUR)`, ...). Function
/// names and SQL keywords are case-insensitive; an unknown function name is an error with a
/// did-you-mean. `CASE`, `IF` and `COALESCE` evaluate only the branch they need, so a guarded
/// `CAST` cannot fail. `null` is the NULL literal (it takes its type from the other branches).
/// Run-time failures (a malformed string in `CAST`) throw `ExpressionEvaluationError`, which
/// fails the job as Flink's CAST does; `TRY_CAST` gives NULL instead.
///
/// Threading: immutable after `Compile`; `Evaluate` is const and may be called from any thread
/// (each call uses its own small stack and a per-thread string pool). Cost: O(program length) per
/// record over typed cells (the types are resolved at compile time; nothing dispatches on a
/// cell's type; regular expressions, LIKE and date patterns are compiled once). No allocation
/// unless the program nests deeper than 32 operands, or a string result outgrows the per-thread
/// buffer it reuses (steady state: none).
class Expression {
 public:
  /// Parses and type-checks `text` against `input` in time and stack linear in its length (stack
  /// bounded by `kMaxExpressionDepth`). Throws `ExpressionError` (with the offset of the offending
  /// token) for a syntax error, an unknown field, a type error or parentheses nested deeper than
  /// `kMaxExpressionDepth` (`parentheses nest deeper than 256 levels`, at the first '(' too many).
  static Expression Compile(std::string_view text, const Schema& input);

  Expression() = default;

  /// The result type (kBool for conditions).
  FieldType type() const { return type_; }
  /// The slot when the whole expression is one field reference, else -1.
  int field_slot() const { return field_slot_; }
  const std::string& text() const { return text_; }

  /// Evaluates over `row` (which must have the schema given to `Compile`), boxed: for paths that
  /// are not per record.
  Value Evaluate(const Row& row) const;
  /// Evaluates over `row` into cell `slot` of `out`, which must be of type `type()` (a timestamp
  /// or int64 slot for integer results); `out` may be `row` itself. Per record: no boxing, no
  /// allocation unless the program concatenates strings.
  void EvaluateInto(const Row& row, Row& out, size_t slot) const;
  /// For conditions: true iff the value is `true` (NULL counts as false). Per record: no boxing.
  bool Test(const Row& row) const;

  /// One instruction of the postfix program (public for the implementation only).
  struct Instr {
    enum class Op : uint8_t {
      kLoad,
      kConst,
      kNeg,
      kNot,
      kAdd,
      kSub,
      kMul,
      kDiv,
      kMod,
      kConcat,
      kEq,
      kNe,
      kLt,
      kLe,
      kGt,
      kGe,
      kAnd,
      kOr,
      kCall,           ///< a function: pops `argc` cells, pushes its result
      kConvert,        ///< the top cell from type `left` to `right` (int to double; else none)
      kJump,           ///< to `target` (ends a CASE branch)
      kJumpIfNotTrue,  ///< pops a condition; to `target` unless it is true
      kJumpIfNotNull,  ///< to `target` if the top cell is not NULL (keeping it), else pops it
    };
    Op op = Op::kConst;
    bool dbl = false;  ///< arithmetic / comparison on doubles (else integers, strings or bools)
    /// Operand types known at compile time: the left (or only) and right operand of an
    /// operator; the type of a kLoad's slot and of a kConst.
    FieldType left = FieldType::kBool;
    FieldType right = FieldType::kBool;
    int slot = -1;                ///< kLoad
    Value constant;               ///< kConst (monostate: NULL)
    uint16_t fn = 0;              ///< kCall: which function (operators/expression.cc)
    uint16_t argc = 0;            ///< kCall: operands popped
    uint32_t target = 0;          ///< jumps: the instruction to continue at
    std::vector<FieldType> args;  ///< kCall: the operand types
    /// kCall: what was compiled once for the call (regex, date pattern, time unit, ...).
    std::shared_ptr<const ExpressionCallData> data;
  };

 private:
  /// Runs the program over `row` and calls `f(result cell)`.
  template <typename F>
  void WithResult(const Row& row, F&& f) const;

  std::vector<Instr> program_;
  size_t max_depth_ = 0;   ///< deepest evaluation stack
  size_t string_ops_ = 0;  ///< instructions that build a string (at most this many per call)
  FieldType type_ = FieldType::kBool;
  int field_slot_ = -1;
  std::string text_;
};

}  // namespace tidemark
