#pragma once

#include <cstddef>
#include <cstdint>

namespace tidemark {

/// Requests every 64-byte cache line of [p, p + bytes) for a read a little later (a loop over
/// many rows or keys, a few ahead of use). Changes nothing; any address is safe. Always inlined,
/// as every prefetch helper: GCC takes an out-of-line copy for a pure function and deletes the
/// call.
[[gnu::always_inline]] inline void PrefetchLines(const void* p, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(p);
  for (uintptr_t line = begin & ~uintptr_t{63}; line < begin + bytes; line += 64) {
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address to prefetch, never dereferenced.
    __builtin_prefetch(reinterpret_cast<const void*>(line));
  }
}

}  // namespace tidemark
