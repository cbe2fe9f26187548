#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

namespace tidemark {

/// Describes a file type for messages: "a regular file", "a directory", "a FIFO", "a character
/// device", "a block device", "a socket", else "not a regular file". Pure.
const char* FileKind(mode_t mode);

/// Opens `path` for reading as a regular file only: the open is O_NONBLOCK (a FIFO without a
/// writer cannot block it, nor a device's open), then `fstat` decides, and only then is the file
/// read (blocking again). Every reader of a path a user or a client names uses it (the job file,
/// a checkpoint's `_metadata` and state files), so none can hang on a FIFO or read a device.
/// Returns the open descriptor (the caller closes it) or -1 with `*error` set to a sentence
/// fragment: the open's strerror, or "it is a FIFO, not a regular file" (or a character device,
/// a block device, a socket, a directory). Any thread.
int OpenRegularFile(const std::string& path, std::string* error);

/// The whole of a regular file (OpenRegularFile), read in chunks and refused once it exceeds
/// `max_bytes` ("it is larger than N bytes"); nullopt with `*error` set on any failure.
std::optional<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes,
                                           std::string* error);

}  // namespace tidemark
