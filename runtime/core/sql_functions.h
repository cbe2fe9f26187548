#pragma once

// Value-level helpers behind the Flink SQL scalar functions of the expression language
// (operators/expression.h): Java's DateTimeFormatter patterns as Flink's DATE_FORMAT /
// TO_TIMESTAMP use them, Java's number formatting and BigDecimal HALF_UP rounding, Flink's CAST
// parsing and calendar arithmetic on UTC epoch milliseconds. All are pure functions of their
// arguments: thread-safe, no global state.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tidemark {

/// A compiled `java.time.format.DateTimeFormatter` pattern (the subset Flink's DATE_FORMAT,
/// TO_TIMESTAMP and UNIX_TIMESTAMP use), always in UTC. Mirrors DateTimeFormatter.ofPattern.
///
/// Letters: `y` (year; `yy` two digits, 2000-based when parsing), `M` (`M`/`MM` number, `MMM`
/// `Jan`, `MMMM` `January`), `d`, `D` (day of year), `H` (0-23), `h` (1-12, with `a` AM/PM),
/// `m`, `s`, `S`... (fraction of a second, as many digits as letters), `E` (`EEE` `Mon`, `EEEE`
/// `Monday`; when parsing, it must be the date's day), `a`, `X` (`Z` for UTC), `Z` (`+0000`),
/// `'text'` (quoted literal, `''` is a quote), `[...]` (an optional section: printed when
/// formatting, skipped when parsing if the text does not match it); `{ } #` are reserved (an
/// error, as in Java); other non-letters are literals. Any other letter is an error. When
/// parsing, `X`..`XXXXX` and `Z`..`ZZZZZ` read Java's offset forms (`+01`, `+0100`, `+01:00`,
/// `GMT+01:00`, `Z`): TO_TIMESTAMP ignores the offset (Flink keeps the local fields), the
/// lenient UNIX_TIMESTAMP applies it (SimpleDateFormat).
/// Immutable after `Compile`; `Format`/`Parse` are const and thread-safe.
class DateTimePattern {
 public:
  /// Compiles `pattern`; nullopt with `*error` set ("pattern letter 'Q' is not supported").
  static std::optional<DateTimePattern> Compile(std::string_view pattern, std::string* error);

  /// Appends `epoch_ms` (UTC) formatted to `out`. Allocates only if `out` must grow.
  void Format(int64_t epoch_ms, std::string& out) const;
  /// Parses the whole of `text` (UTC) to epoch milliseconds, as Flink's
  /// DateTimeUtils.parseTimestampData: fields not in the pattern default to 1970-01-01 00:00:00;
  /// a day past the month's end (up to 31) becomes its last day (Java's SMART resolver).
  /// nullopt when the text does not match or a field is out of range. `lenient`: fields roll
  /// over instead (Feb 30 is Mar 2, hour 25 the next day), as Java's lenient SimpleDateFormat
  /// that Flink's UNIX_TIMESTAMP uses.
  std::optional<int64_t> Parse(std::string_view text, bool lenient = false) const;
  /// Whether the pattern reads a zone offset (`X` or `Z`), which `Parse` (strict) ignores.
  bool ReadsOffset() const;

 private:
  struct Item {
    char letter = 0;  ///< 0: `literal`; '[' / ']': an optional section's ends
    int count = 0;    ///< letters in a row; for '[', the index of its ']' item
    std::string literal;
  };
  struct ParseState;
  /// Parses items [begin, end) at `st.pos`; false if the text does not match.
  bool ParseItems(size_t begin, size_t end, std::string_view text, ParseState& st) const;

  std::vector<Item> items_;
};

/// Java's `Double.toString(d)` (Flink's CAST(DOUBLE AS STRING)): `1.0`, `0.001`, `1.0E7`,
/// `1.0E-4`, `NaN`, `Infinity`, `-0.0`; appended to `out`.
void AppendJavaDouble(double d, std::string& out);

/// Flink's ROUND(DOUBLE, d): `BigDecimal.valueOf(x).setScale(d, HALF_UP).doubleValue()` (so
/// ROUND(2.675, 2) is 2.68, as the decimal text of 2.675 is). NaN and infinities are returned.
double RoundHalfUp(double x, int64_t digits);
/// Flink's ROUND(BIGINT, d): d >= 0 returns x; d < 0 rounds to 10^-d, halves away from zero
/// (ROUND(125, -1) = 130, ROUND(-125, -1) = -130); wraps like Java's long on overflow.
int64_t RoundHalfUp(int64_t x, int64_t digits);

