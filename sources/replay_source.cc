#include "sources/replay_source.h"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/core/errors.h"
#include "sources/text_input.h"

namespace tidemark {
namespace {

// A split with its position, section "replay-split" (version 1): id, the index of its first line
// not yet replayed, and the processing time its `at`s count from (kMinTimestamp: the reader's
// start, for a split not read yet).
class ReplaySplit : public SourceSplit {
 public:
  ReplaySplit(int index, std::string id, size_t position = 0, Timestamp origin = kMinTimestamp)
      : index_(index), id_(std::move(id)), position_(position), origin_(origin) {}
  std::string SplitId() const override { return id_; }
  int index() const { return index_; }
  size_t position() const { return position_; }
  Timestamp origin() const { return origin_; }
  void WriteTo(StateWriter& writer) const override {
    writer.BeginSection("replay-split", 1);
    writer.WriteString(id_);
    writer.WriteI64(static_cast<int64_t>(position_));
    writer.WriteI64(origin_);
    writer.EndSection();
  }

 private:
  int index_;
  std::string id_;
  size_t position_;
  Timestamp origin_;
};

class ReplayReader : public SourceReader {
 public:
  explicit ReplayReader(const ReplaySource& source)
      : source_(source),
        ts_slot_(FirstTimestampSlot(source.schema())),
        outputs_(source.split_ids().size(), nullptr),
        mine_(source.split_ids().size(), false),
        paused_(source.split_ids().size(), false),
        backlog_(source.split_ids().size()),
        skip_before_(source.split_ids().size(), 0) {}

  void Start(SourceReaderContext& context) override {
    context_ = &context;
    start_time_ = context.processing_time().GetCurrentProcessingTime();
  }

  void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) override {
    for (auto& s : splits) {
      auto* r = dynamic_cast<ReplaySplit*>(s.get());
      TM_CHECK(r != nullptr, "replay reader got a foreign split");
      mine_[static_cast<size_t>(r->index())] = true;
      order_.push_back(r->index());
      if (r->origin() != kMinTimestamp) {
        // Restored: lines before its position were replayed before the snapshot. The cursor
        // starts at the earliest restored position (the lines of one recording share it).
        skip_before_[static_cast<size_t>(r->index())] = r->position();
        origin_ = r->origin();
        next_ = restored_ ? std::min(next_, r->position()) : r->position();
        restored_ = true;
      }
    }
  }

  void NotifyNoMoreSplits() override { no_more_splits_ = true; }

  InputStatus PollNext(ReaderOutput& output) override {
    if (!registered_) {
      registered_ = true;
      for (int i : order_) {
        outputs_[static_cast<size_t>(i)] =
            &output.CreateOutputForSplit(source_.split_ids()[static_cast<size_t>(i)]);
      }
    }
    const auto& events = source_.events();
    while (true) {
      // Events of a split paused for watermark alignment wait in its backlog, in file order.
      while (next_ < events.size()) {
        const ReplaySource::Event& c = events[next_];
        if (c.split >= 0 && (!mine_[static_cast<size_t>(c.split)] ||
                             next_ < skip_before_[static_cast<size_t>(c.split)])) {
          ++next_;
          continue;
        }
        if (c.split >= 0 && paused_[static_cast<size_t>(c.split)]) {
          backlog_[static_cast<size_t>(c.split)].push_back(next_++);
          continue;
        }
        break;
      }
      // The earliest line not held back: the head of a resumed split's backlog, or the cursor.
      size_t best = events.size();
      int from_backlog = -1;
      for (size_t s = 0; s < backlog_.size(); ++s) {
        if (!paused_[s] && !backlog_[s].empty() && backlog_[s].front() < best) {
          best = backlog_[s].front();
          from_backlog = static_cast<int>(s);
        }
      }
      if (next_ < best) {
        best = next_;
        from_backlog = -1;
      }
      if (best >= events.size()) {
        break;
      }
      const ReplaySource::Event& e = events[best];
      const Timestamp due = (restored_ ? origin_ : start_time_) + e.at_ms;
      if (context_->processing_time().GetCurrentProcessingTime() < due) {
        context_->WakeUpAt(due);
        return InputStatus::kNothingAvailable;
      }
      if (from_backlog >= 0) {
        backlog_[static_cast<size_t>(from_backlog)].pop_front();
      } else {
        ++next_;
      }
      if (e.kind == ReplaySource::Event::Kind::kTick) {
        continue;
      }
      const size_t split = static_cast<size_t>(e.split);
      SourceOutput* out = outputs_[split];
      const std::string& id = source_.split_ids()[split];
      if (out == nullptr) {
        // Lines of a split after its `end`: an error in the recording, reported, not fatal.
        output.EmitError(SourceError{id, e.line, "line after the split's end", e.text});
        return InputStatus::kMoreAvailable;
      }
      switch (e.kind) {
        case ReplaySource::Event::Kind::kRecord:
          if (!e.row) {
            output.EmitError(SourceError{id, e.line, e.error, e.text});
          } else {
            Row row = *e.row;
            int64_t t = 0;
            if (Int64Cell(row, ts_slot_, &t)) {
              out->Collect(std::move(row), t);
            } else {
              out->Collect(std::move(row));
            }
          }
          return InputStatus::kMoreAvailable;
        case ReplaySource::Event::Kind::kIdle:
          out->MarkIdle();
          return InputStatus::kMoreAvailable;
        case ReplaySource::Event::Kind::kActive:
          out->MarkActive();
          return InputStatus::kMoreAvailable;
        case ReplaySource::Event::Kind::kEnd:
          output.ReleaseOutputForSplit(id);
          outputs_[split] = nullptr;
          return InputStatus::kMoreAvailable;
        case ReplaySource::Event::Kind::kTick:
          break;
      }
    }
    for (const auto& b : backlog_) {
      if (!b.empty()) {
        return InputStatus::kNothingAvailable;  // a paused split still has lines
      }
    }
    return no_more_splits_ ? InputStatus::kEndOfInput : InputStatus::kNothingAvailable;
  }

