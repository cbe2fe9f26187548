#include "runtime/graph/job_graph.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <queue>
#include <tuple>

#include <fmt/format.h>

#include "config/block_reader.h"
#include "runtime/graph/job_resources.h"
#include "runtime/io/channel.h"
#include "runtime/state/key_groups.h"

namespace tidemark {
namespace {

std::string Locate(const JobSpec& job, const SourceLocation& loc, size_t op_index,
                   const std::string& path, const std::string& message) {
  std::string key = fmt::format("operators[{}]", op_index);
  if (!path.empty()) {
    key += "." + path;
  }
  const std::string file = loc.file.empty() ? job.file : loc.file;
  return fmt::format("{}:{}:{}: error: {}: {}", file, loc.line, loc.column, key, message);
}

// A key-by entry naming a field (letters, digits, '_', not starting with a digit), as opposed to
// an expression over fields.
bool IsPlainIdentifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) {
    return false;
  }
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

}  // namespace

void JobGraph::IndexEdges() {
  in_edges_.assign(vertices.size(), {});
  out_edges_.assign(vertices.size(), {});
  for (size_t i = 0; i < edges.size(); ++i) {
    const JobEdge& e = edges[i];
    if (e.to >= 0 && static_cast<size_t>(e.to) < vertices.size()) {
      in_edges_[static_cast<size_t>(e.to)].push_back(i);
    }
    if (e.from >= 0 && static_cast<size_t>(e.from) < vertices.size()) {
      out_edges_[static_cast<size_t>(e.from)].push_back(i);
    }
  }
  indexed_edges_ = edges.size();
}

namespace {

// The edges of `edges` whose `end` (JobEdge::to or ::from) is `vertex`: from `index` (per vertex,
// indices into `edges`) when it is current, else by a scan.
std::vector<const JobEdge*> EdgesAt(const std::vector<JobEdge>& edges,
                                    const std::vector<std::vector<size_t>>& index, bool indexed,
                                    int JobEdge::*end, int vertex) {
  std::vector<const JobEdge*> out;
  if (indexed && vertex >= 0 && static_cast<size_t>(vertex) < index.size()) {
    for (const size_t i : index[static_cast<size_t>(vertex)]) {
      out.push_back(&edges[i]);
    }
    return out;
  }
  for (const auto& e : edges) {
    if (e.*end == vertex) {
      out.push_back(&e);
    }
  }
  return out;
}

}  // namespace

std::vector<const JobEdge*> JobGraph::InputsOf(int vertex) const {
  return EdgesAt(edges, in_edges_, indexed_edges_ == edges.size(), &JobEdge::to, vertex);
}

std::vector<const JobEdge*> JobGraph::OutputsOf(int vertex) const {
  return EdgesAt(edges, out_edges_, indexed_edges_ == edges.size(), &JobEdge::from, vertex);
}

bool JobGraph::IsChained(const JobEdge& edge) const {
  const JobVertex& up = vertices[static_cast<size_t>(edge.from)];
  const JobVertex& down = vertices[static_cast<size_t>(edge.to)];
  return edge.partitioning == Partitioning::kForward && up.parallelism == down.parallelism &&
         down.compiled.num_inputs == 1 && InputsOf(edge.to).size() == 1;
}

