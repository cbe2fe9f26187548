#include "tools/daemon/rest_views.h"

#include <algorithm>
#include <map>
#include <string>

namespace tidemark {
namespace {

const nlohmann::json& Array(const nlohmann::json& j, const char* key) {
  static const nlohmann::json empty = nlohmann::json::array();
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

// The task (chain) name of vertex `vid` (any operator of the chain), or "".
std::string TaskOf(const nlohmann::json& job, std::string_view vid) {
  for (const nlohmann::json& v : Array(job, "vertices")) {
    if (v.value("id", "") == vid) {
      return v.value("task", "");
    }
  }
  return "";
}

// The operators of `task`, in chain order.
std::vector<const nlohmann::json*> OperatorsOf(const nlohmann::json& job, const std::string& task) {
  std::vector<const nlohmann::json*> out;
  for (const nlohmann::json& v : Array(job, "vertices")) {
    if (v.value("task", "") == task) {
      out.push_back(&v);
    }
  }
  return out;
}

const nlohmann::json* TaskFigures(const nlohmann::json& job, const std::string& task) {
  for (const nlohmann::json& t : Array(job, "tasks")) {
    if (t.value("name", "") == task) {
      return &t;
    }
  }
  return nullptr;
}

int64_t Metric(const nlohmann::json& subtask, const char* name) {
  auto m = subtask.find("metrics");
  if (m == subtask.end() || !m->is_object()) {
    return 0;
  }
  auto it = m->find(name);
  return it != m->end() && it->is_number() ? it->get<int64_t>() : 0;
}

}  // namespace

const char* BackPressureLevel(double ratio) {
  if (ratio <= 0.10) {
    return "ok";
  }
  if (ratio <= 0.5) {
    return "low";
  }
  return "high";
}

nlohmann::json JobsOverviewJson(const std::vector<nlohmann::json>& jobs) {
  nlohmann::json out = nlohmann::json::array();
  for (const nlohmann::json& j : jobs) {
    int64_t total = 0;
    int64_t finished = 0;
    for (const nlohmann::json& t : Array(j, "tasks")) {
      for (const nlohmann::json& s : Array(t, "subtasks")) {
        ++total;
        finished += s.value("finished", false) ? 1 : 0;
      }
    }
    const bool running = j.value("state", "") == "RUNNING";
    const int64_t end = j.value("end-time", int64_t{-1});
    out.push_back({{"jid", j.value("jid", "")},
                   {"name", j.value("name", "")},
                   {"state", j.value("state", "")},
                   {"start-time", j.value("start-time", int64_t{0})},
                   {"end-time", end},
                   {"duration", j.value("duration", int64_t{0})},
                   {"last-modification", end >= 0 ? end : j.value("start-time", int64_t{0})},
                   {"tasks",
                    {{"total", total},
                     {"running", running ? total - finished : 0},
                     {"finished", finished}}}});
  }
  return nlohmann::json{{"jobs", std::move(out)}};
}

nlohmann::json PlanJson(const nlohmann::json& job) {
  nlohmann::json nodes = nlohmann::json::array();
  std::vector<std::string> seen;
  // The head operator of each task (the id of the node), to name an input's upstream node.
  std::map<std::string, std::string> head_of_task;
  std::map<std::string, std::string> task_of_op;
  for (const nlohmann::json& v : Array(job, "vertices")) {
    const std::string task = v.value("task", "");
    head_of_task.emplace(task, v.value("id", ""));
    task_of_op[v.value("id", "")] = task;
  }
  for (const nlohmann::json& v : Array(job, "vertices")) {
    const std::string task = v.value("task", "");
    if (std::find(seen.begin(), seen.end(), task) != seen.end()) {
      continue;
    }
    seen.push_back(task);
    nlohmann::json ops = nlohmann::json::array();
    nlohmann::json inputs = nlohmann::json::array();
    for (const nlohmann::json* op : OperatorsOf(job, task)) {
      ops.push_back({{"id", op->value("id", "")}, {"type", op->value("type", "")}});
      for (const nlohmann::json& in : Array(*op, "inputs")) {
        if (in.value("chained", false)) {
          continue;
        }
        const std::string from_task = task_of_op[in.value("id", "")];
        inputs.push_back({{"num", inputs.size()},
                          {"id", head_of_task[from_task]},
                          {"operator", op->value("id", "")},
                          {"ship_strategy", in.value("ship_strategy", "FORWARD")},
                          {"exchange", "pipelined_bounded"},
                          {"side-output", in.contains("side-output") ? in["side-output"]
                                                                     : nlohmann::json(nullptr)}});
      }
    }
    nodes.push_back({{"id", v.value("id", "")},
                     {"description", task},
                     {"operator", task},
                     {"parallelism", v.value("parallelism", 1)},
                     {"operators", std::move(ops)},
                     {"inputs", std::move(inputs)}});
  }
  return nlohmann::json{{"plan",
                         {{"jid", job.value("jid", "")},
                          {"name", job.value("name", "")},
                          {"nodes", std::move(nodes)}}}};
}

std::optional<nlohmann::json> VertexJson(const nlohmann::json& job, std::string_view vid,
                                         int64_t now_ms) {
  const std::string task = TaskOf(job, vid);
  if (task.empty()) {
    return std::nullopt;
  }
  const auto ops = OperatorsOf(job, task);
  nlohmann::json subtasks = nlohmann::json::array();
  if (const nlohmann::json* t = TaskFigures(job, task)) {
    for (const nlohmann::json& s : Array(*t, "subtasks")) {
      const nlohmann::json& operators = Array(s, "operators");
      const bool ended = job.value("state", "") != "RUNNING";
      subtasks.push_back(
          {{"subtask", s.value("subtask", 0)},
           {"status", s.value("finished", false) ? "FINISHED"
                      : ended                    ? job.value("state", "")
                                                 : "RUNNING"},
           {"records-in", s.value("records-in", int64_t{0})},
           {"records-out",
            operators.empty() ? 0 : operators.back().value("records-out", int64_t{0})},
           {"input-watermark", s.contains("input-watermark") ? s["input-watermark"] : nullptr},
           {"output-watermark",
            operators.empty()
                ? nlohmann::json(nullptr)
                : operators.back().value("output-watermark", nlohmann::json(nullptr))},
           {"metrics", s.value("metrics", nlohmann::json::object())},
           {"operators", operators}});
    }
  }
  return nlohmann::json{{"id", ops.front()->value("id", "")},
                        {"name", task},
                        {"parallelism", ops.front()->value("parallelism", 1)},
                        {"now", now_ms},
                        {"subtasks", std::move(subtasks)}};
}

std::optional<nlohmann::json> VertexWatermarksJson(const nlohmann::json& job,
                                                   std::string_view vid) {
  auto v = VertexJson(job, vid, 0);
  if (!v) {
    return std::nullopt;
  }
  nlohmann::json out = nlohmann::json::array();
  for (const nlohmann::json& s : (*v)["subtasks"]) {
    const std::string sub = std::to_string(s.value("subtask", 0));
    for (const char* which : {"input", "output"}) {
      const nlohmann::json& wm = s[std::string(which) + "-watermark"];
      if (wm.is_number()) {
        out.push_back(
            {{"id", sub + (which[0] == 'i' ? ".currentInputWatermark" : ".currentOutputWatermark")},
             {"value", std::to_string(wm.get<int64_t>())}});
      }
    }
  }
  return out;
}

std::optional<nlohmann::json> VertexBackPressureJson(const nlohmann::json& job,
                                                     std::string_view vid, int64_t now_ms) {
  auto v = VertexJson(job, vid, now_ms);
  if (!v) {
    return std::nullopt;
  }
  nlohmann::json subtasks = nlohmann::json::array();
  double worst = 0;
  for (const nlohmann::json& s : (*v)["subtasks"]) {
    const double ratio = static_cast<double>(Metric(s, "backPressuredTimeMsPerSecond")) / 1000.0;
    worst = std::max(worst, ratio);
    subtasks.push_back(
        {{"subtask", s.value("subtask", 0)},
         {"backpressure-level", BackPressureLevel(ratio)},
         {"ratio", ratio},
         {"idleRatio", static_cast<double>(Metric(s, "idleTimeMsPerSecond")) / 1000.0},
         {"busyRatio", static_cast<double>(Metric(s, "busyTimeMsPerSecond")) / 1000.0}});
  }
  return nlohmann::json{{"status", "ok"},
                        {"backpressure-level", BackPressureLevel(worst)},
                        {"end-timestamp", now_ms},
                        {"subtasks", std::move(subtasks)}};
}

}  // namespace tidemark
