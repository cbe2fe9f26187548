// Bad jobs are rejected before they run, each with one clear `file:line:column: error:` line
// pointing at the offending YAML (issue 4's bad-input list). Loader errors are ConfigError,
// semantic ones found by the job compiler are JobCompileError; both are checked here through
// the same path `tidemark run` takes (load, then LocalJob::Create).

#include <string>

#include <gtest/gtest.h>

#include "config/diagnostic.h"
#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

// A source of {user string, ts timestamp, amount int64} then `body` (operators after the source).
std::string Job(const std::string& body) {
  return "name: bad\n"             // line 1
         "operators:\n"            // 2
         "  - id: source\n"        // 3
         "    type: source\n"      // 4
         "    source:\n"           // 5
         "      type: sequence\n"  // 6
         "      splits:\n"         // 7
         "        - {id: a, start: 0s, step: 1s, count: 3, fields: {user: x, amount: 5}}\n"  // 8
         "    watermarks: {max-out-of-orderness: 0ms, timestamp-field: ts}\n" +              // 9
         body;  // from line 10
}

/// The first error line of loading and compiling `yaml`, or "" when it compiles.
std::string FirstError(const std::string& yaml) {
  try {
    auto job = LocalJob::Create(LoadJobSpecString(yaml, "bad.yaml"));
  } catch (const ConfigError& e) {
    return e.diagnostics().front().ToString();
  } catch (const std::exception& e) {
    std::string what = e.what();
    return what.substr(0, what.find('\n'));
  }
  return "";
}

const char* const kSink =
    "  - id: out\n"
    "    type: sink\n"
    "    input: w\n"
    "    sink: {type: collect}\n";

// `type: process` (operators/expression_process.cc): each mistake at its own node.
TEST(JobCompileErrorsTest, ProcessBlockMistakes) {
  auto process = [](const std::string& block) {
    return FirstError(Job("  - id: w\n"                  // 10
                          "    type: process\n"          // 11
                          "    input: source\n"          // 12
                          "    key-by: [user]\n"         // 13
                          "    process:\n"               // 14
                          "      state: {total: 0}\n" +  // 15
                          block) +                       // from 16
                      kSink);
  };
  EXPECT_EQ(process("      on-record:\n"
                    "        set: {total: \"total + amount\"}\n"
                    "        emit: [user, total]\n"),
            "");
  EXPECT_EQ(process("      on-record:\n"
                    "        sett: {total: \"total + amount\"}\n"),
            "bad.yaml:17:9: error: operators[1].process.on-record.sett: unknown key 'sett' "
            "(allowed: set, "
            "event-timer, processing-timer, emit-if, emit, clear)");
  EXPECT_EQ(process("      on-record:\n"
                    "        set: {count: \"1\"}\n"
                    "        emit: [user]\n"),
            "bad.yaml:17:15: error: operators[1].process.on-record.set.count: no state named "
            "'count'; declare "
            "it under `state:` with its initial value");
  EXPECT_EQ(process("      on-record:\n"
                    "        set: {total: \"user\"}\n"
                    "        emit: [user]\n"),
            "bad.yaml:17:22: error: operators[1].process.on-record.set.total: 'total' holds int64 "
            "(from its "
            "initial value), but \"user\" is string");
  EXPECT_EQ(
      process("      on-record:\n"
              "        event-timer: \"user\"\n"
              "        emit: [user]\n"),
      "bad.yaml:17:22: error: operators[1].process.on-record.event-timer: a timer's time must be a "
      "timestamp or int64 (ms), but \"user\" is string");
  EXPECT_EQ(
      process("      on-record:\n"
              "        event-timer: \"ts + 1000\"\n"
              "        emit: [user, total]\n"
              "      on-timer:\n"
              "        emit: [user, {total: \"user\"}]\n"),
      "bad.yaml:20:15: error: operators[1].process.on-timer.emit: on-record and on-timer emit into "
      "one "
      "stream, so they need the same columns: on-record emits (user string, total int64), on-timer "
      "(user string, total string)");
  EXPECT_EQ(process("      on-record:\n"
                    "        set: {total: \"total + amount\"}\n"),
            "bad.yaml:10:5: error: operators[1].process: a process operator emits nothing: give "
            "on-record or on-timer "
            "an `emit:` list");
  EXPECT_EQ(process("      on-record:\n"
                    "        emit: [user, {late: \"ts < watermark\"}, {at: now}, {t: timer}]\n"),
            "bad.yaml:17:63: error: operators[1].process.on-record.emit.t: in expression "
            "\"timer\": unknown "
            "field 'timer' (fields: ts, user, amount, total, watermark, now)");
  EXPECT_EQ(process("      broadcast-state: {limit: 0}\n"
                    "      on-record:\n"
                    "        emit: [user]\n"),
            "bad.yaml:16:24: error: operators[1].process.broadcast-state: broadcast state needs a "
            "broadcast "
            "input (an input with `partition: broadcast`)");
  EXPECT_EQ(process("      on-record: {emit: [user], clear: \"total\"}\n"),
            "bad.yaml:16:40: error: operators[1].process.on-record.clear: clear must be true, "
            "false or a bool "
            "expression, but \"total\" is int64");
}

