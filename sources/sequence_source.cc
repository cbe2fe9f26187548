#include "sources/sequence_source.h"

#include <set>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {
namespace {

Value ToValue(const ConfigValue& v) {
  return std::visit([](const auto& x) -> Value { return x; }, v);
}

FieldType TypeOf(const ConfigValue& v) {
  switch (v.index()) {
    case 0:
      return FieldType::kInt64;
    case 1:
      return FieldType::kDouble;
    case 2:
      return FieldType::kBool;
    default:
      return FieldType::kString;
  }
}

// Section "sequence-split" (version 1): the split id and the number of records already emitted.
class SequenceSplit : public SourceSplit {
 public:
  explicit SequenceSplit(const SequenceSplitSpec& spec, int64_t emitted = 0)
      : spec_(spec), emitted_(emitted) {}
  std::string SplitId() const override { return spec_.id; }
  const SequenceSplitSpec& spec() const { return spec_; }
  int64_t emitted() const { return emitted_; }
  void WriteTo(StateWriter& writer) const override {
    writer.BeginSection("sequence-split", 1);
    writer.WriteString(spec_.id);
    writer.WriteI64(emitted_);
    writer.EndSection();
  }

 private:
  const SequenceSplitSpec& spec_;  // owned by the SequenceSource, which outlives the job
  int64_t emitted_;                // the position: records of the split already emitted
};

class SequenceReader : public SplitReaderBase {
 public:
  explicit SequenceReader(const SequenceSource& source)
      : source_(source), layout_(source.schema().layout()) {}

  void Start(SourceReaderContext& context) override {
    context_ = &context;
    start_time_ = context.processing_time().GetCurrentProcessingTime();
  }

  void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) override {
    for (auto& s : splits) {
      auto* seq = dynamic_cast<SequenceSplit*>(s.get());
      TM_CHECK(seq != nullptr, "sequence reader got a foreign split");
      State st;
      st.spec = &seq->spec();
      st.emitted = seq->emitted();
      st.constants.reserve(st.spec->fields.size());
      for (const auto& [name, value] : st.spec->fields) {
        st.constants.push_back(ToValue(value));
      }
      states_.push_back(std::move(st));
    }
  }

  // The unfinished splits with their positions, starting with the one the round-robin reads
  // next: restored in this order, a fresh reader continues the same interleaving.
  std::vector<std::unique_ptr<SourceSplit>> SnapshotState(int64_t /*checkpoint_id*/) override {
    std::vector<std::unique_ptr<SourceSplit>> out;
    for (size_t i = 0; i < states_.size(); ++i) {
      const State& st = states_[(next_ + i) % states_.size()];
      if (st.emitted < st.spec->count) {
        out.push_back(std::make_unique<SequenceSplit>(*st.spec, st.emitted));
      }
    }
    return out;
  }

  InputStatus PollNext(ReaderOutput& output) override {
    // Next split with records left, round-robin from where we stopped.
    const size_t n = states_.size();
    size_t picked = n;
    bool any_paused = false;
    for (size_t i = 0; i < n; ++i) {
      size_t c = (next_ + i) % n;
      if (states_[c].emitted < states_[c].spec->count) {
        if (IsPaused(states_[c].spec->id)) {
          any_paused = true;  // watermark alignment: not read until resumed
          continue;
        }
        picked = c;
        break;
      }
    }
    if (picked == n) {
      return no_more_splits() && !any_paused ? InputStatus::kEndOfInput
                                             : InputStatus::kNothingAvailable;
    }
    const int64_t pacing = source_.spec().pacing_ms;
    if (pacing > 0) {
      const Timestamp due = start_time_ + emitted_total_ * pacing;
      if (context_->processing_time().GetCurrentProcessingTime() < due) {
        context_->WakeUpAt(due);
        return InputStatus::kNothingAvailable;
      }
    }
    State& st = states_[picked];
    if (st.output == nullptr) {
      st.output = &output.CreateOutputForSplit(st.spec->id);
    }
    const Timestamp ts = st.spec->first_timestamp_ms + st.emitted * st.spec->step_ms;
    Row row(layout_);
    row.SetInt64(0, ts);
    for (size_t i = 0; i < st.constants.size(); ++i) {
      row.Set(1 + i, st.constants[i]);
    }
    st.output->Collect(std::move(row), ts);
    ++st.emitted;
    ++emitted_total_;
    next_ = (picked + 1) % n;
    if (st.emitted == st.spec->count) {
      output.ReleaseOutputForSplit(st.spec->id);
      st.output = nullptr;
    }
    return InputStatus::kMoreAvailable;
  }

