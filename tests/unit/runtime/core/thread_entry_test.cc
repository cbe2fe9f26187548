#include "runtime/core/thread_entry.h"

#include <new>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

TEST(ThreadEntryTest, OutOfMemoryCauseNamesTheAddressSpaceLimit) {
  EXPECT_EQ(OutOfMemoryCause(uint64_t{4096} * 1024 * 1024),
            "out of memory (std::bad_alloc) under the process's address-space limit of 4096 MiB "
            "(RLIMIT_AS: tidemarkd --worker-memory-limit or ulimit -v)");
  EXPECT_EQ(OutOfMemoryCause(std::nullopt),
            "out of memory (std::bad_alloc): the machine has no memory left");
}

TEST(ThreadEntryTest, FailureCauseKeepsOtherMessages) {
  EXPECT_EQ(FailureCause(std::runtime_error("disk full")), "disk full");
  EXPECT_EQ(FailureCause(std::bad_alloc()), OutOfMemoryCause(AddressSpaceLimitBytes()));
}

TEST(ThreadEntryTest, BodyExceptionGoesToTheHandlerNotTerminate) {
  std::string cause;
  int calls = 0;
  RunThreadEntry(
      "test", [] { throw std::bad_alloc(); },
      [&](const std::string& c) {
        cause = c;
        ++calls;
      });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cause, OutOfMemoryCause(AddressSpaceLimitBytes()));
}

TEST(ThreadEntryTest, ThrowingHandlerDoesNotEscape) {
  int calls = 0;
  RunThreadEntry(
      "test", [] { throw std::runtime_error("first"); },
      [&](const std::string&) {
        ++calls;
        throw std::bad_alloc();
      });
  EXPECT_EQ(calls, 1);  // reached here: nothing escaped
}

TEST(ThreadEntryTest, BodyWithoutExceptionDoesNotCallTheHandler) {
  int calls = 0;
  int ran = 0;
  RunThreadEntry(
      "test", [&] { ++ran; }, [&](const std::string&) { ++calls; });
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace tidemark
