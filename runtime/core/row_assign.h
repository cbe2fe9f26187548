#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>

#include "runtime/core/row.h"

namespace tidemark {

/// `dst = src` for one cell, with the same result. When both hold the same scalar alternative
/// (NULL, int64, double, bool) it is a plain store: std::variant's own copy-assignment goes
/// through an out-of-line visitor table on every call, which was the largest per-record cost of
/// copying rows into recycled channel batches. Strings and changes of type fall back to
/// `dst = src`. Hot path: a compare and a store per scalar cell, no allocation.
inline void AssignValue(Value& dst, const Value& src) {
  if (dst.index() == src.index()) {
    switch (src.index()) {
      case 0:
        return;
      case 1:
        *std::get_if<int64_t>(&dst) = *std::get_if<int64_t>(&src);
        return;
      case 2:
        *std::get_if<double>(&dst) = *std::get_if<double>(&src);
        return;
      case 3:
        *std::get_if<bool>(&dst) = *std::get_if<bool>(&src);
        return;
      default:
        break;
    }
  }
  dst = src;
}

/// `dst = src` for a whole row, with the same result as the vector's copy-assignment but reusing
/// `dst`'s buffer cell by cell (no allocation when the widths match and no string grows).
inline void AssignRow(Row& dst, const Row& src) {
  if (dst.size() != src.size()) {
    dst = src;
    return;
  }
  for (size_t i = 0; i < src.size(); ++i) {
    AssignValue(dst[i], src[i]);
  }
}

}  // namespace tidemark
