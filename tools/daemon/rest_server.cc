#include "tools/daemon/rest_server.h"

#include <cerrno>
#include <cstring>
#include <optional>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <system_error>
#include <unistd.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "config/job_loader.h"
#include "runtime/core/asio.h"
#include "runtime/core/logging.h"
#include "runtime/core/thread_entry.h"
#include "tools/daemon/rest_views.h"
#include "tools/daemon/worker.h"

namespace tidemark {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

Response MakeResponse(http::status status, std::string body, const char* content_type) {
  Response res{status, 11};
  res.set(http::field::server, "tidemarkd");
  res.set(http::field::content_type, content_type);
  res.body() = std::move(body);
  return res;
}

Response JsonResponse(http::status status, const nlohmann::json& j) {
  // Job names, causes and log lines carry the job's bytes, which need not be UTF-8: replace
  // invalid sequences with U+FFFD rather than throw, which failed every GET /jobs while such a
  // job was in the history.
  return MakeResponse(status,
                      j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n",
                      "application/json");
}

Response ErrorResponse(http::status status, const std::vector<std::string>& errors) {
  return JsonResponse(status, nlohmann::json{{"errors", errors}});
}

std::string UrlDecode(std::string_view in) {
  std::string out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size()) {
      const std::string hex(in.substr(i + 1, 2));
      char* end = nullptr;
      const long v = std::strtol(hex.c_str(), &end, 16);
      if (end == hex.c_str() + 2) {
        out += static_cast<char>(v);
        i += 2;
        continue;
      }
    }
    out += in[i] == '+' ? ' ' : in[i];
  }
  return out;
}

std::string QueryParam(std::string_view query, std::string_view key) {
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t amp = query.find('&', pos);
    if (amp == std::string_view::npos) {
      amp = query.size();
    }
    std::string_view kv = query.substr(pos, amp - pos);
    const size_t eq = kv.find('=');
    if (kv.substr(0, eq) == key) {
      return eq == std::string_view::npos ? std::string() : UrlDecode(kv.substr(eq + 1));
    }
    pos = amp + 1;
  }
  return {};
}

int64_t NowMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool ValidJobId(std::string_view id) {
  if (id.empty() || id.size() > 64) {
    return false;
  }
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') {
      return false;
    }
  }
  return true;
}

/// GET /jobs/{id}/explain[?operator=ID]: 200 {"jid", "state", "operator", "live",
/// "operator-found", "explain"} (a
/// running job: live, from its tasks); 409 when a running job did not answer (it was ending); 404
/// for an unknown job, or an operator the job does not have.
Response ExplainResponse(JobManager& jobs, const std::string& id, const std::string& operator_id) {
  std::optional<nlohmann::json> j = jobs.ExplainJson(id, operator_id);
  if (!j) {
    return ErrorResponse(http::status::not_found, {fmt::format("no such job: {}", id)});
  }
  if ((*j)["explain"].is_null()) {
    if ((*j)["operator-found"] == true && (*j)["state"] == "RUNNING") {
      return ErrorResponse(
          http::status::conflict,
          {fmt::format("job {} did not answer (it is ending or restarting); ask again", id)});
    }
    return ErrorResponse(
        http::status::not_found,
        {operator_id.empty() ? fmt::format("job {} has no explanation: it never ran its tasks", id)
                             : fmt::format("job {} has no operator '{}'", id, operator_id)});
  }
  return JsonResponse(http::status::ok, *j);
}

/// POST /jobs/{id}/savepoints {"target-directory", "cancel-job"}, POST /jobs/{id}/stop
/// {"targetDirectory", "drain"} (both 202 {"request-id"}), GET /jobs/{id}/savepoints/{request-id}
/// and GET /jobs/{id}/checkpoints, named as Flink's.
Response CheckpointRoute(JobManager& jobs, http::verb verb, const std::string& id,
                         std::string_view what, const std::string& request_id,
                         const std::string& body) {
  if (!ValidJobId(id)) {
    return ErrorResponse(http::status::not_found, {fmt::format("no such job: {}", id)});
  }
  if (what == "checkpoints" || !request_id.empty()) {
    if ((what == "checkpoints" && !request_id.empty()) || (what == "stop" && !request_id.empty())) {
      return ErrorResponse(http::status::not_found, {"not found"});
    }
    if (verb != http::verb::get) {
      return ErrorResponse(http::status::method_not_allowed, {"method not allowed"});
    }
    std::optional<nlohmann::json> j =
        what == "checkpoints" ? jobs.CheckpointsJson(id) : jobs.SavepointStatusJson(id, request_id);
    if (!j) {
      return ErrorResponse(http::status::not_found,
                           {what == "checkpoints" ? fmt::format("no such job: {}", id)
                                                  : fmt::format("no savepoint request {} of job {}",
                                                                request_id, id)});
    }
    return JsonResponse(http::status::ok, *j);
  }
  if (verb != http::verb::post) {
    return ErrorResponse(http::status::method_not_allowed, {"method not allowed"});
  }
  nlohmann::json request =
      body.empty() ? nlohmann::json::object() : nlohmann::json::parse(body, nullptr, false);
  if (request.is_discarded() || !request.is_object()) {
    return ErrorResponse(http::status::bad_request, {"the request body must be a JSON object"});
  }
  const bool stop = what == "stop";
  const char* dir_key = stop ? "targetDirectory" : "target-directory";
  const std::string flag_key = stop ? "drain" : "cancel-job";
  for (const auto& [key, value] : request.items()) {
    if (key != dir_key && key != flag_key) {
      return ErrorResponse(
          http::status::bad_request,
          {fmt::format("unknown key '{}' (expected '{}' and '{}')", key, dir_key, flag_key)});
    }
  }
  if (request.contains(dir_key) && !request[dir_key].is_string() && !request[dir_key].is_null()) {
    return ErrorResponse(http::status::bad_request,
                         {fmt::format("'{}' must be a string", dir_key)});
  }
  if (request.contains(flag_key) && !request[flag_key].is_boolean()) {
    return ErrorResponse(http::status::bad_request,
                         {fmt::format("'{}' must be true or false", flag_key)});
  }
  const std::string dir = request.contains(dir_key) && request[dir_key].is_string()
                              ? request[dir_key].get<std::string>()
                              : "";
  const bool flag = request.value(flag_key, false);
  // Flink's "cancel-job": end the job once the savepoint is taken (without draining).
  const JobManager::SavepointTrigger t = jobs.TriggerSavepoint(id, dir, stop || flag, stop && flag);
  using S = JobManager::SavepointTrigger::Status;
  switch (t.status) {
    case S::kTriggered:
      return JsonResponse(http::status::accepted, nlohmann::json{{"request-id", t.request_id}});
    case S::kUnknownJob:
      return ErrorResponse(http::status::not_found, {t.message});
    case S::kNotRunning:
      return ErrorResponse(http::status::conflict, {t.message});
    case S::kNoDirectory:
    case S::kBadDirectory:
      return ErrorResponse(http::status::bad_request, {t.message});
  }
  return ErrorResponse(http::status::internal_server_error, {"unreachable"});
}

/// What a handler gets: the job manager, the request, its query string and the `{...}` segments
/// of the matched pattern in order (URL-decoded only where the handler says so).
struct RouteCall {
  JobManager& jobs;
  const Request& req;
  std::string_view query;
  std::vector<std::string> params;
};

using RouteHandler = Response (*)(RouteCall&);

/// One REST route: a method, a path pattern of `/`-separated segments where `{name}` matches any
/// one segment, and its handler.
struct RouteEntry {
  http::verb method;
  std::string_view pattern;
  RouteHandler handler;
};

Response NoSuchJob(const std::string& id) {
  return ErrorResponse(http::status::not_found, {fmt::format("no such job: {}", id)});
}

Response ListJobs(RouteCall& c) {
  return JsonResponse(http::status::ok, c.jobs.ListJson());
}

Response SubmitJob(RouteCall& c) {
  std::string file = QueryParam(c.query, "file");
  if (file.empty()) {
    file = "<request>";
  }
  std::optional<uint64_t> memory_limit;
  if (const std::string limit = QueryParam(c.query, "memory-limit"); !limit.empty()) {
    std::string error;
    const std::optional<int64_t> bytes = ParseMemorySize(limit, &error);
    if (!bytes) {
      return ErrorResponse(http::status::bad_request, {"memory-limit: " + error});
    }
    memory_limit = static_cast<uint64_t>(*bytes);
  }
  // Flink's names (POST /jars/:jarid/run): savepointPath, allowNonRestoredState.
  const std::string savepoint_path = QueryParam(c.query, "savepointPath");
  const std::string allow = QueryParam(c.query, "allowNonRestoredState");
  if (!allow.empty() && allow != "true" && allow != "false") {
    return ErrorResponse(http::status::bad_request,
                         {"allowNonRestoredState: expected true or false, got '" + allow + "'"});
  }
  auto r = c.jobs.Submit(c.req.body(), file, memory_limit, savepoint_path, allow == "true");
  using S = JobManager::SubmitResult::Status;
  switch (r.status) {
    case S::kAccepted:
      return JsonResponse(http::status::accepted, nlohmann::json{{"jid", r.job_id}});
    case S::kInvalidJob:
      return ErrorResponse(http::status::bad_request, r.errors);
    case S::kTooManyJobs:
      return ErrorResponse(http::status::too_many_requests, r.errors);
    case S::kShuttingDown:
      return ErrorResponse(http::status::service_unavailable, r.errors);
    case S::kInternalError:
      return ErrorResponse(http::status::internal_server_error, r.errors);
    case S::kNotDurable:
      return ErrorResponse(http::status::service_unavailable, r.errors);
    case S::kInsufficientStorage:
      return ErrorResponse(http::status::insufficient_storage, r.errors);
  }
  return ErrorResponse(http::status::internal_server_error, {"unreachable"});
}

