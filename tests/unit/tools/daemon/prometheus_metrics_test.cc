#include "tools/daemon/prometheus_metrics.h"

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

// The golden list: every family tidemarkd always exposes. A rename breaks dashboards and alerts
// built on these names, so changing one must change this list deliberately.
const std::vector<std::string> kGolden = {
    "tidemark_jobs_running",
    "tidemark_jobs_retained",
    "tidemark_jobs_submitted_total",
    "tidemark_jobs_rejected_total",
    "tidemark_jobs_expired_total",
    "tidemark_jobs_ended_total",
    "tidemark_daemon_thread_failures_total",
    "tidemark_job_uptime",
    "tidemark_job_task_numRecordsIn",
    "tidemark_job_task_numRecordsInPerSecond",
    "tidemark_job_task_currentInputWatermark",
    "tidemark_job_task_busyTimeMsPerSecond",
    "tidemark_job_task_idleTimeMsPerSecond",
    "tidemark_job_task_backPressuredTimeMsPerSecond",
    "tidemark_job_task_operator_numRecordsOut",
    "tidemark_job_task_operator_currentInputWatermark",
    "tidemark_job_task_operator_currentOutputWatermark",
    "tidemark_job_task_operator_watermarkLag",
    "tidemark_job_task_operator_numLateRecordsDropped",
    "tidemark_job_task_operator_sourceIdleTime",
    "tidemark_job_task_operator_watermarkAlignmentDrift",
    "tidemark_job_task_operator_split_currentWatermark",
    "tidemark_job_task_operator_split_activeTimeMsPerSecond",
    "tidemark_job_task_operator_split_idleTimeMsPerSecond",
    "tidemark_job_task_operator_split_pausedTimeMsPerSecond",
    "tidemark_job_task_operator_split_numRecordsOut",
};

// "# TYPE name type" lines of a text exposition: name -> type.
std::map<std::string, std::string> Types(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      const size_t sp = line.find(' ', 7);
      out[line.substr(7, sp - 7)] = line.substr(sp + 1);
    }
  }
  return out;
}

