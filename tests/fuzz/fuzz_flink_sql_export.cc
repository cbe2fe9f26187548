// Fuzz target: a job's YAML text through the loader, the job compiler and `tidemark export
// --flink-sql` (issue 41: 20,000 nested `!` in a filter crashed the export, which run and
// validate bound). Any input must give a script (with or without DROPPED problems) or
// ConfigError / JobCompileError, in bounded time and memory; nothing runs. Every comment line of
// the script must stay one line: a newline in a name from the input never starts a statement.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "config/job_loader.h"
#include "runtime/graph/job_graph.h"
#include "tools/engine/engine.h"
#include "tools/export/flink_sql_export.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  try {
    // A file name in a directory that does not exist: relative paths in the input resolve to
    // nothing of the machine the fuzzer runs on.
    const tidemark::JobSpec spec = tidemark::LoadJobSpecString(yaml, "/nonexistent/fuzz/job.yaml");
    tidemark::JobResources resources;
    const tidemark::JobGraph graph =
        tidemark::CompileJobGraph(spec, tidemark::BuiltinRegistry(), resources);
    const tidemark::FlinkSqlExport out = tidemark::ExportFlinkSql(spec, graph);
    // A line that starts a comment never holds a control character other than its newline.
    size_t line_start = 0;
    bool in_comment = false;
    for (size_t i = 0; i < out.sql.size(); ++i) {
      const auto c = static_cast<unsigned char>(out.sql[i]);
      if (i == line_start) {
        in_comment = out.sql.compare(i, 2, "--") == 0;
      }
      if (c == '\n') {
        line_start = i + 1;
      } else if (in_comment && (c == '\r' || c == 0x0b || c == 0x0c)) {
        std::abort();  // a comment line broken by a name from the input
      }
    }
  } catch (const tidemark::ConfigError&) {
  } catch (const tidemark::JobCompileError&) {
  }
  return 0;
}