Response JobsOverview(RouteCall& c) {
  std::vector<nlohmann::json> details;
  const nlohmann::json list = c.jobs.ListJson();  // kept: a range over a temporary's member dangles
  for (const nlohmann::json& summary : list["jobs"]) {
    if (auto j = c.jobs.JobJson(summary.value("jid", ""))) {
      details.push_back(std::move(*j));
    }
  }
  return JsonResponse(http::status::ok, JobsOverviewJson(details));
}

/// GET /jobs/{id}/plan and /jobs/{id}/vertices/{vid}[/watermarks|/backpressure]: views of the
/// job's details (rest_views.h).
Response JobView(RouteCall& c,
                 std::optional<nlohmann::json> (*view)(const nlohmann::json&, const std::string&)) {
  const std::string& id = c.params[0];
  std::optional<nlohmann::json> job = ValidJobId(id) ? c.jobs.JobJson(id) : std::nullopt;
  if (!job) {
    return NoSuchJob(id);
  }
  if (view == nullptr) {
    return JsonResponse(http::status::ok, PlanJson(*job));
  }
  const std::string vid = UrlDecode(c.params[1]);
  std::optional<nlohmann::json> result = view(*job, vid);
  if (!result) {
    return ErrorResponse(http::status::not_found, {fmt::format("no such vertex: {}", vid)});
  }
  return JsonResponse(http::status::ok, *result);
}

Response JobPlan(RouteCall& c) {
  return JobView(c, nullptr);
}
Response Vertex(RouteCall& c) {
  return JobView(c, [](const nlohmann::json& job, const std::string& vid) {
    return VertexJson(job, vid, NowMillis());
  });
}
Response VertexWatermarks(RouteCall& c) {
  return JobView(c, [](const nlohmann::json& job, const std::string& vid) {
    return VertexWatermarksJson(job, vid);
  });
}
Response VertexBackPressure(RouteCall& c) {
  return JobView(c, [](const nlohmann::json& job, const std::string& vid) {
    return VertexBackPressureJson(job, vid, NowMillis());
  });
}

Response Savepoint(RouteCall& c) {
  return CheckpointRoute(c.jobs, http::verb::post, c.params[0], "savepoints", "", c.req.body());
}
Response SavepointStatus(RouteCall& c) {
  return CheckpointRoute(c.jobs, http::verb::get, c.params[0], "savepoints", c.params[1], "");
}
Response StopWithSavepoint(RouteCall& c) {
  return CheckpointRoute(c.jobs, http::verb::post, c.params[0], "stop", "", c.req.body());
}
Response Checkpoints(RouteCall& c) {
  return CheckpointRoute(c.jobs, http::verb::get, c.params[0], "checkpoints", "", "");
}

/// A GET of one of the job's JSON documents (`JobManager::*Json(id)`), 404 when unknown.
Response JobDocument(RouteCall& c,
                     std::optional<nlohmann::json> (JobManager::*document)(const std::string&)
                         const) {
  const std::string& id = c.params[0];
  if (!ValidJobId(id)) {
    return ErrorResponse(http::status::not_found, {"no such job"});
  }
  std::optional<nlohmann::json> j = (c.jobs.*document)(id);
  return j ? JsonResponse(http::status::ok, *j) : NoSuchJob(id);
}

Response JobDetails(RouteCall& c) {
  return JobDocument(c, &JobManager::JobJson);
}
Response JobExceptions(RouteCall& c) {
  return JobDocument(c, &JobManager::ExceptionsJson);
}
Response JobLogs(RouteCall& c) {
  return JobDocument(c, &JobManager::LogJson);
}

Response JobExplain(RouteCall& c) {
  if (!ValidJobId(c.params[0])) {
    return ErrorResponse(http::status::not_found, {"no such job"});
  }
  return ExplainResponse(c.jobs, c.params[0], QueryParam(c.query, "operator"));
}

Response CancelJob(RouteCall& c) {
  const std::string& id = c.params[0];
  if (!ValidJobId(id)) {
    return ErrorResponse(http::status::not_found, {"no such job"});
  }
  switch (c.jobs.Cancel(id)) {
    case JobManager::CancelStatus::kCanceling:
      return JsonResponse(http::status::accepted,
                          nlohmann::json{{"jid", id}, {"status", "canceling"}});
    case JobManager::CancelStatus::kAlreadyEnded:
      return ErrorResponse(http::status::conflict, {fmt::format("job {} has already ended", id)});
    case JobManager::CancelStatus::kUnknown:
      break;
  }
  return NoSuchJob(id);
}

Response Metrics(RouteCall& c) {
  return MakeResponse(http::status::ok, c.jobs.PrometheusText(),
                      "text/plain; version=0.0.4; charset=utf-8");
}

Response Overview(RouteCall& c) {
  return JsonResponse(http::status::ok, c.jobs.OverviewJson());
}

