#pragma once

namespace tidemark::testing {

/// A job that runs until cancelled: one record per ms of processing time, 10^8 records. Shared by
/// the daemon tests that need a job to stay RUNNING.
inline constexpr const char* kLongJob = R"(name: long
operators:
  - id: src
    type: source
    source:
      type: sequence
      pacing: 1ms
      splits: [{id: a, start: 0ms, step: 1ms, count: 100000000}]
  - id: out
    type: sink
    input: src
    sink: {type: collect}
)";

}  // namespace tidemark::testing
