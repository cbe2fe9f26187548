// Handlers for the source areas: source_event_time, alignment. Owned by the source engineer;
// nothing is registered yet, so these cases are reported as SKIPPED. See scenario_runner.h for the
// handler API and case_generators.h for the generator / assigner / testing-output vocabulary.

#include "tests/scenarios/scenario_runner.h"

namespace tidemark::testing {

void RegisterSourceAreas(ScenarioRegistry& /*registry*/) {}

}  // namespace tidemark::testing
