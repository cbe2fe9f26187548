#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "operators/window/window_operator.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"
#include "tests/testing/snapshot_round_trip.h"

namespace tidemark::testing {

/// {k: `key_type`, v: int64}: the records of the window operator tests.
inline Schema KeyValueSchema(FieldType key_type) {
  Schema schema;
  schema.Add("k", key_type);
  schema.Add("v", FieldType::kInt64);
  return schema;
}

/// The aggregate `function` of `field` (empty: of records) named `as`.
inline AggregateSpec Aggregate(const std::string& function, const std::string& field,
                               const std::string& as) {
  AggregateSpec a;
  a.function = function;
  a.field = field;
  a.as = as;
  return a;
}

/// One step of a window operator's scripted input: a batch of records, or (when `watermark` is
/// set) a watermark.
struct WindowStep {
  std::vector<StreamRecord> records;
  Timestamp watermark = kMinTimestamp;
};

/// A window operator keyed by field "k", opened on its own (no task) on a manual clock, for the
/// state-backend tests that run one input on heap and RocksDB and compare: the input in steps,
/// snapshots and restores (canonical and incremental), and the rows it emitted.
class WindowOperatorRunner {
 public:
  /// Compiles `spec` over `schema` and opens it as `name`, subtask `subtask` of `parallelism`
  /// (it owns that subtask's key groups of 128), on `backend` ("heap" | "rocksdb") with a RocksDB
  /// budget of `budget_bytes` (`memory.fixed-per-slot`).
  WindowOperatorRunner(const Schema& schema, const WindowSpec& spec, const std::string& name,
                       const std::string& backend, int64_t budget_bytes, int subtask = 0,
                       int parallelism = 1)
      : name_(name) {
    op_ = WindowOperator::Compile(schema, spec, {"k"}).factory();
    OperatorContext ctx;
    ctx.name = name;
    ctx.output = &out_;
    ctx.processing_time = &clock_;
    ctx.state_backend = backend;
    ctx.rocksdb.memory_fixed_per_slot = budget_bytes;
    ctx.subtask_index = subtask;
    ctx.parallelism = parallelism;
    op_->Open(ctx);
  }
  ~WindowOperatorRunner() { op_->Close(); }
  WindowOperatorRunner(const WindowOperatorRunner&) = delete;
  WindowOperatorRunner& operator=(const WindowOperatorRunner&) = delete;

  /// Feeds steps [from, to): each batch as one `ProcessBatch`, each watermark as one
  /// `ProcessWatermark`.
  void Run(std::vector<WindowStep>& steps, size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      WindowStep& s = steps[i];
      if (s.watermark != kMinTimestamp) {
        op_->ProcessWatermark(tidemark::Watermark{s.watermark}, 0);
        continue;
      }
      std::vector<StreamRecord*> pointers;
      pointers.reserve(s.records.size());
      for (StreamRecord& r : s.records) {
        pointers.push_back(&r);
      }
      RecordBatch batch{pointers.data(), pointers.size()};
      op_->ProcessBatch(batch, 0);
    }
  }
  /// Feeds one record as a batch of its own (as a source handing over one record at a time
  /// does), and one watermark.
  void Add(StreamRecord record) {
    StreamRecord* pointer = &record;
    RecordBatch batch{&pointer, 1};
    op_->ProcessBatch(batch, 0);
  }
  void Watermark(Timestamp watermark) { op_->ProcessWatermark(tidemark::Watermark{watermark}, 0); }
  /// Feeds one record through `ProcessElement` (not as a batch).
  void Element(StreamRecord record) { op_->ProcessElement(record, 0); }
  /// A canonical snapshot (checkpoint 1), and a restore from one (watermarks too).
  std::string Snapshot() { return SnapshotOf(*op_); }
  void Restore(const std::string& bytes) { RestoreFrom(*op_, bytes); }
  /// An incremental checkpoint `id` (checkpointing.incremental), written as a task writes it,
  /// and a restore from one.
  void Checkpoint(CheckpointStorage& storage, int64_t id) {
    WriteIncrementalCheckpoint(*op_, storage, name_, id);
  }
  void Restore(const CompletedCheckpoint& cp) { RestoreFromCheckpoint(*op_, cp, name_); }

  /// Every row emitted so far, in order, and each as `DescribeRecord` shows it.
  std::vector<StreamRecord> Records() const { return out_.Records(); }
  std::vector<std::string> Results() const {
    std::vector<std::string> lines;
    for (const StreamRecord& r : out_.Records()) {
      lines.push_back(DescribeRecord(r));
    }
    return lines;
  }
  WindowOperator& op() { return static_cast<WindowOperator&>(*op_); }
  /// Everything emitted so far (watermarks and side outputs too).
  const CollectingOutput& output() const { return out_; }
  StreamOperator& base() { return *op_; }

 private:
  std::string name_;
  ManualProcessingTimeService clock_;
  CollectingOutput out_;
  std::unique_ptr<StreamOperator> op_;
};

}  // namespace tidemark::testing
