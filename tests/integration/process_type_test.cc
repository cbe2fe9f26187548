// `type: process` (operators/expression_process.cc) in jobs, beyond its golden jobs
// (jobs/keyed_process_timers.yaml, jobs/broadcast_limits.yaml): the end-of-input rule for timers
// set in on-timer, NULL timers, and `clear` as an expression.

#include <string>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

std::string RunProcess(const std::string& process_block) {
  const std::string yaml =
      "name: t\n"
      "pipeline: {parallelism: 1, clock: virtual}\n"
      "operators:\n"
      "  - id: source\n"
      "    type: source\n"
      "    source:\n"
      "      type: sequence\n"
      "      pacing: 100ms\n"
      "      splits:\n"
      "        - {id: a, start: 0s, step: 1s, count: 3, fields: {user: alice, amount: 3}}\n"
      "    watermarks: {max-out-of-orderness: 0ms, timestamp-field: ts}\n"
      "  - id: p\n"
      "    type: process\n"
      "    input: source\n"
      "    key-by: [user]\n"
      "    process:\n" +
      process_block +
      "  - id: out\n"
      "    type: sink\n"
      "    input: p\n"
      "    sink: {type: print}\n";
  std::string out;
  auto job = LocalJob::Create(LoadJobSpecString(yaml, "t.yaml"),
                              [&out](const std::string& line) { out += line + "\n"; });
  job->execution().Start();
  EXPECT_EQ(job->execution().Wait(), JobState::kFinished) << job->execution().failure_cause();
  return out;
}

// A timer that re-arms itself from on-timer, 500 ms on. Records ts 0 and 1000 arrive (0 and 0.1 s)
// before the first periodic watermark (999, at 0.2 s), ts 2000 after it; then end of input.
// Watermark 999 fires 500 (n is 2 by then), which sets 1000. At MAX, 1000, 1500 (the second
// record's) and 2500 (the third's) fire once each and set nothing more, so the job ends instead
// of firing for ever.
TEST(ProcessTypeTest, TimersSetInOnTimerStopAtEndOfInput) {
  EXPECT_EQ(RunProcess("      state: {n: 0}\n"
                       "      on-record:\n"
                       "        set: {n: \"n + 1\"}\n"
                       "        event-timer: \"ts + 500\"\n"
                       "      on-timer:\n"
                       "        event-timer: \"timer + 500\"\n"
                       "        emit: [user, n, {at: timer}, watermark]\n"),
            "{\"user\":\"alice\",\"n\":2,\"at\":500,\"watermark\":999}\n"
            "{\"user\":\"alice\",\"n\":3,\"at\":1000,\"watermark\":9223372036854775807}\n"
            "{\"user\":\"alice\",\"n\":3,\"at\":1500,\"watermark\":9223372036854775807}\n"
            "{\"user\":\"alice\",\"n\":3,\"at\":2500,\"watermark\":9223372036854775807}\n");
}

// A NULL timer time sets no timer (integer division by zero is NULL: the second record sets
// none), and `clear` as an expression clears only when true: watermark 999 fires 100 with n = 2
// and keeps the state (100 <= 1000), so the third record counts 3; 2100 fires at MAX.
TEST(ProcessTypeTest, NullTimerSetsNoneAndClearFollowsItsCondition) {
  EXPECT_EQ(
      RunProcess("      state: {n: 0}\n"
                 "      on-record:\n"
                 "        set: {n: \"n + 1\"}\n"
                 "        event-timer: \"ts + 100 + 0 / (n - 2)\"\n"  // NULL for the 2nd record
                 "      on-timer:\n"
                 "        emit: [user, n, {at: timer}]\n"
                 "        clear: \"timer > 1000\"\n"),
      "{\"user\":\"alice\",\"n\":2,\"at\":100}\n"
      "{\"user\":\"alice\",\"n\":3,\"at\":2100}\n");
}

}  // namespace
}  // namespace tidemark
