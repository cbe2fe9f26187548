#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <string>

namespace tidemark {

/// The process's address-space limit (RLIMIT_AS, soft) in bytes; nullopt when unlimited or
/// unknown. This is the limit `tidemarkd --worker-memory-limit` and `ulimit -v` set.
std::optional<uint64_t> AddressSpaceLimitBytes();

/// The cause a job reports for a failed allocation (`std::bad_alloc`), naming the limit it ran
/// into: "out of memory (std::bad_alloc) under the process's address-space limit of 4096 MiB
/// (RLIMIT_AS: tidemarkd --worker-memory-limit or ulimit -v)", or, without a limit, "out of memory
/// (std::bad_alloc): the machine has no memory left". May throw (it allocates).
std::string OutOfMemoryCause(std::optional<uint64_t> address_space_limit_bytes);

/// The cause to report for an exception that ended a task or a runtime thread: the
/// OutOfMemoryCause of the current limit for `std::bad_alloc`, else `e.what()`. May throw.
std::string FailureCause(const std::exception& e);

/// Runs the body of a thread the runtime starts (task thread, timer thread, job master, virtual
/// clock driver) so that no exception leaves it: an exception is turned into a cause (see
/// FailureCause; "unknown exception" for a non-std one) and handed to `on_failure`. When
/// computing the cause or `on_failure` itself throws (memory is still short), a fixed message
/// goes to stderr instead, so the process still does not std::terminate.
/// `thread` names the thread in that message (a string literal). Never throws.
void RunThreadEntry(const char* thread, const std::function<void()>& body,
                    const std::function<void(const std::string& cause)>& on_failure) noexcept;

/// Routes errors inside spdlog (a failed format or allocation while logging) to a fixed stderr
/// line instead of spdlog's default handler, for every logger made now and later. Idempotent.
void InstallLoggingErrorHandler();

}  // namespace tidemark