TEST(JobCompileErrorsTest, WindowSizeZero) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: window\n"
                           "    input: source\n"
                           "    window: {assigner: tumbling, size: 0s}\n") +
                       kSink),
            "bad.yaml:13:40: error: operators[1].window.size: must be greater than 0, got \"0s\"");
}

TEST(JobCompileErrorsTest, WindowSizeNegative) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: window\n"
                           "    input: source\n"
                           "    window: {assigner: tumbling, size: -5s}\n") +
                       kSink),
            "bad.yaml:13:40: error: operators[1].window.size: must not be negative, got \"-5s\"");
}

TEST(JobCompileErrorsTest, SlideLargerThanSize) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: window\n"
                           "    input: source\n"
                           "    window: {assigner: sliding, size: 5s, slide: 10s}\n") +
                       kSink),
            "bad.yaml:13:50: error: operators[1].window.slide: the slide (10s) must not be larger "
            "than the window size (5s)");
}

TEST(JobCompileErrorsTest, UnknownAggregate) {
  const std::string error =
      FirstError(Job("  - id: w\n"
                     "    type: window\n"
                     "    input: source\n"
                     "    window:\n"
                     "      assigner: tumbling\n"
                     "      size: 1s\n"
                     "      aggregate: [count, {fn: median, field: amount}]\n") +
                 kSink);
  EXPECT_EQ(error.rfind("bad.yaml:16:31: error: operators[1].window.aggregate[1].fn: unknown value "
                        "\"median\"",
                        0),
            0u)
      << error;
}

TEST(JobCompileErrorsTest, ExpressionTypeErrorPointsIntoTheExpression) {
  // `amount * user`: int64 * string; the operator "*" is at column 21 of line 13.
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: filter\n"
                           "    input: source\n"
                           "    filter: \"amount * user > 3\"\n") +
                       kSink),
            "bad.yaml:13:21: error: operators[1].filter: in expression \"amount * user > 3\": "
            "operator '*' cannot be applied to int64 and string");
}

TEST(JobCompileErrorsTest, FilterThatIsNotACondition) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: filter\n"
                           "    input: source\n"
                           "    filter: amount * 2\n") +
                       kSink),
            "bad.yaml:13:13: error: operators[1].filter: a filter condition must be bool, but "
            "\"amount * 2\" is int64");
}

TEST(JobCompileErrorsTest, UnknownFieldInMapExpression) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: map\n"
                           "    input: source\n"
                           "    map: {set: {cents: \"amont * 100\"}}\n") +
                       kSink),
            "bad.yaml:13:25: error: operators[1].map.set.cents: in expression \"amont * 100\": "
            "unknown field 'amont' (fields: ts, user, amount)");
}

TEST(JobCompileErrorsTest, KeyFieldThatDoesNotExist) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: window\n"
                           "    input: source\n"
                           "    key-by: [user, region]\n"
                           "    window: {assigner: tumbling, size: 1s}\n") +
                       kSink),
            "bad.yaml:13:20: error: operators[1].key-by[1]: the input has no field 'region' "
            "(fields: ts, user, amount)");
}

