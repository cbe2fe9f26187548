#include "runtime/eventtime/make_watermark_strategy.h"

#include <cmath>
#include <string>

#include "runtime/core/errors.h"
#include "runtime/core/sql_functions.h"
#include "runtime/eventtime/adaptive_out_of_orderness_watermarks.h"
#include "runtime/eventtime/bounded_out_of_orderness_watermarks.h"
#include "runtime/eventtime/punctuated_watermarks.h"

namespace tidemark {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (civil-from-days inverse, by eras of 400
// years so that it is exact for negative years too).
int64_t DaysFromCivil(int64_t year, int month, int day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t year_of_era = year - era * 400;
  const int64_t month_from_march = month > 2 ? month - 3 : month + 9;
  const int64_t day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
  const int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + day_of_era - 719468;
}

bool IsLeapYear(int64_t y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int DaysInMonth(int64_t year, int month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && IsLeapYear(year) ? 29 : kDays[month - 1];
}

// Reads exactly `n` decimal digits at `pos`.
bool ReadDigits(std::string_view s, size_t& pos, size_t n, int64_t& out) {
  if (pos + n > s.size()) {
    return false;
  }
  int64_t v = 0;
  for (size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') {
      return false;
    }
    v = v * 10 + (c - '0');
  }
  pos += n;
  out = v;
  return true;
}

bool Consume(std::string_view s, size_t& pos, char c) {
  if (pos < s.size() && s[pos] == c) {
    ++pos;
    return true;
  }
  return false;
}

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) {
    --q;
  }
  return q;
}

std::optional<Timestamp> ScaleDouble(double v, double factor) {
  if (!std::isfinite(v)) {
    return std::nullopt;
  }
  const double ms = std::floor(v * factor);
  // 2^63 is exactly representable; anything >= it (or < -2^63) does not fit.
  if (!(ms >= -9223372036854775808.0 && ms < 9223372036854775808.0)) {
    return std::nullopt;
  }
  return static_cast<Timestamp>(ms);
}

std::string Where(const SourceLocation& loc) {
  if (loc.line <= 0) {
    return loc.file.empty() ? std::string() : loc.file + ": ";
  }
  return fmt::format("{}:{}:{}: ", loc.file, loc.line, loc.column);
}

// What units a field of `type` takes, for the message of one that does not fit.
std::string UnitHint(FieldType type) {
  switch (type) {
    case FieldType::kTimestamp:
      return " (a timestamp field holds ms since the epoch: omit timestamp-unit, or declare the "
             "field int64)";
    case FieldType::kInt64:
    case FieldType::kDouble:
      return " (a number takes ms, s, us or ns)";
    case FieldType::kString:
      return " (a string takes iso8601)";
    case FieldType::kBool:
      return "";
  }
  return "";
}

// Resolves `name` to a slot and checks that its type fits `unit`. Errors are keyed (`what`, or
// timestamp-unit) so the compiler reports them at that key of the `watermarks:` block.
int ResolveTimeField(const WatermarkStrategySpec& spec, const Schema& schema,
                     const std::string& name, const char* what, TimestampUnit unit) {
  const int slot = schema.IndexOf(name);
  if (slot < 0) {
    throw KeyedInvalidArgument(what, fmt::format("no field '{}' in the input schema", name));
  }
  const FieldType type = schema.field(static_cast<size_t>(slot)).type;
  bool ok = false;
  switch (type) {
    case FieldType::kInt64:
    case FieldType::kDouble:
      ok = unit != TimestampUnit::kIso8601;
      break;
    case FieldType::kTimestamp:
      ok = unit == TimestampUnit::kMillis;
      break;
    case FieldType::kString:
      ok = unit == TimestampUnit::kIso8601;
      break;
    case FieldType::kBool:
      ok = false;
      break;
  }
  if (!ok) {
    // The unit, when the job wrote one, is what the user chose for this field: reported there.
    const bool unit_written = spec.key_locations.values.count("timestamp-unit") != 0;
    throw KeyedInvalidArgument(
        unit_written ? "timestamp-unit" : what,
        fmt::format("field '{}' of type {} cannot hold a timestamp in unit '{}'{}", name,
                    ToString(type), spec.timestamp_unit, UnitHint(type)));
  }
  return slot;
}

}  // namespace

