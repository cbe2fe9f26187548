#pragma once

// Scenario runner for the language-neutral acceptance cases in
// ../shared/acceptance/flink/*.jsonl beside the repository (vocabulary: that folder's README.md).
//
// How it fits together:
//   main.cc reads JSON Lines files, one case per line, and calls RunCase() for each. RunCase()
//   looks the case's `area` up in a ScenarioRegistry and calls the registered AreaHandler. A case
//   whose area has no handler is SKIPPED. Handlers are registered by explicit calls, never by
//   static initializers:
//     RegisterEventTimeAreas  (event_time_areas.cc)  bounded_out_of_orderness,
//     watermarks_with_idleness,
//                                                    output_multiplexer, status_watermark_valve,
//                                                    timestamps_operator
//     RegisterWindowAreas     (window_areas.cc)      window_assignment, event_time_trigger,
//                                                    window_operator, timer_service, interval_join
//     RegisterSourceAreas     (source_areas.cc)      source_event_time, alignment
//
// Writing a handler (the usual shape):
//
//   CaseResult RunMyArea(const Json& c) {
//     MyComponent component(...c["config"]...);   // CaseFormatError on malformed config
//     RecordingOutput out;
//     OutputsChecker outputs(ParseExpectMode(c));
//     return RunSteps(c,
//         [&](const Json& step, size_t) -> StepOutcome {      // apply one step
//           const std::string op = step.at("op");
//           if (op == "watermark") { component.ProcessWatermark(...ParseInt64(step.at("ts"))...);
//           return {}; } throw CaseFormatError("unsupported op " + op);     // fails the case
//           (never a silent pass)
//         },
//         [&](Checkpoint& cp, const StepOutcome&) -> std::optional<std::string> {  // check one
//         checkpoint
//           if (cp.Has("outputs")) { if (auto d = outputs.Check(cp, out.elements())) return d; }
//           return std::nullopt;                                // nullopt = this checkpoint holds
//         });
//   }
//
// RunSteps handles `error` / `message_contains` (matching tidemark::InvalidArgument ->
// "invalid_argument", tidemark::NoTimestamp -> "no_timestamp") and, if the handler did not take it,
// `returns` (JSON equality, int64-aware). Every other checkpoint key must be taken by the handler
// (Checkpoint::Take); a key nobody took fails the case, so an unsupported assertion can never pass
// silently. Return CaseResult::Skipped(reason) for a case the runtime cannot express (e.g. an
// unsupported `requires` feature).
//
// Threading: single-threaded. All helpers throw CaseFormatError on malformed case JSON; RunCase
// turns any exception escaping a handler into a FAILED result with the message.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/core/row.h"
#include "runtime/core/stream_record.h"
#include "runtime/core/timestamp.h"
#include "runtime/core/watermark.h"
#include "runtime/task/stream_operator.h"

namespace tidemark::testing {

using Json = nlohmann::json;

/// The case JSON does not match the vocabulary (missing key, wrong type, unknown op).
class CaseFormatError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class CaseStatus { kPassed, kFailed, kSkipped };

/// Outcome of one case. `message`: the first difference (failed) or the reason (skipped).
struct CaseResult {
  CaseStatus status = CaseStatus::kPassed;
  std::string message;

  static CaseResult Passed() { return {CaseStatus::kPassed, ""}; }
  static CaseResult Failed(std::string message) {
    return {CaseStatus::kFailed, std::move(message)};
  }
  static CaseResult Skipped(std::string reason) {
    return {CaseStatus::kSkipped, std::move(reason)};
  }
};

/// Runs one case of its area: case JSON in, result out. May throw (reported as FAILED).
using AreaHandler = std::function<CaseResult(const Json& test_case)>;

/// Area name -> handler. Registration is explicit (see the Register*Areas functions).
class ScenarioRegistry {
 public:
  /// Throws std::logic_error if `area` already has a handler.
  void Register(const std::string& area, AreaHandler handler);
  /// The handler of `area`, or null.
  const AreaHandler* Find(const std::string& area) const;
  std::vector<std::string> Areas() const;

