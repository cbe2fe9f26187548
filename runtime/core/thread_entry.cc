#include "runtime/core/thread_entry.h"

#include <cstdio>
#include <new>
#include <sys/resource.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace tidemark {

std::optional<uint64_t> AddressSpaceLimitBytes() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return std::nullopt;
  }
  return static_cast<uint64_t>(limit.rlim_cur);
}

std::string OutOfMemoryCause(std::optional<uint64_t> address_space_limit_bytes) {
  if (!address_space_limit_bytes) {
    return "out of memory (std::bad_alloc): the machine has no memory left";
  }
  return fmt::format(
      "out of memory (std::bad_alloc) under the process's address-space limit of {} MiB "
      "(RLIMIT_AS: tidemarkd --worker-memory-limit or ulimit -v)",
      *address_space_limit_bytes / (uint64_t{1024} * 1024));
}

std::string FailureCause(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    return OutOfMemoryCause(AddressSpaceLimitBytes());
  }
  return e.what();
}

void RunThreadEntry(const char* thread, const std::function<void()>& body,
                    const std::function<void(const std::string& cause)>& on_failure) noexcept {
  std::exception_ptr error;
  try {
    body();
    return;
  } catch (...) {
    error = std::current_exception();
  }
  try {
    std::string cause = "unknown exception";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      cause = FailureCause(e);
    } catch (...) {  // NOLINT(bugprone-empty-catch): the default cause above
    }
    error = nullptr;  // frees what the exception held before the handler allocates
    on_failure(cause);
  } catch (...) {
    // Still out of memory: nothing that allocates can report it. fputs does not allocate.
    std::fputs("tidemark: ", stderr);
    std::fputs(thread, stderr);
    std::fputs(": failed and could not report why (out of memory?)\n", stderr);
  }
}

void InstallLoggingErrorHandler() {
  // spdlog hands its own failures (std::bad_alloc while formatting, say) to this handler; the
  // default one formats a time stamp. A fixed line cannot fail again.
  spdlog::set_error_handler([](const std::string& msg) {
    std::fputs("tidemark: logging failed: ", stderr);
    std::fputs(msg.c_str(), stderr);
    std::fputs("\n", stderr);
  });
}

}  // namespace tidemark
