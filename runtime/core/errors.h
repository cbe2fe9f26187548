#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace tidemark {

/// Base of every runtime failure tidemark throws. Thrown out of an operator it leaves the mailbox
/// loop, fails the task and then the job; the job's state records `what()` as the cause.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad argument to a component's constructor or method (Flink: IllegalArgumentException),
/// e.g. a negative out-of-orderness bound or a window size of 0.
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// An InvalidArgument about one key of a component's configuration: `key_path` names it the way
/// a job file writes it under the component's block ("path", "schema.v", "idle-periods[0].split"),
/// so the job compiler reports the error at that key's value instead of at the block.
/// `what()` is "<key_path>: <reason>".
class KeyedInvalidArgument : public InvalidArgument {
 public:
  KeyedInvalidArgument(std::string key_path, std::string reason)
      : InvalidArgument(key_path + ": " + reason),
        key_path_(std::move(key_path)),
        reason_(std::move(reason)) {}
  const std::string& key_path() const { return key_path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string key_path_;
  std::string reason_;
};

/// A record reached a component that needs a timestamp and had none.
class NoTimestamp : public Error {
 public:
  using Error::Error;
};

/// An I/O failure in a source or sink (file cannot be opened or written).
class IoError : public Error {
 public:
  using Error::Error;
};

/// Writing a snapshot's files into the checkpoint storage failed while the snapshot was taken
/// (an incremental RocksDB checkpoint's new SST files into `shared/`; a full disk, say). This is
/// Flink's asynchronous part of a checkpoint: the task declines the checkpoint, which counts
/// toward `tolerable-failed-checkpoints`, and runs on; the operator's state is untouched.
class CheckpointUploadError : public IoError {
 public:
  using IoError::IoError;
};

/// Input a source could not turn into a record, under the source's `errors: fail` (Flink's
/// `ignore-parse-errors: false`): `what()` names where it was read and why.
class BadInputError : public Error {
 public:
  using Error::Error;
};

/// The job was cancelled; thrown inside a task to unwind its loop. Not a failure.
class Cancelled : public Error {
 public:
  using Error::Error;
};

namespace internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace internal

}  // namespace tidemark

/// Always-on invariant check for bugs (never for user input): logs and aborts.
#define TM_CHECK(cond, ...)                                                                   \
  do {                                                                                        \
    if (!(cond)) [[unlikely]] {                                                               \
      ::tidemark::internal::CheckFailed(__FILE__, __LINE__, #cond, fmt::format(__VA_ARGS__)); \
    }                                                                                         \
  } while (false)

#ifdef NDEBUG
#define TM_DCHECK(cond, ...) \
  do {                       \
  } while (false)
#else
#define TM_DCHECK(cond, ...) TM_CHECK(cond, __VA_ARGS__)
#endif
