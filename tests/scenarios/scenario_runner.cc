#include "tests/scenarios/scenario_runner.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark::testing {

// ---------------------------------------------------------------------------------------------
// Registry

void ScenarioRegistry::Register(const std::string& area, AreaHandler handler) {
  if (!handlers_.emplace(area, std::move(handler)).second) {
    throw std::logic_error("area '" + area + "' registered twice");
  }
}

const AreaHandler* ScenarioRegistry::Find(const std::string& area) const {
  auto it = handlers_.find(area);
  return it == handlers_.end() ? nullptr : &it->second;
}

std::vector<std::string> ScenarioRegistry::Areas() const {
  std::vector<std::string> out;
  for (const auto& [area, handler] : handlers_) {
    out.push_back(area);
  }
  return out;
}

CaseResult RunCase(const ScenarioRegistry& registry, const Json& test_case) {
  if (!test_case.is_object() || !test_case.contains("area") || !test_case["area"].is_string()) {
    return CaseResult::Failed("case has no string 'area'");
  }
  const std::string area = test_case["area"].get<std::string>();
  const AreaHandler* handler = registry.Find(area);
  if (handler == nullptr) {
    return CaseResult::Skipped("no handler for area '" + area + "'");
  }
  try {
    return (*handler)(test_case);
  } catch (const CaseFormatError& e) {
    return CaseResult::Failed(std::string("malformed or unsupported case: ") + e.what());
  } catch (const std::exception& e) {
    return CaseResult::Failed(std::string("exception: ") + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Parsing

int64_t ParseInt64(const Json& j) {
  if (j.is_number_integer()) {
    if (j.is_number_unsigned()) {
      const auto u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        throw CaseFormatError("integer out of int64 range: " + j.dump());
      }
      return static_cast<int64_t>(u);
    }
    return j.get<int64_t>();
  }
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "MIN") {
      return kMinTimestamp;
    }
    if (s == "MAX") {
      return kMaxTimestamp;
    }
    size_t used = 0;
    try {
      const long long v = std::stoll(s, &used);
      if (used == s.size()) {
        return v;
      }
    } catch (const std::exception&) {
    }
  }
  throw CaseFormatError("expected an int64, \"MIN\" or \"MAX\", got " + j.dump());
}

std::optional<int64_t> ParseOptionalInt64(const Json& j) {
  if (j.is_null()) {
    return std::nullopt;
  }
  return ParseInt64(j);
}

std::optional<int64_t> RecordTimestamp(const Json& step) {
  auto it = step.find("ts");
  if (it == step.end()) {
    return std::nullopt;
  }
  return ParseOptionalInt64(*it);
}

int64_t Int64Or(const Json& obj, std::string_view key, int64_t fallback) {
  if (!obj.is_object() || !obj.contains(key)) {
    return fallback;
  }
  return ParseInt64(obj.at(std::string(key)));
}

std::string FormatInt64(int64_t v) {
  if (v == kMinTimestamp) {
    return "MIN";
  }
  if (v == kMaxTimestamp) {
    return "MAX";
  }
  return std::to_string(v);
}

Value ParseCaseValue(const Json& j) {
  if (j.is_null()) {
    return std::monostate{};
  }
  if (j.is_boolean()) {
    return j.get<bool>();
  }
  if (j.is_number_integer()) {
    return ParseInt64(j);
  }
  if (j.is_number_float()) {
    return j.get<double>();
  }
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (s == "MIN" || s == "MAX") {
      return ParseInt64(j);
    }
    return s;
  }
  return j.dump();
}

Row ParseCaseRow(const Json& value) {
  std::vector<Value> values;
  if (value.is_array()) {
    for (const Json& cell : value) {
      values.push_back(ParseCaseValue(cell));
    }
  } else {
    values.push_back(ParseCaseValue(value));
  }
  return Row::FromValues(values);
}

namespace {
std::string CellToString(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return FormatInt64(*i);
  }
  return ValueToJson(v);
}
}  // namespace

std::string RowToCaseString(const Row& row) {
  if (row.size() == 1) {
    return CellToString(row.Get(0));
  }
  std::string out = "[";
  for (size_t i = 0; i < row.size(); ++i) {
    out += (i == 0 ? "" : ", ") + CellToString(row.Get(i));
  }
  return out + "]";
}

// ---------------------------------------------------------------------------------------------
// Output elements

OutputElement OutputElement::OfWatermark(Timestamp ts) {
  OutputElement e;
  e.kind = Kind::kWatermark;
  e.watermark = ts;
  return e;
}

