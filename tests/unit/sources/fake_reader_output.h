#pragma once

// Test support for source readers: a ReaderOutput that records everything as text events, and a
// SourceReaderContext on a ManualProcessingTimeService whose WakeUpAt moves the clock (as the
// virtual clock does), so a reader can be driven to its end without sleeping.

#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/time/manual_processing_time_service.h"
#include "sources/source_reader.h"

namespace tidemark::testing {

/// Events as strings: "rec <split> @<proc time> ts=<ts|none> <row json>", "err <split>:<line>
/// <reason>", "idle <split>", "active <split>", "register <split>", "release <split>".
class FakeReaderOutput : public ReaderOutput {
 public:
  FakeReaderOutput(const Schema& schema, ProcessingTimeService& time)
      : schema_(schema), time_(time) {}

  class Split : public SourceOutput {
   public:
    Split(FakeReaderOutput& owner, std::string id) : owner_(owner), id_(std::move(id)) {}
    void Collect(Row row) override { owner_.Record(id_, row, "none"); }
    void Collect(Row row, Timestamp ts) override { owner_.Record(id_, row, std::to_string(ts)); }
    void EmitWatermark(Watermark w) override {
      owner_.events.push_back(fmt::format("wm {} {}", id_, w.timestamp));
    }
    void MarkIdle() override { owner_.events.push_back("idle " + id_); }
    void MarkActive() override { owner_.events.push_back("active " + id_); }

   private:
    FakeReaderOutput& owner_;
    std::string id_;
  };

  void Collect(Row row) override { Record("", row, "none"); }
  void Collect(Row row, Timestamp ts) override { Record("", row, std::to_string(ts)); }
  void EmitWatermark(Watermark) override {}
  void MarkIdle() override {}
  void MarkActive() override {}
  SourceOutput& CreateOutputForSplit(const std::string& id) override {
    events.push_back("register " + id);
    splits_.push_back(std::make_unique<Split>(*this, id));
    return *splits_.back();
  }
  void ReleaseOutputForSplit(const std::string& id) override { events.push_back("release " + id); }
  void EmitError(const SourceError& e) override {
    events.push_back(fmt::format("err {}:{} {}", e.split_id, e.line, e.reason));
    errors.push_back(e);
  }

  std::vector<std::string> events;
  std::vector<std::string> records;  ///< only the "rec" events
  std::vector<SourceError> errors;

 private:
  void Record(const std::string& split, const Row& row, const std::string& ts) {
    std::string e = fmt::format("rec {} @{} ts={} {}", split, time_.GetCurrentProcessingTime(), ts,
                                schema_.RowToJson(row));
    events.push_back(e);
    records.push_back(e);
  }
  const Schema& schema_;
  ProcessingTimeService& time_;
  std::vector<std::unique_ptr<Split>> splits_;
};

class FakeReaderContext : public SourceReaderContext {
 public:
  explicit FakeReaderContext(int subtask = 0, int parallelism = 1)
      : subtask_(subtask), parallelism_(parallelism) {}
  int subtask_index() const override { return subtask_; }
  int parallelism() const override { return parallelism_; }
  ProcessingTimeService& processing_time() override { return time; }
  void WakeUpAt(Timestamp t) override {
    wakeups.push_back(t);
    time.AdvanceTo(t);
  }
  ManualProcessingTimeService time;
  std::vector<Timestamp> wakeups;

 private:
  int subtask_;
  int parallelism_;
};

/// Runs subtask `subtask` of `source` to its end (at most `max_polls` polls).
inline void RunReader(const Source& source, FakeReaderOutput& out, FakeReaderContext& ctx,
                      int subtask = 0, int parallelism = 1, int max_polls = 1000000) {
  auto reader = source.CreateReader(subtask);
  reader->Start(ctx);
  reader->AddSplits(SplitEnumerator::SplitsFor(source, subtask, parallelism));
  reader->NotifyNoMoreSplits();
  for (int i = 0; i < max_polls; ++i) {
    if (reader->PollNext(out) == InputStatus::kEndOfInput) {
      return;
    }
  }
  ADD_FAILURE() << "reader did not end";
}

}  // namespace tidemark::testing
