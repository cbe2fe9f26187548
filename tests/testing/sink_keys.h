#pragma once

// Loader tests of a sink's keys (tests/unit/config/*_sink_keys_test.cc): a job whose sink `out`
// reads a three-record sequence source `src`, with the test's text as the `sink:` block.

#include <string>

#include "config/diagnostic.h"
#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark::testing {

/// Loads the job with `sink` (indented lines, without the `sink:` key) as the sink block; its
/// first line is line 10 of job file `file`, which error messages name. Throws ConfigError.
inline JobSpec LoadSinkJob(const std::string& sink, const std::string& file) {
  return LoadJobSpecString(
      std::string("name: t\noperators:\n"
                  "  - id: src\n"
                  "    type: source\n"
                  "    source: {type: sequence, splits: [{id: a, start: 0ms, step: 1s, "
                  "count: 3}]}\n"
                  "  - id: out\n"
                  "    type: sink\n"
                  "    input: src\n"
                  "    sink:\n") +
          sink,
      file);
}

/// The ConfigError LoadSinkJob throws, or "<no error>".
inline std::string SinkJobError(const std::string& sink, const std::string& file) {
  try {
    LoadSinkJob(sink, file);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "<no error>";
}

/// The sink of a LoadSinkJob job.
inline const SinkSpec& SinkOf(const JobSpec& job) {
  return *job.operators.at(1).sink;
}

}  // namespace tidemark::testing