/// The REST routes (rest_server.h lists them with their answers). A path is matched against the
/// patterns in this order and the first that fits wins, so a literal segment listed before a
/// `{param}` one at the same place takes precedence (`/jobs/overview` over `/jobs/{id}`); a path
/// that fits a pattern whose routes do not take the request's method gets 405, one that fits no
/// pattern 404.
constexpr RouteEntry kRoutes[] = {
    {http::verb::get, "/jobs", ListJobs},
    {http::verb::post, "/jobs", SubmitJob},
    {http::verb::get, "/jobs/overview", JobsOverview},
    {http::verb::get, "/jobs/{id}", JobDetails},
    {http::verb::delete_, "/jobs/{id}", CancelJob},
    {http::verb::patch, "/jobs/{id}", CancelJob},
    {http::verb::get, "/jobs/{id}/plan", JobPlan},
    {http::verb::get, "/jobs/{id}/vertices/{vid}", Vertex},
    {http::verb::get, "/jobs/{id}/vertices/{vid}/watermarks", VertexWatermarks},
    {http::verb::get, "/jobs/{id}/vertices/{vid}/backpressure", VertexBackPressure},
    {http::verb::post, "/jobs/{id}/savepoints", Savepoint},
    {http::verb::get, "/jobs/{id}/savepoints/{request-id}", SavepointStatus},
    {http::verb::post, "/jobs/{id}/stop", StopWithSavepoint},
    {http::verb::get, "/jobs/{id}/checkpoints", Checkpoints},
    {http::verb::get, "/jobs/{id}/exceptions", JobExceptions},
    {http::verb::get, "/jobs/{id}/logs", JobLogs},
    {http::verb::get, "/jobs/{id}/explain", JobExplain},
    {http::verb::get, "/metrics", Metrics},
    {http::verb::get, "/overview", Overview},
};

/// The path's non-empty segments (`//jobs/` is `jobs`).
std::vector<std::string_view> PathSegments(std::string_view path) {
  std::vector<std::string_view> parts;
  for (size_t pos = 0; pos <= path.size();) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) {
      slash = path.size();
    }
    if (slash > pos) {
      parts.push_back(path.substr(pos, slash - pos));
    }
    pos = slash + 1;
  }
  return parts;
}

/// Whether `parts` fits `pattern`; the `{...}` segments are appended to `params` when it does.
bool MatchPattern(std::string_view pattern, const std::vector<std::string_view>& parts,
                  std::vector<std::string>& params) {
  const std::vector<std::string_view> want = PathSegments(pattern);
  if (want.size() != parts.size()) {
    return false;
  }
  std::vector<std::string> found;
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i].front() == '{') {
      found.emplace_back(parts[i]);
    } else if (want[i] != parts[i]) {
      return false;
    }
  }
  params = std::move(found);
  return true;
}

/// The REST routes; never throws.
Response Route(JobManager& jobs, const Request& req) {
  const std::string_view target(req.target().data(), req.target().size());
  const size_t q = target.find('?');
  const std::string_view path = target.substr(0, q);
  const std::string_view query =
      q == std::string_view::npos ? std::string_view() : target.substr(q + 1);
  const std::vector<std::string_view> parts = PathSegments(path);
  try {
    RouteCall call{jobs, req, query, {}};
    std::string_view matched;  // the first pattern the path fits
    for (const RouteEntry& route : kRoutes) {
      if (!matched.empty() && route.pattern != matched) {
        continue;
      }
      if (matched.empty() && !MatchPattern(route.pattern, parts, call.params)) {
        continue;
      }
      matched = route.pattern;
      if (route.method == req.method()) {
        return route.handler(call);
      }
    }
    if (!matched.empty()) {
      return ErrorResponse(http::status::method_not_allowed, {"method not allowed"});
    }
    return ErrorResponse(http::status::not_found, {"not found"});
  } catch (...) {
    // A handler failed (a job's figures could not be read, memory ran out): this request gets a
    // 500 with the cause, the failure is counted (JobManager::ReportServiceThreadFailure), and the
    // thread serves the next request.
    std::string cause = "unknown exception";
    try {
      throw;
    } catch (const std::exception& e) {
      cause = FailureCause(e);
    } catch (...) {  // NOLINT(bugprone-empty-catch): the default cause above
    }
    jobs.ReportServiceThreadFailure(
        "REST request",
        fmt::format("{} {}: {}", std::string(req.method_string()), std::string(target), cause));
    return ErrorResponse(http::status::internal_server_error, {cause});
  }
}

// Submissions are compiled and validated on a small pool, never on the I/O thread: a big or
// pathological job (bounded, but up to a second or so to compile at the limits) must not hold up
// every other client's `list` or `status`. Two threads (validation is CPU work; the machine may
// have two cores), and at most this many submissions waiting or being validated; beyond it a
// submission gets 503 at once. Each waiting one holds its body, so this also bounds that memory.
constexpr size_t kSubmitThreads = 2;
constexpr size_t kMaxPendingSubmits = 64;

