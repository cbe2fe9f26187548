#pragma once

#include <string>

#include "tools/daemon/daemon_job.h"

namespace tidemark {

/// What the daemon's start-up self-check found.
struct SelfCheckResult {
  bool ok = false;
  std::string detail;  ///< the report line printed, or why the check could not run
  int64_t elapsed_ms = 0;
};

/// Runs the two-split experiment in split mode (jobs/two_splits_split.yaml, compiled into the
/// daemon; virtual clock, so it takes a few milliseconds and gives the same result on any machine)
/// through the same path as a submitted job (with workers: in a worker process), and compares its
/// report line with tests/golden/two_splits_split.expected.
///
/// Why the daemon does this before it listens: a build or platform problem that breaks event time
/// is found before a user's job meets it, and the code and one-time state every job uses (YAML
/// parser, operator registry, task threads, allocator arenas) are in place, so the first submitted
/// job is as fast as the thousandth and the footprint at "ready" is the daemon's floor.
///
/// `factory` is the daemon's job factory: with workers, the check also proves that a worker process
/// starts, runs a job and reports it back.
///
/// Call from the main thread before serving. Never throws: an exception becomes `ok = false`.
SelfCheckResult RunSelfCheck(const JobFactory& factory);

}  // namespace tidemark