 private:
  std::map<std::string, AreaHandler> handlers_;
};

void RegisterEventTimeAreas(ScenarioRegistry& registry);
void RegisterWindowAreas(ScenarioRegistry& registry);
void RegisterSourceAreas(ScenarioRegistry& registry);

/// Dispatches by `area`; no handler -> SKIPPED; an exception from the handler -> FAILED.
CaseResult RunCase(const ScenarioRegistry& registry, const Json& test_case);

// ---------------------------------------------------------------------------------------------
// Parsing helpers

/// An int64 from case JSON: a JSON integer, "MIN" (Long.MIN_VALUE), "MAX" (Long.MAX_VALUE), or a
/// string of decimal digits. Never goes through double; a JSON float or an out-of-range value
/// throws CaseFormatError.
int64_t ParseInt64(const Json& j);
/// `null` -> nullopt, else ParseInt64.
std::optional<int64_t> ParseOptionalInt64(const Json& j);
/// A `record` step's timestamp: absent or `null` -> nullopt (the record has none).
std::optional<int64_t> RecordTimestamp(const Json& step);
/// `obj[key]` parsed with ParseInt64, or `fallback` if the key is absent.
int64_t Int64Or(const Json& obj, std::string_view key, int64_t fallback);
/// Renders an int64 the way cases write it: "MIN", "MAX" or the number.
std::string FormatInt64(int64_t v);

/// A case value as a row cell: integer -> int64, float -> double, bool, null -> NULL, "MIN"/"MAX"
/// -> int64 extremes, other strings -> string. Nested arrays/objects become their JSON text.
Value ParseCaseValue(const Json& j);
/// A record value as a Row: an array gives one cell per element (a tuple), a scalar one cell.
Row ParseCaseRow(const Json& value);
/// Inverse of ParseCaseRow for messages: one cell -> the scalar, several -> an array.
std::string RowToCaseString(const Row& row);

// ---------------------------------------------------------------------------------------------
// Output elements and capture

/// One element of an output list: `{"watermark": ts}`, `{"status": "idle"|"active"}` or
/// `{"record": {"value": v, "ts": ts}}` (no ts: the record has none). Side-output entries
/// `{value, ts}` are records too.
struct OutputElement {
  enum class Kind { kRecord, kWatermark, kStatus };
  Kind kind = Kind::kRecord;
  Timestamp watermark = kMinTimestamp;                ///< kWatermark
  WatermarkStatus status = WatermarkStatus::kActive;  ///< kStatus
  Row value;                                          ///< kRecord
  std::optional<Timestamp> timestamp;                 ///< kRecord; nullopt = no timestamp

  static OutputElement OfWatermark(Timestamp ts);
  static OutputElement OfStatus(WatermarkStatus status);
  static OutputElement OfRecord(const StreamRecord& record);

  std::string ToString() const;
  friend bool operator==(const OutputElement&, const OutputElement&) = default;
};

/// Parses one element of an `outputs` list (throws CaseFormatError).
OutputElement ParseOutputElement(const Json& j);
/// Parses an `outputs` list.
std::vector<OutputElement> ParseOutputList(const Json& j);
/// Parses a side-output list `[ {value, ts}, ... ]` into record elements.
std::vector<OutputElement> ParseSideOutputList(const Json& j);
std::string ToString(const std::vector<OutputElement>& elements);

/// A `tidemark::Output` that records everything in order: main-output records, watermarks and
/// statuses in `elements()`, side-output records per tag in `side_outputs()`. Copies records
/// (does not move from them).
class RecordingOutput : public Output {
 public:
  void Collect(StreamRecord& record) override;
  void CollectSide(std::string_view tag, StreamRecord& record) override;
  void EmitWatermark(Watermark watermark) override;
  void EmitWatermarkStatus(WatermarkStatus status) override;

  const std::vector<OutputElement>& elements() const { return elements_; }
  const std::map<std::string, std::vector<OutputElement>, std::less<>>& side_outputs() const {
    return side_outputs_;
  }
  /// All watermark values emitted since construction, in order (survives Clear(): the
  /// `watermarks` key lists every watermark from the start of the case).
  const std::vector<Timestamp>& Watermarks() const { return all_watermarks_; }
  /// Forgets the captured elements and side outputs (snapshot_restore without
  /// restore_keeps_output); the watermark history is kept.
  void Clear();

