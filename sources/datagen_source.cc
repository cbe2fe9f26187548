#include "sources/datagen_source.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {
namespace {

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fully specified, identical everywhere.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n), n > 0 (modulo bias is irrelevant for test data).
  int64_t Below(int64_t n) { return static_cast<int64_t>(Next() % static_cast<uint64_t>(n)); }
  /// Uniform in (0, 1].
  double Unit() { return static_cast<double>((Next() >> 11) + 1) * 0x1.0p-53; }
  uint64_t state() const { return state_; }

 private:
  uint64_t state_;
};

// A split and its position, section "datagen-split" (version 1): index, records emitted, the
// random stream's state, and the processing time its schedule counts from (kMinTimestamp: the
// reader's start, for a split not read yet).
class DatagenSplit : public SourceSplit {
 public:
  explicit DatagenSplit(int64_t index) : index_(index) {}
  DatagenSplit(int64_t index, int64_t emitted, uint64_t rng, Timestamp origin)
      : index_(index), emitted_(emitted), rng_(rng), origin_(origin), positioned_(true) {}
  std::string SplitId() const override { return fmt::format("split-{}", index_); }
  int64_t index() const { return index_; }
  int64_t emitted() const { return emitted_; }
  uint64_t rng() const { return rng_; }
  Timestamp origin() const { return origin_; }
  bool positioned() const { return positioned_; }
  void WriteTo(StateWriter& writer) const override {
    writer.BeginSection("datagen-split", 1);
    writer.WriteI64(index_);
    writer.WriteI64(emitted_);
    writer.WriteI64(static_cast<int64_t>(rng_));
    writer.WriteI64(origin_);
    writer.EndSection();
  }

 private:
  int64_t index_;
  int64_t emitted_ = 0;
  uint64_t rng_ = 0;
  Timestamp origin_ = kMinTimestamp;
  bool positioned_ = false;
};

class DatagenReader : public SplitReaderBase {
 public:
  explicit DatagenReader(const DatagenSourceSpec& spec) : spec_(spec) {}

  void Start(SourceReaderContext& context) override {
    context_ = &context;
    start_time_ = context.processing_time().GetCurrentProcessingTime();
  }

  void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) override {
    for (auto& s : splits) {
      auto* d = dynamic_cast<DatagenSplit*>(s.get());
      TM_CHECK(d != nullptr, "datagen reader got a foreign split");
      State st{d->index(), d->SplitId(), SplitMix64(Seed(d->index())), {}, 0,
               nullptr,    kMinTimestamp};
      if (d->positioned()) {
        st.rng = SplitMix64(d->rng());
        st.emitted = d->emitted();
        st.origin = d->origin();
      }
      for (const IdlePeriodSpec& p : spec_.idle_periods) {
        if (p.split == d->index()) {
          st.idle.push_back(p);
        }
      }
      std::sort(
          st.idle.begin(), st.idle.end(),
          [](const IdlePeriodSpec& a, const IdlePeriodSpec& b) { return a.start_ms < b.start_ms; });
      states_.push_back(std::move(st));
    }
  }

  InputStatus PollNext(ReaderOutput& output) override {
    if (!registered_) {
      registered_ = true;
      for (State& st : states_) {
        if (spec_.count > 0) {
          st.output = &output.CreateOutputForSplit(st.id);
        }
      }
    }
    State* next = nullptr;
    Timestamp next_due = 0;
    bool any_paused = false;
    for (State& st : states_) {
      if (st.emitted >= spec_.count) {
        continue;
      }
      if (IsPaused(st.id)) {
        any_paused = true;
        continue;
      }
      const Timestamp due = Due(st, st.emitted) + Origin(st) - start_time_;
      if (next == nullptr || due < next_due) {
        next = &st;
        next_due = due;
      }
    }
    if (next == nullptr) {
      return no_more_splits() && !any_paused ? InputStatus::kEndOfInput
                                             : InputStatus::kNothingAvailable;
    }
    if (context_->processing_time().GetCurrentProcessingTime() < start_time_ + next_due) {
      context_->WakeUpAt(start_time_ + next_due);
      return InputStatus::kNothingAvailable;
    }
    State& st = *next;
    int64_t delay = 0;
    const int64_t max = spec_.max_out_of_orderness_ms;
    if (spec_.disorder == "uniform" && max > 0) {
      delay = st.rng.Below(max + 1);
    } else if (spec_.disorder == "exponential" && max > 0) {
      const double mean = static_cast<double>(max) / 4.0;
      delay =
          std::min<int64_t>(max, static_cast<int64_t>(std::floor(-mean * std::log(st.rng.Unit()))));
    }
    const Timestamp ts =
        spec_.first_timestamp_ms + Due(st, st.emitted) + st.index * spec_.skew_ms - delay;
    const int64_t key = st.rng.Below(spec_.key_count);
    const int64_t value = st.rng.Below(1000);
    Row row{Value{ts}, Value{st.index}, Value{key}, Value{st.emitted}, Value{value}};
    st.output->Collect(std::move(row), ts);
    ++st.emitted;
    if (st.emitted == spec_.count) {
      output.ReleaseOutputForSplit(st.id);
      st.output = nullptr;
    }
    return InputStatus::kMoreAvailable;
  }

 private:
  struct State {
    int64_t index;
    std::string id;
    SplitMix64 rng;
    std::vector<IdlePeriodSpec> idle;
    int64_t emitted;
    SourceOutput* output;
    Timestamp origin;  // restored: the processing time its schedule counts from
  };

 public:
  std::vector<std::unique_ptr<SourceSplit>> SnapshotState(int64_t /*checkpoint_id*/) override {
    std::vector<std::unique_ptr<SourceSplit>> out;
    for (const State& st : states_) {
      if (st.emitted < spec_.count) {
        out.push_back(
            std::make_unique<DatagenSplit>(st.index, st.emitted, st.rng.state(), Origin(st)));
      }
    }
    return out;
  }

 private:
  Timestamp Origin(const State& st) const {
    return st.origin == kMinTimestamp ? start_time_ : st.origin;
  }

  uint64_t Seed(int64_t split) const {
    return static_cast<uint64_t>(spec_.seed) * 0x100000001B3ULL + static_cast<uint64_t>(split) + 1;
  }

  Timestamp Due(const State& st, int64_t k) const {
    // k * 1000 / rate without overflow for any realistic k.
    Timestamp due = k * 1000 / spec_.rate;  // exact for k < 9e15
    for (const IdlePeriodSpec& p : st.idle) {
      if (due >= p.start_ms) {
        due += p.end_ms - p.start_ms;
      }
    }
    return due;
  }

  const DatagenSourceSpec& spec_;
  SourceReaderContext* context_ = nullptr;
  std::vector<State> states_;
  Timestamp start_time_ = 0;
  bool registered_ = false;
};

}  // namespace

