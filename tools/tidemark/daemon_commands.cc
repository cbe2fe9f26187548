#include "tools/tidemark/daemon_commands.h"

#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/core/timestamp.h"

namespace tidemark {
namespace {

using nlohmann::json;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string UrlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string FormatWallTime(int64_t ms) {
  if (ms <= 0) {
    return "-";
  }
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string FormatDuration(int64_t ms) {
  if (ms < 0) {
    return "-";
  }
  if (ms < 60'000) {
    return fmt::format("{:.3f}s", static_cast<double>(ms) / 1000.0);
  }
  return fmt::format("{}m{:02}s", ms / 60'000, (ms / 1000) % 60);
}

/// Event time: "MAX", seconds near the epoch as the experiment prints them, or a UTC date.
std::string FormatWatermark(const json& wm) {
  if (wm.is_null()) {
    return "-";
  }
  const int64_t ts = wm.get<int64_t>();
  if (ts == kMaxTimestamp) {
    return "MAX";
  }
  if (ts < 100'000'000'000LL) {  // before 1973: a synthetic event time, e.g. 9.149s
    return FormatSeconds(ts);
  }
  const std::time_t secs = static_cast<std::time_t>(ts / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, ts % 1000);
}

/// How far the watermark trails the wall clock; "-" when that is meaningless (none, MAX, or a
/// synthetic event time far from now).
std::string FormatLag(const json& wm) {
  if (wm.is_null()) {
    return "-";
  }
  const int64_t ts = wm.get<int64_t>();
  if (ts == kMaxTimestamp || ts < 100'000'000'000LL) {
    return "-";
  }
  return FormatDuration(NowMs() - ts);
}

bool IsTerminal(const std::string& state) {
  return state == "FINISHED" || state == "FAILED" || state == "CANCELED";
}

int ExitFor(const std::string& state) { return state == "FINISHED" ? kExitOk : kExitJobFailed; }

}  // namespace

bool DaemonCommands::Call(const std::string& method, const std::string& target, const std::string& body,
                          DaemonClient::Response* out) {
  try {
    *out = client_.Request(method, target, body);
    return true;
  } catch (const DaemonUnreachable& e) {
    std::cerr << "tidemark: " << e.what() << "\n";
    if (client_.endpoint().url.empty()) {
      std::cerr << fmt::format(
          "hint: start the daemon with `tidemarkd{}` (add --daemonize to run it in the background), "
          "or point to a running one with --socket PATH or --url http://HOST:PORT\n",
          client_.endpoint().socket_path.empty() ? "" : " --socket " + client_.endpoint().socket_path);
    } else {
      std::cerr << "hint: start the daemon with `tidemarkd --listen HOST:PORT`, and pass its token with "
                   "--token-file\n";
    }
    return false;
  } catch (const std::exception& e) {
    std::cerr << "tidemark: " << e.what() << "\n";
    return false;
  }
}

int DaemonCommands::ReportError(const DaemonClient::Response& r, const std::string& id) {
  json j = json::parse(r.body, nullptr, false);
  if (!j.is_discarded() && j.contains("errors")) {
    for (const auto& e : j["errors"]) {
      std::cerr << (e.is_string() ? e.get<std::string>() : e.dump()) << "\n";
    }
  } else {
    std::cerr << fmt::format("tidemark: the daemon answered HTTP {}: {}\n", r.status, r.body);
  }
  if (r.status == 404 && !id.empty()) {
    std::cerr << fmt::format("tidemark: no job with id '{}' (see `tidemark list`)\n", id);
  }
  if (r.status == 401) {
    return kExitUnreachable;
  }
  return r.status == 400 || r.status == 404 ? kExitUsage : kExitJobFailed;
}

int DaemonCommands::Submit(const std::string& job_path, bool wait, bool as_json) {
  std::ifstream in(job_path, std::ios::binary);
  if (!in) {
    std::cerr << fmt::format("{}: error: cannot read the job file: {}\n", job_path, std::strerror(errno));
    return kExitUsage;
  }
  std::stringstream ss;
  ss << in.rdbuf();
  DaemonClient::Response r;
  if (!Call("POST", "/jobs?file=" + UrlEncode(job_path), ss.str(), &r)) {
    return kExitUnreachable;
  }
  if (r.status != 202) {
    return ReportError(r, "");
  }
  const std::string id = json::parse(r.body).at("jid").get<std::string>();
  if (!wait) {
    if (as_json) {
      std::cout << json{{"jid", id}}.dump() << "\n";
    } else {
      std::cout << id << "\n";
    }
    return kExitOk;
  }
  if (!as_json) {
    std::cout << id << std::endl;
  }
  // Poll the job until it ended; 20 ms keeps `--wait` snappy for short jobs and cheap for long ones.
  for (;;) {
    if (!Call("GET", "/jobs/" + id, "", &r)) {
      return kExitUnreachable;
    }
    if (r.status != 200) {
      return ReportError(r, id);
    }
    json j = json::parse(r.body);
    const std::string state = j.at("state").get<std::string>();
    if (IsTerminal(state)) {
      if (as_json) {
        std::cout << j.dump(2) << "\n";
      } else {
        std::cout << fmt::format("job {} {} in {}\n", id, state, FormatDuration(j.at("duration").get<int64_t>()));
        if (j.at("report").is_string()) {
          std::cout << j.at("report").get<std::string>() << "\n";
        }
        if (j.at("failure-cause").is_string()) {
          std::cerr << "cause: " << j.at("failure-cause").get<std::string>() << "\n";
        }
      }
      return ExitFor(state);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int DaemonCommands::List(bool as_json) {
  DaemonClient::Response r;
  if (!Call("GET", "/jobs", "", &r)) {
    return kExitUnreachable;
  }
  if (r.status != 200) {
    return ReportError(r, "");
  }
  json j = json::parse(r.body);
  if (as_json) {
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format("{:<16}  {:<24}  {:<9}  {:<19}  {}\n", "ID", "NAME", "STATE", "START", "DURATION");
  for (const auto& job : j.at("jobs")) {
    std::cout << fmt::format("{:<16}  {:<24}  {:<9}  {:<19}  {}\n", job.at("jid").get<std::string>(),
                             job.at("name").get<std::string>(), job.at("state").get<std::string>(),
                             FormatWallTime(job.at("start-time").get<int64_t>()),
                             FormatDuration(job.at("duration").get<int64_t>()));
  }
  return kExitOk;
}

int DaemonCommands::Status(const std::string& id, bool as_json) {
  DaemonClient::Response r;
  if (!Call("GET", "/jobs/" + UrlEncode(id), "", &r)) {
    return kExitUnreachable;
  }
  if (r.status != 200) {
    return ReportError(r, id);
  }
  json j = json::parse(r.body);
  const std::string state = j.at("state").get<std::string>();
  if (as_json) {
    std::cout << j.dump(2) << "\n";
    return IsTerminal(state) ? ExitFor(state) : kExitOk;
  }
  std::cout << fmt::format("job {}  {}  {}\n", j.at("jid").get<std::string>(), j.at("name").get<std::string>(),
                           state);
  std::cout << fmt::format("file {}  started {}  duration {}\n", j.at("file").get<std::string>(),
                           FormatWallTime(j.at("start-time").get<int64_t>()),
                           FormatDuration(j.at("duration").get<int64_t>()));
  if (j.at("report").is_string()) {
    std::cout << "report: " << j.at("report").get<std::string>() << "\n";
  }
  if (j.at("failure-cause").is_string()) {
    std::cout << "cause:  " << j.at("failure-cause").get<std::string>() << "\n";
  }
  std::cout << "\nvertices:";
  for (const auto& v : j.at("vertices")) {
    std::cout << fmt::format("  {} ({}, parallelism {})", v.at("id").get<std::string>(),
                             v.at("type").get<std::string>(), v.at("parallelism").get<int>());
  }
  std::cout << "\n\n";
  std::cout << fmt::format("{:<32} {:>10}  {:<12} {:>11}  {:<24} {}\n", "TASK#SUBTASK", "RECORDS IN", "OPERATOR",
                           "RECORDS OUT", "OUTPUT WATERMARK", "LAG");
  for (const auto& task : j.at("tasks")) {
    for (const auto& st : task.at("subtasks")) {
      std::string head = fmt::format("{}#{}", task.at("name").get<std::string>(), st.at("subtask").get<int>());
      std::string in = fmt::format("{}", st.at("records-in").get<int64_t>());
      for (const auto& op : st.at("operators")) {
        std::cout << fmt::format("{:<32} {:>10}  {:<12} {:>11}  {:<24} {}\n", head, in,
                                 op.at("name").get<std::string>(), op.at("records-out").get<int64_t>(),
                                 FormatWatermark(op.at("output-watermark")), FormatLag(op.at("output-watermark")));
        head.clear();
        in.clear();
      }
    }
  }
  return IsTerminal(state) ? ExitFor(state) : kExitOk;
}

int DaemonCommands::Cancel(const std::string& id) {
  DaemonClient::Response r;
  if (!Call("DELETE", "/jobs/" + UrlEncode(id), "", &r)) {
    return kExitUnreachable;
  }
  if (r.status == 202) {
    std::cout << fmt::format("cancel requested for job {}\n", id);
    return kExitOk;
  }
  if (r.status == 409) {
    std::cerr << fmt::format("job {} has already ended\n", id);
    return kExitOk;
  }
  return ReportError(r, id);
}

int DaemonCommands::Logs(const std::string& id, bool as_json) {
  DaemonClient::Response r;
  if (!Call("GET", "/jobs/" + UrlEncode(id) + "/logs", "", &r)) {
    return kExitUnreachable;
  }
  if (r.status != 200) {
    return ReportError(r, id);
  }
  json j = json::parse(r.body);
  if (as_json) {
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  if (j.at("dropped").get<int64_t>() > 0) {
    std::cerr << fmt::format("({} older lines dropped)\n", j.at("dropped").get<int64_t>());
  }
  for (const auto& line : j.at("lines")) {
    std::cout << line.get<std::string>() << "\n";
  }
  return kExitOk;
}

}  // namespace tidemark