JobGraph CompileJobGraph(const JobSpec& spec, const OperatorRegistry& registry,
                         JobResources& resources) {
  JobGraph graph;
  graph.name = spec.name;
  graph.pipeline = spec.pipeline;
  graph.checkpointing = spec.checkpointing;
  graph.restart_strategy = EffectiveRestartStrategy(spec);
  graph.faults = spec.faults;

  // Topological order (Kahn); config/ already rejects cycles and unknown inputs, this re-checks.
  std::map<std::string, size_t> index_of;
  for (size_t i = 0; i < spec.operators.size(); ++i) {
    index_of[spec.operators[i].id] = i;
  }
  std::vector<int> indegree(spec.operators.size(), 0);
  std::vector<std::vector<size_t>> downstream(spec.operators.size());
  for (size_t i = 0; i < spec.operators.size(); ++i) {
    for (const auto& in : spec.operators[i].inputs) {
      auto it = index_of.find(in.from);
      if (it == index_of.end()) {
        throw JobCompileError(
            Locate(spec, in.location, i, "inputs", fmt::format("unknown operator '{}'", in.from)));
      }
      ++indegree[i];
      downstream[it->second].push_back(i);
    }
  }
  std::queue<size_t> ready;
  for (size_t i = 0; i < indegree.size(); ++i) {
    if (indegree[i] == 0) {
      ready.push(i);
    }
  }
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = ready.front();
    ready.pop();
    order.push_back(i);
    for (size_t d : downstream[i]) {
      if (--indegree[d] == 0) {
        ready.push(d);
      }
    }
  }
  if (order.size() != spec.operators.size()) {
    throw JobCompileError(
        fmt::format("{}: error: operators: the job graph has a cycle", spec.file));
  }

  std::map<std::string, int> vertex_of;  // operator id -> vertex index
  std::vector<std::string> errors;
  // Compiles one operator whose inputs are already compiled; false when it reported an error.
  auto compile_vertex = [&](const OperatorSpec& op, size_t spec_index) -> bool {
    const OperatorCompiler* compiler = registry.Find(op.type);
    if (compiler == nullptr) {
      std::string known;
      const std::vector<std::string> types = registry.Types();
      for (const auto& t : types) {
        known += (known.empty() ? "" : ", ") + t;
      }
      const std::vector<std::string_view> names(types.begin(), types.end());
      errors.push_back(Locate(spec, op.type_location.line > 0 ? op.type_location : op.location,
                              spec_index, "type",
                              fmt::format("unknown operator type '{}'{} (known: {})", op.type,
                                          Suggestion(op.type, names), known)));
      return false;
    }
    std::vector<Schema> input_schemas;
    bool inputs_ok = true;
    for (const auto& in : op.inputs) {
      auto vit = vertex_of.find(in.from);
      if (vit == vertex_of.end()) {
        inputs_ok = false;  // upstream failed to compile; its error is already reported
        break;
      }
      const JobVertex& up = graph.vertices[static_cast<size_t>(vit->second)];
      if (in.side_output.empty()) {
        input_schemas.push_back(up.compiled.output_schema);
      } else {
        auto sit = up.compiled.side_output_schemas.find(in.side_output);
        if (sit == up.compiled.side_output_schemas.end()) {
          errors.push_back(Locate(
              spec, in.location, spec_index, "inputs",
              fmt::format("operator '{}' has no side output '{}'", in.from, in.side_output)));
          inputs_ok = false;
          break;
        }
        input_schemas.push_back(sit->second);
      }
    }
    if (!inputs_ok) {
      return false;
    }
    JobVertex v;
    v.id = static_cast<int>(graph.vertices.size());
    v.spec = op;
    try {
      v.compiled = (*compiler)(CompileContext{op, spec, std::move(input_schemas), resources});
    } catch (const CompileError& e) {
      errors.push_back(Locate(spec, e.location().line > 0 ? e.location() : op.location, spec_index,
                              e.path(), e.what()));
      return false;
    } catch (const InvalidArgument& e) {
      errors.push_back(Locate(spec, op.location, spec_index, "", e.what()));
      return false;
    }
    v.parallelism = v.compiled.forced_parallelism > 0 ? v.compiled.forced_parallelism
                    : op.parallelism > 0              ? op.parallelism
                                                      : spec.pipeline.parallelism;
    if (v.parallelism < 1) {
      v.parallelism = 1;
    }
    vertex_of[op.id] = v.id;
    graph.vertices.push_back(std::move(v));
    return true;
  };

  for (size_t spec_index : order) {
    OperatorSpec op = spec.operators[spec_index];
    // key-by entries that are expressions (`user_id % 10`, not a plain field name) become a
    // computed column: a `map` inserted before the operator on each of its inputs (chained with
    // the upstream) adds `key` (or key1, key2, ... for several), and the operator keys by that
    // column — as Flink's keyBy(KeySelector) computes its key from the record.
    std::vector<std::pair<std::string, ExpressionSpec>> computed;
    for (size_t k = 0; k < op.key_by.size(); ++k) {
      if (IsPlainIdentifier(op.key_by[k])) {
        continue;
      }
      std::string column = op.key_by.size() == 1 ? "key" : fmt::format("key{}", k + 1);
      const SourceLocation loc =
          k < op.key_by_locations.size() ? op.key_by_locations[k] : op.location;
      computed.emplace_back(column, ExpressionSpec{op.key_by[k], loc});
      op.key_by[k] = column;
    }
    bool inputs_ok = true;
    for (size_t k = 0; k < op.inputs.size() && !computed.empty(); ++k) {
      InputSpec& in = op.inputs[k];
      auto up = vertex_of.find(in.from);
      if (up == vertex_of.end()) {
        inputs_ok = false;
        break;
      }
      OperatorSpec key_map;
      key_map.id =
          op.inputs.size() == 1 ? op.id + ".key-by" : fmt::format("{}.key-by{}", op.id, k + 1);
      key_map.type = "map";
      key_map.map = MapSpec{};
      key_map.map->set = computed;
      key_map.map->location = op.location;
      key_map.inputs = {InputSpec{in.from, in.side_output, Partitioning::kDefault, in.location}};
      key_map.parallelism = graph.vertices[static_cast<size_t>(up->second)].parallelism;
      key_map.location = op.location;
      key_map.type_location = op.location;
      if (!compile_vertex(key_map, spec_index)) {
        inputs_ok = false;
        break;
      }
      in.from = key_map.id;
      in.side_output.clear();
    }
    if (inputs_ok) {
      compile_vertex(op, spec_index);
    }
  }
  if (!errors.empty()) {
    std::string all;
    for (const auto& e : errors) {
      all += (all.empty() ? "" : "\n") + e;
    }
    throw JobCompileError(all);
  }

  // Edges, with the partitioning resolved as Flink does: keyBy -> hash; equal parallelism ->
  // forward; otherwise rebalance.
  std::vector<SourceLocation> edge_locations;  // of each edge's input, for diagnostics
  for (const JobVertex& v : graph.vertices) {
    for (size_t k = 0; k < v.spec.inputs.size(); ++k) {
      const InputSpec& in = v.spec.inputs[k];
      JobEdge e;
      e.from = vertex_of.at(in.from);
      e.to = v.id;
      e.side_output = in.side_output;
      e.input_index = v.compiled.num_inputs > 1 ? static_cast<int>(k) : 0;
      const JobVertex& up = graph.vertices[static_cast<size_t>(e.from)];
      Partitioning p = in.partitioning;
      if (p == Partitioning::kDefault) {
        if (!v.compiled.input_key_slots.empty() || v.compiled.hash_input) {
          p = Partitioning::kHash;
        } else if (up.parallelism == v.parallelism) {
          p = Partitioning::kForward;
        } else {
          p = Partitioning::kRebalance;
        }
      }
      if (p == Partitioning::kForward && up.parallelism != v.parallelism) {
        throw JobCompileError(
            Locate(spec, in.location, static_cast<size_t>(v.id), "inputs",
                   fmt::format("partition: forward needs equal parallelism, but '{}' has "
                               "{} and '{}' has {}",
                               up.spec.id, up.parallelism, v.spec.id, v.parallelism)));
      }
      if ((p == Partitioning::kForward || p == Partitioning::kRebalance) && v.parallelism > 1) {
        std::vector<int> keyed = v.compiled.input_key_slots;
        const auto input = static_cast<size_t>(e.input_index);
        if (input < v.compiled.input_key_slots_per_input.size()) {
          keyed = v.compiled.input_key_slots_per_input[input];
        }
        if (!keyed.empty()) {
          throw JobCompileError(Locate(
              spec, in.location, static_cast<size_t>(v.id), "inputs",
              fmt::format("partition: {} into the keyed operator '{}' (parallelism {}) would send "
                          "a key to a subtask that does not own its key group; leave the "
                          "partition out (hash by key)",
                          p == Partitioning::kForward ? "forward" : "rebalance", v.spec.id,
                          v.parallelism)));
        }
      }
      if (p == Partitioning::kHash) {
        if (v.compiled.input_key_slots.empty() && !v.compiled.hash_input) {
          throw JobCompileError(Locate(spec, in.location, static_cast<size_t>(v.id), "inputs",
                                       "partition: hash needs key-by on the receiving operator"));
        }
        e.key_slots = v.compiled.input_key_slots;
        const auto input = static_cast<size_t>(e.input_index);
        if (input < v.compiled.input_key_slots_per_input.size()) {
          e.key_slots = v.compiled.input_key_slots_per_input[input];
        }
      }
      e.partitioning = p;
      graph.edges.push_back(std::move(e));
      edge_locations.push_back(in.location);
    }
  }
  graph.IndexEdges();
  // Projection pushdown (Flink's planner pushes a projection into the exchange below an operator
  // that reads only some fields): a channel into a target that bounds its field use carries only
  // those fields. A chained edge passes the rows themselves, so nothing to leave out there.
  for (JobEdge& e : graph.edges) {
    const JobVertex& down = graph.vertices[static_cast<size_t>(e.to)];
    if (down.compiled.num_inputs == 1 && down.compiled.input_fields_read && !graph.IsChained(e)) {
      e.fields_read = down.compiled.input_fields_read;
    }
  }

  // pipeline.max-parallelism: the number of key groups. Unset, it is Flink's default for the
  // widest operator; set, no operator may run wider (a subtask would own no key group).
  int widest = 1;
  for (const JobVertex& v : graph.vertices) {
    widest = std::max(widest, v.parallelism);
  }
  if (spec.pipeline.max_parallelism == 0) {
    graph.pipeline.max_parallelism = DefaultMaxParallelism(widest);
  } else {
    for (const JobVertex& v : graph.vertices) {
      if (v.parallelism > spec.pipeline.max_parallelism) {
        const SourceLocation& at = spec.pipeline.max_parallelism_location;
        throw JobCompileError(fmt::format(
            "{}:{}:{}: error: pipeline.max-parallelism: {} is lower than the parallelism {} of "
            "operator '{}'; it must be >= every operator's parallelism (it is the number of key "
            "groups)",
            at.file.empty() ? spec.file : at.file, at.line, at.column,
            spec.pipeline.max_parallelism, v.parallelism, v.spec.id));
      }
    }
  }

  // Every channel allocates its ring buffer up front (JobExecution), so a job whose channels
  // would not fit in memory is a compile error, not a bad_alloc or an OOM kill of the daemon.
  const auto capacity = static_cast<uint64_t>(std::max<int64_t>(4, spec.pipeline.channel_capacity));
  uint64_t slots = 0;
  for (size_t i = 0; i < graph.edges.size(); ++i) {
    const JobEdge& e = graph.edges[i];
    if (graph.IsChained(e)) {
      continue;
    }
    const JobVertex& up = graph.vertices[static_cast<size_t>(e.from)];
    const JobVertex& down = graph.vertices[static_cast<size_t>(e.to)];
    const uint64_t channels =
        e.partitioning == Partitioning::kForward
            ? static_cast<uint64_t>(up.parallelism)
            : static_cast<uint64_t>(up.parallelism) * static_cast<uint64_t>(down.parallelism);
    slots += channels * 2 * capacity;  // the ring and its free list of recycled batches (Channel)
    if (slots > kMaxChannelSlots) {
      throw JobCompileError(Locate(
          spec, edge_locations[i], static_cast<size_t>(e.to), "inputs",
          fmt::format("the job's channels would need more than {} element slots (this edge: {} "
                      "channels of {} from '{}', parallelism {}, to '{}', parallelism {}); lower "
                      "the parallelism or pipeline.channel-capacity",
                      kMaxChannelSlots, channels, capacity, up.spec.id, up.parallelism,
                      down.spec.id, down.parallelism)));
    }
  }
  for (const FaultSpec& fault : graph.faults) {
    for (const JobVertex& v : graph.vertices) {
      if (v.spec.id == fault.operator_id && v.compiled.is_source) {
        throw JobCompileError(fmt::format(
            "{}:{}:{}: error: faults: operator '{}' is a source; inject the fault into an operator "
            "downstream of it",
            fault.location.file.empty() ? spec.file : fault.location.file, fault.location.line,
            fault.location.column, fault.operator_id));
      }
    }
  }
  return graph;
}

}  // namespace tidemark
