#include "runtime/core/sql_functions.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <locale.h>
#include <wctype.h>

#include <fmt/format.h>

namespace tidemark {
namespace {

constexpr int64_t kMsPerSecond = 1000;
constexpr int64_t kMsPerMinute = 60 * kMsPerSecond;
constexpr int64_t kMsPerHour = 60 * kMsPerMinute;
constexpr int64_t kMsPerDay = 24 * kMsPerHour;

constexpr std::array<const char*, 12> kMonths = {"January",   "February", "March",    "April",
                                                 "May",       "June",     "July",     "August",
                                                 "September", "October",  "November", "December"};
// Monday first, as java.time.DayOfWeek.
constexpr std::array<const char*, 7> kDays = {"Monday", "Tuesday",  "Wednesday", "Thursday",
                                              "Friday", "Saturday", "Sunday"};

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) {
    --q;
  }
  return q;
}

/// A UTC instant broken into calendar fields.
struct Civil {
  int64_t year = 1970;
  unsigned month = 1;  // 1..12
  unsigned day = 1;    // 1..31
  int64_t ms_of_day = 0;
  int64_t days = 0;  // since 1970-01-01
};

/// std::chrono::year holds -32767..32767: instants are clamped to about +-30000 years (a
/// timestamp beyond that gives defined nonsense, never undefined behaviour).
constexpr int64_t kMaxCivilDays = 10'950'000;

Civil ToCivil(int64_t epoch_ms) {
  using std::chrono::days;
  using std::chrono::sys_days;
  using std::chrono::year_month_day;
  Civil c;
  c.days = std::clamp(FloorDiv(epoch_ms, kMsPerDay), -kMaxCivilDays, kMaxCivilDays);
  c.ms_of_day = epoch_ms - c.days * kMsPerDay;
  const year_month_day ymd{sys_days{days{c.days}}};
  c.year = static_cast<int>(ymd.year());
  c.month = static_cast<unsigned>(ymd.month());
  c.day = static_cast<unsigned>(ymd.day());
  return c;
}

int64_t DaysFromCivil(int64_t year, unsigned month, unsigned day) {
  const std::chrono::sys_days d{std::chrono::year{static_cast<int>(year)} /
                                std::chrono::month{month} / std::chrono::day{day}};
  return d.time_since_epoch().count();
}

unsigned LastDay(int64_t year, unsigned month) {
  const std::chrono::year_month_day_last last{std::chrono::year{static_cast<int>(year)} /
                                              std::chrono::month{month} / std::chrono::last};
  return static_cast<unsigned>(last.day());
}

/// 0 = Monday ... 6 = Sunday.
int DayOfWeekIndex(int64_t days) {
  // 1970-01-01 was a Thursday (index 3).
  return static_cast<int>(((days % 7) + 7 + 3) % 7);
}

void AppendPadded(int64_t v, int width, std::string& out) {
  if (v < 0) {
    out += '-';
    v = -v;
  }
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  const auto len = static_cast<int>(r.ptr - buf);
  if (len < width) {
    out.append(static_cast<size_t>(width - len), '0');
  }
  out.append(buf, r.ptr);
}

bool IsPatternLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') {
    s.remove_prefix(1);
  }
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') {
    s.remove_suffix(1);
  }
  return s;
}

/// Reads exactly `n` digits (n > 0) or, with `greedy`, 1 to `n` digits.
bool ReadDigits(std::string_view text, size_t& pos, int n, bool greedy, int64_t& value) {
  const size_t start = pos;
  value = 0;
  while (pos < text.size() && pos - start < static_cast<size_t>(n) &&
         std::isdigit(static_cast<unsigned char>(text[pos])) != 0) {
    value = value * 10 + (text[pos] - '0');
    ++pos;
  }
  const size_t got = pos - start;
  return greedy ? got >= 1 : got == static_cast<size_t>(n);
}

bool IsNumericLetter(char c) {
  return std::string_view("yMdDHhmsS").find(c) != std::string_view::npos;
}

}  // namespace

