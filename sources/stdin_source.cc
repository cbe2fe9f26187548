#include "sources/stdin_source.h"

#include <unistd.h>

#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "runtime/core/stream_record.h"
#include "sources/text_input.h"

namespace tidemark {
namespace {

class StdinSplit : public SourceSplit {
 public:
  std::string SplitId() const override { return StdinSource::kSplitId; }
  void WriteTo(StateWriter& /*writer*/) const override {
    throw Error("a stdin source cannot be checkpointed: its input cannot be read again");
  }
};

class StdinReader : public SplitReaderBase {
 public:
  explicit StdinReader(const StdinSource& source)
      : source_(source),
        csv_(source.spec().file.format == "csv"),
        ts_slot_(FirstTimestampSlot(source.schema())),
        decoder_(csv_ ? LineDecoder::Format::kCsv : LineDecoder::Format::kJson, source.schema(),
                 source.spec().file.csv_delimiter[0]) {}

  void Start(SourceReaderContext& /*context*/) override {}
  void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) override {
    assigned_ = assigned_ || !splits.empty();
  }

  InputStatus PollNext(ReaderOutput& output) override {
    if (!assigned_ || done_) {
      return no_more_splits() ? InputStatus::kEndOfInput : InputStatus::kNothingAvailable;
    }
    if (!lines_) {
      lines_ = std::make_unique<LineReader>(STDIN_FILENO, StdinSource::kSplitId,
                                            source_.spec().file.max_line_bytes);
      split_output_ = &output.CreateOutputForSplit(StdinSource::kSplitId);
    }
    const FileSourceSpec& f = source_.spec().file;
    for (;;) {
      const int64_t line_start = lines_->bytes_read();
      const LineReader::Result r = lines_->Next(line_);
      if (r == LineReader::Result::kEnd) {
        done_ = true;
        output.ReleaseOutputForSplit(StdinSource::kSplitId);
        return no_more_splits() ? InputStatus::kEndOfInput : InputStatus::kNothingAvailable;
      }
      const int64_t line_no = lines_->line_number();
      if (r == LineReader::Result::kTooLong) {
        output.EmitError(
            SourceError{StdinSource::kSplitId, line_no,
                        fmt::format("line longer than max-line-bytes ({} bytes)", f.max_line_bytes),
                        line_, line_start});
        return InputStatus::kMoreAvailable;
      }
      if (csv_ && line_no == 1 && f.csv_header) {
        try {
          columns_ = CsvColumnsOfHeader(line_, f.csv_delimiter[0], source_.schema(),
                                        f.columns == "by-name", StdinSource::kSplitId);
        } catch (const InvalidArgument& e) {
          throw Error(fmt::format("source stdin: {}", e.what()));
        }
        decoder_.UseCsvColumns(&columns_);
        continue;
      }
      // As the file source: an empty line is no record (for JSON, one of spaces and tabs too).
      if (csv_ ? line_.empty() : line_.find_first_not_of(" \t") == std::string::npos) {
        continue;
      }
      std::string reason;
      if (!decoder_.Decode(line_, row_, &reason)) {
        output.EmitError(SourceError{StdinSource::kSplitId, line_no, reason, line_, line_start});
        return InputStatus::kMoreAvailable;
      }
      position_ = {line_no, line_start};
      int64_t ts = 0;
      if (Int64Cell(row_, ts_slot_, &ts)) {
        split_output_->CollectReusing(row_, ts);
      } else {
        split_output_->Collect(Row(row_));
      }
      ++records_;
      return InputStatus::kMoreAvailable;
    }
  }

  std::vector<std::unique_ptr<SourceSplit>> SnapshotState(int64_t /*checkpoint_id*/) override {
    throw Error("a stdin source cannot be checkpointed: its input cannot be read again");
  }

  void CollectMetrics(MetricsWriter& out) const override {
    if (lines_) {
      const std::string prefix = fmt::format("split.{}.", StdinSource::kSplitId);
      out.Gauge(prefix + "records", records_);
      out.Gauge(prefix + "lines", lines_->line_number());
      out.Gauge(prefix + "bytes", lines_->bytes_read());
    }
  }

  RecordPosition CurrentRecordPosition() override { return position_; }

 private:
  const StdinSource& source_;
  const bool csv_;
  const int ts_slot_;
  LineDecoder decoder_;
  CsvColumns columns_;
  std::unique_ptr<LineReader> lines_;
  SourceOutput* split_output_ = nullptr;
  std::string line_;
  Row row_;
  RecordPosition position_;
  int64_t records_ = 0;
  bool assigned_ = false;
  bool done_ = false;
};

}  // namespace

StdinSource::StdinSource(const SourceSpec& spec)
    : spec_(spec), schema_(SchemaFromSpec(spec.file.schema)) {
  CheckLineFormatKeys(spec_.file);
}

std::vector<std::unique_ptr<SourceSplit>> StdinSource::CreateSplits() const {
  std::vector<std::unique_ptr<SourceSplit>> out;
  out.push_back(std::make_unique<StdinSplit>());
  return out;
}

std::unique_ptr<SourceReader> StdinSource::CreateReader(int /*subtask_index*/) const {
  return std::make_unique<StdinReader>(*this);
}

}  // namespace tidemark