  /// The splits not ended, each at its first line not replayed yet (the head of its backlog
  /// when paused, else the cursor).
  std::vector<std::unique_ptr<SourceSplit>> SnapshotState(int64_t /*checkpoint_id*/) override {
    std::vector<std::unique_ptr<SourceSplit>> out;
    for (int i : order_) {
      const auto s = static_cast<size_t>(i);
      if (registered_ && outputs_[s] == nullptr) {
        continue;  // ended
      }
      const size_t position =
          backlog_[s].empty() ? std::max(next_, skip_before_[s]) : backlog_[s].front();
      out.push_back(std::make_unique<ReplaySplit>(i, source_.split_ids()[s], position,
                                                  restored_ ? origin_ : start_time_));
    }
    return out;
  }

  /// A paused split's lines wait (their `at` passes meanwhile); after resuming they come at once,
  /// before later lines of other splits.
  void PauseOrResumeSplits(const std::vector<std::string>& pause,
                           const std::vector<std::string>& resume) override {
    const auto& ids = source_.split_ids();
    for (size_t i = 0; i < ids.size(); ++i) {
      if (std::find(pause.begin(), pause.end(), ids[i]) != pause.end()) {
        paused_[i] = true;
      }
      if (std::find(resume.begin(), resume.end(), ids[i]) != resume.end()) {
        paused_[i] = false;
      }
    }
  }

 private:
  const ReplaySource& source_;
  const int ts_slot_;
  std::vector<SourceOutput*> outputs_;
  std::vector<bool> mine_;
  std::vector<bool> paused_;                 // by split index: paused for watermark alignment
  std::vector<std::deque<size_t>> backlog_;  // by split index: held-back event indexes
  std::vector<int> order_;
  SourceReaderContext* context_ = nullptr;
  size_t next_ = 0;
  Timestamp start_time_ = 0;
  bool registered_ = false;
  bool no_more_splits_ = false;
  std::vector<size_t> skip_before_;  // by split index: restored position (earlier lines done)
  bool restored_ = false;            // got a restored split: `at`s count from origin_
  Timestamp origin_ = 0;
};

}  // namespace