std::optional<DateTimePattern> DateTimePattern::Compile(std::string_view pattern,
                                                        std::string* error) {
  DateTimePattern p;
  std::vector<size_t> open;  // the '[' items not yet closed
  for (size_t i = 0; i < pattern.size();) {
    const char c = pattern[i];
    if (c == '\'') {
      std::string lit;
      size_t j = i + 1;
      if (j < pattern.size() && pattern[j] == '\'') {
        p.items_.push_back(Item{0, 0, "'"});
        i = j + 1;
        continue;
      }
      bool closed = false;
      for (; j < pattern.size(); ++j) {
        if (pattern[j] == '\'') {
          if (j + 1 < pattern.size() && pattern[j + 1] == '\'') {
            lit += '\'';
            ++j;
            continue;
          }
          closed = true;
          break;
        }
        lit += pattern[j];
      }
      if (!closed) {
        *error = "unterminated quote in the pattern";
        return std::nullopt;
      }
      p.items_.push_back(Item{0, 0, std::move(lit)});
      i = j + 1;
      continue;
    }
    if (c == '{' || c == '}' || c == '#') {
      *error = fmt::format("the pattern includes the reserved character '{}'", c);
      return std::nullopt;
    }
    if (c == '[') {             // optional section: `count` becomes the index of its ']'
      if (open.size() >= 32) {  // parsing recurses once per level
        *error = "optional sections nest deeper than 32 levels";
        return std::nullopt;
      }
      open.push_back(p.items_.size());
      p.items_.push_back(Item{'[', 0, {}});
      ++i;
      continue;
    }
    if (c == ']') {
      if (open.empty()) {
        *error = "the pattern has a ']' without a '[' before it";
        return std::nullopt;
      }
      p.items_[open.back()].count = static_cast<int>(p.items_.size());
      open.pop_back();
      p.items_.push_back(Item{']', 0, {}});
      ++i;
      continue;
    }
    if (!IsPatternLetter(c)) {
      p.items_.push_back(Item{0, 0, std::string(1, c)});
      ++i;
      continue;
    }
    size_t j = i;
    while (j < pattern.size() && pattern[j] == c) {
      ++j;
    }
    const int count = static_cast<int>(j - i);
    if (std::string_view("yMdDHhmsSEaXZ").find(c) == std::string_view::npos) {
      *error = fmt::format(
          "pattern letter '{}' is not supported (supported: y M d D H h m s S E "
          "a X Z and 'quoted text')",
          c);
      return std::nullopt;
    }
    const bool too_many =
        (std::string_view("dHhms").find(c) != std::string_view::npos && count > 2) ||
        (c == 'D' && count > 3) || (c == 'M' && count > 5) || (c == 'E' && count > 5) ||
        (c == 'a' && count > 1) || (c == 'S' && count > 9) || (c == 'X' && count > 5) ||
        (c == 'Z' && count > 5) || (c == 'y' && count > 19);
    if (too_many) {
      *error = fmt::format("too many pattern letters: {}", c);
      return std::nullopt;
    }
    p.items_.push_back(Item{c, count, {}});
    i = j;
  }
  // An unclosed '[' ends with the pattern, as in Java.
  for (const size_t at : open) {
    p.items_[at].count = static_cast<int>(p.items_.size());
    p.items_.push_back(Item{']', 0, {}});
  }
  return p;
}

void DateTimePattern::Format(int64_t epoch_ms, std::string& out) const {
  const Civil c = ToCivil(epoch_ms);
  const int64_t hour = c.ms_of_day / kMsPerHour;
  for (const Item& it : items_) {
    switch (it.letter) {
      case '[':
      case ']':
        break;  // every field of a timestamp is there: optional sections print
      case 0:
        out += it.literal;
        break;
      case 'y':
        if (it.count == 2) {
          AppendPadded(((c.year % 100) + 100) % 100, 2, out);
        } else {
          AppendPadded(c.year, it.count, out);
        }
        break;
      case 'M':
        if (it.count >= 3) {
          const std::string_view name = kMonths[c.month - 1];
          out += it.count == 3 ? name.substr(0, 3) : it.count == 4 ? name : name.substr(0, 1);
        } else {
          AppendPadded(c.month, it.count, out);
        }
        break;
      case 'd':
        AppendPadded(c.day, it.count, out);
        break;
      case 'D':
        AppendPadded(c.days - DaysFromCivil(c.year, 1, 1) + 1, it.count, out);
        break;
      case 'H':
        AppendPadded(hour, it.count, out);
        break;
      case 'h':
        AppendPadded(hour % 12 == 0 ? 12 : hour % 12, it.count, out);
        break;
      case 'm':
        AppendPadded((c.ms_of_day / kMsPerMinute) % 60, it.count, out);
        break;
      case 's':
        AppendPadded((c.ms_of_day / kMsPerSecond) % 60, it.count, out);
        break;
      case 'S': {
        // The fraction's first `count` digits (nanoseconds: ms * 10^6).
        std::string digits;
        AppendPadded((c.ms_of_day % kMsPerSecond) * 1000000, 9, digits);
        out += digits.substr(0, static_cast<size_t>(it.count));
        break;
      }
      case 'E': {
        const std::string_view name = kDays[static_cast<size_t>(DayOfWeekIndex(c.days))];
        out += it.count == 4 ? name : it.count == 5 ? name.substr(0, 1) : name.substr(0, 3);
        break;
      }
      case 'a':
        out += hour < 12 ? "AM" : "PM";
        break;
      case 'X':
        out += 'Z';
        break;
      case 'Z':
        out += it.count == 4 ? "GMT" : it.count == 5 ? "Z" : "+0000";
        break;
      default:
        break;
    }
  }
}

