#pragma once

#include "runtime/graph/operator_registry.h"

namespace tidemark {

/// Registers the operator types of operators/: `sink`, `window`,
/// `assign-timestamps-and-watermarks`, `map`, `filter`, `project`, the process built-ins and the
/// joins (below). Call once at start-up.
void RegisterOperatorBuiltins(OperatorRegistry& registry);

/// `dedup`, `inactivity`, `timer-probe` (keyed process functions with timers) and `union`.
void RegisterProcessBuiltins(OperatorRegistry& registry);

/// `interval-join` and `window-join` (two inputs: left = inputs[0], right = inputs[1]).
void RegisterJoinBuiltins(OperatorRegistry& registry);

}  // namespace tidemark
