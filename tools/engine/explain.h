#pragma once

#include <string>
#include <vector>

#include "config/job_spec.h"
#include "runtime/task/stream_task.h"

namespace tidemark {

/// `tidemark run --explain`: why an operator's watermark stood where it did for the rest of the
/// run (the state just before end of input reached it, `TaskWatermarkSnapshot`): the input
/// channel, upstream subtask and split holding the minimum, which inputs are idle, paused or
/// finished and how far each trails, what would move it, and the likely mistake when the state
/// matches one (a split that never got a record; a split that stopped with no idleness set; a
/// strategy set after the source, on an assign-timestamps-and-watermarks operator).
///
/// `operator_id` empty: every window and join operator of the job (every non-source, non-sink
/// operator when there is none). Returns the text, one line per '\n'; an unknown operator id gives
/// one line saying so. Pure function; any thread.
std::string ExplainWatermarks(const JobSpec& spec,
                              const std::vector<TaskWatermarkSnapshot>& snapshots,
                              const std::string& operator_id = "");

}  // namespace tidemark