OutputElement OutputElement::OfStatus(WatermarkStatus status) {
  OutputElement e;
  e.kind = Kind::kStatus;
  e.status = status;
  return e;
}

OutputElement OutputElement::OfRecord(const StreamRecord& record) {
  OutputElement e;
  e.kind = Kind::kRecord;
  e.value = record.row;
  if (record.has_timestamp) {
    e.timestamp = record.timestamp;
  }
  return e;
}

std::string OutputElement::ToString() const {
  switch (kind) {
    case Kind::kWatermark:
      return "watermark " + FormatInt64(watermark);
    case Kind::kStatus:
      return std::string("status ") + (status == WatermarkStatus::kIdle ? "idle" : "active");
    case Kind::kRecord:
      return "record " + RowToCaseString(value) +
             (timestamp ? " @" + FormatInt64(*timestamp) : std::string(" (no ts)"));
  }
  return "?";
}

std::string ToString(const std::vector<OutputElement>& elements) {
  std::string out = "[";
  for (size_t i = 0; i < elements.size(); ++i) {
    out += (i == 0 ? "" : ", ") + elements[i].ToString();
  }
  return out + "]";
}

namespace {
OutputElement ParseRecordBody(const Json& body) {
  if (!body.is_object() || !body.contains("value")) {
    throw CaseFormatError("record without 'value': " + body.dump());
  }
  OutputElement e;
  e.kind = OutputElement::Kind::kRecord;
  e.value = ParseCaseRow(body.at("value"));
  if (body.contains("ts")) {
    e.timestamp = ParseOptionalInt64(body.at("ts"));
  }
  return e;
}
}  // namespace

OutputElement ParseOutputElement(const Json& j) {
  if (j.contains("watermark")) {
    return OutputElement::OfWatermark(ParseInt64(j.at("watermark")));
  }
  if (j.contains("status")) {
    const std::string s = j.at("status").get<std::string>();
    if (s == "idle") {
      return OutputElement::OfStatus(WatermarkStatus::kIdle);
    }
    if (s == "active") {
      return OutputElement::OfStatus(WatermarkStatus::kActive);
    }
    throw CaseFormatError("unknown status " + s);
  }
  if (j.contains("record")) {
    return ParseRecordBody(j.at("record"));
  }
  throw CaseFormatError("unknown output element " + j.dump());
}

std::vector<OutputElement> ParseOutputList(const Json& j) {
  if (!j.is_array()) {
    throw CaseFormatError("outputs must be a list: " + j.dump());
  }
  std::vector<OutputElement> out;
  for (const Json& e : j) {
    out.push_back(ParseOutputElement(e));
  }
  return out;
}

std::vector<OutputElement> ParseSideOutputList(const Json& j) {
  if (!j.is_array()) {
    throw CaseFormatError("side output must be a list: " + j.dump());
  }
  std::vector<OutputElement> out;
  for (const Json& e : j) {
    out.push_back(ParseRecordBody(e));
  }
  return out;
}

void RecordingOutput::Collect(StreamRecord& record) {
  elements_.push_back(OutputElement::OfRecord(record));
}

void RecordingOutput::CollectSide(std::string_view tag, StreamRecord& record) {
  auto it = side_outputs_.find(tag);
  if (it == side_outputs_.end()) {
    it = side_outputs_.emplace(std::string(tag), std::vector<OutputElement>{}).first;
  }
  it->second.push_back(OutputElement::OfRecord(record));
}

void RecordingOutput::EmitWatermark(Watermark watermark) {
  elements_.push_back(OutputElement::OfWatermark(watermark.timestamp));
  all_watermarks_.push_back(watermark.timestamp);
}

void RecordingOutput::EmitWatermarkStatus(WatermarkStatus status) {
  elements_.push_back(OutputElement::OfStatus(status));
}

void RecordingOutput::Clear() {
  elements_.clear();
  side_outputs_.clear();
}

// ---------------------------------------------------------------------------------------------
// Comparisons

