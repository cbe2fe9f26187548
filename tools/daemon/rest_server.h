#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tools/daemon/daemon_paths.h"
#include "tools/daemon/job_manager.h"

namespace tidemark {

/// A file the daemon serves as is (the web dashboard's HTML, JS, CSS), built into the binary.
struct StaticAsset {
  std::string content_type;  ///< e.g. "text/html; charset=utf-8"
  std::string_view body;     ///< borrowed: static storage
};

/// How the daemon listens. At least one of `socket_path` and `tcp_port >= 0` must be set.
struct RestServerOptions {
  /// Unix domain socket path (at most 107 bytes); empty: none. Its directory is made private
  /// (0700), the socket is 0600, a stale socket is replaced and a live one makes `Start` fail.
  std::string socket_path{};
  /// TCP listening: `tcp_port < 0` disables it, 0 picks a free port (see `tcp_port()`), above
  /// 65535 makes `Start` fail.
  std::string tcp_host = "127.0.0.1";
  int tcp_port = -1;
  /// Without this, `tcp_host` must be a loopback address.
  bool allow_non_loopback = false;
  /// Required (`Authorization: Bearer <token>`) on every TCP request; must be set when TCP is on.
  std::string bearer_token{};

  size_t max_body_bytes = 1u << 20;  ///< larger requests get 413 and the connection is closed
  size_t max_header_bytes = 16u << 10;
  /// Further connections get a 503 `{"errors": [...]}` at once and are closed without being read;
  /// the server accepts again as soon as an open connection ends.
  size_t max_connections = 4096;
  std::chrono::milliseconds idle_timeout{
      30000};  ///< a connection idle (or slow) this long is closed
  /// GET paths served from memory ("/" is the dashboard's page), before any REST route and
  /// without the bearer token: they carry no job data, and a browser cannot send a header when
  /// it opens a page. The page asks for the token and sends it with every API request.
  std::map<std::string, StaticAsset> static_assets{};
};

/// The daemon's REST endpoint (Flink's RestServerEndpoint / WebMonitorEndpoint): HTTP/1.1 with
/// keep-alive over Boost.Beast, on a Unix domain socket and/or loopback TCP. Routes:
///
///     POST   /jobs                 YAML body (?file=NAME for diagnostics, &memory-limit=512m for
///     the
///                                  job's worker) -> 202 {"jid"} | 400 {"errors"}
///     GET    /jobs                 -> {"jobs": [...]}
///     GET    /jobs/{id}            -> details; 404 when unknown
///     GET    /jobs/{id}/exceptions -> {"root-exception", "timestamp", "restart-causes"}
///     GET    /jobs/{id}/logs       -> {"lines", "dropped"}
///     GET    /jobs/{id}/explain    ?operator=ID -> {"jid", "state", "operator", "explain"}: why
///     the
///                                  ended job's watermarks stood where they did; 409 while it runs
///     DELETE /jobs/{id}, PATCH /jobs/{id}  -> cancel: 202; 409 when already ended
///     GET    /metrics              -> Prometheus text
///     GET    /overview             -> counts and limits
///     GET    /jobs/overview        -> Flink's job overview (state, duration, task counts)
///     GET    /jobs/{id}/plan       -> the DAG: one node per task (chain), inputs with ship
///     strategy GET    /jobs/{id}/vertices/{vid}              -> subtasks with records, watermarks,
///     metrics GET    /jobs/{id}/vertices/{vid}/watermarks   -> [{"id": "0.currentInputWatermark",
///     "value"}] GET    /jobs/{id}/vertices/{vid}/backpressure -> ok / low / high per subtask and
///     vertex POST   /jobs/{id}/savepoints  {"target-directory", "cancel-job"} -> 202
///     {"request-id"} GET    /jobs/{id}/savepoints/{request-id}     -> the savepoint's status and
///     location POST   /jobs/{id}/stop        {"targetDirectory", "drain"} -> 202 {"request-id"}
///     GET    /jobs/{id}/checkpoints -> counts, latest and history (last 10), as Flink's
///     GET    /, static assets      -> the web dashboard (RestServerOptions::static_assets)
///     (views: rest_views.h; the table is `kRoutes` in rest_server.cc)
///
/// A path that fits a route whose method differs gets 405, one that fits none 404.
/// Errors are JSON `{"errors": ["..."]}` as in Flink's REST API. Malformed requests get 400, bodies
/// over the limit 413, then the connection is closed; the server keeps serving. Unix-socket peers
/// whose uid differs from the daemon's get 403.
///
/// Threading: one I/O thread runs every connection; handlers call the thread-safe JobManager.
/// A submission (`POST /jobs`) is compiled and validated on a pool of two threads instead, so a
/// large or pathological job never delays another client's request; at most 64 submissions wait
/// or are being validated at once, beyond that a submission gets 503 at once.
/// `Start` and `Stop` from one controlling thread. `jobs` must outlive this object.
class RestServer {
 public:
  RestServer(JobManager& jobs, RestServerOptions options);
  /// Calls `Stop`.
  ~RestServer();
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  /// Binds and starts serving. Throws DaemonSetupError (live daemon on the socket, directory not
  /// private, non-loopback address without permission, missing token, address in use).
  void Start();
  /// Stops accepting, closes connections, joins the I/O thread and removes the socket file (only
  /// if it is still the one this server created). Idempotent.
  void Stop();

  /// Hands the I/O work to a new thread and lets the current one end (pending requests wait a few
  /// microseconds). glibc keeps a cache of freed blocks per thread (tcache) that only goes back to
  /// the allocator when the thread ends; the I/O thread's cache, filled while jobs ran, holds on to
  /// pages all over the heap. The JobManager calls this when the daemon is idle and its history has
  /// expired, right before it trims the heap. No-op when not started. Thread-safe, except from the
  /// I/O thread itself.
  void RenewIoThread();

  /// The bound TCP port (after Start), -1 when TCP is off.
  int tcp_port() const { return bound_port_; }
  const RestServerOptions& options() const { return options_; }

  /// Connections currently open. Thread-safe.
  size_t open_connections() const { return connections_.load(); }

  struct Impl;

 private:
  JobManager& jobs_;
  RestServerOptions options_;
  int bound_port_ = -1;
  bool started_ = false;
  bool socket_created_ = false;
  unsigned long socket_inode_ = 0;
  std::atomic<size_t> connections_{0};
  std::unique_ptr<Impl> impl_;
  std::mutex io_thread_mu_;  // Stop / RenewIoThread
  std::thread io_thread_;
  void StartIoThread();  // requires io_thread_mu_
};

/// What a connection does with the bytes `bytes`, without a socket: parses them as pipelined
/// HTTP/1.1 requests with the parser and limits of `options` (the bearer token is not checked)
/// and routes each to `jobs`, until the bytes end, a request is incomplete or malformed, or one
/// asks to close. Returns the status code of each response, a parse error's 400 / 413 / 431
/// included. For tests and the fuzz target of the request path (tests/fuzz/); thread-safe as
/// `jobs` is.
std::vector<int> ServeBytes(JobManager& jobs, std::string_view bytes,
                            const RestServerOptions& options);

}  // namespace tidemark
