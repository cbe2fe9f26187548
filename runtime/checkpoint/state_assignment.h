#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/state/key_groups.h"
#include "runtime/state/state_serializer.h"

namespace tidemark {

/// Restoring a checkpoint or savepoint at another parallelism: which state each new subtask gets.
/// Mirrors Flink's `StateAssignmentOperation` with `KeyGroupRangeAssignment` (keyed state) and
/// `RoundRobinOperatorStateRepartitioner` (operator list state, a source's splits).
///
/// A snapshot is opaque bytes except for its `StateBlock`s (recorded by `StateWriter` and kept in
/// `_metadata`). The snapshot of new subtask `j` is the snapshot of one old subtask, its *base*
/// (for keyed state the first old subtask whose key-group range overlaps `j`'s, else old subtask
/// `min(j, old parallelism - 1)`), with every block replaced:
/// - a key-group block by the "key-group" sections, in `j`'s `KeyGroupRange`, of the same block
///   of every old subtask (ascending: old ranges are contiguous and in subtask order);
/// - a list block by the elements `e` of the same block of all old subtasks, in old-subtask order,
///   with `e mod parallelism == j` (each split goes to exactly one new reader and resumes from its
///   checkpointed position).
/// Lengths of the sections enclosing a block are corrected. Everything outside the blocks (an
/// operator's watermark, its counters, broadcast state) is the base's.

/// One old subtask's snapshot (borrowed).
struct SubtaskSnapshot {
  int subtask = 0;
  const std::string* bytes = nullptr;
  const std::vector<StateBlock>* blocks = nullptr;
};

/// The snapshot of new subtask `index` of `parallelism` from the snapshots `old` (every old
/// subtask that wrote state, ascending, all with the same block shape) of an operator that ran
/// at `old_parallelism`; `max_parallelism` is the same before and after. `blocks_out` (optional)
/// gets the blocks of the result. Errors: `StateCorrupt` when a block does not hold what its kind
/// says or the old snapshots differ in shape.
std::string AssembleSubtaskState(const std::vector<SubtaskSnapshot>& old, int old_parallelism,
                                 int max_parallelism, int parallelism, int index,
                                 std::vector<StateBlock>* blocks_out = nullptr);

/// How an operator runs in the job being restored.
struct RestoreTarget {
  int parallelism = 1;
  int max_parallelism = kDefaultMaxParallelism;
  /// A source or a keyed operator: state that must be redistributed on a rescale; a checkpoint
  /// without the blocks to do it (written before tidemark rescaled) is refused for it.
  bool needs_redistribution = false;
};

/// Rewrites `checkpoint.states` (and `blocks`) for every operator of `targets` that has state and
/// ran at another parallelism in the checkpoint (`checkpoint.parallelism`, else its number of
/// subtasks with state): each new subtask gets `AssembleSubtaskState`. Operators without blocks
/// and not `needs_redistribution` (a sink's file position) keep their per-subtask state; the
/// caller decides about subtasks that no longer exist. Returns the ids of the operators it
/// redistributed.
///
/// Errors (`Error`, "cannot restore from DIR: ..."): an operator with key-group state whose
/// max-parallelism changed (Flink refuses it too: the key groups would no longer match); a
/// `needs_redistribution` operator at another parallelism whose checkpoint has no blocks;
/// `restore_watermarks` together with a redistribution (per-channel watermarks do not carry
/// over to other channel counts); a snapshot whose blocks do not read back.
std::vector<std::string> AssignStatesForRestore(CompletedCheckpoint& checkpoint,
                                                const std::map<std::string, RestoreTarget>& targets,
                                                bool restore_watermarks);

}  // namespace tidemark
