#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace tidemark {

/// Flink's REST views of a job, computed from the job's details as JobManager::JobJson gives
/// them (`vertices` with their task and inputs, `tasks` with per-subtask figures). A vertex here
/// is what Flink calls a JobVertex: one task (operator chain); its id (`vid`) is the id of the
/// chain's head operator. Any operator id of the chain is accepted for it too. Pure functions,
/// thread-safe. Mirrors Flink's JobsOverviewHandler, JobPlanHandler, JobVertexDetailsHandler,
/// JobVertexWatermarksHandler and JobVertexBackPressureHandler.

/// Flink's back pressure level of a back-pressured-time ratio (backPressuredTimeMsPerSecond /
/// 1000): "ok" up to 0.10, "low" up to 0.5, "high" above (JobVertexBackPressureInfo).
const char* BackPressureLevel(double ratio);

/// GET /jobs/overview: `{"jobs": [{"jid","name","state","start-time","end-time","duration",
/// "last-modification","tasks": {"total","running","finished"}}]}` from each job's details.
nlohmann::json JobsOverviewJson(const std::vector<nlohmann::json>& jobs);

/// GET /jobs/{id}/plan: `{"plan": {"jid","name","nodes": [{"id","description","operator",
/// "parallelism","operators": [{"id","type"}],"inputs": [{"num","id","ship_strategy",
/// "exchange","side-output"}]}]}}`, nodes in topological order.
nlohmann::json PlanJson(const nlohmann::json& job);

/// GET /jobs/{id}/vertices/{vid}: `{"id","name","parallelism","now","subtasks": [{"subtask",
/// "status","records-in","records-out","input-watermark","output-watermark","metrics",
/// "operators"}]}`; nullopt for an unknown vertex.
std::optional<nlohmann::json> VertexJson(const nlohmann::json& job, std::string_view vid,
                                         int64_t now_ms);

/// GET /jobs/{id}/vertices/{vid}/watermarks: `[{"id": "<subtask>.currentInputWatermark",
/// "value": "<ms>"}, ...]` (values as strings, as Flink's metrics API), plus
/// `<subtask>.currentOutputWatermark` of the chain's last operator; none for a watermark not yet
/// set.
std::optional<nlohmann::json> VertexWatermarksJson(const nlohmann::json& job, std::string_view vid);

/// GET /jobs/{id}/vertices/{vid}/backpressure: `{"status": "ok", "backpressure-level",
/// "end-timestamp","subtasks": [{"subtask","backpressure-level","ratio","idleRatio",
/// "busyRatio"}]}`; the vertex's level is its worst subtask's.
std::optional<nlohmann::json> VertexBackPressureJson(const nlohmann::json& job,
                                                     std::string_view vid, int64_t now_ms);

}  // namespace tidemark
