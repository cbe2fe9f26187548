#pragma once

// A counting replacement of the global allocation functions, for allocation tests: every
// `operator new` / `new[]` adds one to `tidemark::testing::AllocationCount()` and takes its
// memory from malloc. Include this header in exactly ONE source file of a test executable (it
// defines the replacements, which must exist once per program); never in tests/testing's
// library. Thread-safe (a relaxed atomic).

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace tidemark::testing {
inline std::atomic<int64_t> g_allocation_count{0};
/// Allocations so far in this process.
inline int64_t AllocationCount() {
  return g_allocation_count.load(std::memory_order_relaxed);
}
}  // namespace tidemark::testing

// operator delete frees what this operator new took from malloc (GCC cannot see that pairing).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  tidemark::testing::g_allocation_count.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) {
    return p;
  }
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return operator new(n);
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop
