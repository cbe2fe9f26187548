#pragma once

#include <chrono>
#include <string>

#include "runtime/core/errors.h"

namespace tidemark {

/// The daemon could not be reached (no socket, connection refused, timeout, connection closed
/// before an answer). `what()` names the endpoint and the system error.
class DaemonUnreachable : public Error {
 public:
  using Error::Error;
};

/// Where a client finds the daemon: a Unix socket path, or `http://HOST:PORT` with a token.
struct DaemonEndpoint {
  std::string socket_path;  ///< used when `url` is empty
  std::string url;          ///< `http://127.0.0.1:8081` (no path)
  std::string token;        ///< bearer token for TCP; empty: no Authorization header

  /// `unix:/path` or the URL, for messages.
  std::string ToString() const;
};

/// A minimal synchronous HTTP/1.1 client for the daemon's REST API (the `tidemark` CLI and tests).
/// One connection per request. Not thread-safe per object; use one client per thread.
class DaemonClient {
 public:
  explicit DaemonClient(DaemonEndpoint endpoint,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30))
      : endpoint_(std::move(endpoint)), timeout_(timeout) {}

  struct Response {
    int status = 0;
    std::string body;
  };

  /// Sends `method target` with `body` and returns the answer. Throws DaemonUnreachable when no
  /// whole answer arrives within the timeout (sending and reading together; a daemon that accepts
  /// but never answers included); throws InvalidArgument for a malformed URL.
  Response Request(const std::string& method, const std::string& target,
                   const std::string& body = "",
                   const std::string& content_type = "application/yaml");

  const DaemonEndpoint& endpoint() const { return endpoint_; }

 private:
  DaemonEndpoint endpoint_;
  std::chrono::milliseconds timeout_;
};

}  // namespace tidemark