 private:
  std::vector<OutputElement> elements_;
  std::vector<Timestamp> all_watermarks_;
  std::map<std::string, std::vector<OutputElement>, std::less<>> side_outputs_;
};

// ---------------------------------------------------------------------------------------------
// Comparing output lists. Each returns nullopt when equal, else a message with the first
// difference.

/// `exact`: element by element; with `prefix`, `actual` may be longer than `expected`.
std::optional<std::string> CompareExact(const std::vector<OutputElement>& expected,
                                        const std::vector<OutputElement>& actual, bool prefix);
/// `harness_sorted` (Flink's window-operator comparison): same length, every expected watermark at
/// the same index with the same value, and the records equal as multisets.
std::optional<std::string> CompareHarnessSorted(const std::vector<OutputElement>& expected,
                                                const std::vector<OutputElement>& actual);
/// `multiset`: the records (non-records ignored on both sides) equal as multisets.
std::optional<std::string> CompareMultiset(const std::vector<OutputElement>& expected,
                                           const std::vector<OutputElement>& actual);

enum class ExpectMode { kExact, kHarnessSorted, kMultiset };
/// The case's `expect_mode` (default exact); throws CaseFormatError for an unknown mode.
ExpectMode ParseExpectMode(const Json& test_case);

class Checkpoint;

/// Checks the `outputs` and `side_outputs` keys of successive checkpoints against a
/// RecordingOutput, following the README's rules for each expect mode:
/// - exact: compares the elements emitted since the previous checkpoint that had `outputs`
///   (honours `"match": "prefix"`); those elements are then consumed;
/// - harness_sorted / multiset: compares all expected lists since the last reset, joined, with
///   everything emitted since that reset.
/// `side_outputs` are always multisets accumulated since the last reset. Call `Reset(output)` at a
/// `snapshot_restore` that drops the output (after clearing it).
class OutputsChecker {
 public:
  explicit OutputsChecker(ExpectMode mode) : mode_(mode) {}

  /// Takes `outputs`, `match` and `side_outputs` from `checkpoint` if present and checks them.
  std::optional<std::string> Check(Checkpoint& checkpoint, const RecordingOutput& output);
  /// Same for outputs captured elsewhere (no side outputs).
  std::optional<std::string> CheckElements(Checkpoint& checkpoint,
                                           const std::vector<OutputElement>& elements);
  void Reset(size_t current_size = 0);

 private:
  ExpectMode mode_;
  size_t base_ = 0;    ///< index in the captured list where the current reset period starts
  size_t cursor_ = 0;  ///< exact mode: elements before this index were consumed
  std::vector<OutputElement> expected_since_reset_;
  std::map<std::string, std::vector<OutputElement>> expected_side_;
};

// ---------------------------------------------------------------------------------------------
// Step driver

/// One checkpoint of `expect`. Handlers `Take` the keys they check; RunSteps fails the case if a
/// key was left untaken (except after_step, internal, notes).
class Checkpoint {
 public:
  explicit Checkpoint(const Json& json) : json_(json) {}

  bool Has(std::string_view key) const { return json_.contains(key); }
  /// The value of `key`, marked as checked. Throws CaseFormatError if absent.
  const Json& Take(std::string_view key);
  /// Whether the checkpoint or the case is marked `internal`.
  bool internal() const { return json_.value("internal", false); }
  const Json& json() const { return json_; }
  std::vector<std::string> Untaken() const;

 private:
  const Json& json_;
  std::vector<std::string> taken_;
};

/// What a step produced: its return value, if it has one (compared with `returns`).
struct StepOutcome {
  std::optional<Json> returns;
};

using StepFn = std::function<StepOutcome(const Json& step, size_t index)>;
/// Checks one checkpoint after its step; returns nullopt if it holds, else the difference.
using CheckFn =
    std::function<std::optional<std::string>(Checkpoint& checkpoint, const StepOutcome& outcome)>;

/// Applies `steps` in order and checks each checkpoint after its step (see the file comment).
/// An exception from a step is matched against the checkpoints' `error`; an unexpected one fails
/// the case, as does an expected error that did not happen.
CaseResult RunSteps(const Json& test_case, const StepFn& step_fn, const CheckFn& check_fn);

/// Takes and checks `watermarks` (the complete ordered list of watermark values emitted since the
/// start) and `watermark_occurrences` (`{"42": 1}`: value 42 emitted exactly once) if present.
std::optional<std::string> CheckWatermarkKeys(Checkpoint& checkpoint,
                                              const std::vector<Timestamp>& all_watermarks);

/// Takes and checks `no_late_records` if present: in `elements` (the main output since the last
/// reset), every record's timestamp is strictly greater than the most recent watermark before it
/// (a record without a timestamp after a watermark is late). Records before any watermark pass.
std::optional<std::string> CheckNoLateRecords(Checkpoint& checkpoint,
                                              const std::vector<OutputElement>& elements);

/// JSON equality where integers are compared via ParseInt64 (so "MAX" equals 9223372036854775807).
bool CaseJsonEquals(const Json& expected, const Json& actual);

}  // namespace tidemark::testing
