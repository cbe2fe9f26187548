#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/mutex.h"
#include "runtime/core/row.h"
#include "runtime/core/stream_record.h"

namespace tidemark {

/// What one sink received, kept for reports (`report:` in the job) and tests.
/// Thread-safe: sink subtasks append from their task threads; readers take a snapshot.
class SinkResult {
 public:
  explicit SinkResult(Schema schema, bool retain_rows)
      : schema_(std::move(schema)), retain_(retain_rows) {}

  void Add(const StreamRecord& record);
  const Schema& schema() const { return schema_; }
  int64_t count() const { return count_.load(std::memory_order_relaxed); }
  /// Copy of the retained records (empty unless rows are retained), in arrival order per subtask.
  std::vector<StreamRecord> Records() const;
  bool retains_rows() const { return retain_; }

  /// A `checksum` sink subtask's totals, added once at its end: `count` records, the wrapping sum
  /// `checksum` of their record hashes (runtime/core/checksum.h) and source → sink latency samples
  /// in ns. Subtasks' parts add up (order-independent).
  void AddChecksumPart(int64_t count, uint64_t checksum, const std::vector<int64_t>& latency_ns);
  uint64_t checksum() const;
  std::vector<int64_t> LatencySamplesNs() const;

 private:
  Schema schema_;
  bool retain_;
  std::atomic<int64_t> count_{0};
  mutable Mutex mu_;
  std::vector<StreamRecord> records_ ABSL_GUARDED_BY(mu_);
  uint64_t checksum_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<int64_t> latency_ns_ ABSL_GUARDED_BY(mu_);
};

/// Per-job resources operators share, created before compilation and alive until the job's
/// tasks are joined: the text output of print sinks, and sink results.
/// Thread-safe.
class JobResources {
 public:
  /// Where print sinks and reports write lines (without '\n'). Default: stdout, line-atomic.
  using LineWriter = std::function<void(const std::string& line)>;

  JobResources();
  void SetLineWriter(LineWriter writer) { line_writer_ = std::move(writer); }
  /// Writes one line; lines from different threads never interleave.
  void WriteLine(const std::string& line);

  /// Registers (or returns) the result slot of sink `id`.
  std::shared_ptr<SinkResult> AddSinkResult(const std::string& id, Schema schema, bool retain_rows);
  std::shared_ptr<SinkResult> FindSinkResult(const std::string& id) const;
  /// Sink ids whose rows must be retained (those a report reads); set before compiling.
  void RetainRowsOf(const std::string& id) { retained_.push_back(id); }
  bool ShouldRetainRows(const std::string& id) const;

 private:
  LineWriter line_writer_;  // set before the job runs
  Mutex write_mu_;          // makes each line whole
  mutable Mutex mu_;
  std::map<std::string, std::shared_ptr<SinkResult>> sinks_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> retained_;  // set before compiling, read-only after
};

}  // namespace tidemark
