#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tidemark {

/// `pipeline.cpu-affinity: auto`: where tidemark pins each task thread. Flink has no such key
/// (its users pin TaskManager processes with taskset or cgroups); this is tidemark's opt-in choice
/// for latency-sensitive jobs on small hosts, measured in issue 44 (on 2 CPUs the kernel's
/// placement of a source beside its downstream tasks was the p99 bound).
///
/// The rule, for `allowed` = the process's allowed CPUs in ascending order (n of them) and one
/// flag per task (true: the task's head is a source), in task order:
/// - n <= 1, or no tasks: nothing is pinned (every entry -1).
/// - only sources or only downstream tasks: task i runs on allowed[i % n].
/// - otherwise the first k CPUs take the sources and the remaining n - k the downstream tasks,
///   k = the sources' share of the tasks, n * sources / tasks rounded to nearest (halves up) and
///   kept within [1, n - 1]; the i-th source runs on allowed[i % k], the j-th downstream task on
///   allowed[k + j % (n - k)]. With 2 CPUs: sources on the first, every other task on the second.
/// Returns one CPU number per task, -1 for "not pinned". Pure; any thread.
std::vector<int> PlaceTasksOnCpus(const std::vector<int>& allowed,
                                  const std::vector<bool>& is_source);

/// For `cpus` (one CPU per task from PlaceTasksOnCpus, -1 = not pinned) and `channels` (one
/// (producer task, consumer task) index pair per channel): per task, whether one of its consumers
/// is pinned to the CPU it is pinned to (StreamTask::SetSharesCpuWithConsumer: such a task yields
/// to its consumers, which the kernel would otherwise let wait behind it). A channel from a task
/// to itself, an unpinned task and an index out of range count for nothing. Pure; any thread.
std::vector<bool> TasksSharingCpuWithConsumer(
    const std::vector<int>& cpus, const std::vector<std::pair<size_t, size_t>>& channels);

/// The calling process's allowed CPUs (sched_getaffinity), ascending; empty when it cannot be read.
std::vector<int> AllowedCpus();

/// Pins the calling thread to `cpu` (pthread_setaffinity_np). Returns "" on success, else why not
/// (the caller logs it and runs unpinned).
std::string PinCurrentThread(int cpu);

/// The CPU the calling thread is pinned to, read back with pthread_getaffinity_np: its only
/// allowed CPU, or -1 when it may run on several (or the set cannot be read).
int CurrentThreadPinnedCpu();

}  // namespace tidemark