std::optional<TimestampUnit> ParseTimestampUnit(std::string_view s) {
  if (s == "ms") {
    return TimestampUnit::kMillis;
  }
  if (s == "s") {
    return TimestampUnit::kSeconds;
  }
  if (s == "us") {
    return TimestampUnit::kMicros;
  }
  if (s == "ns") {
    return TimestampUnit::kNanos;
  }
  if (s == "iso8601") {
    return TimestampUnit::kIso8601;
  }
  return std::nullopt;
}

std::optional<Timestamp> ParseIso8601Millis(std::string_view s) {
  size_t pos = 0;
  int64_t year = 0;
  int64_t month = 0;
  int64_t day = 0;
  if (!ReadDigits(s, pos, 4, year) || !Consume(s, pos, '-') || !ReadDigits(s, pos, 2, month) ||
      !Consume(s, pos, '-') || !ReadDigits(s, pos, 2, day)) {
    return std::nullopt;
  }
  if (month < 1 || month > 12 || day < 1 || day > DaysInMonth(year, static_cast<int>(month))) {
    return std::nullopt;
  }
  int64_t hour = 0;
  int64_t minute = 0;
  int64_t second = 0;
  int64_t millis = 0;
  int64_t offset_minutes = 0;
  if (pos < s.size()) {
    if (s[pos] != 'T' && s[pos] != 't' && s[pos] != ' ') {
      return std::nullopt;
    }
    ++pos;
    if (!ReadDigits(s, pos, 2, hour) || !Consume(s, pos, ':') || !ReadDigits(s, pos, 2, minute)) {
      return std::nullopt;
    }
    if (Consume(s, pos, ':')) {
      if (!ReadDigits(s, pos, 2, second)) {
        return std::nullopt;
      }
      if (Consume(s, pos, '.') || Consume(s, pos, ',')) {
        size_t digits = 0;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
          if (digits < 3) {
            millis = millis * 10 + (s[pos] - '0');
          }
          ++digits;
          ++pos;
        }
        if (digits == 0) {
          return std::nullopt;
        }
        for (size_t i = digits; i < 3; ++i) {
          millis *= 10;
        }
      }
    }
    if (hour > 23 || minute > 59 || second > 59) {
      return std::nullopt;
    }
    if (pos < s.size()) {
      const char z = s[pos];
      if (z == 'Z' || z == 'z') {
        ++pos;
      } else if (z == '+' || z == '-') {
        ++pos;
        int64_t off_h = 0;
        int64_t off_m = 0;
        if (!ReadDigits(s, pos, 2, off_h)) {
          return std::nullopt;
        }
        if (pos < s.size()) {
          Consume(s, pos, ':');
          if (!ReadDigits(s, pos, 2, off_m)) {
            return std::nullopt;
          }
        }
        if (off_h > 23 || off_m > 59) {
          return std::nullopt;
        }
        offset_minutes = (off_h * 60 + off_m) * (z == '-' ? -1 : 1);
      } else {
        return std::nullopt;
      }
    }
  }
  if (pos != s.size()) {
    return std::nullopt;
  }
  const int64_t days = DaysFromCivil(year, static_cast<int>(month), static_cast<int>(day));
  const int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
  return seconds * 1000 + millis;
}

namespace {
std::optional<Timestamp> ConvertToMillis(const Value& value, TimestampUnit unit) {
  if (const auto* i = std::get_if<int64_t>(&value)) {
    switch (unit) {
      case TimestampUnit::kMillis:
        return *i;
      case TimestampUnit::kSeconds: {
        Timestamp out = 0;
        if (__builtin_mul_overflow(*i, int64_t{1000}, &out)) {
          return std::nullopt;
        }
        return out;
      }
      case TimestampUnit::kMicros:
        return FloorDiv(*i, 1000);
      case TimestampUnit::kNanos:
        return FloorDiv(*i, 1'000'000);
      case TimestampUnit::kIso8601:
        return std::nullopt;
    }
    return std::nullopt;
  }
  if (const auto* d = std::get_if<double>(&value)) {
    switch (unit) {
      case TimestampUnit::kMillis:
        return ScaleDouble(*d, 1.0);
      case TimestampUnit::kSeconds:
        return ScaleDouble(*d, 1e3);
      case TimestampUnit::kMicros:
        return ScaleDouble(*d, 1e-3);
      case TimestampUnit::kNanos:
        return ScaleDouble(*d, 1e-6);
      case TimestampUnit::kIso8601:
        return std::nullopt;
    }
    return std::nullopt;
  }
  if (const auto* str = std::get_if<std::string>(&value)) {
    if (unit != TimestampUnit::kIso8601) {
      return std::nullopt;
    }
    return ParseIso8601Millis(*str);
  }
  return std::nullopt;  // NULL or bool
}
}  // namespace

