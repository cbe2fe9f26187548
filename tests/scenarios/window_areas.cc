// Handlers for the window areas: window_assignment, event_time_trigger, window_operator,
// timer_service, interval_join. Owned by the window engineer; nothing is registered yet, so these
// cases are reported as SKIPPED. See scenario_runner.h for the handler API and helpers
// (RunSteps, OutputsChecker with harness_sorted / multiset modes, ParseInt64, ParseCaseRow).

#include "tests/scenarios/scenario_runner.h"

namespace tidemark::testing {

void RegisterWindowAreas(ScenarioRegistry& /*registry*/) {}

}  // namespace tidemark::testing