// Issue 42: `type: interval_join` beside its `interval-join:` block said "unknown key
// \"interval-join\" (did you mean \"interval_join\"?)": renaming the right key to the typo.
TEST(JobCompileErrorsTest, AJoinTypeTypoSuggestsTheBuiltInJoinType) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"                                   // 10
                           "    type: interval_join\n"                     // 11
                           "    inputs: [source, source]\n"                // 12
                           "    key-by: [user]\n"                          // 13
                           "    interval-join: {lower: 0ms, upper: 1s}\n"  // 14
                           ) +
                       kSink),
            "bad.yaml:11:11: error: operators[1].type: unknown operator type \"interval_join\" "
            "(did you mean \"interval-join\"?); built-in types: source, "
            "assign-timestamps-and-watermarks, window, map, filter, sink, dedup, inactivity, "
            "interval-join, lookup-join, process, project, timer-probe, union, window-join, "
            "window-top-n");
  // Without its block the compiler decides (a type registered in C++ may have that name), and
  // it suggests the built-in type too.
  EXPECT_EQ(
      FirstError(Job("  - id: w\n"
                     "    type: window_join\n"
                     "    inputs: [source, source]\n"
                     "    params: {size: 1s}\n") +
                 kSink),
      "bad.yaml:11:11: error: operators[1].type: unknown operator type 'window_join' (did "
      "you mean \"window-join\"?) (known: assign-timestamps-and-watermarks, dedup, filter, "
      "inactivity, interval-join, lookup-join, map, process, project, sink, source, timer-probe, "
      "union, window, window-join, window-top-n)");
}

// `type: lookup-join` (issue 43): the table's key column is checked against the table's schema
// when the job is compiled (the file is not read then), and named with the key's position.
TEST(JobCompileErrorsTest, LookupJoinKeyMistakes) {
  auto lookup = [](const std::string& keys) {
    return FirstError(Job("  - id: w\n"                                    // 10
                          "    type: lookup-join\n"                        // 11
                          "    input: source\n"                            // 12
                          "    lookup-join:\n"                             // 13
                          "      path: jobs/data/airports.csv\n"           // 14
                          "      format: csv\n"                            // 15
                          "      schema: {uid: string, name: string}\n" +  // 16
                          keys) +                                          // 17...
                      kSink);
  };
  EXPECT_EQ(lookup("      left-key: user\n"
                   "      right-key: [user]\n"),
            "bad.yaml:18:19: error: operators[1].lookup-join.right-key: the lookup table "
            "'jobs/data/airports.csv' has no key column 'user' (its schema declares: uid, name)");
  EXPECT_EQ(lookup("      left-key: uid\n"
                   "      right-key: uid\n"),
            "bad.yaml:17:17: error: operators[1].lookup-join.left-key: the input has no field "
            "'uid' (fields: ts, user, amount)");
  EXPECT_EQ(lookup("      left-key: user\n"
                   "      right-key: [uid, name]\n"),
            "bad.yaml:18:18: error: operators[1].lookup-join.right-key: left-key has 1 fields but "
            "right-key has 2");
  EXPECT_EQ(lookup("      left-key: amount\n"
                   "      right-key: uid\n"),
            "bad.yaml:18:18: error: operators[1].lookup-join.right-key: key field 0 is int64 in "
            "the record (amount) but string in the table (uid)");
  EXPECT_EQ(lookup("      join-type: outer\n"),
            "bad.yaml:17:18: error: operators[1].lookup-join.join-type: unknown value \"outer\"; "
            "allowed: inner | left");
  EXPECT_EQ(lookup("      join-type: left\n"),
            "bad.yaml:14:7: error: operators[1].lookup-join.left-key: a lookup join needs its "
            "key: key-by, or left-key and right-key");
  EXPECT_EQ(lookup("      left-key: user\n"
                   "      right-key: uid\n"
                   "      lookup.full-cache.periodic-reload.interval: 0s\n"),
            "bad.yaml:19:51: error: "
            "operators[1].lookup-join.lookup.full-cache.periodic-reload.interval: must be greater "
            "than 0");
  EXPECT_EQ(lookup("      left-key: user\n"
                   "      right-key: uid\n"),
            "");
  // The table's file is checked as a file source's path is, when the job is compiled.
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: lookup-join\n"
                           "    input: source\n"
                           "    lookup-join: {path: jobs/data/no_such.csv, format: csv, schema: "
                           "{uid: string}, left-key: user, right-key: uid}\n") +
                       kSink),
            "bad.yaml:13:25: error: operators[1].lookup-join.path: the lookup table "
            "'jobs/data/no_such.csv' does not exist");
}