namespace {

/// Java's offset parser (DateTimeFormatterBuilder.appendOffset) for `X`..`XXXXX`, `Z`..`ZZZZZ`:
/// a sign, two hour digits, then minutes (after ':' when `colon`; optional unless
/// `minutes_required`) and optional seconds (`seconds`). `zero_text` ("Z", "+0000" or "GMT")
/// stands for a zero offset. Sets `offset_s` (seconds east of UTC).
bool ReadOffset(std::string_view text, size_t& pos, std::string_view zero_text, bool colon,
                bool minutes_required, bool seconds, bool gmt_prefix, int64_t& offset_s) {
  if (gmt_prefix) {
    if (text.substr(pos, 3) != "GMT") {
      return false;
    }
    pos += 3;
    if (pos >= text.size() || (text[pos] != '+' && text[pos] != '-')) {
      offset_s = 0;
      return true;
    }
  } else if (!zero_text.empty() && text.substr(pos, zero_text.size()) == zero_text) {
    pos += zero_text.size();
    offset_s = 0;
    return true;
  }
  if (pos >= text.size() || (text[pos] != '+' && text[pos] != '-')) {
    return false;
  }
  const int64_t sign = text[pos] == '-' ? -1 : 1;
  size_t p = pos + 1;
  int64_t h = 0;
  int64_t m = 0;
  int64_t sec = 0;
  // GMT+1:00 (the localized form) takes one or two hour digits; the others exactly two.
  if (!ReadDigits(text, p, 2, gmt_prefix, h) || h > 18) {
    return false;
  }
  auto read_part = [&](int64_t& v, bool required) {
    size_t q = p;
    if (colon) {
      if (q >= text.size() || text[q] != ':') {
        return !required;
      }
      ++q;
    }
    int64_t got = 0;
    if (!ReadDigits(text, q, 2, false, got) || got > 59) {
      return !required;
    }
    v = got;
    p = q;
    return true;
  };
  if (!read_part(m, minutes_required)) {
    return false;
  }
  if (seconds && !read_part(sec, false)) {
    return false;
  }
  pos = p;
  offset_s = sign * (h * 3600 + m * 60 + sec);
  return true;
}

}  // namespace

bool DateTimePattern::ReadsOffset() const {
  return std::any_of(items_.begin(), items_.end(),
                     [](const Item& it) { return it.letter == 'X' || it.letter == 'Z'; });
}

struct DateTimePattern::ParseState {
  int64_t year = 1970;
  int64_t month = 1;
  int64_t day = 1;
  int64_t day_of_year = -1;
  int64_t day_of_week = -1;  ///< 0 = Monday; -1: not in the text
  int64_t hour = 0;
  int64_t hour12 = -1;
  int64_t pm = -1;
  int64_t minute = 0;
  int64_t second = 0;
  int64_t nanos = 0;
  int64_t offset_s = 0;
  size_t pos = 0;
};

bool DateTimePattern::ParseItems(size_t begin, size_t end, std::string_view text,
                                 ParseState& st) const {
  size_t& pos = st.pos;
  for (size_t i = begin; i < end; ++i) {
    const Item& it = items_[i];
    const bool next_numeric =
        i + 1 < end && items_[i + 1].letter != 0 && IsNumericLetter(items_[i + 1].letter);
    int64_t v = 0;
    switch (it.letter) {
      case '[': {
        // An optional section (Java's optionalStart): parsed if it can be, else nothing of it.
        const auto close = static_cast<size_t>(it.count);
        ParseState trial = st;
        if (ParseItems(i + 1, close, text, trial)) {
          st = trial;
        }
        i = close;  // the loop's ++i steps past the ']'
        break;
      }
      case ']':
        break;
      case 0:
        if (text.substr(pos, it.literal.size()) != it.literal) {
          return false;
        }
        pos += it.literal.size();
        break;
      case 'y':
        if (it.count == 2) {
          if (!ReadDigits(text, pos, 2, false, v)) {
            return false;
          }
          st.year = 2000 + v;
        } else {
          // Java: at least `count` digits (4 for yyyy), more only when no number follows.
          const int width = std::max(it.count, 1);
          if (next_numeric) {
            if (!ReadDigits(text, pos, width, false, v)) {
              return false;
            }
          } else {
            const size_t start = pos;
            if (!ReadDigits(text, pos, std::max(width, 9), true, v) ||
                pos - start < static_cast<size_t>(width)) {
              return false;
            }
          }
          st.year = v;
        }
        break;
      case 'M':
        if (it.count >= 3) {
          bool found = false;
          for (size_t m = 0; m < kMonths.size() && !found; ++m) {
            const std::string_view name = kMonths[m];
            const std::string_view want = it.count == 3 ? name.substr(0, 3) : name;
            if (text.substr(pos, want.size()) == want) {
              st.month = static_cast<int64_t>(m) + 1;
              pos += want.size();
              found = true;
            }
          }
          if (!found) {
            return false;
          }
          break;
        }
        [[fallthrough]];
      case 'd':
      case 'D':
      case 'H':
      case 'h':
      case 'm':
      case 's': {
        const bool greedy = it.count == 1 && !next_numeric;
        if (!ReadDigits(text, pos, greedy ? (it.letter == 'D' ? 3 : 2) : it.count, greedy, v)) {
          return false;
        }
        switch (it.letter) {
          case 'M':
            st.month = v;
            break;
          case 'd':
            st.day = v;
            break;
          case 'D':
            st.day_of_year = v;
            break;
          case 'H':
            st.hour = v;
            break;
          case 'h':
            st.hour12 = v;
            break;
          case 'm':
            st.minute = v;
            break;
          default:
            st.second = v;
            break;
        }
        break;
      }
      case 'S': {
        if (!ReadDigits(text, pos, it.count, false, v)) {
          return false;
        }
        for (int k = it.count; k < 9; ++k) {
          v *= 10;
        }
        st.nanos = v;
        break;
      }
      case 'E': {
        bool found = false;
        for (size_t k = 0; k < kDays.size() && !found; ++k) {
          const std::string_view name = kDays[k];
          const std::string_view want = it.count == 4 ? name : name.substr(0, 3);
          if (text.substr(pos, want.size()) == want) {
            pos += want.size();
            st.day_of_week = static_cast<int64_t>(k);
            found = true;
          }
        }
        if (!found) {
          return false;
        }
        break;
      }
      case 'a':
        if (text.substr(pos, 2) == "AM" || text.substr(pos, 2) == "PM") {
          st.pm = text[pos] == 'P' ? 1 : 0;
          pos += 2;
        } else {
          return false;
        }
        break;
      case 'X':
        // X +HHmm, XX +HHMM, XXX +HH:MM, XXXX +HHMMss, XXXXX +HH:MM:ss; Z for zero.
        if (!ReadOffset(text, pos, "Z", it.count == 3 || it.count == 5, it.count >= 2,
                        it.count >= 4, false, st.offset_s)) {
          return false;
        }
        break;
      case 'Z':
        // Z..ZZZ +HHMM (+0000 for zero), ZZZZ GMT+HH:MM, ZZZZZ +HH:MM:ss (Z for zero).
        if (!ReadOffset(text, pos,
                        it.count <= 3   ? "+0000"
                        : it.count == 5 ? "Z"
                                        : "",
                        it.count >= 4, true, it.count == 5, it.count == 4, st.offset_s)) {
          return false;
        }
        break;
      default:
        return false;
    }
  }
  return true;
}

