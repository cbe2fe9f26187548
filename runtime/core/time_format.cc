#include "runtime/core/time_format.h"

#include <atomic>
#include <chrono>
#include <cstdint>

#include <fmt/format.h>

namespace tidemark {
namespace {

std::atomic<TimeFormat> g_format{TimeFormat::kReadable};

// Below this magnitude an event time is a synthetic one (tests, examples: `9.149s`), not a date.
constexpr int64_t kEpochLooking = 100'000'000'000;  // 1e11 ms: 1973-03-03

// `n` of `unit` and, if not zero, `m` of `next`: "3m 27s", "3m".
std::string TwoUnits(int64_t n, const char* unit, int64_t m, const char* next) {
  return m == 0 ? fmt::format("{}{}", n, unit) : fmt::format("{}{} {}{}", n, unit, m, next);
}

}  // namespace

bool ParseTimeFormat(const std::string& text, TimeFormat* out) {
  if (text == "readable") {
    *out = TimeFormat::kReadable;
    return true;
  }
  if (text == "epoch-ms") {
    *out = TimeFormat::kEpochMs;
    return true;
  }
  return false;
}

void SetTimeFormat(TimeFormat format) {
  g_format.store(format);
}

TimeFormat CurrentTimeFormat() {
  return g_format.load();
}

std::string FormatIso8601(Timestamp ts) {
  if (ts == kMinTimestamp) {
    return "MIN";
  }
  if (ts == kMaxTimestamp) {
    return "MAX";
  }
  using std::chrono::days;
  using std::chrono::hh_mm_ss;
  using std::chrono::milliseconds;
  using std::chrono::sys_days;
  using std::chrono::sys_time;
  using std::chrono::year_month_day;
  const sys_time<milliseconds> tp{milliseconds{ts}};
  const sys_days day = floor<days>(tp);
  const year_month_day ymd{day};
  const hh_mm_ss<milliseconds> hms{tp - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     hms.hours().count(), hms.minutes().count(), hms.seconds().count(),
                     hms.subseconds().count());
}

std::string FormatEventTime(Timestamp ts, TimeFormat format) {
  if (format == TimeFormat::kEpochMs) {
    return std::to_string(ts);
  }
  if (ts == kMinTimestamp || ts == kMaxTimestamp || (ts > -kEpochLooking && ts < kEpochLooking)) {
    return FormatSeconds(ts);
  }
  return FormatIso8601(ts);
}

std::string FormatEventTime(Timestamp ts) {
  return FormatEventTime(ts, CurrentTimeFormat());
}

std::string FormatDuration(int64_t ms, TimeFormat format) {
  if (format == TimeFormat::kEpochMs) {
    return fmt::format("{}ms", ms);
  }
  if (ms < 0) {
    // -(MIN) overflows: a span that large is no duration anyone reads; clamp it.
    // (fmt rather than "-" + string: g++ 12 warns -Wrestrict on that concatenation.)
    return fmt::format("-{}", FormatDuration(ms == INT64_MIN ? INT64_MAX : -ms, format));
  }
  if (ms < 1000) {
    return fmt::format("{}ms", ms);
  }
  if (ms < 60'000) {
    return FormatSeconds(ms);  // 1.5s, 59.999s
  }
  const int64_t s = ms / 1000;
  if (s < 3600) {
    return TwoUnits(s / 60, "m", s % 60, "s");
  }
  if (s < 86'400) {
    return TwoUnits(s / 3600, "h", (s / 60) % 60, "m");
  }
  return TwoUnits(s / 86'400, "d", (s / 3600) % 24, "h");
}

std::string FormatDuration(int64_t ms) {
  return FormatDuration(ms, CurrentTimeFormat());
}

}  // namespace tidemark
