#pragma once

#include "runtime/graph/operator_registry.h"

namespace tidemark {

/// Registers the operator types of operators/: `sink`, `window`,
/// `assign-timestamps-and-watermarks`. Call once at start-up.
void RegisterOperatorBuiltins(OperatorRegistry& registry);

}  // namespace tidemark