std::optional<int64_t> DateTimePattern::Parse(std::string_view text, bool lenient) const {
  ParseState st;
  if (!ParseItems(0, items_.size(), text, st)) {
    return std::nullopt;
  }
  const size_t pos = st.pos;
  int64_t& year = st.year;
  int64_t& month = st.month;
  int64_t& day = st.day;
  int64_t& day_of_year = st.day_of_year;
  int64_t& hour = st.hour;
  const int64_t hour12 = st.hour12;
  const int64_t pm = st.pm;
  int64_t& minute = st.minute;
  int64_t& second = st.second;
  int64_t& nanos = st.nanos;
  if (pos != text.size()) {
    return std::nullopt;  // Java: "unparsed text found"
  }
  if (hour12 >= 0) {
    if (hour12 < 1 || hour12 > 12) {
      return std::nullopt;
    }
    hour = (hour12 % 12) + (pm == 1 ? 12 : 0);
  } else if (pm >= 0 && hour < 12) {
    hour += pm == 1 ? 12 : 0;
  }
  if (year > 29'000) {  // beyond std::chrono::year (and any real data)
    return std::nullopt;
  }
  if (lenient && day_of_year < 0) {
    // SimpleDateFormat's lenient calendar: every field rolls over into the next.
    const int64_t months = year * 12 + month - 1;
    const int64_t y = FloorDiv(months, 12);
    const int64_t days = DaysFromCivil(y, static_cast<unsigned>(months - y * 12 + 1), 1) + day - 1;
    // SimpleDateFormat applies a parsed zone offset (Z, X): the instant, in UTC.
    return days * kMsPerDay + hour * kMsPerHour + minute * kMsPerMinute + second * kMsPerSecond +
           nanos / 1000000 - st.offset_s * kMsPerSecond;
  }
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59 ||
      year > 999999999) {
    return std::nullopt;
  }
  int64_t days = 0;
  if (day_of_year >= 0) {
    const int64_t year_days = DaysFromCivil(year + 1, 1, 1) - DaysFromCivil(year, 1, 1);
    if (day_of_year < 1 || day_of_year > year_days) {
      return std::nullopt;
    }
    days = DaysFromCivil(year, 1, 1) + day_of_year - 1;
  } else {
    const unsigned last = LastDay(year, static_cast<unsigned>(month));
    days = DaysFromCivil(year, static_cast<unsigned>(month),
                         std::min(static_cast<unsigned>(day), last));
  }
  if (st.day_of_week >= 0 && DayOfWeekIndex(days) != st.day_of_week) {
    return std::nullopt;  // Java: "Conflict found: Field DayOfWeek ... differs"
  }
  // A parsed offset is not applied: Flink's TO_TIMESTAMP takes the text's local fields
  // (DateTimeUtils.parseTimestampData builds a LocalDateTime from them).
  return days * kMsPerDay + hour * kMsPerHour + minute * kMsPerMinute + second * kMsPerSecond +
         nanos / 1000000;
}

