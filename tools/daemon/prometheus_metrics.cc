#include "tools/daemon/prometheus_metrics.h"

#include <map>
#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <set>

namespace tidemark {
namespace {

using prometheus::Labels;

struct FamilySpec {
  std::string_view name;
  bool counter;
  std::string_view help;
};

// Order: the exposition's (prometheus-cpp keeps registration order).
constexpr FamilySpec kFamilies[] = {
    {"tidemark_jobs_running", false, "Jobs currently running."},
    {"tidemark_jobs_retained", false, "Jobs listed (running and kept history)."},
    {"tidemark_jobs_submitted_total", true, "Jobs accepted since start."},
    {"tidemark_jobs_rejected_total", true, "Submissions refused by the running-jobs limit."},
    {"tidemark_jobs_expired_total", true, "Finished jobs dropped from the history by age."},
    {"tidemark_jobs_ended_total", true, "Jobs ended since start, by final state."},
    {"tidemark_daemon_thread_failures_total", true,
     "Failures of the daemon's own threads (REST I/O, submission, expirer, job waiter)."},
    {"tidemark_job_uptime", false, "Time since the job was submitted, ms (Flink's uptime)."},
    {"tidemark_job_task_numRecordsIn", true, "Records into the subtask (its head operator)."},
    {"tidemark_job_task_numRecordsInPerSecond", false, "Records into the subtask per second."},
    {"tidemark_job_task_currentInputWatermark", false,
     "The subtask's input watermark (min over its inputs), ms."},
    {"tidemark_job_task_busyTimeMsPerSecond", false, "ms per second the subtask was processing."},
    {"tidemark_job_task_idleTimeMsPerSecond", false, "ms per second the subtask had no input."},
    {"tidemark_job_task_backPressuredTimeMsPerSecond", false,
     "ms per second the subtask was blocked on a full output channel."},
    {"tidemark_job_task_operator_numRecordsOut", true, "Records the operator emitted."},
    {"tidemark_job_task_operator_currentInputWatermark", false,
     "The operator's input watermark, ms."},
    {"tidemark_job_task_operator_currentOutputWatermark", false,
     "The last watermark the operator emitted, ms."},
    {"tidemark_job_task_operator_watermarkLag", false,
     "Wall-clock time minus the source's output watermark, ms (sources only)."},
    {"tidemark_job_task_operator_numLateRecordsDropped", true,
     "Records dropped as late by a window."},
    {"tidemark_job_task_operator_sourceIdleTime", false,
     "ms since the source last emitted a record."},
    {"tidemark_job_task_operator_watermarkAlignmentDrift", false,
     "ms the source's watermark is ahead of its alignment group's minimum."},
    {"tidemark_job_task_operator_split_currentWatermark", false, "The split's watermark, ms."},
    {"tidemark_job_task_operator_split_activeTimeMsPerSecond", false,
     "ms per second the split was active."},
    {"tidemark_job_task_operator_split_idleTimeMsPerSecond", false,
     "ms per second the split was idle."},
    {"tidemark_job_task_operator_split_pausedTimeMsPerSecond", false,
     "ms per second the split was paused by watermark alignment."},
    {"tidemark_job_task_operator_split_numRecordsOut", true, "Records the split emitted."},
};

// Operator gauges with a family of their own above (by the gauge's name).
const std::map<std::string_view, std::string_view> kOperatorGaugeFamilies = {
    {"numLateRecordsDropped", "tidemark_job_task_operator_numLateRecordsDropped"},
    {"sourceIdleTime", "tidemark_job_task_operator_sourceIdleTime"},
    {"watermarkAlignmentDrift", "tidemark_job_task_operator_watermarkAlignmentDrift"},
};
// Operator gauges left out: shown by the families above already (the operator's output
// watermark is `currentOutputWatermark`; the input watermark is derived from the chain).
const std::set<std::string_view> kOperatorGaugesShownElsewhere = {"currentOutputWatermark",
                                                                  "currentInputWatermark"};
const std::map<std::string_view, std::string_view> kSplitGaugeFamilies = {
    {"watermark", "tidemark_job_task_operator_split_currentWatermark"},
    {"activeTimeMsPerSecond", "tidemark_job_task_operator_split_activeTimeMsPerSecond"},
    {"idleTimeMsPerSecond", "tidemark_job_task_operator_split_idleTimeMsPerSecond"},
    {"pausedTimeMsPerSecond", "tidemark_job_task_operator_split_pausedTimeMsPerSecond"},
    {"numRecordsOut", "tidemark_job_task_operator_split_numRecordsOut"},
};

bool ValidMetricNamePart(std::string_view s) {
  if (s.empty()) {
    return false;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) {
      return false;
    }
  }
  return true;
}

class Exposition {
 public:
  Exposition() {
    for (const FamilySpec& f : kFamilies) {
      if (f.counter) {
        counters_[std::string(f.name)] = &prometheus::BuildCounter()
                                              .Name(std::string(f.name))
                                              .Help(std::string(f.help))
                                              .Register(registry_);
      } else {
        gauges_[std::string(f.name)] = &prometheus::BuildGauge()
                                            .Name(std::string(f.name))
                                            .Help(std::string(f.help))
                                            .Register(registry_);
      }
    }
  }