// Issue 42: `timestamp-unit: s` on a timestamp field gave two nested locations and the internal
// name `watermarks.timestamp_field`.
TEST(JobCompileErrorsTest, ATimestampUnitThatDoesNotFitItsFieldIsOneErrorAtTheUnit) {
  const std::string job =
      "name: bad\n"                                               // 1
      "operators:\n"                                              // 2
      "  - id: source\n"                                          // 3
      "    type: source\n"                                        // 4
      "    source:\n"                                             // 5
      "      type: sequence\n"                                    // 6
      "      splits: [{id: a, start: 0s, step: 1s, count: 3}]\n"  // 7
      "    watermarks:\n"                                         // 8
      "      max-out-of-orderness: 0ms\n"                         // 9
      "      timestamp-field: ts\n"                               // 10
      "      timestamp-unit: s\n"                                 // 11
      "  - id: out\n"
      "    type: sink\n"
      "    input: source\n"
      "    sink: {type: collect}\n";
  EXPECT_EQ(FirstError(job),
            "bad.yaml:11:23: error: operators[0].watermarks.timestamp-unit: field 'ts' of type "
            "timestamp cannot hold a timestamp in unit 's' (a timestamp field holds ms since the "
            "epoch: omit timestamp-unit, or declare the field int64)");
  std::string missing = job;
  missing.replace(missing.find("timestamp-field: ts"), 19, "timestamp-field: tz");
  EXPECT_EQ(FirstError(missing),
            "bad.yaml:10:24: error: operators[0].watermarks.timestamp-field: no field 'tz' in the "
            "input schema");
}

// Issue 42: a bad aggregate field was reported at the operator, not at the aggregate.
TEST(JobCompileErrorsTest, ABadAggregateFieldIsReportedAtTheField) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"                            // 10
                           "    type: window\n"                     // 11
                           "    input: source\n"                    // 12
                           "    window:\n"                          // 13
                           "      assigner: tumbling\n"             // 14
                           "      size: 1s\n"                       // 15
                           "      aggregate:\n"                     // 16
                           "        - count\n"                      // 17
                           "        - {fn: sum, field: amout}\n"    // 18
                           "        - {fn: avg, field: user}\n") +  // 19
                       kSink),
            "bad.yaml:18:28: error: operators[1].window.aggregate[1].field: aggregate 'sum': the "
            "input has no field 'amout'");
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: window\n"
                           "    input: source\n"
                           "    window:\n"
                           "      assigner: tumbling\n"
                           "      size: 1s\n"
                           "      aggregate:\n"
                           "        - {fn: avg, field: user}\n") +
                       kSink),
            "bad.yaml:17:28: error: operators[1].window.aggregate[0].field: aggregate 'avg': field "
            "'user' is string, not numeric");
}

TEST(JobCompileErrorsTest, UnknownOperatorTypeLoadsButDoesNotCompile) {
  const std::string error = FirstError(Job("  - id: w\n"
                                           "    type: my-enricher\n"
                                           "    input: source\n"
                                           "    params: {table: users}\n") +
                                       kSink);
  EXPECT_EQ(error.rfind("bad.yaml:11:11: error: operators[1].type: unknown operator type "
                        "'my-enricher' (known: ",
                        0),
            0u)
      << error;
}

TEST(JobCompileErrorsTest, UnknownParameterOfABuiltInType) {
  EXPECT_EQ(
      FirstError(Job("  - id: w\n"
                     "    type: dedup\n"
                     "    input: source\n"
                     "    key-by: [user]\n"
                     "    dedup: {within: 1h, withn: 2h}\n") +
                 kSink),
      "bad.yaml:14:25: error: operators[1].dedup.withn: unknown key \"withn\" for an operator "
      "of type dedup; allowed keys: within, time");
}

TEST(JobCompileErrorsTest, WindowJoinSlideLargerThanSize) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: window-join\n"
                           "    inputs: [source, source]\n"
                           "    key-by: [user]\n"
                           "    window-join: {assigner: sliding, size: 1s, slide: 2s}\n") +
                       kSink),
            "bad.yaml:14:55: error: operators[1].window-join.slide: the slide (2000ms) must not be "
            "larger than the size (1000ms)");
}

TEST(JobCompileErrorsTest, ChannelsThatWouldNotFitInMemory) {
  // 1024 x 1024 channels of 1024 + 64 slots: 8.6 GB allocated when the job is deployed, which
  // would take the daemon down with it; the compiler refuses the job instead.
  EXPECT_EQ(FirstError(Job("  - id: a\n"
                           "    type: filter\n"
                           "    parallelism: 1024\n"
                           "    input: source\n"
                           "    filter: amount > 0\n"
                           "  - id: w\n"
                           "    type: filter\n"
                           "    parallelism: 1024\n"
                           "    inputs: [{from: a, partition: rebalance}]\n"
                           "    filter: amount > 0\n") +
                       kSink),
            "bad.yaml:18:14: error: operators[2].inputs: the job's channels would need more than "
            "67108864 element slots (this edge: 1048576 channels of 64 from 'a', parallelism "
            "1024, to 'w', parallelism 1024); lower the parallelism or pipeline.channel-capacity");
}

