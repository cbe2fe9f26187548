#pragma once

#include <functional>
#include <memory>
#include <string>

#include "operators/keyed_process_operator.h"
#include "operators/operator_params.h"
#include "runtime/core/row.h"
#include "runtime/graph/operator_registry.h"

namespace tidemark {

/// What a user operator type's compile step returns: the output schema and a factory making
/// one function per subtask (called on the job's setup thread).
template <typename Function>
struct UserFunctionPlan {
  Schema output_schema;
  std::function<std::unique_ptr<Function>()> factory;
  /// Side outputs the function may emit with `ProcessContext::CollectSide` (tag -> schema).
  std::map<std::string, Schema> side_output_schemas;
};

/// Compile step of a one-input user type: sees the input schema and the operator's `params:`
/// (validate them with `params.CheckKeys`; failures throw CompileError at file:line:column).
using KeyedProcessCompiler = std::function<UserFunctionPlan<KeyedProcessFunction>(
    const Schema& input, const OperatorParams& params)>;
/// Compile step of a two-input user type (`connect`): inputs[0] and inputs[1].
using KeyedCoProcessCompiler = std::function<UserFunctionPlan<KeyedCoProcessFunction>(
    const Schema& input1, const Schema& input2, const OperatorParams& params)>;

/// Registers `type` as a keyed process operator type usable from YAML (`type: <type>`,
/// `key-by:`, `params:`) and from the C++ builder. Keyed by `key-by` (fields of the input);
/// without key-by all records share one key and the operator runs with parallelism 1.
void RegisterKeyedProcessType(OperatorRegistry& registry, const std::string& type,
                              KeyedProcessCompiler compile);

/// Registers `type` as a two-input keyed process operator (Flink's connect + KeyedCoProcess):
/// exactly two inputs; key fields from `key-by` (same names on both sides) or `params:
/// {left-key, right-key}` (a compile step that calls `CheckKeys` must allow those two). An input
/// with `partition: broadcast` is a broadcast input: it is not keyed, every subtask gets all its
/// records, and under the default `broadcast-watermarks: exclude` its watermarks do not hold the
/// operator's event time back
/// (`include`: Flink's minimum over both inputs). Records of a broadcast input are processed
/// with an empty key.
void RegisterKeyedCoProcessType(OperatorRegistry& registry, const std::string& type,
                                KeyedCoProcessCompiler compile);

}  // namespace tidemark