/// Flink's CAST(STRING AS BIGINT): trimmed, optional sign, digits, optionally a '.' and digits
/// (truncated; "7." and ".5" are numbers). nullopt when malformed or out of the int64 range.
std::optional<int64_t> ParseSqlInteger(std::string_view s);
/// Flink's CAST(STRING AS DOUBLE) (Java's Double.parseDouble of the trimmed text, `NaN`,
/// `Infinity` included). nullopt when malformed.
std::optional<double> ParseSqlDouble(std::string_view s);
/// Flink's CAST(STRING AS BOOLEAN): trimmed, any case; `true t yes y 1` / `false f no n 0`.
std::optional<bool> ParseSqlBoolean(std::string_view s);
/// Flink's CAST(STRING AS TIMESTAMP(3)) and one-argument TO_TIMESTAMP: `yyyy-M[M]-d[d]`,
/// optionally followed by ' ' and `H[H]:mm:ss[.fraction]`, not trimmed, UTC, to epoch
/// milliseconds (fraction truncated to ms); a day past the month's end (up to 31) becomes its
/// last day.
std::optional<int64_t> ParseSqlTimestamp(std::string_view s);
/// CAST(TIMESTAMP(3) AS STRING): `yyyy-MM-dd HH:mm:ss.SSS` (UTC), appended to `out`.
void AppendSqlTimestamp(int64_t epoch_ms, std::string& out);

/// A SQL time unit of EXTRACT, TIMESTAMPADD, TIMESTAMPDIFF and FLOOR/CEIL(ts TO unit).
enum class TimeUnit : uint8_t {
  kMillisecond,
  kSecond,
  kMinute,
  kHour,
  kDay,
  kWeek,
  kMonth,
  kQuarter,
  kYear,
  kDayOfWeek,  ///< EXTRACT(DOW): 1 = Sunday ... 7 = Saturday
  kDayOfYear,  ///< EXTRACT(DOY): 1 ... 366
};
/// `HOUR`, `hour`, ... (also `DOW`, `DOY`); nullopt if unknown.
std::optional<TimeUnit> ParseTimeUnit(std::string_view name);
const char* ToSql(TimeUnit unit);

/// EXTRACT(unit FROM ts), UTC. WEEK is the ISO week of the year.
int64_t ExtractField(TimeUnit unit, int64_t epoch_ms);
/// TIMESTAMPADD(unit, n, ts): calendar months clamp the day to the month's end (Java's
/// plusMonths); MILLISECOND..WEEK add fixed lengths. Wraps on overflow.
int64_t TimestampAdd(TimeUnit unit, int64_t n, int64_t epoch_ms);
/// TIMESTAMPDIFF(unit, from, to): whole units from `from` to `to`, truncated toward zero;
/// MONTH/QUARTER/YEAR count calendar months as Calcite does: the most months m with
/// TIMESTAMPADD(MONTH, m, from) <= to (so Jan 31 to Feb 28 is one month); negative when to < from.
int64_t TimestampDiff(TimeUnit unit, int64_t from_ms, int64_t to_ms);
/// FLOOR(ts TO unit) / CEIL(ts TO unit) (`ceil`), UTC, for MILLISECOND..DAY, MONTH, QUARTER,
/// YEAR (the caller rejects WEEK, DOW and DOY).
int64_t FloorTimestamp(TimeUnit unit, int64_t epoch_ms, bool ceil);

/// LOWER / UPPER (Java's toLowerCase / toUpperCase per code point): every Unicode letter through
/// glibc's C.UTF-8 tables (one code point to one; Java's few one-to-many mappings such as
/// U+0130 are not made). Malformed UTF-8 bytes are kept. Appended to `out`.
void AppendLower(std::string_view s, std::string& out);
void AppendUpper(std::string_view s, std::string& out);
/// ASCII letters only (SQL keywords, type names); other bytes kept. Appended to `out`.
void AppendAsciiLower(std::string_view s, std::string& out);
void AppendAsciiUpper(std::string_view s, std::string& out);
/// Number of UTF-8 code points (CHAR_LENGTH).
int64_t Utf8Length(std::string_view s);
/// The byte offset of code point `index` (0-based) in `s`, or s.size() if past the end.
size_t Utf8Offset(std::string_view s, int64_t index);

}  // namespace tidemark
