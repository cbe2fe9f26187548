#include "tools/daemon/daemon_job.h"

#include <fmt/format.h>

#include "runtime/graph/operator_chains.h"

namespace tidemark {

namespace {

const char* ShipStrategy(Partitioning p) {
  switch (p) {
    case Partitioning::kForward:
      return "FORWARD";
    case Partitioning::kRebalance:
      return "REBALANCE";
    case Partitioning::kHash:
      return "HASH";
    case Partitioning::kBroadcast:
      return "BROADCAST";
    case Partitioning::kDefault:
      break;
  }
  return "FORWARD";
}

}  // namespace

std::vector<DaemonJobVertex> VerticesOf(const JobGraph& graph) {
  const std::vector<int> head_of = ChainHeads(graph);  // the chains as JobExecution builds them
  std::vector<DaemonJobVertex> out;
  for (const JobVertex& v : graph.vertices) {
    DaemonJobVertex d{v.spec.id,
                      v.spec.type,
                      v.parallelism,
                      ChainName(graph, head_of, head_of[static_cast<size_t>(v.id)]),
                      {}};
    for (const JobEdge* e : graph.InputsOf(v.id)) {
      d.inputs.push_back({graph.vertices[static_cast<size_t>(e->from)].spec.id,
                          ShipStrategy(e->partitioning), e->side_output, graph.IsChained(*e)});
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<DaemonJobOutput> OutputsOf(const JobGraph& graph) {
  std::vector<DaemonJobOutput> out;
  for (const JobVertex& v : graph.vertices) {
    if (v.spec.sink && v.spec.sink->type == "kafka" &&
        v.spec.sink->delivery_guarantee == "exactly-once") {
      out.push_back(
          {v.spec.id, "", v.spec.sink->transactional_id_prefix, v.spec.sink->bootstrap_servers});
      continue;
    }
    if (!v.spec.sink || v.spec.sink->type != "file") {
      continue;
    }
    // An exactly-once file sink writes a directory of part files, every subtask into the same one.
    if (v.parallelism <= 1 || v.spec.sink->delivery_guarantee == "exactly-once") {
      out.push_back({v.spec.id, v.spec.sink->path});
      continue;
    }
    for (int i = 0; i < v.parallelism; ++i) {
      out.push_back({v.spec.id, fmt::format("{}.{}", v.spec.sink->path, i)});
    }
  }
  return out;
}

nlohmann::json EmptyCheckpointStatsJson() {
  return nlohmann::json{{"restarts", 0},          {"completed", 0},       {"failed", 0},
                        {"last-completed-id", 0}, {"last-size-bytes", 0}, {"last-duration-ms", 0},
                        {"last-alignment-ms", 0}, {"last-path", ""}};
}

JobState ExecutionDaemonJob::Run() {
  {
    std::lock_guard<std::mutex> lock(start_mu_);
    if (cancelled_before_start_) {
      return JobState::kCanceled;
    }
    started_ = true;
    execution().Start();  // under the lock: a Cancel right now waits and then reaches the tasks
  }
  return execution().Wait();
}

void ExecutionDaemonJob::Cancel() {
  std::lock_guard<std::mutex> lock(start_mu_);
  if (!started_) {
    cancelled_before_start_ = true;
    return;
  }
  execution().Cancel();
}

JobState ExecutionDaemonJob::state() const {
  {
    std::lock_guard<std::mutex> lock(start_mu_);
    if (cancelled_before_start_) {
      return JobState::kCanceled;
    }
  }
  return execution().state();
}

}  // namespace tidemark