std::optional<Timestamp> ValueToEventTimeMillis(const Value& value, TimestampUnit unit) {
  std::optional<Timestamp> ts = ConvertToMillis(value, unit);
  // Long.MIN_VALUE is the "no timestamp" marker of a StreamRecord: a record carrying it would
  // reach event-time operators as a record without a timestamp and fail them.
  if (ts == kMinTimestamp) {
    return std::nullopt;
  }
  return ts;
}

namespace {

// The general conversion, kept out of line so that the per-record fast path below stays small.
[[gnu::noinline]] std::optional<Timestamp> SlowFieldToEventTimeMillis(const Value& value,
                                                                      TimestampUnit unit) {
  return ValueToEventTimeMillis(value, unit);
}

// Per record (timestamp assigners and punctuated extractors): an int64 field in milliseconds,
// the common case, and NULL (no time) are answered directly. With the general conversion
// inlined, g++ built the optional on the stack and reloaded it with a wider load (a
// store-forwarding stall): about a fifth of a punctuated job's time went to each extractor
// call. Same results as ValueToEventTimeMillis; a slot beyond the row gives nullopt.
std::optional<Timestamp> FieldToEventTimeMillis(const Row& row, int slot, TimestampUnit unit) {
  if (static_cast<size_t>(slot) >= row.size()) {
    return std::nullopt;
  }
  const auto s = static_cast<size_t>(slot);
  if (row.IsNull(s)) {
    return std::nullopt;  // NULL, e.g. a punctuated job's records without a watermark
  }
  if (unit == TimestampUnit::kMillis && IsInt64Slot(row, slot)) {
    const int64_t ms = row.GetInt64(s);
    if (ms == kMinTimestamp) {
      return std::nullopt;
    }
    return ms;
  }
  return SlowFieldToEventTimeMillis(row.Get(s), unit);
}

}  // namespace

namespace {

// `timestamp-format`: the string field parsed with the Java DateTimeFormatter pattern (the one
// parser of DATE_FORMAT / TO_TIMESTAMP). A value that does not match gives no timestamp: the
// operator counts it as bad input (or fails the job with `errors: fail`).
TimestampAssigner PatternTimestampAssigner(const WatermarkStrategySpec& spec,
                                           const Schema& schema) {
  std::string error;
  std::optional<DateTimePattern> pattern = DateTimePattern::Compile(spec.timestamp_format, &error);
  if (!pattern) {
    throw KeyedInvalidArgument("timestamp-format",
                               fmt::format("in pattern \"{}\": {}", spec.timestamp_format, error));
  }
  const int slot = schema.IndexOf(spec.timestamp_field);
  if (slot < 0) {
    throw KeyedInvalidArgument(
        "timestamp-field", fmt::format("no field '{}' in the input schema", spec.timestamp_field));
  }
  const FieldType type = schema.field(static_cast<size_t>(slot)).type;
  if (type != FieldType::kString) {
    throw KeyedInvalidArgument(
        "timestamp-format",
        fmt::format("field '{}' is of type {}: a pattern parses a string field (declare it "
                    "string, or drop timestamp-format for a number of ms)",
                    spec.timestamp_field, ToString(type)));
  }
  return [slot, p = std::move(*pattern)](const StreamRecord& record) -> std::optional<Timestamp> {
    const auto s = static_cast<size_t>(slot);
    if (s >= record.row.size() || record.row.IsNull(s)) {
      return std::nullopt;
    }
    std::optional<int64_t> ms = p.Parse(record.row.GetString(s));
    if (ms == kMinTimestamp) {
      return std::nullopt;
    }
    return ms;
  };
}

}  // namespace

namespace {
// `text` for a message: at most 100 bytes, cut at a UTF-8 character boundary, with "..." when cut.
std::string Shown(std::string_view text) {
  constexpr size_t kMax = 100;
  if (text.size() <= kMax) {
    return std::string(text);
  }
  size_t n = kMax;
  while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) {
    --n;
  }
  return std::string(text.substr(0, n)) + "...";
}

}  // namespace

