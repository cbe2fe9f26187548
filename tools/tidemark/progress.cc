#include "tools/tidemark/progress.h"

#include <map>

#include <fmt/format.h>

#include "runtime/core/time_format.h"

namespace tidemark {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string HumanBytes(int64_t b) {
  if (b >= (int64_t{1} << 20)) {
    return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1 << 20));
  }
  if (b >= 1024) {
    return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024);
  }
  return fmt::format("{} B", b);
}

}  // namespace

std::string ProgressLine(const std::vector<SubtaskMetrics>& metrics, double elapsed_s) {
  // split id -> (records, bytes); summed over subtasks (a split is read by one of them).
  std::map<std::string, std::pair<int64_t, int64_t>> splits;
  Timestamp downstream_wm = kMaxTimestamp;
  bool has_downstream = false;
  Timestamp source_wm = kMaxTimestamp;
  for (const SubtaskMetrics& m : metrics) {
    const bool is_source_task =
        !m.operators.empty() &&
        std::any_of(m.operators.front().gauges.begin(), m.operators.front().gauges.end(),
                    [](const auto& g) { return g.first == "waitingForAlignment"; });
    if (!is_source_task) {
      has_downstream = true;
      downstream_wm = std::min(downstream_wm, m.input_watermark);
    } else {
      source_wm = std::min(source_wm, m.operators.back().output_watermark);
    }
    for (const OperatorMetrics& op : m.operators) {
      for (const auto& [name, value] : op.gauges) {
        if (name.rfind("split.", 0) != 0) {
          continue;
        }
        if (EndsWith(name, ".records")) {
          splits[name.substr(6, name.size() - 6 - 8)].first += value;
        } else if (EndsWith(name, ".bytes")) {
          splits[name.substr(6, name.size() - 6 - 6)].second += value;
        }
      }
    }
  }
  std::string line;
  for (const auto& [id, rb] : splits) {
    line += fmt::format("{}{} {} rec", line.empty() ? "" : ", ", id, rb.first);
    if (rb.second > 0) {
      line += fmt::format(" {}", HumanBytes(rb.second));
    }
  }
  const Timestamp wm = has_downstream ? downstream_wm : source_wm;
  line += fmt::format(
      "{}watermark {} | {:.1f}s", line.empty() ? "" : " | ",
      wm == kMaxTimestamp && !has_downstream && metrics.empty() ? "MIN" : FormatEventTime(wm),
      elapsed_s);
  return line;
}

}  // namespace tidemark