std::optional<std::string> CompareExact(const std::vector<OutputElement>& expected,
                                        const std::vector<OutputElement>& actual, bool prefix) {
  const size_t n = std::min(expected.size(), actual.size());
  for (size_t i = 0; i < n; ++i) {
    if (!(expected[i] == actual[i])) {
      return fmt::format("at index {}: expected {}, got {} (expected {}, got {})", i,
                         expected[i].ToString(), actual[i].ToString(), ToString(expected),
                         ToString(actual));
    }
  }
  if (actual.size() < expected.size()) {
    return fmt::format("missing {} at index {} (expected {}, got {})",
                       expected[actual.size()].ToString(), actual.size(), ToString(expected),
                       ToString(actual));
  }
  if (!prefix && actual.size() > expected.size()) {
    return fmt::format("unexpected {} at index {} (expected {}, got {})",
                       actual[expected.size()].ToString(), expected.size(), ToString(expected),
                       ToString(actual));
  }
  return std::nullopt;
}

namespace {
std::vector<OutputElement> RecordsOf(const std::vector<OutputElement>& elements) {
  std::vector<OutputElement> out;
  for (const OutputElement& e : elements) {
    if (e.kind == OutputElement::Kind::kRecord) {
      out.push_back(e);
    }
  }
  return out;
}

// Multiset difference, O(n*m): fine for case sizes.
std::optional<std::string> CompareRecordMultisets(const std::vector<OutputElement>& expected,
                                                  const std::vector<OutputElement>& actual) {
  std::vector<bool> used(actual.size(), false);
  std::vector<OutputElement> missing;
  for (const OutputElement& e : expected) {
    bool found = false;
    for (size_t i = 0; i < actual.size(); ++i) {
      if (!used[i] && actual[i] == e) {
        used[i] = true;
        found = true;
        break;
      }
    }
    if (!found) {
      missing.push_back(e);
    }
  }
  std::vector<OutputElement> extra;
  for (size_t i = 0; i < actual.size(); ++i) {
    if (!used[i]) {
      extra.push_back(actual[i]);
    }
  }
  if (missing.empty() && extra.empty()) {
    return std::nullopt;
  }
  return fmt::format("records differ as multisets: missing {}, unexpected {}", ToString(missing),
                     ToString(extra));
}
}  // namespace

std::optional<std::string> CompareHarnessSorted(const std::vector<OutputElement>& expected,
                                                const std::vector<OutputElement>& actual) {
  if (expected.size() != actual.size()) {
    return fmt::format("expected {} elements, got {} (expected {}, got {})", expected.size(),
                       actual.size(), ToString(expected), ToString(actual));
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i].kind != OutputElement::Kind::kRecord && !(expected[i] == actual[i])) {
      return fmt::format("at index {}: expected {}, got {}", i, expected[i].ToString(),
                         actual[i].ToString());
    }
  }
  return CompareRecordMultisets(RecordsOf(expected), RecordsOf(actual));
}

std::optional<std::string> CompareMultiset(const std::vector<OutputElement>& expected,
                                           const std::vector<OutputElement>& actual) {
  return CompareRecordMultisets(RecordsOf(expected), RecordsOf(actual));
}

ExpectMode ParseExpectMode(const Json& test_case) {
  const std::string mode = test_case.value("expect_mode", std::string("exact"));
  if (mode == "exact") {
    return ExpectMode::kExact;
  }
  if (mode == "harness_sorted") {
    return ExpectMode::kHarnessSorted;
  }
  if (mode == "multiset") {
    return ExpectMode::kMultiset;
  }
  throw CaseFormatError("unknown expect_mode " + mode);
}

std::optional<std::string> OutputsChecker::CheckElements(
    Checkpoint& checkpoint, const std::vector<OutputElement>& elements) {
  if (!checkpoint.Has("outputs")) {
    return std::nullopt;
  }
  const std::vector<OutputElement> expected = ParseOutputList(checkpoint.Take("outputs"));
  bool prefix = false;
  if (checkpoint.Has("match")) {
    const std::string match = checkpoint.Take("match").get<std::string>();
    if (match != "prefix") {
      throw CaseFormatError("unknown match " + match);
    }
    prefix = true;
  }
  if (mode_ == ExpectMode::kExact) {
    const size_t from = std::min(std::max(cursor_, base_), elements.size());
    std::vector<OutputElement> fresh(elements.begin() + static_cast<std::ptrdiff_t>(from),
                                     elements.end());
    cursor_ = elements.size();
    if (auto diff = CompareExact(expected, fresh, prefix)) {
      return "outputs " + *diff;
    }
    return std::nullopt;
  }
  expected_since_reset_.insert(expected_since_reset_.end(), expected.begin(), expected.end());
  const size_t from = std::min(base_, elements.size());
  std::vector<OutputElement> since_reset(elements.begin() + static_cast<std::ptrdiff_t>(from),
                                         elements.end());
  std::optional<std::string> diff = mode_ == ExpectMode::kHarnessSorted
                                        ? CompareHarnessSorted(expected_since_reset_, since_reset)
                                        : CompareMultiset(expected_since_reset_, since_reset);
  if (diff) {
    return "outputs " + *diff;
  }
  return std::nullopt;
}