// What a session reads beyond the header limit at most: a line longer than the limit plus this
// is refused instead of buffered (a chunk extension that never ends).
constexpr size_t kReadChunkBytes = 64u << 10;

// The answer to a request the parser rejected (the connection is closed after it); nullopt when
// the peer simply went away (nothing to answer). Shared by connections and ServeBytes.
std::optional<Response> ParseErrorResponse(beast::error_code ec, const RestServerOptions& opts) {
  if (ec == http::error::body_limit) {
    return ErrorResponse(http::status::payload_too_large,
                         {fmt::format("request body larger than {} bytes", opts.max_body_bytes)});
  }
  if (ec == http::error::buffer_overflow) {
    // A request line, header or chunk-size line (chunk extensions) longer than the read buffer.
    return ErrorResponse(http::status::bad_request,
                         {fmt::format("malformed HTTP request: a line longer than {} bytes",
                                      opts.max_header_bytes + kReadChunkBytes)});
  }
  if (ec == http::error::header_limit) {
    return ErrorResponse(http::status::request_header_fields_too_large,
                         {"request header too large"});
  }
  if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
      ec == asio::error::eof) {
    return std::nullopt;
  }
  if (ec.category() == beast::error_code(http::error::end_of_stream).category()) {
    return ErrorResponse(http::status::bad_request,
                         {fmt::format("malformed HTTP request: {}", ec.message())});
  }
  return std::nullopt;
}

void LimitParser(http::request_parser<http::string_body>& parser, const RestServerOptions& opts) {
  parser.body_limit(opts.max_body_bytes);
  parser.header_limit(static_cast<std::uint32_t>(opts.max_header_bytes));
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  }
  return diff == 0;
}

}  // namespace

struct RestServer::Impl {
  Impl(RestServer& s) : server(s) {}

  template <class Protocol>
  void Accept(typename Protocol::acceptor& acceptor, bool tcp);

  RestServer& server;
  asio::io_context ioc{1};
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::optional<asio::local::stream_protocol::acceptor> unix_acceptor;
  std::optional<asio::ip::tcp::acceptor> tcp_acceptor;
  asio::steady_timer retry_timer{ioc};
  /// Runs the POST /jobs handler (compile and validate) of every session; joined by Stop before the
  /// I/O context goes. Its tasks post their responses back to `ioc`.
  asio::thread_pool submit_pool{kSubmitThreads};
  std::atomic<size_t> submits_pending{0};  // queued or being validated on submit_pool
  size_t refused_at_cap = 0;               // connections refused since the limit was last reached
  bool hand_over = false;  // I/O thread only: the running I/O thread ends after this handler
};

namespace {

/// One HTTP/1.1 connection: read a request (bounded header and body, idle deadline), answer it,
/// repeat while keep-alive. Lives as long as an asynchronous operation holds it. I/O thread only.
template <class Protocol>
class Session : public std::enable_shared_from_this<Session<Protocol>> {
 public:
  using Socket = typename Protocol::socket;

  Session(Socket socket, RestServer::Impl& impl, std::atomic<size_t>& connections,
          const RestServerOptions& opts, JobManager& jobs, bool tcp)
      : socket_(std::move(socket)),
        impl_(impl),
        timer_(impl.ioc),
        connections_(connections),
        opts_(opts),
        jobs_(jobs),
        tcp_(tcp),
        buffer_(opts.max_header_bytes + kReadChunkBytes) {
    connections_.fetch_add(1);
  }
  ~Session() { connections_.fetch_sub(1); }

