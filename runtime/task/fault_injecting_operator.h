#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "config/job_spec.h"
#include "runtime/core/errors.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// How often one `faults:` entry may still fire, shared by every subtask and every attempt of a
/// job (a restart builds new operators; the budget stays). Thread-safe.
struct FaultBudget {
  explicit FaultBudget(FaultSpec s) : spec(std::move(s)), remaining(spec.times) {}
  /// Takes one injection; false when the budget is spent.
  bool Take() {
    int64_t left = remaining.load(std::memory_order_relaxed);
    while (left > 0 &&
           !remaining.compare_exchange_weak(left, left - 1, std::memory_order_acq_rel)) {
    }
    return left > 0;
  }
  const FaultSpec spec;
  std::atomic<int64_t> remaining;
};

/// The failure a `faults:` entry throws (a plain `Error`, as a user function's would be).
class InjectedFault : public Error {
 public:
  using Error::Error;
};

/// Wraps an operator of the job and throws `InjectedFault` in the phase a `faults:` entry names
/// (see FaultSpec), forwarding everything else unchanged. Built by JobExecution for operators
/// named in `faults:` (not for sources: their task drives them through SourceOperatorBase).
/// Threading: the owning task's mailbox thread, like the operator it wraps.
class FaultInjectingOperator final : public StreamOperator {
 public:
  FaultInjectingOperator(std::unique_ptr<StreamOperator> inner, std::shared_ptr<FaultBudget> budget)
      : inner_(std::move(inner)), budget_(std::move(budget)) {}

  void Open(const OperatorContext& context) override {
    StreamOperator::Open(context);
    inner_->Open(context);
  }
  void ProcessElement(StreamRecord& record, int input) override {
    ++records_;
    if (budget_->spec.phase == "process" && records_ > budget_->spec.after_records) {
      MaybeThrow("processing its record " + std::to_string(records_));
    }
    inner_->ProcessElement(record, input);
  }
  void ProcessWatermark(Watermark watermark, int input) override {
    inner_->ProcessWatermark(watermark, input);
  }
  void ProcessWatermarkStatus(WatermarkStatus status, int input) override {
    inner_->ProcessWatermarkStatus(status, input);
  }
  void EndInput(int input) override { inner_->EndInput(input); }
  void Finish() override { inner_->Finish(); }
  void Close() override {
    if (budget_->spec.phase == "close") {
      MaybeThrow("closing");
    }
    inner_->Close();
  }
  void SnapshotState(StateSnapshotContext& context) override {
    if (budget_->spec.phase == "snapshot" && records_ >= budget_->spec.after_records) {
      MaybeThrow("snapshotting checkpoint " + std::to_string(context.checkpoint_id));
    }
    inner_->SnapshotState(context);
  }
  void InitializeState(StateInitializationContext& context) override {
    if (budget_->spec.phase == "restore" && context.restored_checkpoint_id != 0) {
      MaybeThrow("restoring checkpoint " + std::to_string(context.restored_checkpoint_id));
    }
    inner_->InitializeState(context);
  }
  void NotifyCheckpointComplete(int64_t id) override { inner_->NotifyCheckpointComplete(id); }
  void NotifyCheckpointAborted(int64_t id) override { inner_->NotifyCheckpointAborted(id); }
  int NumInputs() const override { return inner_->NumInputs(); }
  void CollectMetrics(MetricsWriter& out) const override { inner_->CollectMetrics(out); }

 private:
  void MaybeThrow(const std::string& when) {
    if (!fired_ && budget_->Take()) {
      fired_ = true;  // once per operator instance; the budget counts over the job
      throw InjectedFault("injected fault (faults: " + budget_->spec.phase + ") while " + when);
    }
  }

  std::unique_ptr<StreamOperator> inner_;
  std::shared_ptr<FaultBudget> budget_;
  int64_t records_ = 0;
  bool fired_ = false;
};

}  // namespace tidemark