namespace {
/// The shortest round-trip decimal digits of finite non-zero |d| (no trailing zeros) and the
/// exponent of the first digit: |d| = d1.d2... * 10^exp10. Fixed storage: no allocation.
struct Digits {
  char digits[32];
  size_t size = 0;
  int exp10 = 0;
  std::string_view view() const { return {digits, size}; }
};

Digits ShortestDigits(double d) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, std::fabs(d), std::chars_format::scientific);
  const std::string_view s(buf, static_cast<size_t>(r.ptr - buf));
  const size_t e = s.find('e');
  Digits out;
  for (char c : s.substr(0, e)) {
    if (c != '.') {
      out.digits[out.size++] = c;
    }
  }
  const std::string_view exp = s.substr(e + 1);
  std::from_chars(exp.data() + (exp[0] == '+' ? 1 : 0), exp.data() + exp.size(), out.exp10);
  while (out.size > 1 && out.digits[out.size - 1] == '0') {
    --out.size;
  }
  return out;
}
}  // namespace

void AppendJavaDouble(double d, std::string& out) {
  if (std::isnan(d)) {
    out += "NaN";
    return;
  }
  if (std::isinf(d)) {
    out += d < 0 ? "-Infinity" : "Infinity";
    return;
  }
  if (std::signbit(d)) {
    out += '-';
  }
  if (d == 0) {
    out += "0.0";
    return;
  }
  const Digits sd = ShortestDigits(d);
  const std::string_view digits = sd.view();
  const int exp10 = sd.exp10;
  const double a = std::fabs(d);
  if (a >= 1e-3 && a < 1e7) {
    if (exp10 >= 0) {
      const auto int_len = static_cast<size_t>(exp10) + 1;
      out += digits.substr(0, std::min(int_len, digits.size()));
      out.append(int_len > digits.size() ? int_len - digits.size() : 0, '0');
      out += '.';
      if (int_len < digits.size()) {
        out += digits.substr(int_len);
      } else {
        out += '0';
      }
    } else {
      out += "0.";
      out.append(static_cast<size_t>(-exp10 - 1), '0');
      out += digits;
    }
    return;
  }
  out += digits[0];
  out += '.';
  if (digits.size() > 1) {
    out += digits.substr(1);
  } else {
    out += '0';
  }
  out += 'E';
  char e[16];
  out.append(e, std::to_chars(e, e + sizeof e, exp10).ptr);
}

double RoundHalfUp(double x, int64_t digits) {
  if (!std::isfinite(x) || x == 0) {
    return x;
  }
  // Fast path: |x| * 10^d well inside 2^52 and not near a half, where rounding the binary value
  // decides as rounding its decimal text does; n / 10^d of exact integers is then the double
  // nearest the rounded decimal, as strtod below gives.
  static constexpr double kPow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                      1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  if (digits >= 0 && digits < 16) {
    const double p = kPow10[digits];
    const double y = std::fabs(x) * p;
    if (y < 1e15) {
      const double whole = std::floor(y);
      const double frac = y - whole;
      if (std::fabs(frac - 0.5) > 1e-6) {
        const double n = frac > 0.5 ? whole + 1 : whole;
        return std::copysign(n / p, x) == 0 ? 0.0 : std::copysign(n / p, x);
      }
    }
  }
  Digits d = ShortestDigits(x);
  // Digits kept: those before 10^-digits.
  const int64_t keep = static_cast<int64_t>(d.exp10) + 1 + std::clamp<int64_t>(digits, -400, 400);
  if (keep >= static_cast<int64_t>(d.size)) {
    return x;
  }
  if (keep < 0) {
    return 0.0;
  }
  // kept digits, rounded half up, times 10^(exp10 + 1 - keep); text for strtod, no allocation.
  char text[64];
  size_t n = 0;
  if (x < 0) {
    text[n++] = '-';
  }
  text[n++] = '0';  // room for a carry out of the first digit
  const size_t first = n;
  for (int64_t i = 0; i < keep; ++i) {
    text[n++] = d.digits[i];
  }
  if (d.digits[keep] >= '5') {
    size_t i = n;
    while (i > first - 1 && text[i - 1] == '9') {
      text[--i] = '0';
    }
    ++text[i - 1];
  }
  text[n++] = 'e';
  n = static_cast<size_t>(
      std::to_chars(text + n, text + sizeof text - 1, static_cast<int64_t>(d.exp10) + 1 - keep)
          .ptr -
      text);
  text[n] = '\0';
  return std::strtod(text, nullptr);
}

int64_t RoundHalfUp(int64_t x, int64_t digits) {
  if (digits >= 0) {
    return x;
  }
  if (digits < -18) {
    return 0;
  }
  int64_t p = 1;
  for (int64_t i = 0; i < -digits; ++i) {
    p *= 10;
  }
  const int64_t r = x % p;  // sign of x
  const auto base = static_cast<uint64_t>(x) - static_cast<uint64_t>(r);
  const uint64_t ar = r < 0 ? 0 - static_cast<uint64_t>(r) : static_cast<uint64_t>(r);
  if (ar * 2 >= static_cast<uint64_t>(p)) {
    return static_cast<int64_t>(x < 0 ? base - static_cast<uint64_t>(p)
                                      : base + static_cast<uint64_t>(p));
  }
  return static_cast<int64_t>(base);
}