DatagenSource::DatagenSource(const SourceSpec& spec) : spec_(spec.datagen) {
  if (spec_.split_count < 1) {
    throw KeyedInvalidArgument("splits",
                               fmt::format("must be at least 1, got {}", spec_.split_count));
  }
  if (spec_.rate < 1) {
    throw KeyedInvalidArgument("rate", fmt::format("must be at least 1, got {}", spec_.rate));
  }
  if (spec_.key_count < 1) {
    throw KeyedInvalidArgument("keys", fmt::format("must be at least 1, got {}", spec_.key_count));
  }
  if (spec_.count < 0) {
    throw KeyedInvalidArgument("count", fmt::format("must not be negative, got {}", spec_.count));
  }
  if (spec_.max_out_of_orderness_ms < 0) {
    throw KeyedInvalidArgument("max-out-of-orderness", fmt::format("must not be negative, got {}ms",
                                                                   spec_.max_out_of_orderness_ms));
  }
  if (spec_.disorder != "none" && spec_.disorder != "uniform" && spec_.disorder != "exponential") {
    throw KeyedInvalidArgument("disorder",
                               fmt::format("unknown distribution '{}'", spec_.disorder));
  }
  for (size_t i = 0; i < spec_.idle_periods.size(); ++i) {
    const IdlePeriodSpec& p = spec_.idle_periods[i];
    if (p.split < 0 || p.split >= spec_.split_count) {
      throw KeyedInvalidArgument(
          fmt::format("idle-periods[{}].split", i),
          fmt::format("no split {} (splits: {})", p.split, spec_.split_count));
    }
    if (p.end_ms <= p.start_ms || p.start_ms < 0) {
      throw KeyedInvalidArgument(fmt::format("idle-periods[{}]", i), "needs 0 <= start < end");
    }
  }
  schema_.Add("ts", FieldType::kTimestamp);
  schema_.Add("split", FieldType::kInt64);
  schema_.Add("key", FieldType::kInt64);
  schema_.Add("seq", FieldType::kInt64);
  schema_.Add("value", FieldType::kInt64);
}

std::vector<std::unique_ptr<SourceSplit>> DatagenSource::CreateSplits() const {
  std::vector<std::unique_ptr<SourceSplit>> out;
  for (int64_t i = 0; i < spec_.split_count; ++i) {
    out.push_back(std::make_unique<DatagenSplit>(i));
  }
  return out;
}

std::unique_ptr<SourceSplit> DatagenSource::RestoreSplit(StateReader& reader) const {
  reader.BeginSection("datagen-split", 1);
  const int64_t index = reader.ReadI64();
  const int64_t emitted = reader.ReadI64();
  const auto rng = static_cast<uint64_t>(reader.ReadI64());
  const Timestamp origin = reader.ReadI64();
  reader.EndSection();
  if (index < 0 || index >= spec_.split_count || emitted < 0 || emitted > spec_.count) {
    throw StateCorrupt(
        fmt::format("datagen split {} at {}: not a split position of this source", index, emitted));
  }
  return std::make_unique<DatagenSplit>(index, emitted, rng, origin);
}

std::unique_ptr<SourceReader> DatagenSource::CreateReader(int /*subtask_index*/) const {
  return std::make_unique<DatagenReader>(spec_);
}

}  // namespace tidemark
