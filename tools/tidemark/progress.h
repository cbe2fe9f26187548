#pragma once

#include <string>
#include <vector>

#include "runtime/graph/job_execution.h"

namespace tidemark {

/// One line of progress for `tidemark run` on a terminal, from the published metrics:
/// records (and bytes, for file sources) per split, and the job's current watermark (the
/// minimum input watermark of the non-source tasks, or the sources' output watermark when the
/// job is a single task). Example:
/// `source: fast 120 rec, slow 118 rec | watermark 9.149s | 0.8s`
std::string ProgressLine(const std::vector<SubtaskMetrics>& metrics, double elapsed_s);

}  // namespace tidemark