TEST(JobCompileErrorsTest, GoodJobCompiles) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: window\n"
                           "    input: source\n"
                           "    key-by: [user]\n"
                           "    window: {assigner: sliding, size: 10s, slide: 5s}\n") +
                       kSink),
            "");
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

TEST(JobCompileErrorsTest, KeyByExpressionTypeErrorPointsAtTheKeyBy) {
  const std::string error = FirstError(Job("  - id: w\n"
                                           "    type: window\n"
                                           "    input: source\n"
                                           "    key-by: [\"amount * user\"]\n"
                                           "    window: {assigner: tumbling, size: 1s}\n") +
                                       kSink);
  EXPECT_EQ(error.rfind("bad.yaml:13:", 0), 0u) << error;
  EXPECT_NE(error.find("operator '*' cannot be applied to int64 and string"), std::string::npos)
      << error;
}

TEST(JobCompileErrorsTest, KeyByExpressionCompilesToAComputedKeyColumn) {
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: window\n"
                           "    input: source\n"
                           "    key-by: [\"amount % 2\", user]\n"
                           "    window: {assigner: tumbling, size: 1s}\n") +
                       kSink),
            "");
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

// interval-join's late outputs are read like a window's late output; a tag it does not declare is
// still a located error (now from the job compiler, which knows the operator's side outputs).
std::string IntervalJoinReading(const std::string& tag) {
  return Job(
      "  - id: j\n"
      "    type: interval-join\n"
      "    inputs: [source, source]\n"
      "    key-by: [user]\n"
      "    interval-join: {lower: 0ms, upper: 1s, left-late-output: late-left}\n"
      "  - id: late\n"
      "    type: sink\n"
      "    inputs: [{from: j, side-output: " +
      tag +
      "}]\n"
      "    sink: {type: collect}\n");
}

TEST(JobCompileErrorsTest, IntervalJoinLateOutputIsReadable) {
  EXPECT_EQ(FirstError(IntervalJoinReading("late-left")), "");
}

TEST(JobCompileErrorsTest, IntervalJoinUndeclaredSideOutput) {
  EXPECT_EQ(FirstError(IntervalJoinReading("late-right")),
            "bad.yaml:17:14: error: operators[2].inputs: operator 'j' has no side output "
            "'late-right'");
}

TEST(JobCompileErrorsTest, FinishedInputTakesExcludeOrMax) {
  const std::string yaml = "name: bad\npipeline: {finished-input: min}\n" + Job("").substr(10);
  EXPECT_EQ(FirstError(yaml),
            "bad.yaml:2:28: error: pipeline.finished-input: unknown value \"min\" (did you mean "
            "\"max\"?); allowed: exclude | max");
}

// A window with `trigger: <spec>` on line 13; the value starts at column 53.
std::string TriggerJob(const std::string& spec) {
  return Job("  - id: w\n"
             "    type: window\n"
             "    input: source\n"
             "    window: {assigner: tumbling, size: 1s, trigger: " +
             spec + "}\n") +
         kSink;
}

TEST(JobCompileErrorsTest, TriggerErrorsNameTheTriggerAndItsPosition) {
  EXPECT_EQ(FirstError(TriggerJob("count(-1)")),
            "bad.yaml:13:53: error: operators[1].window.trigger: trigger 'count(-1)': count(N) "
            "needs at least 1 element, got -1");
  EXPECT_EQ(FirstError(TriggerJob("continuous-event-time(0ms)")),
            "bad.yaml:13:53: error: operators[1].window.trigger: trigger "
            "'continuous-event-time(0ms)': the interval must be positive, got 0ms");
  EXPECT_EQ(FirstError(TriggerJob("continuous-event-time(1000)")),
            "bad.yaml:13:53: error: operators[1].window.trigger: trigger "
            "'continuous-event-time(1000)': the interval needs a unit, e.g. "
            "continuous-event-time(1000ms)");
  EXPECT_EQ(FirstError(TriggerJob("continuous-event-time(1s)")), "");
}

