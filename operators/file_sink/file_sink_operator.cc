#include "operators/file_sink/file_sink_operator.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "runtime/core/logging.h"

namespace tidemark {
namespace {

constexpr std::string_view kStateSection = "file-sink";
constexpr uint32_t kStateVersion = 1;
constexpr std::string_view kInProgressTag = ".inprogress.";

/// Parses the decimal counter at the start of `rest`; the rest after it goes to `tail`.
bool ParseCounter(std::string_view rest, int64_t* counter, std::string_view* tail) {
  size_t n = 0;
  while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') {
    ++n;
  }
  if (n == 0 || n > 18) {
    return false;
  }
  std::from_chars(rest.data(), rest.data() + n, *counter);
  *tail = rest.substr(n);
  return true;
}

/// A name read from state must be a plain file name in the directory, never a path.
std::string CheckedName(StateReader& reader, bool hidden) {
  std::string name = reader.ReadString();
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos || (name.front() == '.') != hidden) {
    throw StateCorrupt(fmt::format("file sink state names an invalid part file \"{}\"", name));
  }
  return name;
}

void WriteCommittable(StateWriter& w, const FileSinkCommittable& c) {
  w.WriteString(c.in_progress_name);
  w.WriteString(c.final_name);
  w.WriteI64(c.size_bytes);
}

FileSinkCommittable ReadCommittable(StateReader& r) {
  FileSinkCommittable c;
  c.in_progress_name = CheckedName(r, true);
  c.final_name = CheckedName(r, false);
  c.size_bytes = r.ReadI64();
  if (c.size_bytes < 0) {
    throw StateCorrupt("file sink state has a negative part file size");
  }
  return c;
}

}  // namespace

FileSinkOperator::FileSinkOperator(SinkSpec spec, Schema schema, std::shared_ptr<SinkResult> result,
                                   int subtask_index, bool checkpointing)
    : spec_(std::move(spec)),
      schema_(std::move(schema)),
      result_(std::move(result)),
      subtask_index_(subtask_index),
      checkpointing_(checkpointing),
      directory_(spec_.path),
      json_(schema_) {}

// A destroyed operator that was never closed is a crash: the descriptor goes, the files stay.
FileSinkOperator::~FileSinkOperator() {
  if (writer_ != nullptr) {
    writer_->Close();
  }
}

// Every subtask of a parallel sink creates the same directory at the same time: only mkdir's own
// answer decides (EEXIST is fine), and whether the path is a directory is asked after it.
void FileSinkOperator::CreateDirectory() {
  const std::filesystem::path parent = directory_.parent_path();
  std::error_code ec;
  std::filesystem::path at;
  for (const auto& part : directory_) {
    at /= part;
    const bool last = at == directory_;
    if (!last && !spec_.create_dirs && !std::filesystem::is_directory(at, ec)) {
      throw IoError(fmt::format(
          "cannot open sink directory '{}': directory '{}' does not exist; create it or set "
          "create-dirs: true",
          directory_.string(), parent.string()));
    }
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) {
      throw IoError(fmt::format("cannot open sink directory '{}': cannot create directory '{}': {}",
                                directory_.string(), at.string(),
                                std::generic_category().message(errno)));
    }
  }
  if (!std::filesystem::is_directory(directory_, ec)) {
    throw IoError(
        fmt::format("cannot open sink directory '{}': it exists and is not a directory "
                    "(an exactly-once file sink writes a directory of part files)",
                    directory_.string()));
  }
}

void FileSinkOperator::Open(const OperatorContext& context) {
  StreamOperator::Open(context);
  CreateDirectory();
  committer_ = std::make_unique<FileCommitter>(directory_);
  writer_ = std::make_unique<FileWriter>(
      directory_, OutputFileConfig{spec_.part_prefix, spec_.part_suffix},
      DefaultRollingPolicy(spec_.rolling_policy), subtask_index_, NextFreeCounter());
  const Timestamp now = processing_time().GetCurrentProcessingTime();
  timer_ = processing_time().RegisterTimer(now + spec_.rolling_policy.check_interval_ms,
                                           [this](Timestamp t) { OnBucketCheck(t); });
}

void FileSinkOperator::OnBucketCheck(Timestamp time_ms) {
  timer_.reset();
  if (finished_ || writer_ == nullptr) {
    return;
  }
  writer_->OnProcessingTime(processing_time().GetCurrentProcessingTime());
  timer_ = processing_time().RegisterTimer(time_ms + spec_.rolling_policy.check_interval_ms,
                                           [this](Timestamp t) { OnBucketCheck(t); });
}

void FileSinkOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  line_.clear();
  json_.Append(record.row, line_);
  line_.push_back('\n');
  writer_->Write(line_, processing_time().GetCurrentProcessingTime());
  result_->Add(record);
}

void FileSinkOperator::ProcessWatermark(Watermark watermark, int /*input*/) {
  watermark_ = watermark.timestamp;
}

void FileSinkOperator::Finish() {
  for (FileSinkCommittable& c : writer_->PrepareCommit(/*end_of_input=*/true)) {
    pending_.push_back({kUnassigned, std::move(c)});
  }
  finished_ = true;
  if (!checkpointing_) {
    CommitUpTo(kUnassigned);
  }
}

void FileSinkOperator::Close() {
  if (timer_ && context_.processing_time != nullptr) {
    processing_time().CancelTimer(*timer_);
    timer_.reset();
  }
  if (writer_ != nullptr) {
    writer_->Close();
  }
}

void FileSinkOperator::SnapshotState(StateSnapshotContext& context) {
  // Pre-commit: files rolled since the last checkpoint (and the open one, if it rolls now) are
  // closed and fsynced; they belong to this checkpoint.
  for (FileSinkCommittable& c : writer_->PrepareCommit(/*end_of_input=*/false)) {
    pending_.push_back({context.checkpoint_id, std::move(c)});
  }
  for (Pending& p : pending_) {
    if (p.checkpoint_id == kUnassigned) {
      p.checkpoint_id = context.checkpoint_id;  // closed at end of input: the final checkpoint's
    }
  }
  const std::optional<InProgressFileRecoverable> open = writer_->Persist();
  committer_->SyncDirectory();  // the new files' names are durable with their bytes

  StateWriter& w = context.writer;
  w.BeginSection(kStateSection, kStateVersion);
  w.WriteU32(static_cast<uint32_t>(subtask_index_));
  w.WriteI64(writer_->part_counter());
  w.WriteBool(open.has_value());
  if (open) {
    w.WriteString(open->in_progress_name);
    w.WriteString(open->final_name);
    w.WriteI64(open->valid_length);
    w.WriteI64(open->creation_time_ms);
  }
  w.WriteU32(static_cast<uint32_t>(pending_.size()));
  for (const Pending& p : pending_) {
    w.WriteI64(p.checkpoint_id);
    WriteCommittable(w, p.committable);
  }
  w.EndSection();
}

void FileSinkOperator::NotifyCheckpointComplete(int64_t checkpoint_id) {
  CommitUpTo(checkpoint_id);
}

void FileSinkOperator::CommitUpTo(int64_t checkpoint_id) {
  bool any = false;
  auto it = pending_.begin();
  for (; it != pending_.end() && it->checkpoint_id <= checkpoint_id; ++it) {
    if (committer_->Commit(it->committable) == FileCommitter::Outcome::kCommitted) {
      ++num_committed_;
    }
    any = true;
  }
  pending_.erase(pending_.begin(), it);
  if (any) {
    committer_->SyncDirectory();
  }
}

