#pragma once

#include <string>
#include <vector>

#include "runtime/graph/job_graph.h"

namespace tidemark {

/// How the vertices of `graph` chain into tasks (Flink's `OperatorChain`): element v is the id of
/// the head of v's chain; a vertex whose only input edge is chained (`JobGraph::IsChained`) joins
/// its upstream's chain, every other vertex heads one. Indexed by vertex id; `graph.vertices` must
/// be in topological order (as `CompileJobGraph` gives them).
std::vector<int> ChainHeads(const JobGraph& graph);

/// The task name of the chain headed by `head`: its operator ids in topological order joined by
/// " -> " (e.g. "source -> assign"), as tasks, metrics and the dashboard show it.
std::string ChainName(const JobGraph& graph, const std::vector<int>& heads, int head);

}  // namespace tidemark