std::optional<int64_t> ParseSqlInteger(std::string_view s) {
  s = Trim(s);
  size_t i = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    ++i;
  }
  const size_t digits_start = i;
  uint64_t v = 0;
  constexpr uint64_t kLimit = static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0; ++i) {
    const auto digit = static_cast<uint64_t>(s[i] - '0');
    if (v > (kLimit - digit) / 10) {
      return std::nullopt;
    }
    v = v * 10 + digit;
  }
  size_t digits = i - digits_start;
  if (i < s.size()) {
    if (s[i] != '.') {
      return std::nullopt;
    }
    for (++i; i < s.size(); ++i, ++digits) {
      if (std::isdigit(static_cast<unsigned char>(s[i])) == 0) {
        return std::nullopt;
      }
    }
  }
  if (digits == 0) {  // Flink takes "7." and ".5", not "." or ""
    return std::nullopt;
  }
  if (!negative && v == kLimit) {
    return std::nullopt;
  }
  return negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

std::optional<double> ParseSqlDouble(std::string_view s) {
  s = Trim(s);
  if (s.empty()) {
    return std::nullopt;
  }
  std::string_view body = s;
  const bool negative = body[0] == '-';
  if (body[0] == '-' || body[0] == '+') {
    body.remove_prefix(1);
  }
  if (body == "NaN") {
    return std::nan("");
  }
  if (body == "Infinity") {
    return negative ? -HUGE_VAL : HUGE_VAL;
  }
  // Java accepts a trailing d/D/f/F type suffix.
  if (!body.empty() && std::string_view("dDfF").find(body.back()) != std::string_view::npos) {
    body.remove_suffix(1);
  }
  double v = 0;
  const auto r = std::from_chars(body.data(), body.data() + body.size(), v);
  if (r.ptr != body.data() + body.size() || body.empty() || body[0] == '-' || body[0] == '+') {
    return std::nullopt;
  }
  if (r.ec == std::errc::result_out_of_range) {
    // A well-formed number past double's range: Java's Double.parseDouble gives Infinity above
    // it and 0 (or the nearest subnormal) below, as strtod does; from_chars leaves `v` unset.
    v = std::strtod(std::string(body).c_str(), nullptr);
  } else if (r.ec != std::errc()) {
    return std::nullopt;
  }
  return negative ? -v : v;
}

std::optional<bool> ParseSqlBoolean(std::string_view s) {
  s = Trim(s);
  std::string lower;
  AppendAsciiLower(s, lower);
  if (lower == "true" || lower == "t" || lower == "yes" || lower == "y" || lower == "1") {
    return true;
  }
  if (lower == "false" || lower == "f" || lower == "no" || lower == "n" || lower == "0") {
    return false;
  }
  return std::nullopt;
}

