#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "config/job_spec.h"
#include "runtime/core/errors.h"
#include "runtime/core/row.h"
#include "runtime/eventtime/watermark_strategy.h"
#include "runtime/graph/operator_registry.h"

namespace tidemark {

/// How a timestamp field is encoded (`watermarks.timestamp_unit`).
enum class TimestampUnit { kMillis, kSeconds, kMicros, kNanos, kIso8601 };

/// Parses "ms" | "s" | "us" | "ns" | "iso8601"; nullopt otherwise.
std::optional<TimestampUnit> ParseTimestampUnit(std::string_view s);

/// Converts one field value to event-time milliseconds.
/// - int64 in s: multiplied by 1000; nullopt if that overflows int64.
/// - int64 in us / ns: divided with flooring (-1 us is -1 ms), so ordering is preserved.
/// - double: scaled the same way, then floored; nullopt if not finite or out of int64 range.
/// - string (unit kIso8601 only): `ParseIso8601Millis`.
/// - NULL, bool, or a type that does not fit the unit: nullopt (the record has no timestamp).
/// - a result of `kMinTimestamp` (Long.MIN_VALUE, the "no timestamp" marker): nullopt.
std::optional<Timestamp> ValueToEventTimeMillis(const Value& value, TimestampUnit unit);

/// Parses an ISO-8601 / RFC-3339 date-time into ms since the epoch (UTC):
/// `YYYY-MM-DD`, optionally followed by `T` (or `t`, or one space) and `HH:MM[:SS[.fraction]]`,
/// optionally followed by a zone: `Z`, `z`, `+HH:MM`, `-HH:MM`, `+HHMM` or `+HH`. Without a zone
/// the time is taken as UTC (never as the machine's local time, so results do not depend on where
/// a job runs). Fractions longer than milliseconds are truncated. Fields are range-checked (month
/// 1-12, day within the month, hour < 24, minute < 60, second < 60, zone hour < 24).
/// Returns nullopt for anything else.
std::optional<Timestamp> ParseIso8601Millis(std::string_view text);

/// Builds the `WatermarkStrategy` described by a job's `watermarks:` block for rows of `schema`.
///
/// - `timestamp_field` is resolved to a slot here, once; empty keeps the record's own timestamp.
///   The field's type must fit `timestamp_unit`: int64/double with ms|s|us|ns, `timestamp` with ms
///   (it already is ms), string with iso8601. With `timestamp_format` (a Java DateTimeFormatter
///   pattern, runtime/core/sql_functions.h's DateTimePattern, UTC) the field must be a string and
///   each value is parsed with the pattern; one that does not match gives no timestamp.
/// - `strategy`: `bounded-out-of-orderness` (`max_out_of_orderness_ms` >= 0),
///   `adaptive-out-of-orderness` (`adaptive`, validated again here), `monotonous`,
///   `punctuated` (needs `watermark_field`: a record whose field is non-NULL emits that value,
///   converted with the same unit, as a watermark right after itself), or `none`.
/// - `idleness_ms` (> 0) wraps generators in `WatermarksWithIdleness`; `alignment` is stored.
///
/// A record whose timestamp field is NULL or unconvertible gets no timestamp from the assigner
/// (nullopt); the operator reports it, it is never stamped 0.
/// Throws `KeyedInvalidArgument` naming the key at fault, as the job writes it (`timestamp-unit`,
/// `timestamp-field`, `watermark-field`), for an unknown unit, a missing field or a type/unit
/// mismatch: the compiler reports it at that key (`WatermarksCompileError`). Other problems (an
/// unknown strategy, a bad number) throw `InvalidArgument` with a message prefixed by the spec's
/// `file:line:column` (when known).
WatermarkStrategy MakeWatermarkStrategy(const WatermarkStrategySpec& spec, const Schema& schema);

/// Why `MakeWatermarkStrategy(spec, schema)`'s assigner gives `record` no timestamp, for the
/// source's error report (the part after "no timestamp: "), naming the field and, shortened to
/// 100 bytes, its value: "field 'ts' is missing or NULL", "field 'ts': '2026-02-30T00:00:00Z' is
/// not an ISO-8601 date-time ...", "field 'ts': 9223372036854776 s is outside the int64 range of
/// ms since the epoch", "... does not match timestamp-format ...", "field 'ts' is Long.MIN_VALUE
/// ...". Only meaningful for a record the assigner refused; a spec without `timestamp_field` (the
/// record's own timestamp) gets the general reason. Any thread; `spec` and `schema` as validated
/// by a `MakeWatermarkStrategy` that succeeded.
std::string NoTimestampReason(const WatermarkStrategySpec& spec, const Schema& schema,
                              const StreamRecord& record);

/// The CompileError of a `MakeWatermarkStrategy` failure: a keyed one at its key's value in the
/// `watermarks:` block (`watermarks.timestamp-unit`, one location), others at the block.
CompileError WatermarksCompileError(const WatermarkStrategySpec& spec, const InvalidArgument& e);
WatermarkStrategy MakeWatermarkStrategy(const WatermarkStrategySpec& spec, const Schema& schema);

}  // namespace tidemark
