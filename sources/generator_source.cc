#include "sources/generator_source.h"

#include <algorithm>
#include <chrono>
#include <span>
#include <thread>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {
namespace {

/// A paced reader releases records in bursts of those due within this span (see DueNow).
constexpr int64_t kPaceBurstNs = 20'000;

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The implicit split of one generator reader, section "generator-split" (version 1): id, the
// next record index and the records emitted so far.
class GeneratorSplit : public SourceSplit {
 public:
  GeneratorSplit(std::string id, int64_t next, int64_t emitted)
      : id_(std::move(id)), next_(next), emitted_(emitted) {}
  std::string SplitId() const override { return id_; }
  int64_t next() const { return next_; }
  int64_t emitted() const { return emitted_; }
  void WriteTo(StateWriter& writer) const override {
    writer.BeginSection("generator-split", 1);
    writer.WriteString(id_);
    writer.WriteI64(next_);
    writer.WriteI64(emitted_);
    writer.EndSection();
  }

 private:
  std::string id_;
  int64_t next_;
  int64_t emitted_;
};

class GeneratorReader : public SourceReader {
 public:
  GeneratorReader(const GeneratorSource& source, int subtask_index)
      : spec_(source.spec()),
        generate_(spec_.keys, spec_.step_ms),
        layout_(source.schema().layout()),
        wm_slot_(source.schema().IndexOf("wm")),
        latency_slot_(source.schema().IndexOf("emit_ns")),
        split_id_(fmt::format("generator-{}", subtask_index)) {}

  void Start(SourceReaderContext& context) override {
    context_ = &context;
    stride_ = std::max(1, context.parallelism());
    if (!restored_) {
      next_ = context.subtask_index();
    }
  }

  // Only a restored split is ever added (the source has none to assign): it sets the position.
  void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) override {
    for (auto& s : splits) {
      auto* g = dynamic_cast<GeneratorSplit*>(s.get());
      TM_CHECK(g != nullptr, "generator reader got a foreign split");
      next_ = g->next();
      emitted_ = g->emitted();
      restored_ = true;
    }
  }

  // Always the reader's one split, finished or not: a reader restored without it would start
  // from the beginning.
  std::vector<std::unique_ptr<SourceSplit>> SnapshotState(int64_t /*checkpoint_id*/) override {
    std::vector<std::unique_ptr<SourceSplit>> out;
    out.push_back(std::make_unique<GeneratorSplit>(split_id_, next_, emitted_));
    return out;
  }
  void NotifyNoMoreSplits() override {}

  InputStatus PollNext(ReaderOutput& output) override {
    if (next_ >= spec_.count) {
      if (split_ != nullptr) {
        output.ReleaseOutputForSplit(split_id_);
        split_ = nullptr;
      }
      return InputStatus::kEndOfInput;
    }
    if (split_ == nullptr) {
      split_ = &output.CreateOutputForSplit(split_id_);
    }
    if (spec_.rate > 0 && (emitted_ & 15) == 0 && !Paced()) {
      return InputStatus::kNothingAvailable;
    }
    const Timestamp ts = Fill(row_, next_, emitted_);
    split_->CollectReusing(row_, ts);
    next_ += stride_;
    ++emitted_;
    return InputStatus::kMoreAvailable;
  }

  // The records of a whole batch at once into the slots the split output lends: the same records
  // as PollNext's, without a call per record. Paced (under the system clock), the records due by
  // now, stamped when made; none due: a wake-up at the next one's due time.
  InputStatus PollBatch(ReaderOutput& output, int64_t max_polls, int64_t* polls) override {
    if (next_ >= spec_.count || (spec_.rate > 0 && context_->virtual_clock())) {
      return SourceReader::PollBatch(output, max_polls, polls);
    }
    if (split_ == nullptr) {
      split_ = &output.CreateOutputForSplit(split_id_);
    }
    const int64_t remaining = (spec_.count - next_ + stride_ - 1) / stride_;
    if (spec_.rate > 0) {
      const int64_t due = DueNow(std::min(max_polls, remaining));
      if (due == 0) {
        *polls = 0;
        return InputStatus::kNothingAvailable;
      }
      max_polls = std::min(max_polls, due);
    }
    const std::span<StreamRecord> slots =
        split_->BatchSlots(static_cast<size_t>(std::min(max_polls, remaining)));
    if (slots.empty()) {
      return SourceReader::PollBatch(output, max_polls, polls);
    }
    int64_t index = next_;
    int64_t emitted = emitted_;
    if (wm_slot_ < 0 && latency_slot_ < 0) {
      // The plain schema, with the spec's numbers in locals: the row stores could alias the
      // members, which would otherwise be loaded again for every record.
      const RowLayout* const layout = layout_;
      const RecordGenerator generate = generate_;
      const int64_t stride = stride_;
      for (StreamRecord& record : slots) {
        const GeneratedRecord g = generate(index);
        Row& row = record.row;
        if (row.layout_ptr() != layout) {
          row.Reset(layout);
        }
        row.SetInt64(0, g.key);
        row.SetDouble(1, g.value);
        row.SetInt64(2, g.ts);
        record.SetTimestamp(g.ts);
        index += stride;
      }
    } else {
      for (StreamRecord& record : slots) {
        record.SetTimestamp(Fill(record.row, index, emitted));
        index += stride_;
        ++emitted;
      }
    }
    const auto taken = static_cast<int64_t>(split_->CollectSlots(slots.size()));
    next_ += taken * stride_;
    emitted_ += taken;
    *polls = taken;
    return InputStatus::kMoreAvailable;
  }

