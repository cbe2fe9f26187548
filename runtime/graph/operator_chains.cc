#include "runtime/graph/operator_chains.h"

namespace tidemark {

std::vector<int> ChainHeads(const JobGraph& graph) {
  std::vector<int> head_of(graph.vertices.size(), -1);
  for (const JobVertex& v : graph.vertices) {  // topological order
    const auto inputs = graph.InputsOf(v.id);
    head_of[static_cast<size_t>(v.id)] = inputs.size() == 1 && graph.IsChained(*inputs[0])
                                             ? head_of[static_cast<size_t>(inputs[0]->from)]
                                             : v.id;
  }
  return head_of;
}

std::string ChainName(const JobGraph& graph, const std::vector<int>& heads, int head) {
  std::string name;
  for (const JobVertex& v : graph.vertices) {
    if (heads[static_cast<size_t>(v.id)] == head) {
      name += (name.empty() ? "" : " -> ") + v.spec.id;
    }
  }
  return name;
}

}  // namespace tidemark
