#include "tools/tidemark/daemon_commands.h"

#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/diagnostic.h"
#include "config/job_loader.h"
#include "runtime/core/time_format.h"
#include "runtime/core/timestamp.h"

namespace tidemark {
namespace {

using nlohmann::json;

/// A string the daemon answered with that came from outside (a job's name, operator and split
/// ids, paths, a failure cause or log line quoting input), as ShowControlCharacters shows it.
std::string Shown(std::string_view text) {
  return ShowControlCharacters(text);
}

std::string Shown(const std::string& text) {
  return Shown(std::string_view(text));
}

/// `Shown` of a string field of `j`.
std::string Shown(const json& j) {
  return Shown(j.get<std::string>());
}

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

/// A wall-clock time (a job's start) as the event times are printed: ISO-8601 UTC, `-` for none.
std::string FormatWallTime(int64_t ms) {
  if (ms <= 0) {
    return "-";
  }
  return FormatEventTime(ms);
}

/// Event time, or "-" for none (null).
std::string FormatWatermark(const json& wm) {
  if (wm.is_null()) {
    return "-";
  }
  return FormatEventTime(wm.get<int64_t>());
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

/// The daemon's `dropped-records` lines (DroppedRecordLines) on stderr, one each; none when the
/// job dropped nothing (or the daemon is older and sends none).
void PrintDroppedRecords(const json& j) {
  if (j.contains("dropped-records") && j["dropped-records"].is_array()) {
    for (const auto& line : j["dropped-records"]) {
      std::cerr << Shown(line) << "\n";
    }
  }
}

bool IsTerminal(const std::string& state) {
  return state == "FINISHED" || state == "FAILED" || state == "CANCELED";
}

/// A plain text table: columns as wide as their widest cell, two spaces apart, numbers
/// right-aligned, no trailing blanks.
class TextTable {
 public:
  /// `right[i]`: column i is right-aligned.
  TextTable(std::vector<std::string> header, std::vector<bool> right)
      : right_(std::move(right)), rows_{std::move(header)} {}

  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  size_t size() const { return rows_.size() - 1; }

  std::string Render() const {
    std::vector<size_t> width(right_.size(), 0);
    for (const auto& row : rows_) {
      for (size_t c = 0; c < row.size(); ++c) {
        width[c] = std::max(width[c], row[c].size());
      }
    }
    std::string out;
    for (const auto& row : rows_) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c) {
        const std::string& cell = row[c];
        const size_t pad = width[c] - cell.size();
        if (c > 0) {
          line += "  ";
        }
        line += right_[c] ? std::string(pad, ' ') + cell : cell + std::string(pad, ' ');
      }
      while (!line.empty() && line.back() == ' ') {
        line.pop_back();
      }
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

/// `197 side, 0 dropped` from an operator's late-record gauges (window operators), "-" without.
std::string FormatLate(const json& metrics) {
  const bool side = metrics.contains("numLateRecordsSideOutput");
  const bool dropped = metrics.contains("numLateRecordsDropped");
  if (!side && !dropped) {
    return "-";
  }
  std::string out;
  if (side) {
    out += fmt::format("{} side", metrics.at("numLateRecordsSideOutput").get<int64_t>());
  }
  if (dropped) {
    out += fmt::format("{}{} dropped", side ? ", " : "",
                       metrics.at("numLateRecordsDropped").get<int64_t>());
  }
  return out;
}

/// One source split as its operator reports it (`split.<id>.watermark|idle|paused|records`).
struct SplitView {
  json watermark;  // null: none yet
  std::optional<int64_t> records;
  std::optional<bool> idle;  // absent once the split's output is gone (the split ended)
  bool paused = false;
};

/// The splits of one operator's gauges, by split id (ids may contain dots: file paths).
std::map<std::string, SplitView> SplitsOf(const json& metrics) {
  std::map<std::string, SplitView> splits;
  for (auto it = metrics.begin(); it != metrics.end(); ++it) {
    const std::string& name = it.key();
    const json& value = it.value();
    if (name.rfind("split.", 0) != 0) {
      continue;
    }
    const size_t dot = name.rfind('.');
    if (dot <= 6) {
      continue;
    }
    const std::string id = name.substr(6, dot - 6);
    const std::string what = name.substr(dot + 1);
    if (what == "watermark") {
      splits[id].watermark = value;
    } else if (what == "idle") {
      splits[id].idle = value.get<int64_t>() != 0;
    } else if (what == "paused") {
      splits[id].paused = value.get<int64_t>() != 0;
    } else if (what == "records") {
      splits[id].records = value.get<int64_t>();
    }
  }
  return splits;
}

/// Split rows per operator subtask at most; the rest are counted (all of them are in --json).
constexpr size_t kMaxSplitRows = 16;

int ExitFor(const std::string& state) {
  return state == "FINISHED" ? kExitOk : kExitJobFailed;
}

}  // namespace

bool DaemonCommands::Call(const std::string& method, const std::string& target,
                          const std::string& body, DaemonClient::Response* out) {
  try {
    *out = client_.Request(method, target, body);
    return true;
  } catch (const DaemonUnreachable& e) {
    std::cerr << "tidemark: " << e.what() << "\n";
    if (client_.endpoint().url.empty()) {
      std::cerr << fmt::format(
          "hint: start the daemon with `tidemarkd{}` (add --daemonize to run it in the "
          "background), "
          "or point to a running one with --socket PATH or --url http://HOST:PORT\n",
          client_.endpoint().socket_path.empty() ? ""
                                                 : " --socket " + client_.endpoint().socket_path);
    } else {
      std::cerr
          << "hint: start the daemon with `tidemarkd --listen HOST:PORT`, and pass its token with "
             "--token-file\n";
    }
    return false;
  } catch (const std::exception& e) {
    std::cerr << "tidemark: " << e.what() << "\n";
    return false;
  }
}

int DaemonCommands::ReportError(const DaemonClient::Response& r, const std::string& id,
                                const std::string& sent_file, const std::string& shown_file) {
  json j = json::parse(r.body, nullptr, false);
  if (r.status == 404 && !id.empty()) {
    // The daemon's own "no such job" line would say the same thing twice.
    std::cerr << fmt::format("tidemark: no job with id '{}' (see `tidemark list`)\n", id);
  } else if (!j.is_discarded() && j.contains("errors")) {
    for (const auto& e : j["errors"]) {
      std::string line = e.is_string() ? e.get<std::string>() : e.dump();
      if (!sent_file.empty() && line.rfind(sent_file + ":", 0) == 0) {
        line = shown_file + line.substr(sent_file.size());
      }
      // An invalid job's lines are file:line:column diagnostics; anything else is the daemon's.
      std::cerr << (r.status == 400 ? "" : "tidemark: ") << Shown(line) << "\n";
    }
  } else {
    std::cerr << fmt::format("tidemark: the daemon answered HTTP {}: {}\n", r.status,
                             Shown(r.body));
  }
  if (r.status == 401) {
    std::cerr
        << "hint: pass the daemon's token file with --token-file PATH (the file tidemarkd --listen "
           "was given or created)\n";
    return kExitUnreachable;
  }
  return r.status == 400 || r.status == 404 ? kExitUsage : kExitJobFailed;
}

int DaemonCommands::Submit(const std::string& job_path, bool wait, bool as_json,
                           const std::string& memory_limit, const std::string& from_savepoint,
                           bool allow_non_restored_state) {
  std::string yaml;
  try {
    yaml = ReadJobFile(job_path);  // the same limits and messages as `tidemark run`
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return kExitUsage;
  }
  // The daemon resolves a relative input path against the job file's directory, and its working
  // directory is not ours: send the absolute path, but show diagnostics with the path as given.
  const std::string sent_file = std::filesystem::absolute(job_path).lexically_normal().string();
  DaemonClient::Response r;
  std::string target = "/jobs?file=" + UrlEncode(sent_file);
  if (!memory_limit.empty()) {
    target += "&memory-limit=" + UrlEncode(memory_limit);
  }
  if (!from_savepoint.empty()) {
    target += "&savepointPath=" +
              UrlEncode(std::filesystem::absolute(from_savepoint).lexically_normal().string());
  } else if (allow_non_restored_state) {
    std::cerr << "tidemark: --allow-non-restored-state needs --from-savepoint DIR\n";
    return kExitUsage;
  }
  if (allow_non_restored_state) {
    target += "&allowNonRestoredState=true";
  }
  if (!Call("POST", target, yaml, &r)) {
    return kExitUnreachable;
  }
  if (r.status != 202) {
    return ReportError(r, "", sent_file, job_path);
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
  // Poll the job until it ended; 20 ms keeps `--wait` snappy for short jobs and cheap for long
  // ones.
  for (;;) {
    if (!Call("GET", "/jobs/" + id, "", &r)) {
      return kExitUnreachable;
    }
    if (r.status == 404) {
      // Accepted, then gone: it ended and was dropped from the history before this poll saw it.
      std::cerr << fmt::format(
          "tidemark: job {} ended and already left the daemon's history, so its final state is "
          "unknown; "
          "start tidemarkd with a larger --max-finished-jobs / --finished-job-ttl\n",
          id);
      return kExitJobFailed;
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
        std::cout << fmt::format("job {} {} in {}\n", id, state,
                                 FormatDuration(j.at("duration").get<int64_t>()));
        if (j.at("report").is_string()) {
          std::cout << Shown(j.at("report")) << "\n";
        }
        PrintDroppedRecords(j);
        if (j.at("failure-cause").is_string()) {
          std::cerr << "cause: " << Shown(j.at("failure-cause")) << "\n";
        }
      }
      return ExitFor(state);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

int DaemonCommands::Savepoint(const std::string& id, const std::string& dir, bool stop, bool drain,
                              bool as_json) {
  json body = json::object();
  if (!dir.empty()) {
    // The daemon's working directory is not ours.
    body[stop ? "targetDirectory" : "target-directory"] =
        std::filesystem::absolute(dir).lexically_normal().string();
  }
  if (stop) {
    body["drain"] = drain;
  }
  DaemonClient::Response r;
  if (!Call("POST", "/jobs/" + UrlEncode(id) + (stop ? "/stop" : "/savepoints"), body.dump(), &r)) {
    return kExitUnreachable;
  }
  if (r.status == 409) {
    const json j = json::parse(r.body, nullptr, false);
    std::cerr << "tidemark: "
              << (!j.is_discarded() && j.contains("errors") && !j["errors"].empty()
                      ? Shown(j["errors"][0])
                      : Shown(r.body))
              << "\n";
    return kExitJobFailed;
  }
  if (r.status != 202) {
    return ReportError(r, id);
  }
  const std::string request = json::parse(r.body).at("request-id").get<std::string>();
  for (;;) {
    if (!Call("GET", "/jobs/" + UrlEncode(id) + "/savepoints/" + UrlEncode(request), "", &r)) {
      return kExitUnreachable;
    }
    if (r.status != 200) {
      return ReportError(r, id);
    }
    const json j = json::parse(r.body);
    if (j.at("status").at("id") == "COMPLETED") {
      if (as_json) {
        std::cout << j.dump(2) << "\n";
      }
      const json& op = j.at("operation");
      if (op.contains("location")) {
        if (!as_json) {
          std::cout << "Savepoint completed. Path: " << Shown(op.at("location")) << "\n";
          if (stop) {
            std::cout << fmt::format("job {} stopped{}\n", id, drain ? " (drained)" : "");
          }
        }
        return kExitOk;
      }
      if (!as_json) {
        std::cerr << "tidemark: savepoint of job " << id
                  << " failed: " << Shown(op.at("failure-cause").at("stack-trace")) << "\n";
      }
      return kExitJobFailed;
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
  std::cout << fmt::format("{:<16}  {:<24}  {:<9}  {:<24}  {}\n", "ID", "NAME", "STATE", "START",
                           "DURATION");
  for (const auto& job : j.at("jobs")) {
    std::cout << fmt::format("{:<16}  {:<24}  {:<9}  {:<24}  {}\n", Shown(job.at("jid")),
                             Shown(job.at("name")), job.at("state").get<std::string>(),
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
  std::cout << fmt::format("job {}  {}  {}\n", Shown(j.at("jid")), Shown(j.at("name")), state);
  std::cout << fmt::format("file {}  started {}  duration {}\n",
                           EscapeControlCharacters(j.at("file").get<std::string>()),
                           FormatWallTime(j.at("start-time").get<int64_t>()),
                           FormatDuration(j.at("duration").get<int64_t>()));
  if (j.at("report").is_string()) {
    std::cout << "report: " << Shown(j.at("report")) << "\n";
  }
  PrintDroppedRecords(j);
  if (j.at("failure-cause").is_string()) {
    std::cout << "cause: " << Shown(j.at("failure-cause")) << "\n";
  }
  if (j.contains("restored-from") && j["restored-from"].is_string()) {
    std::cout << "restored from " << Shown(j["restored-from"]) << "\n";
  }
  if (j.contains("restore-failed-from") && j["restore-failed-from"].is_string()) {
    std::cout << "restore from " << Shown(j["restore-failed-from"])
              << " failed: the job did not start (see cause)\n";
  }
  if (j.contains("checkpoints") && j["checkpoints"].is_object()) {
    const json& c = j["checkpoints"];
    const int64_t last = c.value("last-completed-id", int64_t{0});
    std::cout << fmt::format("checkpoints: {} completed, {} failed, restarts {}",
                             c.value("completed", int64_t{0}), c.value("failed", int64_t{0}),
                             c.value("restarts", int64_t{0}));
    if (last > 0) {
      std::cout << fmt::format(
          "; last #{}: {} bytes in {} ms, alignment {} ms, {}", last,
          c.value("last-size-bytes", int64_t{0}), c.value("last-duration-ms", int64_t{0}),
          c.value("last-alignment-ms", int64_t{0}), Shown(c.value("last-path", std::string())));
    }
    std::cout << "\n";
    // Why it restarted: the failures the job recovered from (the last 10, oldest first).
    if (c.contains("restart-causes") && c["restart-causes"].is_array()) {
      for (const json& cause : c["restart-causes"]) {
        if (cause.is_string()) {
          std::cout << "restart cause: " << Shown(cause.get<std::string>()) << "\n";
        }
      }
    }
  }
  std::cout << "\nvertices:";
  for (const auto& v : j.at("vertices")) {
    std::cout << fmt::format("  {} ({}, parallelism {})", Shown(v.at("id")),
                             v.at("type").get<std::string>(), v.at("parallelism").get<int>());
  }
  std::cout << "\n\n";
  // One row per operator of each subtask; the subtask's records in and input watermark on its
  // first.
  TextTable ops({"TASK#SUBTASK", "RECORDS IN", "INPUT WM", "OPERATOR", "RECORDS OUT", "OUTPUT WM",
                 "LAG", "LATE"},
                {false, true, false, false, true, false, false, false});
  // Split rows of source operators, by split id so repeated calls line up; BEHIND is how far a
  // split's watermark trails the furthest split of its subtask (what idleness and alignment act
  // on).
  TextTable splits({"OPERATOR#SUBTASK", "SPLIT", "RECORDS", "WATERMARK", "LAG", "BEHIND", "STATE"},
                   {false, false, true, false, false, false, false});
  std::vector<std::string> split_notes;
  for (const auto& task : j.at("tasks")) {
    for (const auto& st : task.at("subtasks")) {
      const int subtask = st.at("subtask").get<int>();
      std::string head = fmt::format("{}#{}", Shown(task.at("name")), subtask);
      std::string in = fmt::format("{}", st.at("records-in").get<int64_t>());
      std::string in_wm = FormatWatermark(st.value("input-watermark", json()));
      for (const auto& op : st.at("operators")) {
        const json metrics = op.value("metrics", json::object());
        const std::string op_name = Shown(op.at("name"));
        ops.Add({head, in, in_wm, op_name, fmt::format("{}", op.at("records-out").get<int64_t>()),
                 FormatWatermark(op.at("output-watermark")), FormatLag(op.at("output-watermark")),
                 FormatLate(metrics)});
        head.clear();
        in.clear();
        in_wm.clear();

        const auto split_views = SplitsOf(metrics);
        // The furthest split watermark short of MAX: what BEHIND is measured against.
        std::optional<int64_t> front;
        for (const auto& [split_id, s] : split_views) {
          if (s.watermark.is_number() && s.watermark.get<int64_t>() != kMaxTimestamp) {
            front = std::max(front.value_or(kMinTimestamp), s.watermark.get<int64_t>());
          }
        }
        size_t shown = 0;
        for (const auto& [split_id, s] : split_views) {
          if (shown++ == kMaxSplitRows) {
            split_notes.push_back(fmt::format("{}#{}: {} more splits (see --json)", op_name,
                                              subtask, split_views.size() - kMaxSplitRows));
            break;
          }
          std::string behind = "-";
          if (front && s.watermark.is_number() && s.watermark.get<int64_t>() != kMaxTimestamp) {
            behind = FormatDuration(*front - s.watermark.get<int64_t>());
          }
          std::string split_state = st.value("finished", false) ? "finished"
                                    : !s.idle                   ? "-"
                                    : *s.idle                   ? "idle"
                                                                : "active";
          if (s.paused) {
            split_state += ", paused";
          }
          splits.Add({fmt::format("{}#{}", op_name, subtask), Shown(split_id),
                      s.records ? fmt::format("{}", *s.records) : "-", FormatWatermark(s.watermark),
                      FormatLag(s.watermark), behind, split_state});
        }
      }
    }
  }
  std::cout << ops.Render();
  if (splits.size() > 0) {
    std::cout << "\n" << splits.Render();
    for (const auto& note : split_notes) {
      std::cout << note << "\n";
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
    // Nothing was canceled: say so, with the state the job ended in, and fail (exit 1) so that a
    // script does not take a FINISHED job for a canceled one.
    std::string state;
    DaemonClient::Response s;
    if (Call("GET", "/jobs/" + UrlEncode(id), "", &s) && s.status == 200) {
      json j = json::parse(s.body, nullptr, false);
      if (!j.is_discarded() && j.contains("state") && j["state"].is_string()) {
        state = " (" + j["state"].get<std::string>() + ")";
      }
    }
    std::cerr << fmt::format("tidemark: job {} has already ended{}; nothing to cancel\n", id,
                             state);
    return kExitJobFailed;
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
    std::cout << Shown(line) << "\n";
  }
  PrintDroppedRecords(j);
  return kExitOk;
}

int DaemonCommands::Explain(const std::string& id, const std::string& operator_id, bool as_json) {
  DaemonClient::Response r;
  std::string target = "/jobs/" + UrlEncode(id) + "/explain";
  if (!operator_id.empty()) {
    target += "?operator=" + UrlEncode(operator_id);
  }
  if (!Call("GET", target, "", &r)) {
    return kExitUnreachable;
  }
  if (r.status != 200) {
    // A 404 naming an operator is about the operator, not the job id.
    const bool about_operator = r.status == 404 && r.body.find("has no ") != std::string::npos;
    return ReportError(r, about_operator ? "" : id);
  }
  const json j = json::parse(r.body);
  if (as_json) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << Shown(j.at("explain"));
  }
  // As `status`: a job that FAILED or was CANCELED is exit 1, whatever there was to explain.
  const std::string state = j.value("state", "");
  return IsTerminal(state) ? ExitFor(state) : kExitOk;
}

}  // namespace tidemark