  void Counter(const std::string& family, const Labels& labels, double value) {
    counters_.at(family)->Add(labels).Increment(value);
  }
  void Gauge(const std::string& family, const Labels& labels, double value) {
    auto it = gauges_.find(family);
    if (it == gauges_.end()) {
      it = gauges_
               .emplace(family,
                        &prometheus::BuildGauge()
                             .Name(family)
                             .Help("An operator's own figure (StreamOperator::CollectMetrics).")
                             .Register(registry_))
               .first;
    }
    it->second->Add(labels).Set(value);
  }
  void Watermark(const std::string& family, const Labels& labels, int64_t wm) {
    if (wm != kMinTimestamp) {
      Gauge(family, labels, static_cast<double>(wm));
    }
  }
  std::string Text() const { return prometheus::TextSerializer().Serialize(registry_.Collect()); }

 private:
  prometheus::Registry registry_;
  std::map<std::string, prometheus::Family<prometheus::Counter>*> counters_;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> gauges_;
};

}  // namespace

const std::vector<std::string_view>& MetricFamilyNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> n;
    for (const FamilySpec& f : kFamilies) {
      n.push_back(f.name);
    }
    return n;
  }();
  return names;
}

std::string PrometheusExposition(const DaemonMetricCounts& c,
                                 const std::vector<JobMetricsSample>& jobs, int64_t now_ms) {
  Exposition x;
  x.Gauge("tidemark_jobs_running", {}, static_cast<double>(c.running));
  x.Gauge("tidemark_jobs_retained", {}, static_cast<double>(c.retained));
  x.Counter("tidemark_jobs_submitted_total", {}, static_cast<double>(c.submitted_total));
  x.Counter("tidemark_jobs_rejected_total", {}, static_cast<double>(c.rejected_total));
  x.Counter("tidemark_jobs_expired_total", {}, static_cast<double>(c.expired_total));
  x.Counter("tidemark_jobs_ended_total", {{"state", "FINISHED"}},
            static_cast<double>(c.finished_total));
  x.Counter("tidemark_jobs_ended_total", {{"state", "FAILED"}},
            static_cast<double>(c.failed_total));
  x.Counter("tidemark_jobs_ended_total", {{"state", "CANCELED"}},
            static_cast<double>(c.canceled_total));
  x.Counter("tidemark_daemon_thread_failures_total", {},
            static_cast<double>(c.thread_failures_total));
  for (const JobMetricsSample& job : jobs) {
    const Labels job_labels{{"job_id", job.job_id}, {"job_name", job.job_name}};
    x.Gauge("tidemark_job_uptime", job_labels, static_cast<double>(now_ms - job.start_ms));
    for (const SubtaskMetrics& m : job.subtasks) {
      Labels task = job_labels;
      task["task_name"] = m.task;
      task["subtask_index"] = std::to_string(m.subtask_index);
      x.Counter("tidemark_job_task_numRecordsIn", task, static_cast<double>(m.records_in));
      x.Watermark("tidemark_job_task_currentInputWatermark", task, m.input_watermark);
      for (const auto& [name, value] : m.task_gauges) {
        if (ValidMetricNamePart(name)) {
          x.Gauge("tidemark_job_task_" + name, task, static_cast<double>(value));
        }
      }
      Timestamp input_wm = m.input_watermark;  // of the chain's head; then each operator's upstream
      for (const OperatorMetrics& o : m.operators) {
        Labels op = task;
        op["operator_name"] = o.name;
        x.Counter("tidemark_job_task_operator_numRecordsOut", op,
                  static_cast<double>(o.records_out));
        x.Watermark("tidemark_job_task_operator_currentOutputWatermark", op, o.output_watermark);
        bool is_source = false;
        std::map<std::string, std::vector<std::pair<std::string, int64_t>>> splits;
        for (const auto& [name, value] : o.gauges) {
          if (name == "sourceIdleTime") {
            is_source = true;
          }
          if (name.rfind("split.", 0) == 0) {
            const size_t dot = name.rfind('.');
            if (dot > 6) {  // split.<id>.<figure>; ids may contain dots (file paths)
              splits[name.substr(6, dot - 6)].emplace_back(name.substr(dot + 1), value);
            }
            continue;
          }
          if (auto f = kOperatorGaugeFamilies.find(name); f != kOperatorGaugeFamilies.end()) {
            if (f->second.find("numLateRecords") != std::string_view::npos) {
              x.Counter(std::string(f->second), op, static_cast<double>(value));
            } else {
              x.Gauge(std::string(f->second), op, static_cast<double>(value));
            }
          } else if (kOperatorGaugesShownElsewhere.count(name) == 0 && ValidMetricNamePart(name)) {
            x.Gauge("tidemark_job_task_operator_" + name, op, static_cast<double>(value));
          }
        }
        if (!is_source) {
          x.Watermark("tidemark_job_task_operator_currentInputWatermark", op, input_wm);
        } else if (o.output_watermark != kMinTimestamp && o.output_watermark != kMaxTimestamp) {
          x.Gauge("tidemark_job_task_operator_watermarkLag", op,
                  static_cast<double>(now_ms - o.output_watermark));
        }
        for (const auto& [split_id, figures] : splits) {
          Labels split = op;
          split["split_id"] = split_id;
          for (const auto& [figure, value] : figures) {
            if (auto f = kSplitGaugeFamilies.find(figure); f != kSplitGaugeFamilies.end()) {
              if (figure == "numRecordsOut") {
                x.Counter(std::string(f->second), split, static_cast<double>(value));
              } else if (figure == "watermark") {
                x.Watermark(std::string(f->second), split, value);
              } else {
                x.Gauge(std::string(f->second), split, static_cast<double>(value));
              }
            } else if (ValidMetricNamePart(figure)) {
              x.Gauge("tidemark_job_task_operator_split_" + figure, split,
                      static_cast<double>(value));
            }
          }
        }
        input_wm = o.output_watermark;
      }
    }
  }
  return x.Text();
}

}  // namespace tidemark