  void Run() {
    if (!tcp_) {
      ucred cred{};
      socklen_t len = sizeof(cred);
      if (::getsockopt(socket_.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
          cred.uid != ::geteuid()) {
        GetLogger("daemon")->warn("refused a connection from uid {}", cred.uid);
        Send(ErrorResponse(http::status::forbidden, {"connection refused: not the daemon's user"}),
             true);
        return;
      }
    }
    Read();
  }

 private:
  void ArmTimer() {
    timer_.expires_after(opts_.idle_timeout);
    std::weak_ptr<Session> weak = this->shared_from_this();
    timer_.async_wait([weak](beast::error_code ec) {
      if (!ec) {
        if (auto self = weak.lock()) {
          self->Close();
        }
      }
    });
  }

  void Read() {
    parser_.emplace();
    LimitParser(*parser_, opts_);
    ArmTimer();
    http::async_read(
        socket_, buffer_, *parser_,
        [self = this->shared_from_this()](beast::error_code ec, size_t) { self->OnRead(ec); });
  }

  void OnRead(beast::error_code ec) {
    timer_.cancel();
    if (ec) {
      if (std::optional<Response> res = ParseErrorResponse(ec, opts_)) {
        Send(std::move(*res), true);  // the parser rejected the request: answer, then close
      } else {
        Close();  // the peer went away, reset, aborted by the idle deadline, ...
      }
      return;
    }
    Request req = parser_->release();
    if (const Response* asset = StaticAssetFor(req)) {
      Send(*asset, !req.keep_alive());
      return;
    }
    if (tcp_) {
      const auto auth = req[http::field::authorization];
      const std::string expected = "Bearer " + opts_.bearer_token;
      if (!ConstantTimeEquals(std::string_view(auth.data(), auth.size()), expected)) {
        Response res = ErrorResponse(http::status::unauthorized, {"missing or wrong bearer token"});
        res.set(http::field::www_authenticate, "Bearer");
        Send(std::move(res), true);
        return;
      }
    }
    if (req.method() == http::verb::post) {
      Submit(std::move(req));
      return;
    }
    Response res = Route(jobs_, req);
    Send(std::move(res), !req.keep_alive());
  }

  // The response for a GET of a static asset, or null. Built once per asset path and connection.
  const Response* StaticAssetFor(const Request& req) {
    if (req.method() != http::verb::get || opts_.static_assets.empty()) {
      return nullptr;
    }
    std::string_view target(req.target().data(), req.target().size());
    target = target.substr(0, target.find('?'));
    auto it = opts_.static_assets.find(std::string(target));
    if (it == opts_.static_assets.end()) {
      return nullptr;
    }
    asset_ = MakeResponse(http::status::ok, std::string(it->second.body),
                          it->second.content_type.c_str());
    asset_.set(http::field::cache_control, "no-cache");
    asset_.set("X-Content-Type-Options", "nosniff");
    asset_.set("Content-Security-Policy",
               "default-src 'self'; style-src 'self'; img-src 'self' data:");
    return &asset_;
  }

  /// A submission: routed on the submit pool, answered back on the I/O thread. Nothing else of
  /// this connection happens meanwhile (its next request is read after the answer went out).
  void Submit(Request req) {
    if (impl_.submits_pending.fetch_add(1) >= kMaxPendingSubmits) {
      impl_.submits_pending.fetch_sub(1);
      Send(ErrorResponse(
               http::status::service_unavailable,
               {fmt::format("too many submissions being validated (limit {}); retry shortly",
                            kMaxPendingSubmits)}),
           !req.keep_alive());
      return;
    }
    asio::post(
        impl_.submit_pool, [self = this->shared_from_this(), req = std::move(req)]() mutable {
          RestServer::Impl& impl = self->impl_;
          JobManager& jobs = self->jobs_;
          // No exception leaves a pool thread (that would be std::terminate): Route answers its
          // own failures; one beyond it (memory for the answer) is counted and the connection
          // closes with the session.
          RunThreadEntry(
              "REST submission",
              [&] {
                Response res = Route(jobs, req);
                const bool close = !req.keep_alive();
                impl.submits_pending.fetch_sub(1);
                // The session moves into the I/O thread's handler: its last reference never drops
                // here, beside the I/O thread that owns its socket.
                asio::post(impl.ioc, [self = std::move(self), res = std::move(res),
                                      close]() mutable { self->Send(std::move(res), close); });
              },
              [&](const std::string& cause) {
                if (self) {  // not handed to the I/O thread: it still counts as pending
                  impl.submits_pending.fetch_sub(1);
                }
                jobs.ReportServiceThreadFailure("REST submission", cause);
              });
        });
  }

  void Send(Response res, bool close) {
    res_ = std::make_shared<Response>(std::move(res));
    res_->keep_alive(!close);
    res_->prepare_payload();
    ArmTimer();
    http::async_write(socket_, *res_,
                      [self = this->shared_from_this(), close](beast::error_code ec, size_t) {
                        self->timer_.cancel();
                        if (ec || close) {
                          self->Close();
                          return;
                        }
                        self->Read();
                      });
  }

  void Close() {
    beast::error_code ignored;
    socket_.shutdown(Socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

  Socket socket_;
  RestServer::Impl& impl_;
  asio::steady_timer timer_;
  std::atomic<size_t>& connections_;
  const RestServerOptions& opts_;
  JobManager& jobs_;
  const bool tcp_;
  /// Bounded: the parser moves body bytes out as it goes, so only an unparsed line (the header, at
  /// most max_header_bytes, or a chunk-size line) waits here. Unbounded, a chunk extension that
  /// never ends ("1;aaaa...") was buffered whole: 1.7 GB in 8 s from one connection.
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<Response> res_;
  Response asset_;
};

}  // namespace

template <class Protocol>
void RestServer::Impl::Accept(typename Protocol::acceptor& acceptor, bool tcp) {
  acceptor.async_accept(
      [this, &acceptor, tcp](beast::error_code ec, typename Protocol::socket socket) {
        if (ec == asio::error::operation_aborted || !acceptor.is_open()) {
          return;
        }
        if (ec) {
          // E.g. out of file descriptors: back off briefly instead of spinning, then accept again.
          GetLogger("daemon")->warn("accept failed: {}", ec.message());
          auto timer = std::make_shared<asio::steady_timer>(ioc, std::chrono::milliseconds(50));
          timer->async_wait([this, &acceptor, tcp, timer](beast::error_code) {
            if (acceptor.is_open()) {
              Accept<Protocol>(acceptor, tcp);
            }
          });
          return;
        }
        if (server.connections_.load() >= server.options_.max_connections) {
          // At the cap: a one-shot 503 on the fresh socket (its send buffer is empty, so a
          // non-blocking write of these few bytes never waits), then close without reading the
          // request.
          static constexpr std::string_view kBusy =
              "HTTP/1.1 503 Service Unavailable\r\nServer: tidemarkd\r\nContent-Type: "
              "application/json\r\n"
              "Connection: close\r\nContent-Length: 42\r\n\r\n{\"errors\": [\"too many open "
              "connections\"]}\n";
          beast::error_code ignored;
          socket.non_blocking(true, ignored);
          socket.write_some(asio::buffer(kBusy.data(), kBusy.size()), ignored);
          socket.shutdown(Protocol::socket::shutdown_both, ignored);
          socket.close(ignored);
          if (refused_at_cap++ == 0) {  // once per episode: a flood must not flood the log too
            GetLogger("daemon")->warn(
                "connection limit reached ({} open); refusing new connections with 503",
                server.options_.max_connections);
          }
        } else {
          if (refused_at_cap > 0) {
            GetLogger("daemon")->info("accepting connections again; {} refused at the limit",
                                      refused_at_cap);
            refused_at_cap = 0;
          }
          std::make_shared<Session<Protocol>>(std::move(socket), *this, server.connections_,
                                              server.options_, server.jobs_, tcp)
              ->Run();
        }
        Accept<Protocol>(acceptor, tcp);
      });
}

RestServer::RestServer(JobManager& jobs, RestServerOptions options)
    : jobs_(jobs), options_(std::move(options)) {}

RestServer::~RestServer() {
  Stop();
}

void RestServer::Start() {
  if (started_) {
    return;
  }
  if (options_.socket_path.empty() && options_.tcp_port < 0) {
    throw DaemonSetupError("nothing to listen on: give a socket path or a TCP port");
  }
  // Every option is checked before anything is bound, so a bad one never leaves a socket behind
  // or logs "listening" first.
  if (options_.socket_path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    throw DaemonSetupError(fmt::format(
        "socket path '{}' is too long: {} bytes, a Unix socket path has at most {}",
        options_.socket_path, options_.socket_path.size(), sizeof(sockaddr_un{}.sun_path) - 1));
  }
  asio::ip::address addr;
  if (options_.tcp_port >= 0) {
    if (options_.tcp_port > 65535) {
      throw DaemonSetupError(
          fmt::format("bad listen port {}: a TCP port is 0 to 65535", options_.tcp_port));
    }
    beast::error_code ec;
    addr = asio::ip::make_address(options_.tcp_host, ec);
    if (ec) {
      throw DaemonSetupError(
          fmt::format("bad listen address '{}': {}", options_.tcp_host, ec.message()));
    }
    if (!addr.is_loopback() && !options_.allow_non_loopback) {
      throw DaemonSetupError(
          fmt::format("refusing to listen on non-loopback address {} (pass --allow-remote to do so "
                      "deliberately)",
                      options_.tcp_host));
    }
    if (options_.bearer_token.empty()) {
      throw DaemonSetupError("TCP listening needs a bearer token");
    }
  }
  impl_ = std::make_unique<Impl>(*this);
  auto log = GetLogger("daemon");
  if (!options_.socket_path.empty()) {
    const std::string& path = options_.socket_path;
    struct stat st {};
    if (::lstat(path.c_str(), &st) == 0) {
      if (!S_ISSOCK(st.st_mode)) {
        throw DaemonSetupError(
            fmt::format("'{}' exists and is not a socket; not replacing it", path));
      }
      if (IsUnixSocketLive(path)) {
        throw DaemonSetupError(fmt::format(
            "a daemon is already running on '{}' (stop it first, or use another --socket)", path));
      }
      log->info("replacing stale socket '{}'", path);
      ::unlink(path.c_str());
    }
    beast::error_code ec;
    auto& acc = impl_->unix_acceptor.emplace(impl_->ioc);
    acc.open(asio::local::stream_protocol(), ec);
    if (!ec) {
      acc.bind(asio::local::stream_protocol::endpoint(path), ec);
    }
    if (ec) {
      throw DaemonSetupError(fmt::format("cannot bind '{}': {}", path, ec.message()));
    }
    socket_created_ = true;
    // The directory is already private; 0600 on the socket is the second fence.
    if (::chmod(path.c_str(), 0600) != 0) {
      throw DaemonSetupError(
          fmt::format("cannot chmod 0600 '{}': {}", path, std::generic_category().message(errno)));
    }
    if (::lstat(path.c_str(), &st) == 0) {
      socket_inode_ = st.st_ino;
    }
    acc.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      throw DaemonSetupError(fmt::format("cannot listen on '{}': {}", path, ec.message()));
    }
    impl_->Accept<asio::local::stream_protocol>(acc, false);
    log->info("listening on unix:{}", path);
  }
  if (options_.tcp_port >= 0) {
    beast::error_code ec;
    auto& acc = impl_->tcp_acceptor.emplace(impl_->ioc);
    const asio::ip::tcp::endpoint ep(addr, static_cast<unsigned short>(options_.tcp_port));
    acc.open(ep.protocol(), ec);
    if (!ec) {
      acc.set_option(asio::socket_base::reuse_address(true), ec);
      acc.bind(ep, ec);
    }
    if (!ec) {
      acc.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
      throw DaemonSetupError(fmt::format("cannot listen on {}:{}: {}", options_.tcp_host,
                                         options_.tcp_port, ec.message()));
    }
    bound_port_ = acc.local_endpoint().port();
    impl_->Accept<asio::ip::tcp>(acc, true);
    log->info("listening on http://{}:{}", options_.tcp_host, bound_port_);
  }
  impl_->work.emplace(impl_->ioc.get_executor());
  {
    std::lock_guard<std::mutex> lock(io_thread_mu_);
    started_ = true;
    StartIoThread();
  }
  jobs_.SetIdleHook([this] { RenewIoThread(); });  // outside io_thread_mu_: the hook takes it
}

void RestServer::StartIoThread() {
  io_thread_ = std::thread([impl = impl_.get(), jobs = &jobs_] {
    // A handler that throws (Route answers its own failures; this is what is left, e.g. memory
    // for a connection) is counted and the loop goes on serving: run_one may be called again
    // after a handler threw.
    for (bool running = true; running;) {
      RunThreadEntry(
          "REST I/O",
          [&] {
            // One handler at a time, so that a hand-over ends this thread right after its handler.
            while (impl->ioc.run_one() > 0) {
              if (impl->hand_over) {
                impl->hand_over = false;
                running = false;
                return;
              }
            }
            running = false;  // stopped
          },
          [jobs](const std::string& cause) {
            jobs->ReportServiceThreadFailure("REST I/O", cause);
          });
    }
  });
}

void RestServer::RenewIoThread() {
  std::lock_guard<std::mutex> lock(io_thread_mu_);
  if (!started_ || !io_thread_.joinable()) {
    return;
  }
  asio::post(impl_->ioc, [impl = impl_.get()] { impl->hand_over = true; });
  io_thread_.join();
  StartIoThread();
}

void RestServer::Stop() {
  if (!impl_) {
    return;
  }
  jobs_.SetIdleHook(nullptr);  // waits for a renewal in progress
  std::lock_guard<std::mutex> lock(io_thread_mu_);
  asio::post(impl_->ioc, [impl = impl_.get()] {
    beast::error_code ignored;
    if (impl->unix_acceptor) {
      impl->unix_acceptor->close(ignored);
    }
    if (impl->tcp_acceptor) {
      impl->tcp_acceptor->close(ignored);
    }
    impl->work.reset();
    impl->ioc.stop();
  });
  if (io_thread_.joinable()) {
    io_thread_.join();
  }
  // Submissions being validated finish; their answers stay queued on the stopped context and go
  // with it.
  impl_->submit_pool.join();
  impl_.reset();  // destroys open sessions and acceptors
  if (socket_created_) {
    struct stat st {};
    // Remove the socket only if it is still ours (not one a later daemon bound).
    if (::lstat(options_.socket_path.c_str(), &st) == 0 && st.st_ino == socket_inode_) {
      ::unlink(options_.socket_path.c_str());
    }
    socket_created_ = false;
  }
  started_ = false;
}

std::vector<int> ServeBytes(JobManager& jobs, std::string_view bytes,
                            const RestServerOptions& options) {
  std::vector<int> statuses;
  size_t at = 0;
  while (at < bytes.size()) {
    http::request_parser<http::string_body> parser;
    LimitParser(parser, options);
    parser.eager(true);
    beast::error_code ec;
    while (!parser.is_done() && at < bytes.size()) {
      const size_t used = parser.put(asio::buffer(bytes.data() + at, bytes.size() - at), ec);
      at += used;
      if (ec) {
        // need_more: everything there is was offered, so the request is incomplete. (Beast's
        // parser must not be offered the same unconsumed bytes again without more after them:
        // it keeps where it stopped scanning, and asserts on a chunk header it saw before.)
        break;
      }
    }
    if (!parser.is_done()) {
      if (ec && ec != http::error::need_more) {
        if (std::optional<Response> res = ParseErrorResponse(ec, options)) {
          statuses.push_back(static_cast<int>(res->result_int()));
        }
      }
      break;  // a connection would be closed here (or wait for more)
    }
    Request req = parser.release();
    Response res = Route(jobs, req);
    res.prepare_payload();
    statuses.push_back(static_cast<int>(res.result_int()));
    if (!req.keep_alive()) {
      break;
    }
  }
  return statuses;
}

}  // namespace tidemark
