#include "tools/daemon/rest_views.h"

#include <gtest/gtest.h>

namespace tidemark {
namespace {

using json = nlohmann::json;

// A job's details as JobManager::JobJson gives them: source -> assign chained, a keyed window
// with its sink chained, parallelism 2 downstream.
json Job() {
  return json::parse(R"({
    "jid": "j1", "name": "demo", "state": "RUNNING", "start-time": 1000, "end-time": -1, "duration": 5000,
    "vertices": [
      {"id": "src", "type": "source", "parallelism": 1, "task": "src -> assign", "inputs": []},
      {"id": "assign", "type": "assign-timestamps-and-watermarks", "parallelism": 1, "task": "src -> assign",
       "inputs": [{"id": "src", "ship_strategy": "FORWARD", "side-output": null, "chained": true}]},
      {"id": "win", "type": "window", "parallelism": 2, "task": "win -> out",
       "inputs": [{"id": "assign", "ship_strategy": "HASH", "side-output": null, "chained": false}]},
      {"id": "out", "type": "sink", "parallelism": 2, "task": "win -> out",
       "inputs": [{"id": "win", "ship_strategy": "FORWARD", "side-output": null, "chained": true}]}
    ],
    "tasks": [
      {"name": "src -> assign", "parallelism": 1, "subtasks": [
        {"subtask": 0, "records-in": 400, "input-watermark": null, "finished": false,
         "metrics": {"busyTimeMsPerSecond": 200, "idleTimeMsPerSecond": 0, "backPressuredTimeMsPerSecond": 800},
         "operators": [{"name": "src", "records-out": 400, "output-watermark": null, "metrics": {}},
                       {"name": "assign", "records-out": 400, "output-watermark": 5000, "metrics": {}}]}]},
      {"name": "win -> out", "parallelism": 2, "subtasks": [
        {"subtask": 0, "records-in": 150, "input-watermark": 4000, "finished": true,
         "metrics": {"busyTimeMsPerSecond": 900, "idleTimeMsPerSecond": 0, "backPressuredTimeMsPerSecond": 100},
         "operators": [{"name": "win", "records-out": 3, "output-watermark": 4000, "metrics": {}},
                       {"name": "out", "records-out": 0, "output-watermark": null, "metrics": {}}]},
        {"subtask": 1, "records-in": 250, "input-watermark": 3000, "finished": false,
         "metrics": {"busyTimeMsPerSecond": 500, "idleTimeMsPerSecond": 200, "backPressuredTimeMsPerSecond": 300},
         "operators": [{"name": "win", "records-out": 2, "output-watermark": 3000, "metrics": {}},
                       {"name": "out", "records-out": 0, "output-watermark": null, "metrics": {}}]}]}
    ]})");
}

TEST(RestViews, BackPressureLevelsFollowFlinksThresholds) {
  EXPECT_STREQ(BackPressureLevel(0.0), "ok");
  EXPECT_STREQ(BackPressureLevel(0.10), "ok");
  EXPECT_STREQ(BackPressureLevel(0.101), "low");
  EXPECT_STREQ(BackPressureLevel(0.5), "low");
  EXPECT_STREQ(BackPressureLevel(0.501), "high");
}

TEST(RestViews, PlanHasOneNodePerChainWithItsShipStrategies) {
  const json plan = PlanJson(Job())["plan"];
  EXPECT_EQ(plan["jid"], "j1");
  ASSERT_EQ(plan["nodes"].size(), 2u);
  EXPECT_EQ(plan["nodes"][0]["id"], "src");
  EXPECT_EQ(plan["nodes"][0]["description"], "src -> assign");
  EXPECT_EQ(plan["nodes"][0]["operators"], json::parse(R"([{"id":"src","type":"source"},
      {"id":"assign","type":"assign-timestamps-and-watermarks"}])"));
  EXPECT_TRUE(plan["nodes"][0]["inputs"].empty());
  EXPECT_EQ(plan["nodes"][1]["id"], "win");
  EXPECT_EQ(plan["nodes"][1]["parallelism"], 2);
  ASSERT_EQ(plan["nodes"][1]["inputs"].size(), 1u);
  EXPECT_EQ(plan["nodes"][1]["inputs"][0]["id"], "src");  // the upstream node, not the operator
  EXPECT_EQ(plan["nodes"][1]["inputs"][0]["operator"], "win");
  EXPECT_EQ(plan["nodes"][1]["inputs"][0]["ship_strategy"], "HASH");
}

TEST(RestViews, VertexSubtasksWatermarksAndBackPressure) {
  const json job = Job();
  const auto v = VertexJson(job, "out", 7);  // any operator of the chain names it
  ASSERT_TRUE(v);
  EXPECT_EQ((*v)["id"], "win");
  EXPECT_EQ((*v)["name"], "win -> out");
  ASSERT_EQ((*v)["subtasks"].size(), 2u);
  EXPECT_EQ((*v)["subtasks"][0]["status"], "FINISHED");
  EXPECT_EQ((*v)["subtasks"][1]["status"], "RUNNING");
  EXPECT_EQ((*v)["subtasks"][1]["records-in"], 250);
  EXPECT_TRUE((*v)["subtasks"][1]["output-watermark"].is_null());  // the sink emits none
  EXPECT_FALSE(VertexJson(job, "nope", 7));

  EXPECT_EQ(*VertexWatermarksJson(job, "win"), json::parse(R"([
      {"id": "0.currentInputWatermark", "value": "4000"},
      {"id": "1.currentInputWatermark", "value": "3000"}])"));
  EXPECT_EQ(*VertexWatermarksJson(job, "src"), json::parse(R"([
      {"id": "0.currentOutputWatermark", "value": "5000"}])"));

  const json src = *VertexBackPressureJson(job, "src", 9);
  EXPECT_EQ(src["backpressure-level"], "high");
  EXPECT_EQ(src["end-timestamp"], 9);
  EXPECT_DOUBLE_EQ(src["subtasks"][0]["ratio"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(src["subtasks"][0]["busyRatio"].get<double>(), 0.2);
  const json win = *VertexBackPressureJson(job, "win", 9);
  EXPECT_EQ(win["backpressure-level"], "low");  // its worst subtask: 0.3
  EXPECT_EQ(win["subtasks"][0]["backpressure-level"], "ok");
  EXPECT_EQ(win["subtasks"][1]["backpressure-level"], "low");
}

TEST(RestViews, OverviewCountsSubtasks) {
  const json o = JobsOverviewJson({Job()});
  ASSERT_EQ(o["jobs"].size(), 1u);
  EXPECT_EQ(o["jobs"][0]["tasks"], json::parse(R"({"total": 3, "running": 2, "finished": 1})"));
  EXPECT_EQ(o["jobs"][0]["last-modification"], 1000);
  EXPECT_TRUE(JobsOverviewJson({})["jobs"].empty());
}

}  // namespace
}  // namespace tidemark
