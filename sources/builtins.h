#pragma once

#include "runtime/graph/operator_registry.h"

namespace tidemark {

/// Registers operator type `source` (with source types: sequence). Call once at start-up.
void RegisterSourceBuiltins(OperatorRegistry& registry);

}  // namespace tidemark
