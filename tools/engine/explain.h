#pragma once

#include <string>
#include <vector>

#include "config/job_spec.h"
#include "runtime/task/stream_task.h"

namespace tidemark {

/// What an explanation is of, for its words where an operator has no snapshot.
struct ExplainContext {
  /// The snapshots are live (`JobExecution::LiveWatermarkSnapshots`: the job runs).
  bool live = false;
  /// The ended job's state ("FINISHED", "FAILED", "CANCELED"); "" when not known (`run --explain`).
  std::string state;
};

/// `tidemark run --explain`: why an operator's watermark stood where it did for the rest of the
/// run (the state just before end of input reached it, `TaskWatermarkSnapshot`): the input
/// channel, upstream subtask and split holding the minimum, which inputs are idle, paused or
/// finished and how far each trails, what would move it, and the likely mistake when the state
/// matches one (a split that never got a record; a split that stopped with no idleness set; a
/// strategy set after the source, on an assign-timestamps-and-watermarks operator).
///
/// `operator_id` empty: every window and join operator of the job (every non-source, non-sink
/// operator when there is none). Returns the text, one line per '\n'. A snapshot taken live (the
/// job runs) says "now, while the job runs" instead of "where it stood until end of input reached
/// it". An operator without a snapshot gets one line saying why: no such operator in the job; its
/// task did not answer (live); the job was CANCELED / FAILED before end of input reached it.
/// Pure function; any thread.
std::string ExplainWatermarks(const JobSpec& spec,
                              const std::vector<TaskWatermarkSnapshot>& snapshots,
                              const std::string& operator_id = "",
                              const ExplainContext& context = {});

}  // namespace tidemark
