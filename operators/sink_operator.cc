#include "operators/sink_operator.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "runtime/core/logging.h"
#include "runtime/core/non_recoverable_error.h"

namespace tidemark {

SinkOperator::SinkOperator(SinkSpec spec, Schema schema, std::shared_ptr<SinkResult> result,
                           JobResources& resources, int subtask_index, bool checkpointing)
    : spec_(std::move(spec)),
      schema_(std::move(schema)),
      result_(std::move(result)),
      resources_(resources),
      subtask_index_(subtask_index),
      checkpointing_(checkpointing),
      json_(schema_) {
  start_slot_ = schema_.IndexOf("window_start");
  end_slot_ = schema_.IndexOf("window_end");
  count_slot_ = schema_.IndexOf("count");
  watermark_slot_ = schema_.IndexOf("watermark");
}

SinkOperator::~SinkOperator() {
  Close();
}

void SinkOperator::Open(const OperatorContext& context) {
  StreamOperator::Open(context);
  if (spec_.type == "file") {
    std::string path = spec_.path;
    if (context.parallelism > 1) {
      path += fmt::format(".{}", subtask_index_);  // one file per subtask, never interleaved
    }
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
      std::error_code ec;
      if (spec_.create_dirs) {
        CreateDirectories(parent, path);
      } else if (!std::filesystem::is_directory(parent, ec)) {
        throw IoError(fmt::format(
            "cannot open sink file '{}': directory '{}' does not exist; create it or set "
            "create-dirs: true",
            path, parent.string()));
      }
    }
    path_ = path;
    if (!checkpointing_ && !context.restoring) {
      // Else InitializeState opens it, knowing what the checkpoint recorded: a restore into a
      // job without checkpointing: must keep the output the checkpoint covers, not truncate it.
      OpenFile(-1);
    }
  }
}

namespace {
/// OpenFile's "restored, but no recorded length": append to what the file holds.
constexpr int64_t kAppendOnly = INT64_MAX;
}  // namespace

void SinkOperator::OpenFile(int64_t restored_length) {
  const std::string& path = path_;
  const bool fresh = restored_length < 0;
  int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK;
  if (fresh) {
    flags |= spec_.write_mode == "no-overwrite" ? O_EXCL : O_TRUNC;
  }
  // 0600: the output is the job owner's. O_NONBLOCK only for the open: a FIFO without a reader
  // fails (ENXIO) instead of blocking the task thread, where cancel could not reach it.
  const int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) {
    const int err = errno;
    if (err == EEXIST) {
      throw IoError(fmt::format(
          "cannot open sink file '{}': it exists and the sink's write-mode is no-overwrite "
          "(remove it, or set write-mode: overwrite)",
          path));
    }
    throw IoError(fmt::format("cannot open sink file '{}': {}{}", path,
                              std::generic_category().message(err),
                              err == ENXIO ? " (a FIFO without a reader)" : ""));
  }
  const int fl = ::fcntl(fd, F_GETFL);
  if (fl >= 0) {
    (void)::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  }
  struct stat st {};
  if (!fresh && restored_length != kAppendOnly && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // A restore: what the checkpoint covered stays, what came after it is written again.
    if (st.st_size < restored_length) {
      ::close(fd);
      // The same on every restart from this checkpoint: no restart can cure it.
      throw NonRecoverableError(fmt::format(
          "cannot restore sink file '{}': it has {} bytes, fewer than the {} its checkpoint "
          "recorded (it was changed outside the job); restore another checkpoint or start the "
          "job without one",
          path, st.st_size, restored_length));
    }
    if (::ftruncate(fd, restored_length) != 0 || ::lseek(fd, 0, SEEK_END) < 0) {
      const int err = errno;
      ::close(fd);
      throw IoError(fmt::format("cannot restore sink file '{}': truncating to {} bytes: {}", path,
                                restored_length, std::generic_category().message(err)));
    }
  } else if (!fresh) {
    (void)::lseek(fd, 0, SEEK_END);
  }
  file_ = ::fdopen(fd, "a");
  if (file_ == nullptr) {
    const int err = errno;
    ::close(fd);
    throw IoError(
        fmt::format("cannot open sink file '{}': {}", path, std::generic_category().message(err)));
  }
}

namespace {
constexpr std::string_view kFileSinkSection = "file";
constexpr uint32_t kFileSinkStateVersion = 1;
}  // namespace

