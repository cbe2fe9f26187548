#include "runtime/task/cpu_affinity.h"

#include <algorithm>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <system_error>

namespace tidemark {

std::vector<int> PlaceTasksOnCpus(const std::vector<int>& allowed,
                                  const std::vector<bool>& is_source) {
  const int n = static_cast<int>(allowed.size());
  std::vector<int> cpus(is_source.size(), -1);
  if (n <= 1 || is_source.empty()) {
    return cpus;
  }
  int sources = 0;
  for (const bool s : is_source) {
    sources += s ? 1 : 0;
  }
  const int tasks = static_cast<int>(is_source.size());
  if (sources == 0 || sources == tasks) {
    for (size_t i = 0; i < is_source.size(); ++i) {
      cpus[i] = allowed[i % static_cast<size_t>(n)];
    }
    return cpus;
  }
  // n * sources / tasks, rounded to nearest with halves up, within [1, n - 1].
  int k = (2 * n * sources + tasks) / (2 * tasks);
  k = std::max(1, std::min(n - 1, k));
  int next_source = 0;
  int next_other = 0;
  for (size_t i = 0; i < is_source.size(); ++i) {
    if (is_source[i]) {
      cpus[i] = allowed[static_cast<size_t>(next_source++ % k)];
    } else {
      const int slot = k + (next_other++ % (n - k));
      cpus[i] = allowed[static_cast<size_t>(slot)];
    }
  }
  return cpus;
}

std::vector<bool> TasksSharingCpuWithConsumer(
    const std::vector<int>& cpus, const std::vector<std::pair<size_t, size_t>>& channels) {
  std::vector<bool> shares(cpus.size(), false);
  for (const auto& [up, down] : channels) {
    if (up != down && up < cpus.size() && down < cpus.size() && cpus[up] >= 0 &&
        cpus[up] == cpus[down]) {
      shares[up] = true;
    }
  }
  return shares;
}

std::vector<int> AllowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) {
    return cpus;
  }
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) {
      cpus.push_back(c);
    }
  }
  return cpus;
}

std::string PinCurrentThread(int cpu) {
  if (cpu < 0 || cpu >= CPU_SETSIZE) {
    return "CPU " + std::to_string(cpu) + " is out of range";
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  const int rc = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  if (rc != 0) {
    return std::generic_category().message(rc);
  }
  return "";
}

int CurrentThreadPinnedCpu() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0 || CPU_COUNT(&set) != 1) {
    return -1;
  }
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) {
      return c;
    }
  }
  return -1;
}

}  // namespace tidemark
