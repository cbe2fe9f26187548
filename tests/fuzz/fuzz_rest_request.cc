// Fuzz target: the daemon's request path (tools/daemon/rest_server.h ServeBytes): bytes as a
// connection would receive them, parsed by the same HTTP parser with the daemon's default limits
// and routed to a JobManager. Submissions are loaded (the YAML loader runs on the body) and then
// refused, so no job runs. Any input must give responses, never a crash or unbounded memory.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "config/job_loader.h"
#include "tools/daemon/job_manager.h"
#include "tools/daemon/rest_server.h"
#include "tools/engine/engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tidemark;
  static JobManager* jobs = new JobManager(
      [](const std::string& yaml, const std::string& file_name, JobResources::LineWriter,
         const DaemonRunOptions&) -> std::unique_ptr<DaemonJob> {
        (void)LoadJobSpecString(yaml, file_name);
        throw ConfigError({Diagnostic{file_name, 0, 0, "", "fuzzing: jobs are not run"}});
      },
      JobManagerOptions{});
  static const RestServerOptions options{};
  (void)ServeBytes(*jobs, std::string_view(reinterpret_cast<const char*>(data), size), options);
  return 0;
}
