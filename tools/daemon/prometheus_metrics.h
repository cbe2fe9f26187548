#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/graph/job_execution.h"

namespace tidemark {

/// The daemon's own counts for the exposition (JobManager's, under its lock).
struct DaemonMetricCounts {
  int64_t running = 0;
  int64_t retained = 0;
  int64_t submitted_total = 0;
  int64_t rejected_total = 0;
  int64_t expired_total = 0;
  int64_t finished_total = 0;
  int64_t failed_total = 0;
  int64_t canceled_total = 0;
  int64_t thread_failures_total = 0;  ///< JobManager::ReportServiceThreadFailure calls
};

/// One running job's figures for the exposition.
struct JobMetricsSample {
  std::string job_id;
  std::string job_name;
  int64_t start_ms = 0;  ///< wall clock
  std::vector<SubtaskMetrics> subtasks;
};

/// The metric families tidemarkd exposes, named as Flink's Prometheus reporter names the scopes
/// and `MetricNames` (`flink_taskmanager_job_task_operator_numRecordsOut` ->
/// `tidemark_job_task_operator_numRecordsOut`; one node has no taskmanager scope). Labels:
///   job:      job_id, job_name
///   task:     + task_name, subtask_index
///   operator: + operator_name
///   split:    + split_id          (`..._operator_split_<name>`)
/// Each family appears once it has a sample (prometheus-cpp leaves out empty ones); an
/// operator's further figures (numWindowsFired, stateBytes, ...) are exposed as
/// `tidemark_job_task_operator_<name>` / `..._split_<name>` gauges beside them. Watermarks and
/// times are ms; a watermark not yet set (Long.MIN_VALUE in Flink) has no sample.
/// The golden list of tests/unit/tools/daemon/prometheus_metrics_test.cc pins these names.
const std::vector<std::string_view>& MetricFamilyNames();

/// The Prometheus text exposition (format 0.0.4) of the daemon and its running jobs, through
/// prometheus-cpp's registry and TextSerializer. `now_ms`: wall clock, for `uptime` and
/// `watermarkLag`. Thread-safe (pure).
std::string PrometheusExposition(const DaemonMetricCounts& counts,
                                 const std::vector<JobMetricsSample>& jobs, int64_t now_ms);

}  // namespace tidemark
