#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tidemark {

/// Named figures an operator reports about itself, like gauges of Flink's `MetricGroup`:
/// `currentInputWatermark`, `numLateRecordsDropped`, `split.fast.watermark`, ... Values are
/// int64: counts, or timestamps in ms (kMinTimestamp = none yet), or 0/1 for flags.
/// Filled on the operator's mailbox thread (`StreamOperator::CollectMetrics`); the StreamTask
/// then publishes a copy that other threads read.
/// Beside the gauges, an operator may leave notes: short texts that say where a count began, e.g.
/// `firstInputError` = `jobs/data/bad_input.csv:3: expected 3 fields, got 2` (one note per name,
/// set once the text exists; see DroppedRecordLines in runtime/graph/dropped_records.h).
class MetricsWriter {
 public:
  using Gauges = std::vector<std::pair<std::string, int64_t>>;
  using Notes = std::vector<std::pair<std::string, std::string>>;

  void Gauge(std::string name, int64_t value) { gauges_.emplace_back(std::move(name), value); }
  void Note(std::string name, std::string text) {
    notes_.emplace_back(std::move(name), std::move(text));
  }
  const Gauges& gauges() const { return gauges_; }
  const Notes& notes() const { return notes_; }
  Gauges Take() { return std::move(gauges_); }
  Notes TakeNotes() { return std::move(notes_); }

 private:
  Gauges gauges_;
  Notes notes_;
};

}  // namespace tidemark
