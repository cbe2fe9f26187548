#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "runtime/core/errors.h"
#include "runtime/graph/operator_registry.h"

namespace tidemark {

/// A job that cannot be compiled (unknown operator type, a semantic error in an operator spec,
/// a partitioning that does not fit). `what()` is one or more lines
/// `file:line:column: error: operators[i].path: message`.
class JobCompileError : public Error {
 public:
  using Error::Error;
};

/// One logical operator of the job (Flink's JobVertex before chaining).
struct JobVertex {
  int id = 0;  ///< index in JobGraph::vertices (topological order)
  OperatorSpec spec;
  CompiledOperator compiled;
  int parallelism = 1;
};

/// A logical edge; `input_index` is the input of the target it feeds (0, or 1 for two-input).
struct JobEdge {
  int from = 0;
  int to = 0;
  std::string side_output;                             ///< empty: main output
  Partitioning partitioning = Partitioning::kForward;  ///< resolved, never kDefault
  int input_index = 0;
  std::vector<int> key_slots;  ///< hash partitioning
  /// Slots of the edge's rows the target can ever read (its `input_fields_read`), ascending; set
  /// only on a channel edge (not chained) into a one-input target that bounds its field use. The
  /// channel may leave the other fields out (they arrive NULL, see WireBatch::SetDroppedFields).
  /// Unset: every field crosses.
  std::optional<std::vector<int>> fields_read;
};

/// The compiled job: vertices in topological order and resolved edges. Immutable after
/// `CompileJobGraph`; shared read-only by the execution.
struct JobGraph {
  std::string name;
  PipelineSpec pipeline;
  /// The job's `checkpointing:` block (absent: no checkpoints) and the restart strategy it runs
  /// under (`EffectiveRestartStrategy`: its `restart-strategy:` block or Flink's default).
  std::optional<CheckpointingSpec> checkpointing;
  RestartStrategySpec restart_strategy;
  std::vector<FaultSpec>
      faults;  ///< `faults:` (fault injection), each naming a non-source operator
  std::vector<JobVertex> vertices;
  std::vector<JobEdge> edges;

  /// The edges into / out of `vertex`, in `edges` order. O(its edges) once `IndexEdges` has run
  /// on the current `edges` (CompileJobGraph does), else a scan of every edge.
  std::vector<const JobEdge*> InputsOf(int vertex) const;
  std::vector<const JobEdge*> OutputsOf(int vertex) const;
  /// Indexes `edges` by target and source vertex, so that InputsOf/OutputsOf/IsChained do not
  /// scan every edge (a job of n chained operators compiled in O(n^2) before: 20k operators took
  /// 10 s to validate). Call again after adding or retargeting edges; until then the lookups fall
  /// back to scanning when the edge count changed. Not thread-safe against concurrent lookups.
  void IndexEdges();
  /// True when `edge` is fused into its upstream's task (forward, equal parallelism, the
  /// target's only input and a one-input operator): records pass by direct call.
  bool IsChained(const JobEdge& edge) const;

 private:
  std::vector<std::vector<size_t>> in_edges_;   ///< per vertex: indices into `edges`
  std::vector<std::vector<size_t>> out_edges_;  ///< per vertex: indices into `edges`
  size_t indexed_edges_ = SIZE_MAX;             ///< edges.size() when indexed; SIZE_MAX: never
};

/// Upper bound on the element slots of all of a job's channels together (8 bytes each, allocated
/// when the job is deployed): 512 MiB. `CompileJobGraph` rejects a job that needs more.
inline constexpr uint64_t kMaxChannelSlots = uint64_t{1} << 26;

/// Compiles a validated JobSpec: resolves every operator type through `registry`, field names
/// to slots, schemas along edges, parallelism and partitioning. Throws JobCompileError, also when
/// the channels would need more than `kMaxChannelSlots` slots.
/// Called on the submitting thread.
JobGraph CompileJobGraph(const JobSpec& spec, const OperatorRegistry& registry,
                         JobResources& resources);

}  // namespace tidemark
