#include "runtime/core/timestamp.h"

#include <cstdlib>

#include <fmt/format.h>

namespace tidemark {

std::string FormatSeconds(Timestamp ts) {
  if (ts == kMinTimestamp) {
    return "MIN";
  }
  if (ts == kMaxTimestamp) {
    return "MAX";
  }
  // Work on the magnitude so that -1500 prints as -1.5s rather than -2.500s.
  const bool negative = ts < 0;
  const uint64_t mag = negative ? static_cast<uint64_t>(-(ts + 1)) + 1 : static_cast<uint64_t>(ts);
  std::string out = fmt::format("{}{}", negative ? "-" : "", mag / 1000);
  uint64_t ms = mag % 1000;
  if (ms != 0) {
    std::string frac = fmt::format("{:03d}", ms);
    while (frac.back() == '0') {
      frac.pop_back();
    }
    out += "." + frac;
  }
  return out + "s";
}

}  // namespace tidemark
