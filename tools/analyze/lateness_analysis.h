#pragma once

// `tidemark analyze`: measures how far a job's records trail in event time, through the job's own
// source readers and without running its operators, and derives the settings seed 002 §4.1/§4.3
// asks for: the out-of-orderness bound for a target late fraction (at the source and after it),
// the late fraction each strategy of the job gives, the idleness timeout that releases the
// watermark in the longest silence, and each window's state.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "runtime/core/timestamp.h"

namespace tidemark::analyze {

/// Nearest-rank percentiles of a lateness sample (ms). `count` 0: all fields 0.
struct LatenessDistribution {
  int64_t count = 0;
  Timestamp min_ts = 0;  ///< event-time span of the records
  Timestamp max_ts = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, p999 = 0, max = 0;
  /// Histogram: bins[0] counts lateness 0; bins[i] for i >= 1 counts (edges[i-1], edges[i]].
  std::vector<int64_t> edges;
  std::vector<int64_t> bins;
};

/// The longest silence of a split in arrival (processing) time.
struct SplitGap {
  int64_t longest_ms = 0;  ///< between two records (or start and the first record)
  Timestamp from_ms = 0;   ///< processing time of the record before it (0: the start)
  Timestamp to_ms = 0;     ///< processing time of the record after it
  int64_t p99_gap_ms = 0;  ///< the normal distance between records (P99 of all gaps)
  /// An `idleness` timeout below this marks the split idle inside the longest gap (the periodic
  /// checks of the pipeline's auto-watermark-interval decide); 0: no timeout can.
  int64_t idleness_below_ms = 0;
};

struct SplitReport {
  std::string id;
  LatenessDistribution lateness;  ///< the split alone: its own running maximum
  SplitGap gap;
};

/// The late records one strategy gives at one place (a window, or the watermark itself).
struct LateFigure {
  std::string strategy_op;  ///< operator whose watermarks block it is
  std::string description;  ///< e.g. "bounded-out-of-orderness 1s, a generator per split"
  std::string at;           ///< window operator id, or "" for record lateness (ts <= watermark)
  int64_t records = 0;
  int64_t late = 0;
  std::optional<int64_t> measured_late;  ///< from a run (`--run`), when asked for
  bool simulated = true;  ///< false: could not be simulated (punctuated); `late` is 0
};

/// The bound to set for the target late fraction.
struct BoundSuggestion {
  int64_t at_source_ms = 0;     ///< smallest bound, one generator per split
  int64_t after_source_ms = 0;  ///< smallest bound, one generator per subtask (an assigner)
  double at_source_late = 0;    ///< the late fraction each gives
  double after_source_late = 0;
  /// `after_source_ms` plus 10 % (rounded up to a whole 100 ms): the margin seed 002 §4.3 keeps
  /// above the measured percentile.
  int64_t after_source_with_margin_ms = 0;
};

struct SubtaskReport {
  int subtask = 0;
  int64_t records = 0;
  int64_t records_without_timestamp = 0;
  int64_t input_errors = 0;
  Timestamp end_ms = 0;    ///< processing time at end of input (source pacing / virtual clock)
  bool truncated = false;  ///< stopped at `max_records`
  std::vector<SplitReport> splits;
  LatenessDistribution merged;  ///< over the subtask's records in arrival order
  BoundSuggestion bound;
};

/// Seed 002 §4.3 for one window operator.
struct StateEstimate {
  std::string window_op;
  std::string description;   ///< e.g. "tumbling 1s, key-by [key], 1 aggregate"
  int64_t keys = 0;          ///< distinct keys seen
  double records_per_s = 0;  ///< of event time
  double record_bytes = 0;   ///< average, byte model of window_state_bytes.h
  int64_t span_ms = 0;       ///< window + bound + allowed lateness (+ watermark lag)
  int64_t bound_ms = 0;      ///< the bound of the strategy upstream
  /// How far the watermark trailed the newest record (mean over periodic emits): the bound, plus
  /// in split mode the skew between splits. Used instead of the bound when larger.
  int64_t delay_ms = 0;
  int64_t buffered_bytes = 0;  ///< seed's formula: rate x record size x span (records kept)
  int64_t estimate_bytes = 0;  ///< what this window keeps (incremental: a pane per key+slice)
  std::optional<int64_t> measured_peak_bytes;  ///< stateBytesPeak of a run, when asked for
};

struct SourceAnalysis {
  std::string source_op;
  std::string source_type;
  int parallelism = 1;
  int64_t interval_ms = 200;
  double target_late = 0.001;
  std::vector<SubtaskReport> subtasks;
  std::vector<LateFigure> late;
  std::vector<StateEstimate> state;
};

struct AnalyzeOptions {
  std::string source_id;            ///< empty: every source
  double target_late = 0.001;       ///< fraction, in [0, 1)
  int64_t max_records = 1'000'000;  ///< per source subtask
  bool run = false;                 ///< also run the job and put measured figures beside
};

/// Reads every selected source of `job` and analyzes it. Throws `std::runtime_error` with a
/// message for an unknown `--source`, a job without sources, or a reader that fails; compile
/// errors of the job come out of `CompileJobGraph` as `JobCompileError`.
std::vector<SourceAnalysis> Analyze(const JobSpec& job, const AnalyzeOptions& options);

/// Text report for a terminal (bars drawn with block characters).
std::string FormatText(const JobSpec& job, const std::vector<SourceAnalysis>& analyses);
/// One JSON object (nlohmann::json dumped with indent 2).
std::string FormatJson(const JobSpec& job, const std::vector<SourceAnalysis>& analyses);
/// An SVG of the merged lateness histogram of the first subtask of each source (one panel per
/// source), self-contained and small.
std::string FormatSvg(const JobSpec& job, const std::vector<SourceAnalysis>& analyses);

/// A duration for people: "0ms", "30ms", "1.5s", "5s".
std::string FormatDuration(int64_t ms);

/// Parses "0.1%" (a percentage, with the sign) into 0.001; nullopt for anything else or a
/// value outside [0, 100).
std::optional<double> ParseLateTarget(const std::string& text);

}  // namespace tidemark::analyze
