#include "operators/file_sink/file_writer.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "runtime/core/non_recoverable_error.h"

namespace tidemark {
namespace {

constexpr size_t kBufferBytes = size_t{64} * 1024;

}  // namespace

FileWriter::FileWriter(std::filesystem::path directory, OutputFileConfig names,
                       DefaultRollingPolicy policy, int subtask_index, int64_t part_counter)
    : directory_(std::move(directory)),
      names_(std::move(names)),
      policy_(policy),
      subtask_index_(subtask_index),
      part_counter_(part_counter) {}

FileWriter::~FileWriter() {
  Close();
}

std::string FileWriter::FinalName(int64_t counter) const {
  return fmt::format("{}-{}-{}{}", names_.part_prefix, subtask_index_, counter, names_.part_suffix);
}

void FileWriter::OpenNewPartFile(Timestamp now_ms) {
  InProgressFileRecoverable file;
  file.final_name = FinalName(part_counter_);
  file.in_progress_name = fmt::format(".{}.inprogress.{}", file.final_name,
                                      boost::uuids::to_string(boost::uuids::random_generator()()));
  file.creation_time_ms = now_ms;
  const std::filesystem::path path = directory_ / file.in_progress_name;
  // O_EXCL: a fresh random name; 0600 as every sink file.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw IoError(fmt::format("cannot create part file '{}': {}", path.string(),
                              std::generic_category().message(errno)));
  }
  fd_ = fd;
  ++part_counter_;
  in_progress_ = std::move(file);
  info_ = PartFileInfo{now_ms, now_ms, 0};
}

void FileWriter::Write(std::string_view line, Timestamp now_ms) {
  if (fd_ >= 0 && policy_.ShouldRollOnEvent(info_)) {
    RollPartFile();
  }
  if (fd_ < 0) {
    OpenNewPartFile(now_ms);
  }
  buffer_.append(line);
  info_.size_bytes += static_cast<int64_t>(line.size());
  info_.last_update_time_ms = now_ms;
  if (buffer_.size() >= kBufferBytes) {
    FlushBuffer();
  }
}

void FileWriter::OnProcessingTime(Timestamp now_ms) {
  if (fd_ >= 0 && policy_.ShouldRollOnProcessingTime(info_, now_ms)) {
    RollPartFile();
  }
}

std::vector<FileSinkCommittable> FileWriter::PrepareCommit(bool end_of_input) {
  if (fd_ >= 0 && (end_of_input || policy_.ShouldRollOnCheckpoint(info_))) {
    RollPartFile();
  }
  std::vector<FileSinkCommittable> out = std::move(closed_);
  closed_.clear();
  return out;
}

std::optional<InProgressFileRecoverable> FileWriter::Persist() {
  if (fd_ < 0) {
    return std::nullopt;
  }
  FlushBuffer();
  Sync();
  in_progress_.valid_length = info_.size_bytes;
  return in_progress_;
}

void FileWriter::ResumeInProgressFile(const InProgressFileRecoverable& file, Timestamp now_ms) {
  Close();
  const std::filesystem::path path = directory_ / file.in_progress_name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      // Gone for every restart from this checkpoint too: no restart can cure it.
      throw NonRecoverableError(fmt::format(
          "cannot resume in-progress part file '{}': it is missing, and the checkpoint recorded "
          "{} bytes of it (it was removed outside the job); restore another checkpoint or start "
          "the job without one",
          path.string(), file.valid_length));
    }
    throw IoError(fmt::format("cannot resume in-progress part file '{}': {}", path.string(),
                              std::generic_category().message(err)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < file.valid_length) {
    ::close(fd);
    // The same on every restart from this checkpoint: no restart can cure it.
    throw NonRecoverableError(
        fmt::format("cannot resume in-progress part file '{}': it has {} bytes, the checkpoint "
                    "recorded {}",
                    path.string(), static_cast<int64_t>(st.st_size), file.valid_length));
  }
  // Bytes after the checkpointed length were written after the checkpoint: the replayed input
  // writes them again.
  if (::ftruncate(fd, file.valid_length) != 0 || ::lseek(fd, file.valid_length, SEEK_SET) < 0 ||
      ::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    throw IoError(fmt::format("cannot truncate in-progress part file '{}': {}", path.string(),
                              std::generic_category().message(err)));
  }
  fd_ = fd;
  in_progress_ = file;
  // Flink keeps the creation time across a restore; the file was last written at the checkpoint
  // at the latest, and "now" is the best bound the restored sink knows.
  info_ = PartFileInfo{file.creation_time_ms, now_ms, file.valid_length};
}

void FileWriter::RollPartFile() {
  FlushBuffer();
  Sync();
  ::close(fd_);
  fd_ = -1;
  closed_.push_back({in_progress_.in_progress_name, in_progress_.final_name, info_.size_bytes});
  in_progress_ = {};
}

void FileWriter::FlushBuffer() {
  size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw IoError(fmt::format("cannot write part file '{}': {}",
                                (directory_ / in_progress_.in_progress_name).string(),
                                std::generic_category().message(errno)));
    }
    done += static_cast<size_t>(n);
  }
  buffer_.clear();
}

void FileWriter::Sync() {
  if (::fdatasync(fd_) != 0) {
    throw IoError(fmt::format("cannot sync part file '{}': {}",
                              (directory_ / in_progress_.in_progress_name).string(),
                              std::generic_category().message(errno)));
  }
}

void FileWriter::Close() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  buffer_.clear();  // never written: a crash loses them too, and the checkpoint did not count them
}

}  // namespace tidemark