 private:
  void CollectMetrics(MetricsWriter& out) const override {
    for (const State& st : states_) {
      out.Gauge("split." + st.spec->id + ".records", st.emitted);
    }
  }

  struct State {
    const SequenceSplitSpec* spec = nullptr;
    std::vector<Value> constants;  // set once per split, copied into each row
    int64_t emitted = 0;
    SourceOutput* output = nullptr;
  };

  const SequenceSource& source_;
  const RowLayout* layout_;
  SourceReaderContext* context_ = nullptr;
  std::vector<State> states_;
  size_t next_ = 0;
  int64_t emitted_total_ = 0;
  Timestamp start_time_ = 0;
};

}  // namespace

SequenceSource::SequenceSource(const SourceSpec& spec) : spec_(spec) {
  schema_.Add(spec_.timestamp_field_name.empty() ? "ts" : spec_.timestamp_field_name,
              FieldType::kTimestamp);
  std::set<std::string> ids;
  for (size_t i = 0; i < spec_.splits.size(); ++i) {
    const auto& split = spec_.splits[i];
    if (!ids.insert(split.id).second) {
      throw InvalidArgument(fmt::format("splits[{}].id: split id '{}' is used twice", i, split.id));
    }
    if (split.count < 0) {
      throw InvalidArgument(fmt::format("splits[{}].count: must be >= 0, got {}", i, split.count));
    }
    if (i == 0) {
      for (const auto& [name, value] : split.fields) {
        if (schema_.IndexOf(name) >= 0) {
          throw InvalidArgument(fmt::format("splits[0].fields.{}: field name is taken", name));
        }
        schema_.Add(name, TypeOf(value));
      }
      continue;
    }
    bool same = split.fields.size() + 1 == schema_.size();
    for (size_t f = 0; same && f < split.fields.size(); ++f) {
      same = split.fields[f].first == schema_.field(f + 1).name &&
             TypeOf(split.fields[f].second) == schema_.field(f + 1).type;
    }
    if (!same) {
      throw InvalidArgument(
          fmt::format("splits[{}].fields: every split must have the same fields, in the same order "
                      "and types, as "
                      "splits[0]",
                      i));
    }
  }
}

std::vector<std::unique_ptr<SourceSplit>> SequenceSource::CreateSplits() const {
  std::vector<std::unique_ptr<SourceSplit>> out;
  for (const auto& s : spec_.splits) {
    out.push_back(std::make_unique<SequenceSplit>(s));
  }
  return out;
}

std::unique_ptr<SourceSplit> SequenceSource::RestoreSplit(StateReader& reader) const {
  reader.BeginSection("sequence-split", 1);
  const std::string id = reader.ReadString();
  const int64_t emitted = reader.ReadI64();
  reader.EndSection();
  for (const SequenceSplitSpec& s : spec_.splits) {
    if (s.id == id) {
      if (emitted < 0 || emitted > s.count) {
        throw StateCorrupt(
            fmt::format("sequence split '{}': position {} outside [0, {}]", id, emitted, s.count));
      }
      return std::make_unique<SequenceSplit>(s, emitted);
    }
  }
  throw StateCorrupt(fmt::format("sequence split '{}' is not a split of this source", id));
}

std::unique_ptr<SourceReader> SequenceSource::CreateReader(int /*subtask_index*/) const {
  return std::make_unique<SequenceReader>(*this);
}

}  // namespace tidemark
