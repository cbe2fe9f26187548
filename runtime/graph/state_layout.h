#pragma once

#include <map>
#include <string>

#include "runtime/graph/job_graph.h"

namespace tidemark {

/// What an operator's state means, by aspect: "type" (the operator type of its block: `window`,
/// `dedup`, ...), "key" (its key-by fields and their types),
/// "window" (the window assigner: kind, time, size, slide, gap, offset) and "aggregate" (the
/// accumulators, in order). Recorded per operator id in a checkpoint's `_metadata`; a restore
/// compares it with the job's (Flink checks its state serializers' compatibility the same way: a
/// changed key serializer or state layout is an error, not silently misread state).
using OperatorStateLayout = std::map<std::string, std::string>;

/// The layouts of every operator of `graph`, by operator id (at least its "type"). Pure.
std::map<std::string, OperatorStateLayout> StateLayoutsOf(const JobGraph& graph);

/// The first difference between a checkpoint's layout and the job's for operator `id`, as
/// "operator \"<id>\" changed its <aspect> from <old> to <new>"; "" when compatible. Aspects
/// present on one side only are compatible (a checkpoint from before layouts were recorded).
std::string StateLayoutChange(const std::string& id, const OperatorStateLayout& checkpointed,
                              const OperatorStateLayout& now);

}  // namespace tidemark