ReplaySource::ReplaySource(const SourceSpec& spec)
    : path_(spec.replay.path), schema_(SchemaFromSpec(spec.replay.schema)) {
  LineReader lines(path_, spec.replay.max_line_bytes);  // a regular file (or IoError)
  std::error_code ec;
  if (const auto bytes = std::filesystem::file_size(path_, ec);
      !ec && bytes > static_cast<uintmax_t>(kMaxReplayFileBytes)) {
    throw InvalidArgument(
        fmt::format("{}: a replay file is read whole when the job is compiled and "
                    "may be at most {} MiB; this one is {} MiB",
                    path_, kMaxReplayFileBytes >> 20, (bytes + (1u << 20) - 1) >> 20));
  }
  std::map<std::string, int> split_index;
  std::string line;
  int64_t last_at = 0;
  while (true) {
    const LineReader::Result r = lines.Next(line);
    if (r == LineReader::Result::kEnd) {
      break;
    }
    const int64_t n = lines.line_number();
    auto fail = [&](const std::string& why) {
      return InvalidArgument(fmt::format("{}:{}: replay line: {}", path_, n, why));
    };
    if (r == LineReader::Result::kTooLong) {
      throw fail(fmt::format("longer than max-line-bytes ({})", spec.replay.max_line_bytes));
    }
    if (line.find_first_not_of(" \t") == std::string::npos) {
      continue;
    }
    std::string why;
    const std::optional<nlohmann::json> parsed = ParseJsonLine(line, &why);
    if (!parsed) {
      throw fail(why == "invalid JSON" ? "expected a JSON object" : why);
    }
    const nlohmann::json& j = *parsed;
    if (!j.is_object()) {
      throw fail("expected a JSON object");
    }
    for (auto it = j.begin(); it != j.end(); ++it) {
      static const char* const kKeys[] = {"split", "at", "record", "idle", "active", "end"};
      bool known = false;
      for (const char* k : kKeys) {
        known = known || it.key() == k;
      }
      if (!known) {
        throw fail(fmt::format("unknown key \"{}\" (allowed: split, at, record, idle, active, end)",
                               it.key()));
      }
    }
    Event e;
    e.line = n;
    auto at = j.find("at");
    if (at == j.end() || !at->is_number_integer() || at->get<int64_t>() < 0) {
      throw fail("\"at\" must be a non-negative integer (ms of processing time since the start)");
    }
    e.at_ms = at->get<int64_t>();
    if (e.at_ms < last_at) {
      throw fail(fmt::format("\"at\" goes back in time ({} after {})", e.at_ms, last_at));
    }
    last_at = e.at_ms;
    auto split = j.find("split");
    const int kinds = static_cast<int>(j.contains("record")) +
                      static_cast<int>(j.contains("idle")) +
                      static_cast<int>(j.contains("active")) + static_cast<int>(j.contains("end"));
    if (split == j.end()) {
      if (kinds != 0) {
        throw fail("record / idle / active / end need a \"split\"");
      }
      e.kind = Event::Kind::kTick;
      events_.push_back(std::move(e));
      continue;
    }
    if (!split->is_string() || split->get<std::string>().empty()) {
      throw fail("\"split\" must be a non-empty string");
    }
    if (kinds != 1) {
      throw fail("a line with a split needs exactly one of record, idle, active, end");
    }
    const std::string id = split->get<std::string>();
    auto [it, inserted] = split_index.emplace(id, static_cast<int>(split_ids_.size()));
    if (inserted) {
      split_ids_.push_back(id);
    }
    e.split = it->second;
    if (auto rec = j.find("record"); rec != j.end()) {
      e.kind = Event::Kind::kRecord;
      e.text = rec->dump();
      e.row = JsonObjectToRow(*rec, schema_, &e.error);
    } else {
      const char* flag = j.contains("idle") ? "idle" : j.contains("active") ? "active" : "end";
      if (j[flag] != true) {
        throw fail(fmt::format("\"{}\" must be true", flag));
      }
      e.kind = j.contains("idle")     ? Event::Kind::kIdle
               : j.contains("active") ? Event::Kind::kActive
                                      : Event::Kind::kEnd;
    }
    events_.push_back(std::move(e));
  }
  if (spec.replay.until_ms) {
    // `until`: the input stays open until then (a tick, as a trailing `{"at": ...}` line).
    if (*spec.replay.until_ms < last_at) {
      throw ReplayUntilError(
          fmt::format("until ({} ms) is before the recording's last arrival at {} ms in {}; "
                      "the input cannot end before it",
                      *spec.replay.until_ms, last_at, path_));
    }
    Event e;
    e.line = 0;
    e.at_ms = *spec.replay.until_ms;
    e.kind = Event::Kind::kTick;
    events_.push_back(std::move(e));
  }
}

std::vector<std::unique_ptr<SourceSplit>> ReplaySource::CreateSplits() const {
  std::vector<std::unique_ptr<SourceSplit>> out;
  for (size_t i = 0; i < split_ids_.size(); ++i) {
    out.push_back(std::make_unique<ReplaySplit>(static_cast<int>(i), split_ids_[i]));
  }
  return out;
}

std::unique_ptr<SourceSplit> ReplaySource::RestoreSplit(StateReader& reader) const {
  reader.BeginSection("replay-split", 1);
  std::string id = reader.ReadString();
  const int64_t position = reader.ReadI64();
  const Timestamp origin = reader.ReadI64();
  reader.EndSection();
  auto it = std::find(split_ids_.begin(), split_ids_.end(), id);
  if (it == split_ids_.end()) {
    throw StateCorrupt(fmt::format("replay split '{}' is not a split of {}", id, path_));
  }
  if (position < 0 || static_cast<uint64_t>(position) > events_.size() || origin == kMinTimestamp) {
    throw StateCorrupt(
        fmt::format("replay split '{}': position {} is not a line of {}", id, position, path_));
  }
  return std::make_unique<ReplaySplit>(static_cast<int>(it - split_ids_.begin()), std::move(id),
                                       static_cast<size_t>(position), origin);
}

std::unique_ptr<SourceReader> ReplaySource::CreateReader(int /*subtask_index*/) const {
  return std::make_unique<ReplayReader>(*this);
}

}  // namespace tidemark
