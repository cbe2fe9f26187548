#pragma once

#include <cstdint>
#include <string>

#include "runtime/core/timestamp.h"

namespace tidemark {

/// How times are printed where a person reads them (CLI progress line, `run --metrics`, `analyze`,
/// `explain`, `status`, the daemon's text answers). Sinks never use it: they keep their numbers.
enum class TimeFormat {
  /// Event times that look like epochs (at least 1e11 ms from 1970, i.e. after March 1973 or
  /// before 1967) as ISO-8601 UTC with milliseconds: `2001-04-24T10:16:59.999Z`; smaller ones
  /// (synthetic test times) as seconds, `9.149s`; the sentinels as `MIN` (Long.MIN_VALUE: no
  /// watermark yet) and `MAX` (Long.MAX_VALUE: end of input). Durations as `250ms`, `1.5s`,
  /// `3m 27s`, `1h 2m`, `2d 3h`.
  kReadable,
  /// For scripts (`--time-format epoch-ms`): event times as the integer milliseconds since the
  /// epoch, sentinels included (`-9223372036854775808`), durations as `<n>ms`.
  kEpochMs,
};

/// Parses a `--time-format` value: "readable" or "epoch-ms"; false for anything else.
bool ParseTimeFormat(const std::string& text, TimeFormat* out);

/// The process-wide format, set once by the CLI from `--time-format` before anything prints
/// (default kReadable). Thread-safe (an atomic).
void SetTimeFormat(TimeFormat format);
TimeFormat CurrentTimeFormat();

/// An event time (a watermark, a record's timestamp, a window bound) in the current format.
std::string FormatEventTime(Timestamp ts);
/// An event time in `format`, whatever the process-wide setting.
std::string FormatEventTime(Timestamp ts, TimeFormat format);
/// `ts` as ISO-8601 UTC with milliseconds, `2001-04-24T10:16:59.999Z`, for any ts but the
/// sentinels (which print as `MIN` / `MAX`).
std::string FormatIso8601(Timestamp ts);

/// A span of time in milliseconds (a lag, a job's duration, how far one watermark trails another)
/// in the current format: the two largest units, rounded down (`1h 2m`, `3m 27s`), seconds with
/// up to 3 decimals below a minute (`1.5s`), `250ms` below a second; negative with a `-`.
std::string FormatDuration(int64_t ms);
std::string FormatDuration(int64_t ms, TimeFormat format);

}  // namespace tidemark
