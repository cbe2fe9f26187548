#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "config/job_spec.h"
#include "operators/expression.h"
#include "runtime/core/row.h"
#include "runtime/graph/operator_registry.h"

namespace tidemark {

/// Reads the `params:` (or `<type>:`) block of an operator type that config/ does not know, for
/// that type's compiler. Every failure throws `CompileError` at the exact file:line:column of
/// the offending YAML node, with the path `<type>.<key>`. A missing block reads as empty.
/// Borrows `spec` for its lifetime. Compile time only (the submitting thread).
class OperatorParams {
 public:
  explicit OperatorParams(const OperatorSpec& spec);

  /// Throws for a key not in `allowed` (unknown keys are errors, as everywhere in the YAML).
  void CheckKeys(std::initializer_list<std::string_view> allowed) const;
  const ParamNode* Get(const std::string& key) const;
  bool Has(const std::string& key) const { return Get(key) != nullptr; }

  /// A duration like "5s" (negative allowed when `allow_negative`); `fallback` when absent,
  /// an error when absent and `fallback` is nullopt.
  int64_t DurationMs(const std::string& key, std::optional<int64_t> fallback,
                     bool allow_negative = false) const;
  std::string String(const std::string& key, std::optional<std::string> fallback) const;
  bool Bool(const std::string& key, bool fallback) const;
  /// One of `allowed`.
  std::string Enum(const std::string& key, std::initializer_list<std::string_view> allowed,
                   std::optional<std::string> fallback) const;
  /// A field name or a list of field names, each of which must exist in `schema`; slots returned.
  std::vector<int> FieldList(const std::string& key, const Schema& schema) const;
  /// Compiles an expression value (a scalar) against `schema`.
  Expression CompileExpression(const ParamNode& node, const std::string& path,
                               const Schema& schema) const;

  /// The columns of a `project:`-style node: a list whose items are field names or one-entry
  /// mappings `name: expression`, or a mapping `name: expression`; each compiled against
  /// `schema` into `*columns` (in order) with its name in `*names`. A name listed twice, an
  /// empty list or another shape is an error at its node; `path` prefixes the key in messages.
  void CompileColumns(const ParamNode& root, const std::string& path, const Schema& schema,
                      std::vector<std::string>* names, std::vector<Expression>* columns) const;

  [[noreturn]] void Fail(const SourceLocation& at, const std::string& key,
                         const std::string& message) const;
  const std::string& prefix() const { return prefix_; }

 private:
  const OperatorSpec& spec_;
  std::string prefix_;
};

/// Compiles `expression` against `schema`; on error throws `CompileError` at the character of
/// `expression.location` the error points at, with `path`.
Expression CompileExpressionSpec(const ExpressionSpec& expression, const std::string& path,
                                 const Schema& schema);

/// "a, b, c": the schema's field names, for error messages.
std::string FieldNames(const Schema& schema);

/// Resolves `spec.key_by` against `schema` (slots in key-by order); a missing field throws
/// `CompileError` at the key's position.
std::vector<int> ResolveKeyBy(const OperatorSpec& spec, const Schema& schema);

}  // namespace tidemark
