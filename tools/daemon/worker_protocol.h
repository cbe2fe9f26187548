#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/graph/job_execution.h"

namespace tidemark {

/// The daemon <-> worker protocol over a Unix socketpair: frames of a 4-byte little-endian length
/// followed by that many bytes of JSON text, one JSON object per frame with its kind in `"t"`.
///
///     daemon -> worker   {"t":"run","yaml":..,"file":..,"memory-limit":bytes,   first frame, once
///                         "checkpoint-dir":..,"restore-from":..,"allow-non-restored-state":bool,
///                         "run-lock":..} (DaemonRunOptions)
///                        {"t":"cancel"}
///                        {"t":"savepoint","request":n,"dir":..,"stop":bool,"drain":bool}
///                        {"t":"explain","request":n,"operator":..}     live explain (running)
///     worker -> daemon   {"t":"metrics","tasks":[..],"cause":..,"memory-exhausted":bool,
///                         "checkpoints":{..}}                                    ~10/s
///                        {"t":"log","lines":[..]}                               print-sink lines
///                        {"t":"savepoint","request":n,"ok":bool,"path":..,"error":..}  its outcome
///                        {"t":"explain","request":n,"text":..}          the live explanation
///                        {"t":"ended","state":..,"cause":..,"report":..|null,"tasks":[..],
///                         "explain":{op-id:text},"memory-exhausted":bool,"checkpoints":{..}}  last
///
/// A frame longer than `kMaxWorkerFrameBytes` or not a JSON object is a protocol error: the daemon
/// kills the worker and fails its job.
inline constexpr size_t kMaxWorkerFrameBytes = size_t{64} << 20;

/// Writes one frame; blocking, retries on EINTR, never raises SIGPIPE. Invalid UTF-8 in strings is
/// replaced by U+FFFD. False when the peer is gone. Not thread-safe per fd: callers serialize.
bool WriteWorkerFrame(int fd, const nlohmann::json& message);

/// Reads one whole frame, blocking. nullopt at end of stream, on a read error or a bad frame.
std::optional<std::string> ReadWorkerFrame(int fd);

/// Cuts frames out of bytes read in pieces (for a poll loop). Holds at most one partial frame.
class WorkerFrameReader {
 public:
  void Append(const char* data, size_t size) { buffer_.append(data, size); }
  /// The next complete frame's payload, if any. Sets `*error` (and returns nullopt) when the
  /// length prefix exceeds kMaxWorkerFrameBytes.
  std::optional<std::string> Next(std::string* error);

 private:
  std::string buffer_;
  size_t offset_ = 0;
};

/// SubtaskMetrics as JSON arrays (compact: sent about ten times a second) and back. `FromJson`
/// throws nlohmann::json::exception on a malformed value.
nlohmann::json MetricsToJson(const std::vector<SubtaskMetrics>& metrics);
std::vector<SubtaskMetrics> MetricsFromJson(const nlohmann::json& j);

/// "SIGKILL" for 9, "signal 64" for one without a name.
std::string SignalName(int signal);

}  // namespace tidemark