std::optional<int64_t> ParseSqlTimestamp(std::string_view s) {
  // As Flink 2.3 (checked): no trimming, 1- or 2-digit month, day and hour, seconds required
  // when a time is given, a day past the month's end (up to 31) becomes its last day.
  size_t pos = 0;
  int64_t year = 0;
  int64_t month = 0;
  int64_t day = 0;
  int64_t hour = 0;
  int64_t minute = 0;
  int64_t second = 0;
  int64_t ms = 0;
  auto literal = [&](char c) {
    if (pos < s.size() && s[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  };
  if (!ReadDigits(s, pos, 4, false, year) || !literal('-') || !ReadDigits(s, pos, 2, true, month) ||
      !literal('-') || !ReadDigits(s, pos, 2, true, day)) {
    return std::nullopt;
  }
  if (pos < s.size()) {
    if (!literal(' ') || !ReadDigits(s, pos, 2, true, hour) || !literal(':') ||
        !ReadDigits(s, pos, 2, false, minute) || !literal(':') ||
        !ReadDigits(s, pos, 2, false, second)) {
      return std::nullopt;
    }
    if (literal('.')) {
      int64_t frac = 0;
      const size_t start = pos;
      if (!ReadDigits(s, pos, 9, true, frac)) {
        return std::nullopt;
      }
      for (size_t k = pos - start; k < 9; ++k) {
        frac *= 10;
      }
      ms = frac / 1000000;
    }
  }
  if (pos != s.size() || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 ||
      minute > 59 || second > 59) {
    return std::nullopt;
  }
  const unsigned d =
      std::min(static_cast<unsigned>(day), LastDay(year, static_cast<unsigned>(month)));
  return DaysFromCivil(year, static_cast<unsigned>(month), d) * kMsPerDay + hour * kMsPerHour +
         minute * kMsPerMinute + second * kMsPerSecond + ms;
}

void AppendSqlTimestamp(int64_t epoch_ms, std::string& out) {
  const Civil c = ToCivil(epoch_ms);
  AppendPadded(c.year, 4, out);
  out += '-';
  AppendPadded(c.month, 2, out);
  out += '-';
  AppendPadded(c.day, 2, out);
  out += ' ';
  AppendPadded(c.ms_of_day / kMsPerHour, 2, out);
  out += ':';
  AppendPadded((c.ms_of_day / kMsPerMinute) % 60, 2, out);
  out += ':';
  AppendPadded((c.ms_of_day / kMsPerSecond) % 60, 2, out);
  out += '.';
  AppendPadded(c.ms_of_day % kMsPerSecond, 3, out);
}

std::optional<TimeUnit> ParseTimeUnit(std::string_view name) {
  std::string up;
  AppendAsciiUpper(name, up);
  static constexpr std::pair<std::string_view, TimeUnit> kUnits[] = {
      {"MILLISECOND", TimeUnit::kMillisecond},
      {"SECOND", TimeUnit::kSecond},
      {"MINUTE", TimeUnit::kMinute},
      {"HOUR", TimeUnit::kHour},
      {"DAY", TimeUnit::kDay},
      {"WEEK", TimeUnit::kWeek},
      {"MONTH", TimeUnit::kMonth},
      {"QUARTER", TimeUnit::kQuarter},
      {"YEAR", TimeUnit::kYear},
      {"DOW", TimeUnit::kDayOfWeek},
      {"DOY", TimeUnit::kDayOfYear}};
  for (const auto& [n, u] : kUnits) {
    if (up == n) {
      return u;
    }
  }
  return std::nullopt;
}

const char* ToSql(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kMillisecond:
      return "MILLISECOND";
    case TimeUnit::kSecond:
      return "SECOND";
    case TimeUnit::kMinute:
      return "MINUTE";
    case TimeUnit::kHour:
      return "HOUR";
    case TimeUnit::kDay:
      return "DAY";
    case TimeUnit::kWeek:
      return "WEEK";
    case TimeUnit::kMonth:
      return "MONTH";
    case TimeUnit::kQuarter:
      return "QUARTER";
    case TimeUnit::kYear:
      return "YEAR";
    case TimeUnit::kDayOfWeek:
      return "DOW";
    case TimeUnit::kDayOfYear:
      return "DOY";
  }
  return "DAY";
}

int64_t ExtractField(TimeUnit unit, int64_t epoch_ms) {
  const Civil c = ToCivil(epoch_ms);
  switch (unit) {
    case TimeUnit::kMillisecond:
      return c.ms_of_day % kMsPerSecond;
    case TimeUnit::kSecond:
      return (c.ms_of_day / kMsPerSecond) % 60;
    case TimeUnit::kMinute:
      return (c.ms_of_day / kMsPerMinute) % 60;
    case TimeUnit::kHour:
      return c.ms_of_day / kMsPerHour;
    case TimeUnit::kDay:
      return c.day;
    case TimeUnit::kMonth:
      return c.month;
    case TimeUnit::kQuarter:
      return (c.month - 1) / 3 + 1;
    case TimeUnit::kYear:
      return c.year;
    case TimeUnit::kDayOfWeek:
      return (DayOfWeekIndex(c.days) + 1) % 7 + 1;  // Sunday = 1
    case TimeUnit::kDayOfYear:
      return c.days - DaysFromCivil(c.year, 1, 1) + 1;
    case TimeUnit::kWeek: {
      // ISO 8601: week 1 holds the year's first Thursday.
      const int64_t thursday = c.days - DayOfWeekIndex(c.days) + 3;
      const Civil t = ToCivil(thursday * kMsPerDay);
      return (thursday - DaysFromCivil(t.year, 1, 1)) / 7 + 1;
    }
  }
  return 0;
}

namespace {
int64_t FixedUnitMs(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::kMillisecond:
      return 1;
    case TimeUnit::kSecond:
      return kMsPerSecond;
    case TimeUnit::kMinute:
      return kMsPerMinute;
    case TimeUnit::kHour:
      return kMsPerHour;
    case TimeUnit::kDay:
      return kMsPerDay;
    case TimeUnit::kWeek:
      return 7 * kMsPerDay;
    default:
      return 0;
  }
}
int64_t MonthsOf(TimeUnit unit) {
  return unit == TimeUnit::kYear ? 12 : unit == TimeUnit::kQuarter ? 3 : 1;
}
}  // namespace

int64_t TimestampAdd(TimeUnit unit, int64_t n, int64_t epoch_ms) {
  if (const int64_t ms = FixedUnitMs(unit); ms > 0) {
    return static_cast<int64_t>(static_cast<uint64_t>(epoch_ms) +
                                static_cast<uint64_t>(n) * static_cast<uint64_t>(ms));
  }
  const Civil c = ToCivil(epoch_ms);
  // Clamped to the civil range (see kMaxCivilDays): no overflow for any n.
  const int64_t months = std::clamp<int64_t>(n, -1'000'000, 1'000'000) * MonthsOf(unit);
  const int64_t total = std::clamp<int64_t>(int64_t{c.year} * 12 + (c.month - 1) + months,
                                            int64_t{-29'000} * 12, int64_t{29'000} * 12);
  const int64_t year = FloorDiv(total, 12);
  const auto month = static_cast<unsigned>(total - year * 12 + 1);
  const unsigned day = std::min(c.day, LastDay(year, month));
  return DaysFromCivil(year, month, day) * kMsPerDay + c.ms_of_day;
}