void FileSinkOperator::InitializeState(StateInitializationContext& context) {
  if (!context.is_restored()) {
    // A fresh start (or a restart before any checkpoint completed): this subtask's hidden files
    // are uncommitted output of an earlier attempt, which no checkpoint of this run refers to.
    RemoveInProgressFiles(nullptr, 0);
    writer_ = std::make_unique<FileWriter>(
        directory_, OutputFileConfig{spec_.part_prefix, spec_.part_suffix},
        DefaultRollingPolicy(spec_.rolling_policy), subtask_index_, NextFreeCounter());
    return;
  }
  StateReader& r = *context.reader;
  r.BeginSection(kStateSection, kStateVersion);
  const uint32_t subtask = r.ReadU32();
  if (subtask != static_cast<uint32_t>(subtask_index_)) {
    throw StateCorrupt(fmt::format("file sink state of subtask {} restored into subtask {}",
                                   subtask, subtask_index_));
  }
  const int64_t counter = r.ReadI64();
  std::optional<InProgressFileRecoverable> open;
  if (r.ReadBool()) {
    InProgressFileRecoverable f;
    f.in_progress_name = CheckedName(r, true);
    f.final_name = CheckedName(r, false);
    f.valid_length = r.ReadI64();
    f.creation_time_ms = r.ReadI64();
    if (f.valid_length < 0) {
      throw StateCorrupt("file sink state has a negative in-progress file length");
    }
    open = std::move(f);
  }
  const uint32_t n = r.ReadU32();
  if (n > r.remaining()) {
    throw StateCorrupt("file sink state lists more pending files than it holds");
  }
  std::vector<Pending> pending;
  for (uint32_t i = 0; i < n; ++i) {
    const int64_t id = r.ReadI64();
    pending.push_back({id, ReadCommittable(r)});
  }
  r.EndSection();
  if (counter < 0) {
    throw StateCorrupt("file sink state has a negative part counter");
  }

  // The restored checkpoint completed: everything it holds as pending is committed, exactly
  // once (a file renamed before the crash is left as it is).
  pending_ = std::move(pending);
  CommitUpTo(kUnassigned);

  // This subtask's other in-progress files were written after the checkpoint: the replayed input
  // rewrites their records.
  RemoveInProgressFiles(open ? &open->in_progress_name : nullptr, context.restored_checkpoint_id);
  // Past the restored counter, and past any finished file (restoring an older checkpoint than
  // the latest must not overwrite what a later one committed).
  writer_ = std::make_unique<FileWriter>(directory_,
                                         OutputFileConfig{spec_.part_prefix, spec_.part_suffix},
                                         DefaultRollingPolicy(spec_.rolling_policy), subtask_index_,
                                         std::max(counter, NextFreeCounter()));
  if (open) {
    writer_->ResumeInProgressFile(*open, processing_time().GetCurrentProcessingTime());
  }
  committer_->SyncDirectory();
}

void FileSinkOperator::RemoveInProgressFiles(const std::string* keep,
                                             int64_t restored_checkpoint_id) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory_, ec)) {
    const std::string name = entry.path().filename().string();
    int64_t c = 0;
    if (!IsOwnInProgressFile(name, &c) || (keep != nullptr && name == *keep)) {
      continue;
    }
    std::error_code rm;
    std::filesystem::remove(entry.path(), rm);
    if (rm) {
      throw IoError(
          fmt::format("cannot remove in-progress part file '{}' {}: {}", entry.path().string(),
                      keep != nullptr || restored_checkpoint_id > 0
                          ? fmt::format("written after checkpoint {}", restored_checkpoint_id)
                          : std::string("of an earlier attempt"),
                      rm.message()));
    }
    GetLogger("task")->info("file sink {}#{}: removed in-progress part file '{}' ({})",
                            context_.name, subtask_index_, entry.path().string(),
                            restored_checkpoint_id > 0
                                ? fmt::format("written after checkpoint {}", restored_checkpoint_id)
                                : std::string("an earlier attempt's, in no checkpoint"));
  }
  if (ec) {
    throw IoError(
        fmt::format("cannot list sink directory '{}': {}", directory_.string(), ec.message()));
  }
}

bool FileSinkOperator::IsOwnFinishedFile(const std::string& name, int64_t* counter) const {
  const std::string head = fmt::format("{}-{}-", spec_.part_prefix, subtask_index_);
  std::string_view tail;
  return name.starts_with(head) &&
         ParseCounter(std::string_view(name).substr(head.size()), counter, &tail) &&
         tail == spec_.part_suffix;
}

bool FileSinkOperator::IsOwnInProgressFile(const std::string& name, int64_t* counter) const {
  const std::string head = fmt::format(".{}-{}-", spec_.part_prefix, subtask_index_);
  std::string_view tail;
  if (!name.starts_with(head) ||
      !ParseCounter(std::string_view(name).substr(head.size()), counter, &tail)) {
    return false;
  }
  const std::string expected = spec_.part_suffix + std::string(kInProgressTag);
  return tail.starts_with(expected) && tail.size() > expected.size();
}

int64_t FileSinkOperator::NextFreeCounter() const {
  int64_t next = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(directory_, ec)) {
    const std::string name = entry.path().filename().string();
    int64_t c = 0;
    if (IsOwnFinishedFile(name, &c) || IsOwnInProgressFile(name, &c)) {
      next = std::max(next, c + 1);
    }
  }
  if (ec) {
    throw IoError(
        fmt::format("cannot list sink directory '{}': {}", directory_.string(), ec.message()));
  }
  return next;
}

}  // namespace tidemark