void SinkOperator::SnapshotState(StateSnapshotContext& context) {
  if (file_ == nullptr) {
    return;
  }
  // The recorded length must be on disk before the checkpoint can complete.
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) {
    if (errno != EINVAL && errno != EROFS) {  // a FIFO or a character device cannot fsync
      throw IoError(fmt::format("cannot write sink file '{}': {}", path_,
                                std::generic_category().message(errno)));
    }
  }
  const off_t length = ::lseek(::fileno(file_), 0, SEEK_CUR);
  StateWriter& w = context.writer;
  w.BeginSection(kFileSinkSection, kFileSinkStateVersion);
  w.WriteString(path_);
  w.WriteI64(length < 0 ? 0 : static_cast<int64_t>(length));
  w.EndSection();
}

void SinkOperator::InitializeState(StateInitializationContext& context) {
  if (spec_.type != "file" || file_ != nullptr) {
    return;
  }
  if (!context.is_restored()) {
    if (context.restored_checkpoint_id > 0) {
      // A restored job whose checkpoint holds nothing for this sink (a new sink, or a checkpoint
      // without its length): keep what is there and append rather than destroy it.
      GetLogger("task")->warn(
          "sink file '{}': checkpoint {} records no length for it; appending to what it holds",
          path_, context.restored_checkpoint_id);
      OpenFile(kAppendOnly);
      return;
    }
    OpenFile(-1);
    return;
  }
  StateReader& r = *context.reader;
  r.BeginSection(kFileSinkSection, kFileSinkStateVersion);
  const std::string path = r.ReadString();
  const int64_t length = r.ReadI64();
  r.EndSection();
  if (length < 0) {
    throw StateCorrupt("file sink state has a negative file length");
  }
  if (path != path_) {
    // The checkpoint's output is another file (the job's path changed, or the sink's parallelism
    // and with it its file names): this file is new to the checkpoint, as a new sink's is, so the
    // same rule holds: keep what it holds and append rather than silently truncate it.
    GetLogger("task")->warn(
        "sink file '{}': checkpoint {} recorded '{}', another file; appending to what this one "
        "holds",
        path_, context.restored_checkpoint_id, path);
    OpenFile(kAppendOnly);
    return;
  }
  OpenFile(length);
}

// Each missing directory is made 0700 (not 0777 less the umask): only the job's owner reads it.
void SinkOperator::CreateDirectories(const std::filesystem::path& dir, const std::string& file) {
  std::filesystem::path at;
  for (const auto& part : dir) {
    at /= part;
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) {
      throw IoError(fmt::format("cannot open sink file '{}': cannot create directory '{}': {}",
                                file, at.string(), std::generic_category().message(errno)));
    }
  }
}

std::string SinkOperator::Format(const StreamRecord& record) const {
  if (spec_.format == "fire" && start_slot_ >= 0 && end_slot_ >= 0) {
    auto at = [&](int slot) {
      return record.row.Get(static_cast<size_t>(slot));
    };
    std::string line =
        fmt::format(">>> FIRE window=[{},{})", FormatSeconds(AsInt64(at(start_slot_)).value_or(0)),
                    FormatSeconds(AsInt64(at(end_slot_)).value_or(0)));
    if (count_slot_ >= 0) {
      line += fmt::format(" count={}", AsInt64(at(count_slot_)).value_or(0));
    }
    if (watermark_slot_ >= 0) {
      line += " watermark=" + FormatSeconds(AsInt64(at(watermark_slot_)).value_or(kMinTimestamp));
    }
    return line;
  }
  std::string line;
  json_.Append(record.row, line);
  return line;
}

void SinkOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  if (spec_.type == "print") {
    resources_.WriteLine(Format(record));
  } else if (file_ != nullptr) {
    line_.clear();  // reused: no allocation per record once it has grown
    json_.Append(record.row, line_);
    line_.push_back('\n');
    if (std::fwrite(line_.data(), 1, line_.size(), file_) != line_.size()) {
      throw IoError(fmt::format("cannot write sink file '{}': {}", spec_.path,
                                std::generic_category().message(errno)));
    }
  }
  result_->Add(record);
}

void SinkOperator::ProcessWatermark(Watermark watermark, int /*input*/) {
  watermark_ = watermark.timestamp;
}

void SinkOperator::Finish() {
  if (file_ != nullptr && std::fflush(file_) != 0) {
    throw IoError(fmt::format("cannot write sink file '{}': {}", spec_.path,
                              std::generic_category().message(errno)));
  }
}

void SinkOperator::Close() {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

}  // namespace tidemark