 private:
  /// Makes record `index`, the reader's `emitted`-th (0-based), in `row`; returns its timestamp.
  Timestamp Fill(Row& row, int64_t index, int64_t emitted) const {
    const GeneratedRecord g = generate_(index);
    if (row.layout_ptr() != layout_) {
      row.Reset(layout_);  // first record, or downstream moved the row away
    }
    row.SetInt64(0, g.key);
    row.SetDouble(1, g.value);
    row.SetInt64(2, g.ts);
    if (wm_slot_ >= 0) {
      const auto wm = static_cast<size_t>(wm_slot_);
      if ((emitted + 1) % spec_.watermark_every == 0) {
        row.SetInt64(wm, g.ts);
      } else {
        row.SetNull(wm);
      }
    }
    if (latency_slot_ >= 0) {
      row.SetInt64(static_cast<size_t>(latency_slot_),
                   emitted % spec_.latency_every == 0 ? SteadyNowNs() : int64_t{0});
    }
    return g.ts;
  }

  /// How many records are due now and not yet emitted (record k is due k / rate seconds after
  /// the first), counted once a burst of them is: the records that arrive within kPaceBurstNs,
  /// at most `max_burst` (the batch, or what is left). Fewer due: 0, with a wake-up armed at the
  /// time the burst is complete. A reader released for every record or two would poll the clock
  /// in a loop on its core, which at millions of records per second is the core the tasks
  /// downstream need. System clock only.
  int64_t DueNow(int64_t max_burst) {
    const int64_t now = SteadyNowNs();
    if (start_ns_ == 0) {
      start_ns_ = now;
    }
    const auto rate = static_cast<double>(spec_.rate);
    const int64_t due_total =
        static_cast<int64_t>(static_cast<double>(now - start_ns_) * rate / 1e9) + 1;
    const int64_t burst =
        std::clamp<int64_t>(static_cast<int64_t>(rate * static_cast<double>(kPaceBurstNs) / 1e9), 1,
                            std::max<int64_t>(max_burst, 1));
    if (due_total - emitted_ >= burst) {
      return due_total - emitted_;
    }
    const int64_t burst_due =
        start_ns_ + static_cast<int64_t>(static_cast<double>(emitted_ + burst - 1) * 1e9 / rate);
    context_->WakeUpAfter(std::chrono::nanoseconds(std::max<int64_t>(burst_due - now, 0)));
    return 0;
  }

  /// True when the next record is due; otherwise arms a wake-up at its due time (see the
  /// class comment for the virtual clock).
  bool Paced() {
    const int64_t now = SteadyNowNs();
    if (start_ns_ == 0) {
      start_ns_ = now;
    }
    const int64_t due = start_ns_ + static_cast<int64_t>(static_cast<double>(emitted_) * 1e9 /
                                                         static_cast<double>(spec_.rate));
    const int64_t ahead = due - now;
    if (ahead <= 0) {
      return true;
    }
    if (!context_->virtual_clock()) {
      context_->WakeUpAfter(std::chrono::nanoseconds(ahead));
      return false;
    }
    if (ahead < 2'000'000) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(ahead));
      return true;
    }
    context_->WakeUpAt(context_->processing_time().GetCurrentProcessingTime() + ahead / 1'000'000);
    return false;
  }

  const SourceSpec& spec_;  // owned by the GeneratorSource, which outlives the job
  RecordGenerator generate_;
  const RowLayout* layout_;
  int wm_slot_;
  int latency_slot_;
  std::string split_id_;
  SourceOutput* split_ = nullptr;  // valid until released
  SourceReaderContext* context_ = nullptr;
  int64_t stride_ = 1;
  int64_t next_ = 0;
  int64_t emitted_ = 0;
  int64_t start_ns_ = 0;
  bool restored_ = false;
  Row row_;
};

}  // namespace

GeneratorSource::GeneratorSource(const SourceSpec& spec) : spec_(spec) {
  if (spec_.keys < 1) {
    throw KeyedInvalidArgument("keys", fmt::format("must be >= 1, got {}", spec_.keys));
  }
  if (spec_.count < 0) {
    throw KeyedInvalidArgument("count", fmt::format("must be >= 0, got {}", spec_.count));
  }
  schema_.Add("key", FieldType::kInt64);
  schema_.Add("value", FieldType::kDouble);
  schema_.Add(spec_.timestamp_field_name.empty() ? "ts" : spec_.timestamp_field_name,
              FieldType::kTimestamp);
  if (spec_.watermark_every > 0) {
    schema_.Add("wm", FieldType::kInt64);
  }
  if (spec_.latency_every > 0) {
    schema_.Add("emit_ns", FieldType::kInt64);
  }
}

std::unique_ptr<SourceSplit> GeneratorSource::RestoreSplit(StateReader& reader) const {
  reader.BeginSection("generator-split", 1);
  std::string id = reader.ReadString();
  const int64_t next = reader.ReadI64();
  const int64_t emitted = reader.ReadI64();
  reader.EndSection();
  if (next < 0 || emitted < 0) {
    throw StateCorrupt(fmt::format("generator split '{}': negative position", id));
  }
  return std::make_unique<GeneratorSplit>(std::move(id), next, emitted);
}

std::unique_ptr<SourceReader> GeneratorSource::CreateReader(int subtask_index) const {
  return std::make_unique<GeneratorReader>(*this, subtask_index);
}

}  // namespace tidemark
