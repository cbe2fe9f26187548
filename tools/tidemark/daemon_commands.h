#pragma once

#include <string>

#include "tools/daemon/daemon_client.h"

namespace tidemark {

/// Exit codes of the `tidemark` CLI (documented in docs/daemon.md).
inline constexpr int kExitOk = 0;
inline constexpr int kExitJobFailed = 1;    ///< the job ended FAILED or CANCELED
inline constexpr int kExitUsage = 2;        ///< bad arguments, invalid job, unknown job id
inline constexpr int kExitUnreachable = 3;  ///< no daemon answered

/// The daemon commands of `tidemark`. Each prints for a person by default and JSON with `json`,
/// and returns an exit code above. Errors go to stderr. Single-threaded.
class DaemonCommands {
 public:
  explicit DaemonCommands(DaemonEndpoint endpoint) : client_(std::move(endpoint)) {}

  /// `memory_limit`: the job's worker memory limit as typed ("" = the daemon's).
  /// `from_savepoint`: a savepoint / checkpoint directory to start from ("" = fresh).
  int Submit(const std::string& job_path, bool wait, bool json,
             const std::string& memory_limit = "", const std::string& from_savepoint = "",
             bool allow_non_restored_state = false);
  /// `tidemark savepoint ID [DIR]` (`stop` false) and `tidemark stop ID [--savepoint DIR]
  /// [--drain]`: triggers the savepoint, waits for its outcome and prints its path. Exit 1 when it
  /// failed or the job had already ended; 2 for an unknown job.
  int Savepoint(const std::string& id, const std::string& dir, bool stop, bool drain, bool json);
  int List(bool json);
  int Status(const std::string& id, bool json);
  int Cancel(const std::string& id);
  int Logs(const std::string& id, bool json);
  /// `tidemark explain ID [OPERATOR]`: the ended job's watermark explanation (as `run --explain`
  /// prints it). Exit 1 while the job runs; 2 for an unknown job or operator.
  int Explain(const std::string& id, const std::string& operator_id, bool json);

 private:
  /// Sends a request; on an unreachable daemon prints the error with a hint and returns false.
  bool Call(const std::string& method, const std::string& target, const std::string& body,
            DaemonClient::Response* out);
  /// Prints the `errors` of an error answer to stderr and returns the exit code for it. A 404 for
  /// `id` prints one line naming the id. Error lines starting with `sent_file` + ":" show
  /// `shown_file` instead (the path as the user typed it).
  int ReportError(const DaemonClient::Response& r, const std::string& id,
                  const std::string& sent_file = "", const std::string& shown_file = "");

  DaemonClient client_;
};

}  // namespace tidemark
