#include "runtime/daemon/daemon_job.h"

#include <fmt/format.h>

namespace tidemark {

std::vector<DaemonJobVertex> VerticesOf(const JobGraph& graph) {
  std::vector<DaemonJobVertex> out;
  for (const JobVertex& v : graph.vertices) {
    out.push_back({v.spec.id, v.spec.type, v.parallelism});
  }
  return out;
}

std::vector<DaemonJobOutput> OutputsOf(const JobGraph& graph) {
  std::vector<DaemonJobOutput> out;
  for (const JobVertex& v : graph.vertices) {
    if (!v.spec.sink || v.spec.sink->type != "file") {
      continue;
    }
    if (v.parallelism <= 1) {
      out.push_back({v.spec.id, v.spec.sink->path});
      continue;
    }
    for (int i = 0; i < v.parallelism; ++i) {
      out.push_back({v.spec.id, fmt::format("{}.{}", v.spec.sink->path, i)});
    }
  }
  return out;
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
