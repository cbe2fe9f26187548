#include "runtime/graph/dropped_records.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace tidemark {
namespace {

struct Kind {
  const char* gauge;
  const char* note;
  const char* one;   // "input record rejected"
  const char* many;  // "input records rejected"
};

constexpr Kind kKinds[] = {
    {"numInputErrors", "firstInputError", "input record rejected", "input records rejected"},
    {"numRecordsWithoutTimestamp", "firstRecordWithoutTimestamp", "record without timestamp",
     "records without timestamp"},
    {"numLateRecordsDropped", "firstLateRecordDropped", "late record dropped",
     "late records dropped"},
    {"numRecordsSendErrors", "", "record not delivered", "records not delivered"},
};

struct Tally {
  int64_t count = 0;
  int first_subtask = -1;
  std::string first;
};

}  // namespace

std::vector<std::string> DroppedRecordLines(const std::vector<SubtaskMetrics>& metrics) {
  // Operators in the order the execution lists them (first appearance), each with its tallies.
  std::vector<std::string> order;
  std::map<std::string, std::map<size_t, Tally>> tallies;
  for (const SubtaskMetrics& m : metrics) {
    for (const OperatorMetrics& op : m.operators) {
      if (std::find(order.begin(), order.end(), op.name) == order.end()) {
        order.push_back(op.name);
      }
      for (size_t k = 0; k < std::size(kKinds); ++k) {
        for (const auto& [name, value] : op.gauges) {
          if (name != kKinds[k].gauge || value == 0) {
            continue;
          }
          Tally& t = tallies[op.name][k];
          t.count += value;
          for (const auto& [note, text] : op.notes) {
            if (note == kKinds[k].note &&
                (t.first_subtask < 0 || m.subtask_index < t.first_subtask)) {
              t.first_subtask = m.subtask_index;
              t.first = text;
            }
          }
        }
      }
    }
  }
  std::vector<std::string> out;
  for (const std::string& name : order) {
    auto it = tallies.find(name);
    if (it == tallies.end()) {
      continue;
    }
    for (const auto& [k, t] : it->second) {
      std::string line =
          fmt::format("{}: {} {}", name, t.count, t.count == 1 ? kKinds[k].one : kKinds[k].many);
      if (!t.first.empty()) {
        line += "; first: " + t.first;
      }
      out.push_back(std::move(line));
    }
  }
  return out;
}

std::vector<std::string> StateBackendFallbackLines(const std::vector<SubtaskMetrics>& metrics) {
  std::vector<std::string> out;
  std::vector<std::string> seen;
  for (const SubtaskMetrics& m : metrics) {
    for (const OperatorMetrics& op : m.operators) {
      for (const auto& [note, text] : op.notes) {
        if (note == "stateBackendFallback" &&
            std::find(seen.begin(), seen.end(), op.name) == seen.end()) {
          seen.push_back(op.name);
          out.push_back(
              fmt::format("{}: keyed state on the heap, not in RocksDB: {}", op.name, text));
        }
      }
    }
  }
  return out;
}

}  // namespace tidemark
