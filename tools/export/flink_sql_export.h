#pragma once

#include <string>
#include <vector>

#include "config/job_spec.h"
#include "runtime/graph/job_graph.h"

namespace tidemark {

/// One feature of a job that Flink SQL cannot express: what it is, where it was written in the
/// YAML, and the nearest Flink SQL construct. A plain value type.
struct ExportProblem {
  SourceLocation location;  ///< 1-based position of the YAML value (or block) that asks for it
  std::string path;         ///< YAML path, e.g. `operators[1].window.allowed-lateness`
  std::string feature;      ///< e.g. `allowed lateness (5s) on a window`
  std::string nearest;      ///< e.g. `none on window TVFs; ...`

  /// `jobs/a.yaml:31:25: error: operators[1].window.allowed-lateness: allowed lateness (5s) on a
  /// window has no Flink SQL form; nearest: ...` (no trailing newline).
  std::string ToString() const;
};

/// The Flink SQL (2.x) form of a job: `SET` statements, one `CREATE TABLE` per source and sink,
/// one `CREATE TEMPORARY VIEW` per operator in between, and the `INSERT INTO`s in one
/// `EXECUTE STATEMENT SET`. When `problems` is empty the script means the same job: the same
/// watermarks (DataStream's bounded out-of-orderness emits max - d - 1 ms, so the export writes
/// `rowtime - INTERVAL 'd+0.001' SECOND`), the same windows, the same results. Otherwise it is the
/// rest of the job, with a `-- DROPPED:` comment where each problem was left out.
struct FlinkSqlExport {
  std::string sql;
  std::vector<ExportProblem> problems;  ///< in YAML order (line, column)
};

/// Translates a loaded job and its compiled graph (`CompileJobGraph`: the schemas on every edge,
/// key-by expressions already turned into `<id>.key-by` maps). Relative file paths are written
/// resolved against the job file's directory as `spec.file` names it. Pure function: no I/O.
/// Thread-safe.
FlinkSqlExport ExportFlinkSql(const JobSpec& spec, const JobGraph& graph);

}  // namespace tidemark
