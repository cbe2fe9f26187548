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
class MetricsWriter {
 public:
  using Gauges = std::vector<std::pair<std::string, int64_t>>;

  void Gauge(std::string name, int64_t value) { gauges_.emplace_back(std::move(name), value); }
  const Gauges& gauges() const { return gauges_; }
  Gauges Take() { return std::move(gauges_); }

 private:
  Gauges gauges_;
};

}  // namespace tidemark
