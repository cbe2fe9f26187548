// Fuzz target: a job's YAML text through the loader and the job compiler, as `tidemark validate`
// and a daemon submission take it. Any input must give a job or ConfigError / JobCompileError,
// in bounded time and memory; nothing runs.

#include <cstddef>
#include <cstdint>
#include <string>

#include "config/job_loader.h"
#include "runtime/graph/job_graph.h"
#include "tools/engine/engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  try {
    // A file name in a directory that does not exist: relative source paths in the input then
    // resolve to nothing rather than to files of the machine the fuzzer runs on.
    const tidemark::JobSpec spec = tidemark::LoadJobSpecString(yaml, "/nonexistent/fuzz/job.yaml");
    (void)tidemark::LocalJob::Create(spec, [](const std::string&) {});
  } catch (const tidemark::ConfigError&) {
  } catch (const tidemark::JobCompileError&) {
  }
  return 0;
}
