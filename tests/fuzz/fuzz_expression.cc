// Fuzz target: the expression language (operators/expression.h), compiled against a schema of
// every field type and, when it compiles, evaluated on a row with a NULL. Any input must give an
// Expression or ExpressionError, with no crash, overflow or undefined behaviour.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "operators/expression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tidemark;
  static const Schema schema({{"amount", FieldType::kInt64},
                              {"price", FieldType::kDouble},
                              {"status", FieldType::kString},
                              {"ts", FieldType::kTimestamp},
                              {"vip", FieldType::kBool},
                              {"gone", FieldType::kInt64}});
  static const Row row{int64_t{INT64_MIN}, -0.0, std::string("paid"), int64_t{-1}, true, Value{}};
  try {
    const Expression e =
        Expression::Compile(std::string_view(reinterpret_cast<const char*>(data), size), schema);
    (void)e.Evaluate(row);
  } catch (const ExpressionError&) {
  }
  return 0;
}