std::optional<std::string> OutputsChecker::Check(Checkpoint& checkpoint,
                                                 const RecordingOutput& output) {
  if (auto diff = CheckElements(checkpoint, output.elements())) {
    return diff;
  }
  if (!checkpoint.Has("side_outputs")) {
    return std::nullopt;
  }
  const Json& side = checkpoint.Take("side_outputs");
  if (!side.is_object()) {
    throw CaseFormatError("side_outputs must be an object");
  }
  for (const auto& [tag, list] : side.items()) {
    std::vector<OutputElement> expected = ParseSideOutputList(list);
    std::vector<OutputElement>& acc = expected_side_[tag];
    acc.insert(acc.end(), expected.begin(), expected.end());
    auto it = output.side_outputs().find(tag);
    const std::vector<OutputElement> none;
    const std::vector<OutputElement>& actual =
        it == output.side_outputs().end() ? none : it->second;
    if (auto diff = CompareRecordMultisets(acc, actual)) {
      return "side output '" + tag + "' " + *diff;
    }
  }
  return std::nullopt;
}

void OutputsChecker::Reset(size_t current_size) {
  base_ = current_size;
  cursor_ = current_size;
  expected_since_reset_.clear();
  expected_side_.clear();
}

// ---------------------------------------------------------------------------------------------
// Step driver

const Json& Checkpoint::Take(std::string_view key) {
  if (!json_.contains(key)) {
    throw CaseFormatError(fmt::format("checkpoint has no '{}'", key));
  }
  taken_.emplace_back(key);
  return json_.at(std::string(key));
}

std::vector<std::string> Checkpoint::Untaken() const {
  std::vector<std::string> out;
  for (const auto& [key, value] : json_.items()) {
    if (key == "after_step" || key == "internal" || key == "notes") {
      continue;
    }
    if (std::find(taken_.begin(), taken_.end(), key) == taken_.end()) {
      out.push_back(key);
    }
  }
  return out;
}

bool CaseJsonEquals(const Json& expected, const Json& actual) {
  const bool exp_int = expected.is_number_integer() ||
                       (expected.is_string() && (expected == "MIN" || expected == "MAX"));
  const bool act_int =
      actual.is_number_integer() || (actual.is_string() && (actual == "MIN" || actual == "MAX"));
  if (exp_int && act_int) {
    return ParseInt64(expected) == ParseInt64(actual);
  }
  if (expected.is_array() && actual.is_array()) {
    if (expected.size() != actual.size()) {
      return false;
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      if (!CaseJsonEquals(expected[i], actual[i])) {
        return false;
      }
    }
    return true;
  }
  if (expected.is_object() && actual.is_object()) {
    if (expected.size() != actual.size()) {
      return false;
    }
    for (const auto& [key, value] : expected.items()) {
      if (!actual.contains(key) || !CaseJsonEquals(value, actual.at(key))) {
        return false;
      }
    }
    return true;
  }
  return expected == actual;
}

std::optional<std::string> CheckNoLateRecords(Checkpoint& checkpoint,
                                              const std::vector<OutputElement>& elements) {
  if (!checkpoint.Has("no_late_records") || !checkpoint.Take("no_late_records").get<bool>()) {
    return std::nullopt;
  }
  std::optional<Timestamp> watermark;
  for (const OutputElement& e : elements) {
    if (e.kind == OutputElement::Kind::kWatermark) {
      watermark = e.watermark;
    } else if (e.kind == OutputElement::Kind::kRecord && watermark &&
               !(e.timestamp && *e.timestamp > *watermark)) {
      return fmt::format("late record {} after watermark {}", e.ToString(), *watermark);
    }
  }
  return std::nullopt;
}

