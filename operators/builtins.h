#pragma once

#include <cstdint>
#include <memory>

#include "operators/keyed_process_operator.h"
#include "runtime/graph/operator_registry.h"

namespace tidemark {

/// Registers the operator types of operators/: `sink`, `window`,
/// `assign-timestamps-and-watermarks`, `map`, `filter`, `project`, the process built-ins and the
/// joins (below). Call once at start-up.
void RegisterOperatorBuiltins(OperatorRegistry& registry);

/// `dedup`, `inactivity`, `timer-probe` (keyed process functions with timers) and `union`.
void RegisterProcessBuiltins(OperatorRegistry& registry);
/// `process`: a keyed process function in YAML (state, per-record timers, emit; optionally a
/// broadcast input with broadcast state). operators/expression_process.cc.
void RegisterExpressionProcess(OperatorRegistry& registry);
/// The function of `type: dedup` (keeps a key's first record, drops the key's records within
/// `within_ms` of it; event or processing time), for tests of the operator it runs in.
std::unique_ptr<KeyedProcessFunction> MakeDedupFunction(int64_t within_ms, bool event_time);

/// `interval-join` and `window-join` (two inputs: left = inputs[0], right = inputs[1]).
void RegisterJoinBuiltins(OperatorRegistry& registry);

}  // namespace tidemark