std::vector<SubtaskMetrics> TwoTaskJob() {
  SubtaskMetrics source;
  source.task = "events -> assign";
  source.subtask_index = 0;
  source.records_in = 500;
  source.task_gauges = {{"busyTimeMsPerSecond", 300},
                        {"idleTimeMsPerSecond", 100},
                        {"backPressuredTimeMsPerSecond", 600},
                        {"numRecordsInPerSecond", 250}};
  OperatorMetrics events{"events", 500, 9'000, {}, {}, {}};
  events.gauges = {{"sourceIdleTime", 0},
                   {"watermarkAlignmentDrift", 40},
                   {"split.a.txt.activeTimeMsPerSecond", 0},
                   {"split.a.txt.pausedTimeMsPerSecond", 0},
                   {"currentOutputWatermark", 9'000},
                   {"numInputErrors", 0},
                   {"split.a.txt.watermark", 9'000},
                   {"split.a.txt.idleTimeMsPerSecond", 1000},
                   {"split.a.txt.numRecordsOut", 200},
                   {"split.b.watermark", kMinTimestamp}};
  source.operators = {events, OperatorMetrics{"assign", 500, 8'000, {}, {}, {}}};
  SubtaskMetrics window;
  window.task = "windows";
  window.subtask_index = 1;
  window.records_in = 480;
  window.input_watermark = 7'000;
  OperatorMetrics w{"windows", 3, 6'000, {{"numLateRecordsDropped", 197}, {"numWindowsFired", 3}},
                    {},        {}};
  window.operators = {w};
  return {source, window};
}

TEST(PrometheusMetrics, TheGoldenNamesAreExposedWithTheirTypes) {
  ASSERT_EQ(std::vector<std::string>(MetricFamilyNames().begin(), MetricFamilyNames().end()),
            kGolden);
  // Without jobs, the daemon's own families only (prometheus-cpp leaves out empty families).
  const auto daemon_only = Types(PrometheusExposition({}, {}, 0));
  EXPECT_EQ(daemon_only.size(), 7u);
  EXPECT_EQ(daemon_only.count("tidemark_jobs_ended_total"), 1u);
  auto types =
      Types(PrometheusExposition({}, {JobMetricsSample{"j1", "two-split", 0, TwoTaskJob()}}, 1));
  types.erase("tidemark_job_task_operator_numInputErrors");  // an operator's own figures
  types.erase("tidemark_job_task_operator_numWindowsFired");
  for (const std::string& name : kGolden) {
    ASSERT_TRUE(types.count(name)) << name;
    const bool counter = name.find("_total") != std::string::npos ||
                         name.ends_with("numRecordsIn") || name.ends_with("numRecordsOut") ||
                         name.ends_with("numLateRecordsDropped");
    EXPECT_EQ(types.at(name), counter ? "counter" : "gauge") << name;
  }
  EXPECT_EQ(types.size(), kGolden.size());
}

TEST(PrometheusMetrics, SamplesCarryFlinksLabelsAndExactValues) {
  DaemonMetricCounts counts;
  counts.running = 1;
  counts.submitted_total = 4;
  counts.finished_total = 2;
  counts.thread_failures_total = 3;
  const std::string text = PrometheusExposition(
      counts, {JobMetricsSample{"j1", "two-split", 10'000, TwoTaskJob()}}, 19'500);
  auto has = [&](const std::string& line) {
    EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << "\n---\n" << text;
  };
  has("tidemark_jobs_running 1");
  has("tidemark_jobs_submitted_total 4");
  has("tidemark_jobs_ended_total{state=\"FINISHED\"} 2");
  has("tidemark_daemon_thread_failures_total 3");
  has("tidemark_job_uptime{job_id=\"j1\",job_name=\"two-split\"} 9500");
  const std::string src =
      "job_id=\"j1\",job_name=\"two-split\",operator_name=\"events\",subtask_index=\"0\","
      "task_name=\"events -> assign\"";
  const std::string split_a =
      "job_id=\"j1\",job_name=\"two-split\",operator_name=\"events\",split_id=\"a.txt\","
      "subtask_index=\"0\",task_name=\"events -> assign\"";
  const std::string task0 =
      "job_id=\"j1\",job_name=\"two-split\",subtask_index=\"0\",task_name=\"events -> assign\"";
  has("tidemark_job_task_numRecordsIn{" + task0 + "} 500");
  has("tidemark_job_task_backPressuredTimeMsPerSecond{" + task0 + "} 600");
  has("tidemark_job_task_numRecordsInPerSecond{" + task0 + "} 250");
  has("tidemark_job_task_operator_currentOutputWatermark{" + src + "} 9000");
  has("tidemark_job_task_operator_watermarkLag{" + src + "} 10500");
  has("tidemark_job_task_operator_numInputErrors{" + src + "} 0");
  has("tidemark_job_task_operator_split_currentWatermark{" + split_a + "} 9000");
  has("tidemark_job_task_operator_split_idleTimeMsPerSecond{" + split_a + "} 1000");
  has("tidemark_job_task_operator_split_numRecordsOut{" + split_a + "} 200");
  // A chained operator's input watermark is its upstream's output.
  has("tidemark_job_task_operator_currentInputWatermark{job_id=\"j1\",job_name=\"two-split\","
      "operator_name="
      "\"assign\",subtask_index=\"0\",task_name=\"events -> assign\"} 9000");
  const std::string win =
      "job_id=\"j1\",job_name=\"two-split\",operator_name=\"windows\",subtask_index=\"1\","
      "task_name=\"windows\"";
  has("tidemark_job_task_operator_numLateRecordsDropped{" + win + "} 197");
  has("tidemark_job_task_operator_currentInputWatermark{" + win + "} 7000");
  has("tidemark_job_task_operator_numWindowsFired{" + win + "} 3");
  has("tidemark_job_task_currentInputWatermark{job_id=\"j1\",job_name=\"two-split\",subtask_index="
      "\"1\","
      "task_name=\"windows\"} 7000");
  // No sample for a watermark not yet set; no lag for a non-source.
  EXPECT_EQ(text.find("split_id=\"b\""), std::string::npos) << text;
  EXPECT_EQ(text.find("watermarkLag{" + win), std::string::npos);
  EXPECT_EQ(Types(text).at("tidemark_job_task_operator_numWindowsFired"), "gauge");
}

TEST(PrometheusMetrics, LabelValuesAreEscapedAndBadFigureNamesLeftOut) {
  auto job = TwoTaskJob();
  job[1].operators[0].gauges.push_back({"bad name!", 1});
  const std::string text =
      PrometheusExposition({}, {JobMetricsSample{"j2", "a \"quoted\"\nname\\", 0, job}}, 0);
  EXPECT_NE(text.find("job_name=\"a \\\"quoted\\\"\\nname\\\\\""), std::string::npos) << text;
  EXPECT_EQ(text.find("bad name"), std::string::npos);
}

}  // namespace
}  // namespace tidemark