TEST(JobCompileErrorsTest, HostileNestingIsRefusedQuicklyWithItsPosition) {
  // 20,000 nested purging(...) (160 KB): refused at the ninth level, not compiled for 30 s.
  std::string purging;
  for (int i = 0; i < 20000; ++i) {
    purging += "purging(";
  }
  purging += "event-time" + std::string(20000, ')');
  EXPECT_EQ(FirstError(TriggerJob(purging)),
            "bad.yaml:13:53: error: operators[1].window.trigger: trigger "
            "'purging(purging(purging(purging(purging(purging(purging(purg...': purging(...) "
            "nests deeper than 8 levels");
  // A filter of 10,000 nested parentheses used to overflow the stack; the 257th '(' is named.
  EXPECT_EQ(
      FirstError(Job("  - id: w\n"
                     "    type: filter\n"
                     "    input: source\n"
                     "    filter: \"" +
                     std::string(10000, '(') + "amount > 1" + std::string(10000, ')') + "\"\n") +
                 kSink),
      "bad.yaml:13:270: error: operators[1].filter: in expression "
      "\"((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((...\": parentheses nest "
      "deeper than 256 levels");
  // 100,000 `!` compile (a loop, not recursion).
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: filter\n"
                           "    input: source\n"
                           "    filter: \"" +
                           std::string(100000, '!') + "(amount > 1)\"\n") +
                       kSink),
            "");
}

// A job with checkpointing and restart-strategy blocks compiles and runs (they were refused
// until running jobs checkpointed); the runs themselves are tested in checkpoint_job_test.cc.
TEST(JobCompileErrorsTest, CheckpointingAndRestartBlocksCompile) {
  const std::string body =
      "  - id: w\n"
      "    type: window\n"
      "    input: source\n"
      "    window: {assigner: tumbling, size: 1s}\n";
  EXPECT_EQ(FirstError(Job(body) + kSink + "checkpointing:\n  interval: 100ms\n"), "");
  EXPECT_EQ(FirstError(Job(body) + kSink + "restart-strategy:\n  type: fixed-delay\n"), "");
  EXPECT_EQ(FirstError(Job(body) + kSink), "");
}

// `type: window-top-n` (operators/window/window_top_n_operator.cc): each mistake at its node.
TEST(JobCompileErrorsTest, WindowTopNMistakes) {
  auto top_n = [](const std::string& block) {
    return FirstError(Job("  - id: per-user\n"    // 10
                          "    type: window\n"    // 11
                          "    input: source\n"   // 12
                          "    key-by: [user]\n"  // 13
                          "    window: {assigner: tumbling, size: 1s, aggregate: "
                          "[count, {fn: sum, field: amount, as: total}]}\n"  // 14
                          "  - id: w\n"                                      // 15
                          "    type: window-top-n\n"                         // 16
                          "    input: per-user\n" +                          // 17
                          block) +                                           // from 18
                      kSink);
  };
  EXPECT_EQ(top_n("    window-top-n: {n: 0, order-by: total DESC}\n"),
            "bad.yaml:18:23: error: operators[2].window-top-n.n: expected a whole number from 1 "
            "to 100000, got \"0\"");
  EXPECT_EQ(top_n("    window-top-n: {n: 3, order-by: totl DESC}\n"),
            "bad.yaml:18:36: error: operators[2].window-top-n.order-by: unknown field 'totl' "
            "(input fields: user, window_start, window_end, count, total)");
  EXPECT_EQ(top_n("    window-top-n: {n: 3, order-by: total DOWN}\n"),
            "bad.yaml:18:36: error: operators[2].window-top-n.order-by: expected ASC or DESC "
            "after 'total', got \"DOWN\"");
  EXPECT_EQ(top_n("    window-top-n: {n: 3}\n"),
            "bad.yaml:18:19: error: operators[2].window-top-n.order-by: missing required key (the "
            "ranking, e.g. order-by: total DESC)");
  EXPECT_EQ(top_n("    window-top-n: {n: 3, order-by: total, partition-by: [region]}\n"),
            "bad.yaml:18:58: error: operators[2].window-top-n.partition-by: the input has no field "
            "'region' (fields: user, window_start, window_end, count, total)");
  // Not after a window aggregate: no window_start / window_end to rank within.
  EXPECT_EQ(FirstError(Job("  - id: w\n"
                           "    type: window-top-n\n"
                           "    input: source\n"
                           "    window-top-n: {n: 3, order-by: amount DESC}\n") +
                       kSink),
            "bad.yaml:10:5: error: operators[1].window-top-n.inputs: window-top-n ranks the rows "
            "of a window aggregate: its input needs a timestamp column 'window_start' (input "
            "fields: ts, user, amount)");
}

}  // namespace
}  // namespace tidemark
