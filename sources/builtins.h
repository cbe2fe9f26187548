#pragma once

#include <memory>

#include "config/job_spec.h"
#include "runtime/graph/operator_registry.h"
#include "sources/source_reader.h"

namespace tidemark {

/// The `Source` of a `type: source` operator of `job` (paths resolved against the job file), as
/// the job compiler builds it; `tidemark analyze` reads sources through it too. Throws
/// `CompileError` naming the bad setting (unknown type, a file that does not exist, ...).
std::shared_ptr<const Source> MakeSource(const OperatorSpec& spec, const JobSpec& job);

/// Registers operator type `source` (with source types: sequence). Call once at start-up.
void RegisterSourceBuiltins(OperatorRegistry& registry);

}  // namespace tidemark
