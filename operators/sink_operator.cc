#include "operators/sink_operator.h"

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
      subtask_index_(subtask_index) {
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
    std::error_code ec;
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) {
      std::filesystem::create_directories(parent, ec);
    }
    file_ = std::fopen(path.c_str(), "w");
    if (file_ == nullptr) {
      throw IoError(fmt::format("cannot open sink file '{}': {}", path, std::strerror(errno)));
    }
  }
}

std::string SinkOperator::Format(const StreamRecord& record) const {
  if (spec_.format == "fire" && start_slot_ >= 0 && end_slot_ >= 0) {
    auto at = [&](int slot) { return record.row[static_cast<size_t>(slot)]; };
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
  return schema_.RowToJson(record.row);
}

void SinkOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  if (spec_.type == "print") {
    resources_.WriteLine(Format(record));
  } else if (file_ != nullptr) {
    std::string line = schema_.RowToJson(record.row);
    line.push_back('\n');
    if (std::fwrite(line.data(), 1, line.size(), file_) != line.size()) {
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