int64_t TimestampDiff(TimeUnit unit, int64_t from_ms, int64_t to_ms) {
  if (const int64_t ms = FixedUnitMs(unit); ms > 0) {
    // Truncated toward zero, in unsigned arithmetic: to - from can exceed int64.
    const bool forward = to_ms >= from_ms;
    const uint64_t d = forward ? static_cast<uint64_t>(to_ms) - static_cast<uint64_t>(from_ms)
                               : static_cast<uint64_t>(from_ms) - static_cast<uint64_t>(to_ms);
    const uint64_t q = d / static_cast<uint64_t>(ms);
    return static_cast<int64_t>(forward ? q : 0 - q);
  }
  if (to_ms < from_ms) {
    return -TimestampDiff(unit, to_ms, from_ms);
  }
  // Calcite's (Flink's) rule: the most months m with from + m months <= to, where adding months
  // clamps the day to the month's end (Jan 31 + 1 month = Feb 28, so that is one month).
  const Civil a = ToCivil(from_ms);
  const Civil b = ToCivil(to_ms);
  int64_t months = (b.year * 12 + b.month) - (a.year * 12 + a.month);
  if (months > 0 && TimestampAdd(TimeUnit::kMonth, months, from_ms) > to_ms) {
    --months;
  }
  return months / MonthsOf(unit);
}

int64_t FloorTimestamp(TimeUnit unit, int64_t epoch_ms, bool ceil) {
  int64_t floor = 0;
  if (const int64_t ms = FixedUnitMs(unit); ms > 0 && unit != TimeUnit::kWeek) {
    // Wrapping (unsigned) at the ends of the int64 range instead of undefined behaviour.
    floor = static_cast<int64_t>(static_cast<uint64_t>(FloorDiv(epoch_ms, ms)) *
                                 static_cast<uint64_t>(ms));
    return ceil && floor != epoch_ms
               ? static_cast<int64_t>(static_cast<uint64_t>(floor) + static_cast<uint64_t>(ms))
               : floor;
  }
  const Civil c = ToCivil(epoch_ms);
  const unsigned month = unit == TimeUnit::kYear      ? 1
                         : unit == TimeUnit::kQuarter ? (c.month - 1) / 3 * 3 + 1
                                                      : c.month;
  floor = DaysFromCivil(c.year, month, 1) * kMsPerDay;
  return ceil && floor != epoch_ms ? TimestampAdd(unit, 1, floor) : floor;
}

namespace {
/// glibc's C.UTF-8 locale (built in since 2.35): its towlower/towupper map every Unicode letter.
/// Null if unavailable; then only ASCII letters are mapped.
locale_t Utf8Locale() {
  static const locale_t kLocale =
      newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
  return kLocale;
}

void AppendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

void AppendMapped(std::string_view s, std::string& out, bool lower) {
  const locale_t locale = Utf8Locale();
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      out += static_cast<char>(lower ? (c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c)
                                     : (c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c));
      ++i;
      continue;
    }
    // A UTF-8 sequence: decoded, mapped and encoded again; a malformed byte is kept as is.
    const size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    uint32_t cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0F : c & 0x1F;
    bool ok = len > 1 && i + len <= s.size() && locale != static_cast<locale_t>(nullptr);
    for (size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      ok = (b & 0xC0) == 0x80;
      cp = (cp << 6) | (b & 0x3F);
    }
    if (!ok) {
      out += s[i];
      ++i;
      continue;
    }
    const auto mapped = static_cast<uint32_t>(lower ? towlower_l(static_cast<wint_t>(cp), locale)
                                                    : towupper_l(static_cast<wint_t>(cp), locale));
    AppendUtf8(mapped, out);
    i += len;
  }
}
}  // namespace

void AppendLower(std::string_view s, std::string& out) {
  AppendMapped(s, out, true);
}

void AppendUpper(std::string_view s, std::string& out) {
  AppendMapped(s, out, false);
}

void AppendAsciiLower(std::string_view s, std::string& out) {
  const size_t at = out.size();
  out.append(s);
  for (size_t i = at; i < out.size(); ++i) {
    if (out[i] >= 'A' && out[i] <= 'Z') {
      out[i] = static_cast<char>(out[i] - 'A' + 'a');
    }
  }
}

void AppendAsciiUpper(std::string_view s, std::string& out) {
  const size_t at = out.size();
  out.append(s);
  for (size_t i = at; i < out.size(); ++i) {
    if (out[i] >= 'a' && out[i] <= 'z') {
      out[i] = static_cast<char>(out[i] - 'a' + 'A');
    }
  }
}

int64_t Utf8Length(std::string_view s) {
  int64_t n = 0;
  for (char c : s) {
    n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  }
  return n;
}

size_t Utf8Offset(std::string_view s, int64_t index) {
  int64_t n = -1;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && ++n == index) {
      return i;
    }
  }
  return s.size();
}

}  // namespace tidemark