std::string NoTimestampReason(const WatermarkStrategySpec& spec, const Schema& schema,
                              const StreamRecord& record) {
  static constexpr std::string_view kMinValue =
      "is Long.MIN_VALUE (-9223372036854775808), which means no timestamp";
  const int slot = spec.timestamp_field.empty() ? -1 : schema.IndexOf(spec.timestamp_field);
  if (slot < 0 || static_cast<size_t>(slot) >= record.row.size()) {
    return "the record carries no timestamp";
  }
  const std::string& name = spec.timestamp_field;
  const auto s = static_cast<size_t>(slot);
  if (record.row.IsNull(s)) {
    return fmt::format("field '{}' is missing or NULL", name);
  }
  const Value value = record.row.Get(s);
  if (!spec.timestamp_format.empty()) {
    const auto* str = std::get_if<std::string>(&value);
    if (str == nullptr) {
      return fmt::format("field '{}' is not a string", name);
    }
    std::string error;
    const std::optional<DateTimePattern> pattern =
        DateTimePattern::Compile(spec.timestamp_format, &error);
    if (pattern && pattern->Parse(*str) == kMinTimestamp) {
      return fmt::format("field '{}' {}", name, kMinValue);
    }
    return fmt::format("field '{}': '{}' does not match timestamp-format \"{}\"", name, Shown(*str),
                       spec.timestamp_format);
  }
  const TimestampUnit unit =
      ParseTimestampUnit(spec.timestamp_unit).value_or(TimestampUnit::kMillis);
  const std::optional<Timestamp> converted = ConvertToMillis(value, unit);
  if (converted == kMinTimestamp) {
    return fmt::format("field '{}' {}", name, kMinValue);
  }
  if (const auto* i = std::get_if<int64_t>(&value)) {
    return fmt::format("field '{}': {} {} is outside the int64 range of ms since the epoch", name,
                       *i, spec.timestamp_unit);
  }
  if (const auto* d = std::get_if<double>(&value)) {
    return fmt::format(
        "field '{}': {} {} is not a finite number within the int64 range of ms "
        "since the epoch",
        name, *d, spec.timestamp_unit);
  }
  if (const auto* str = std::get_if<std::string>(&value)) {
    return fmt::format(
        "field '{}': '{}' is not an ISO-8601 date-time (YYYY-MM-DD, optionally with T or a space "
        "and HH:MM[:SS[.fraction]], and Z or an offset such as +01:00; fields in range)",
        name, Shown(*str));
  }
  return fmt::format("field '{}' holds no time in unit {}", name, spec.timestamp_unit);
}

CompileError WatermarksCompileError(const WatermarkStrategySpec& spec, const InvalidArgument& e) {
  if (const auto* keyed = dynamic_cast<const KeyedInvalidArgument*>(&e); keyed != nullptr) {
    return CompileError("watermarks." + keyed->key_path(), keyed->reason(),
                        spec.key_locations.Of(keyed->key_path(), spec.location));
  }
  return CompileError("watermarks", e.what());
}

