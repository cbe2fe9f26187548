#include "operators/sink_operator.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {

SinkOperator::SinkOperator(SinkSpec spec, Schema schema, std::shared_ptr<SinkResult> result,
                           JobResources& resources, int subtask_index)
    : spec_(std::move(spec)),
      schema_(std::move(schema)),
      result_(std::move(result)),
      resources_(resources),
      subtask_index_(subtask_index),
      json_(schema_) {
  start_slot_ = schema_.IndexOf("window_start");
  end_slot_ = schema_.IndexOf("window_end");
  count_slot_ = schema_.IndexOf("count");
  watermark_slot_ = schema_.IndexOf("watermark");
}

SinkOperator::~SinkOperator() { Close(); }

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
    // 0600: the output is the job owner's. O_NONBLOCK only for the open: a FIFO without a reader
    // fails (ENXIO) instead of blocking the task thread, where cancel could not reach it.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0600);
    if (fd < 0) {
      const int err = errno;
      throw IoError(fmt::format("cannot open sink file '{}': {}{}", path, std::strerror(err),
                                err == ENXIO ? " (a FIFO without a reader)" : ""));
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) {
      (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    }
    file_ = ::fdopen(fd, "w");
    if (file_ == nullptr) {
      const int err = errno;
      ::close(fd);
      throw IoError(fmt::format("cannot open sink file '{}': {}", path, std::strerror(err)));
    }
  }
}

// Each missing directory is made 0700 (not 0777 less the umask): only the job's owner reads it.
void SinkOperator::CreateDirectories(const std::filesystem::path& dir, const std::string& file) {
  std::filesystem::path at;
  for (const auto& part : dir) {
    at /= part;
    if (::mkdir(at.c_str(), 0700) != 0 && errno != EEXIST) {
      throw IoError(fmt::format("cannot open sink file '{}': cannot create directory '{}': {}",
                                file, at.string(), std::strerror(errno)));
    }
  }
}

std::string SinkOperator::Format(const StreamRecord& record) const {
  if (spec_.format == "fire" && start_slot_ >= 0 && end_slot_ >= 0) {
    auto at = [&](int slot) { return record.row.Get(static_cast<size_t>(slot)); };
    std::string line = fmt::format(">>> FIRE window=[{},{})", FormatSeconds(AsInt64(at(start_slot_)).value_or(0)),
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
      throw IoError(fmt::format("cannot write sink file '{}': {}", spec_.path, std::strerror(errno)));
    }
  }
  result_->Add(record);
}

void SinkOperator::ProcessWatermark(Watermark watermark, int /*input*/) { watermark_ = watermark.timestamp; }

void SinkOperator::Finish() {
  if (file_ != nullptr && std::fflush(file_) != 0) {
    throw IoError(fmt::format("cannot write sink file '{}': {}", spec_.path, std::strerror(errno)));
  }
}

void SinkOperator::Close() {
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
}

}  // namespace tidemark