std::optional<std::string> CheckWatermarkKeys(Checkpoint& checkpoint,
                                              const std::vector<Timestamp>& all_watermarks) {
  auto render = [](const std::vector<Timestamp>& v) {
    std::string out = "[";
    for (size_t i = 0; i < v.size(); ++i) {
      out += (i == 0 ? "" : ", ") + FormatInt64(v[i]);
    }
    return out + "]";
  };
  if (checkpoint.Has("watermarks")) {
    std::vector<Timestamp> expected;
    for (const Json& w : checkpoint.Take("watermarks")) {
      expected.push_back(ParseInt64(w));
    }
    if (expected != all_watermarks) {
      return fmt::format("watermarks: expected {}, got {}", render(expected),
                         render(all_watermarks));
    }
  }
  if (checkpoint.Has("watermark_occurrences")) {
    for (const auto& [value, count] : checkpoint.Take("watermark_occurrences").items()) {
      const Timestamp ts = ParseInt64(Json(value));
      const int64_t expected = ParseInt64(count);
      const auto actual =
          static_cast<int64_t>(std::count(all_watermarks.begin(), all_watermarks.end(), ts));
      if (actual != expected) {
        return fmt::format("watermark {} emitted {} times, expected {} (all: {})", value, actual,
                           expected, render(all_watermarks));
      }
    }
  }
  return std::nullopt;
}

namespace {
struct StepError {
  std::string kind;  // invalid_argument | no_timestamp | error
  std::string message;
};
}  // namespace

CaseResult RunSteps(const Json& test_case, const StepFn& step_fn, const CheckFn& check_fn) {
  const Json& steps = test_case.at("steps");
  const Json& expect = test_case.at("expect");
  if (!steps.is_array() || !expect.is_array()) {
    throw CaseFormatError("steps and expect must be lists");
  }
  std::vector<std::vector<const Json*>> by_step(steps.size());
  for (const Json& cp : expect) {
    const int64_t after = ParseInt64(cp.at("after_step"));
    if (after < 0 || static_cast<size_t>(after) >= steps.size()) {
      throw CaseFormatError(fmt::format("after_step {} out of range", after));
    }
    by_step[static_cast<size_t>(after)].push_back(&cp);
  }

  for (size_t i = 0; i < steps.size(); ++i) {
    const Json& step = steps[i];
    const std::string op = step.value("op", std::string("?"));
    StepOutcome outcome;
    std::optional<StepError> error;
    try {
      outcome = step_fn(step, i);
    } catch (const CaseFormatError&) {
      throw;
    } catch (const InvalidArgument& e) {
      error = StepError{"invalid_argument", e.what()};
    } catch (const NoTimestamp& e) {
      error = StepError{"no_timestamp", e.what()};
    } catch (const std::exception& e) {
      error = StepError{"error", e.what()};
    }

    bool error_expected = false;
    for (const Json* cp_json : by_step[i]) {
      Checkpoint cp(*cp_json);
      const std::string where = fmt::format("step {} ({})", i, op);
      if (cp.Has("error")) {
        error_expected = true;
        const std::string kind = cp.Take("error").get<std::string>();
        if (!error) {
          return CaseResult::Failed(
              fmt::format("{}: expected error {}, but the step succeeded", where, kind));
        }
        if (error->kind != kind) {
          return CaseResult::Failed(fmt::format("{}: expected error {}, got {}: {}", where, kind,
                                                error->kind, error->message));
        }
        if (cp.Has("message_contains")) {
          const std::string needle = cp.Take("message_contains").get<std::string>();
          if (error->message.find(needle) == std::string::npos) {
            return CaseResult::Failed(fmt::format("{}: error message '{}' does not contain '{}'",
                                                  where, error->message, needle));
          }
        }
      }
      if (std::optional<std::string> diff = check_fn(cp, outcome)) {
        return CaseResult::Failed(where + ": " + *diff);
      }
      const std::vector<std::string> untaken = cp.Untaken();
      if (std::find(untaken.begin(), untaken.end(), "returns") != untaken.end()) {
        const Json& expected = cp.Take("returns");
        if (!outcome.returns) {
          return CaseResult::Failed(fmt::format(
              "{}: expected returns {}, the step returned nothing", where, expected.dump()));
        }
        if (!CaseJsonEquals(expected, *outcome.returns)) {
          return CaseResult::Failed(fmt::format("{}: expected returns {}, got {}", where,
                                                expected.dump(), outcome.returns->dump()));
        }
      }
      if (std::vector<std::string> left = cp.Untaken(); !left.empty()) {
        return CaseResult::Failed(
            fmt::format("{}: unsupported expectation key '{}'", where, left[0]));
      }
    }
    if (error && !error_expected) {
      return CaseResult::Failed(fmt::format("step {} ({}) failed unexpectedly: {}: {}", i, op,
                                            error->kind, error->message));
    }
  }
  return CaseResult::Passed();
}

}  // namespace tidemark::testing