WatermarkStrategy MakeWatermarkStrategy(const WatermarkStrategySpec& spec, const Schema& schema) {
  const std::optional<TimestampUnit> unit = ParseTimestampUnit(spec.timestamp_unit);
  if (!unit) {
    throw KeyedInvalidArgument(
        "timestamp-unit",
        fmt::format("expected one of ms, s, us, ns, iso8601, got '{}'", spec.timestamp_unit));
  }

  TimestampAssigner assigner;
  int millis_slot = -1;  // a timestamp field in ms: ExtractTimestamp reads its int64s inline
  if (spec.timestamp_field.empty()) {
    assigner = RecordTimestampAssigner();
  } else if (!spec.timestamp_format.empty()) {
    assigner = PatternTimestampAssigner(spec, schema);
  } else {
    const int slot = ResolveTimeField(spec, schema, spec.timestamp_field, "timestamp-field", *unit);
    const FieldType type = schema.field(static_cast<size_t>(slot)).type;
    if (*unit == TimestampUnit::kMillis &&
        (type == FieldType::kInt64 || type == FieldType::kTimestamp)) {
      millis_slot = slot;
    }
    assigner = [slot, u = *unit](const StreamRecord& record) -> std::optional<Timestamp> {
      return FieldToEventTimeMillis(record.row, slot, u);
    };
  }

  std::optional<WatermarkStrategy> strategy;
  if (spec.strategy == "bounded-out-of-orderness") {
    if (spec.max_out_of_orderness_ms < 0) {
      throw InvalidArgument(
          fmt::format("{}watermarks.max_out_of_orderness: must not be negative, got {} ms",
                      Where(spec.location), spec.max_out_of_orderness_ms));
    }
    strategy = WatermarkStrategy::ForBoundedOutOfOrderness(
        std::chrono::milliseconds(spec.max_out_of_orderness_ms), std::move(assigner));
  } else if (spec.strategy == "adaptive-out-of-orderness") {
    AdaptiveOutOfOrdernessParams params;
    if (spec.adaptive) {
      params.percentile = spec.adaptive->percentile;
      params.window_ms = spec.adaptive->window_ms;
      params.min_ms = spec.adaptive->min_ms;
      params.max_ms = spec.adaptive->max_ms;
      params.initial_ms = spec.adaptive->initial_ms;
    }
    try {
      AdaptiveOutOfOrdernessWatermarks::Validate(params);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(fmt::format("{}watermarks: {}", Where(spec.location), e.what()));
    }
    strategy = WatermarkStrategy(std::move(assigner), [params] {
      return std::make_unique<AdaptiveOutOfOrdernessWatermarks>(params);
    });
  } else if (spec.strategy == "sql-interval") {
    if (spec.max_out_of_orderness_ms < 0) {
      throw InvalidArgument(
          fmt::format("{}watermarks.max_out_of_orderness: must not be negative, got {} ms",
                      Where(spec.location), spec.max_out_of_orderness_ms));
    }
    const std::chrono::milliseconds interval(spec.max_out_of_orderness_ms);
    strategy = WatermarkStrategy(std::move(assigner), [interval] {
      return std::make_unique<SqlIntervalWatermarks>(interval);
    });
  } else if (spec.strategy == "monotonous") {
    strategy = WatermarkStrategy::ForMonotonousTimestamps(std::move(assigner));
  } else if (spec.strategy == "none") {
    strategy = WatermarkStrategy::NoWatermarks(std::move(assigner));
  } else if (spec.strategy == "punctuated") {
    if (spec.watermark_field.empty()) {
      throw InvalidArgument(
          fmt::format("{}watermarks.watermark_field: the punctuated strategy needs "
                      "the field that carries the watermark",
                      Where(spec.location)));
    }
    const int wm_slot =
        ResolveTimeField(spec, schema, spec.watermark_field, "watermark-field", *unit);
    const TimestampUnit u = *unit;
    strategy = WatermarkStrategy(std::move(assigner), [wm_slot, u] {
      return std::make_unique<PunctuatedWatermarks>(
          [wm_slot, u](const StreamRecord& record, Timestamp) -> std::optional<Timestamp> {
            return FieldToEventTimeMillis(record.row, wm_slot, u);
          },
          u == TimestampUnit::kMillis ? wm_slot : -1);
    });
  } else {
    throw InvalidArgument(fmt::format(
        "{}watermarks.strategy: expected one of bounded-out-of-orderness, "
        "adaptive-out-of-orderness, sql-interval, monotonous, punctuated, none, got '{}'",
        Where(spec.location), spec.strategy));
  }

  if (millis_slot >= 0) {
    strategy->SetInt64MillisField(millis_slot);  // before the copies made below
  }
  if (spec.idleness_ms) {
    if (*spec.idleness_ms <= 0) {
      throw InvalidArgument(
          fmt::format("{}watermarks.idleness: must be greater than 0 ms, got {} ms",
                      Where(spec.location), *spec.idleness_ms));
    }
    strategy = strategy->WithIdleness(std::chrono::milliseconds(*spec.idleness_ms));
  }
  if (spec.idle_advance_ms) {
    if (spec.strategy == "punctuated" || spec.strategy == "none") {
      throw InvalidArgument(
          fmt::format("{}watermarks.idle-advance: needs a strategy with a bound, not {}",
                      Where(spec.location), spec.strategy));
    }
    int64_t lag = 1;  // monotonous: max timestamp - 1 ms
    if (spec.strategy == "bounded-out-of-orderness") {
      lag = spec.max_out_of_orderness_ms + 1;
    } else if (spec.strategy == "sql-interval") {
      lag = spec.max_out_of_orderness_ms;
    } else if (spec.strategy == "adaptive-out-of-orderness" && spec.adaptive) {
      lag = spec.adaptive->max_ms + 1;
    }
    try {
      strategy = strategy->WithIdleAdvance(IdleAdvanceParams{*spec.idle_advance_ms, lag});
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(fmt::format("{}watermarks: {}", Where(spec.location), e.what()));
    }
  }
  if (spec.alignment) {
    try {
      strategy = strategy->WithAlignment(WatermarkAlignmentParams{
          spec.alignment->group, spec.alignment->max_drift_ms, spec.alignment->update_interval_ms});
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(
          fmt::format("{}watermarks.alignment: {}", Where(spec.location), e.what()));
    }
  }
  return *std::move(strategy);
}

}  // namespace tidemark
