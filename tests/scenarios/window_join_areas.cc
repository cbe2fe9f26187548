// Handler for the interval_join area (IntervalJoinOperator). See scenario_runner.h.

#include "tests/scenarios/scenario_runner.h"

namespace tidemark::testing {

void RegisterIntervalJoinArea(ScenarioRegistry& /*registry*/) {}

}  // namespace tidemark::testing
