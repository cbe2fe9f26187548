#include "sources/file_source.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fnmatch.h>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "runtime/core/errors.h"
#include "runtime/core/non_recoverable_error.h"
#include "sources/text_input.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kSplitSection = "file-split";
// Version 2 added the file's size when its reading began (FilePosition::size); version 1 states
// restore with it unknown.
constexpr uint32_t kSplitVersion = 2;
constexpr int64_t kMaxRangesPerFile = 256;

// One file, or the byte range [start, end) of one (the lines that start in it). `offset` and
// `line` are the read position: the next line starts at byte `offset` and is line `line + 1`;
// `line` is -1 while unknown (a byte range counts the lines before it only when an error needs
// its line number: counting eagerly would read every range's prefix of the file).
// A byte-range split that was never read has `aligned == false`: its first line is the first
// one starting at or after `start`, found when it is opened.
struct FilePosition {
  std::string path;
  int64_t start = 0;
  int64_t end = -1;  // -1: to the end of the file
  int64_t offset = 0;
  int64_t line = 0;
  int64_t records = 0;
  bool aligned = true;
  // The file's size in bytes when the split's reading began; -1 until then. A restored split
  // whose file is smaller now was truncated or replaced since: its input is gone.
  int64_t size = -1;
};

class FileSplit : public SourceSplit {
 public:
  explicit FileSplit(FilePosition position) : position_(std::move(position)) {}
  std::string SplitId() const override { return IdOf(position_); }
  const FilePosition& position() const { return position_; }

  static std::string IdOf(const FilePosition& p) {
    return p.start == 0 && p.end < 0 ? p.path : fmt::format("{}@{}", p.path, p.start);
  }

  void WriteTo(StateWriter& w) const override {
    w.BeginSection(kSplitSection, kSplitVersion);
    w.WriteString(position_.path);
    w.WriteI64(position_.start);
    w.WriteI64(position_.end);
    w.WriteI64(position_.offset);
    w.WriteI64(position_.line);
    w.WriteI64(position_.records);
    w.WriteBool(position_.aligned);
    w.WriteI64(position_.size);
    w.EndSection();
  }

 private:
  FilePosition position_;
};

class FileReader : public SplitReaderBase {
 public:
  explicit FileReader(const FileSource& source)
      : source_(source),
        csv_(source.spec().file.format == "csv"),
        delimiter_(source.spec().file.csv_delimiter.empty() ? ','
                                                            : source.spec().file.csv_delimiter[0]),
        ts_slot_(FirstTimestampSlot(source.schema())),
        decoder_(csv_ ? LineDecoder::Format::kCsv : LineDecoder::Format::kJson, source.schema(),
                 delimiter_) {}

  void Start(SourceReaderContext& context) override {
    context_ = &context;
    start_time_ = context.processing_time().GetCurrentProcessingTime();
  }

  void AddSplits(std::vector<std::unique_ptr<SourceSplit>> splits) override {
    for (auto& s : splits) {
      const auto* split = dynamic_cast<const FileSplit*>(s.get());
      if (split == nullptr) {
        throw tidemark::Error(fmt::format("split {} is not a file split", s->SplitId()));
      }
      State st;
      st.id = split->SplitId();
      st.path = split->position().path;
      st.split = split->position();
      st.records = st.split.records;
      // A restored split's file that `path` no longer lists (the job's path changed) has no
      // columns resolved at construction: by name, its own header is read when it opens.
      const size_t file = source_.FileIndex(st.path);
      st.columns =
          file == source_.files().size() && ColumnsByName() ? nullptr : &source_.csv_columns(file);
      // The splits of one file form one queue (the byte ranges of a file; a whole file is a queue
      // of one), in the order the files came.
      auto [q, added] = queue_of_path_.try_emplace(st.path, queues_.size());
      if (added) {
        queues_.emplace_back();
      }
      st.queue = q->second;
      index_of_id_[st.id] = states_.size();
      queues_[st.queue].splits.push_back(states_.size());
      states_.push_back(std::move(st));
    }
    // A file's ranges are read in file order, whatever order they came in; a range already begun
    // keeps its place.
    for (FileQueue& q : queues_) {
      size_t from = q.current;
      if (from < q.splits.size() && states_[q.splits[from]].output != nullptr) {
        ++from;
      }
      std::sort(q.splits.begin() + static_cast<std::ptrdiff_t>(std::min(from, q.splits.size())),
                q.splits.end(), [this](size_t a, size_t b) {
                  return states_[a].split.start < states_[b].split.start;
                });
    }
  }

  bool IsSplitQueued(const std::string& split_id) const override {
    auto it = index_of_id_.find(split_id);
    if (it == index_of_id_.end()) {
      return false;
    }
    const FileQueue& q = queues_[states_[it->second].queue];
    return q.current < q.splits.size() && q.splits[q.current] != it->second;
  }

  std::vector<std::unique_ptr<SourceSplit>> SnapshotState(int64_t /*checkpoint_id*/) override {
    // Starting with the file whose turn is next, so a restored reader (which starts with its
    // first file) keeps the round-robin order of an uninterrupted read; within a file, the range
    // being read (at its position) before the later ones (not begun).
    std::vector<std::unique_ptr<SourceSplit>> out;
    for (size_t k = 0; k < queues_.size(); ++k) {
      const FileQueue& q = queues_[(next_ + k) % queues_.size()];
      for (size_t i = q.current; i < q.splits.size(); ++i) {
        const State& st = states_[q.splits[i]];
        FilePosition p = st.split;
        if (st.lines) {
          p.offset = st.lines->bytes_read();
          p.line = st.line_base < 0 ? -1 : st.line_base + st.lines->line_number();
          p.aligned = true;
        }
        p.records = st.records;
        out.push_back(std::make_unique<FileSplit>(std::move(p)));
      }
    }
    return out;
  }

  InputStatus PollNext(ReaderOutput& output) override {
    if (!opened_) {
      // Every file is opened before any record is emitted (an unreadable one fails the job
      // first), and the split each file begins with takes part in the watermark from now on.
      opened_ = true;
      for (FileQueue& q : queues_) {
        if (q.current < q.splits.size()) {
          Begin(output, states_[q.splits[q.current]]);
        }
      }
    }
    const int64_t pacing = source_.spec().pacing_ms;
    if (pacing > 0) {
      const Timestamp due = start_time_ + emitted_total_ * pacing;
      if (context_->processing_time().GetCurrentProcessingTime() < due) {
        context_->WakeUpAt(due);
        return InputStatus::kNothingAvailable;
      }
    }
    // One emitted element (record or error) per poll, the files taking turns; empty lines and
    // headers do not count.
    const size_t n = queues_.size();
    bool any_paused = false;  // a split paused for watermark alignment is not read until resumed
    for (size_t tries = 0; tries < n;) {
      FileQueue& q = queues_[next_];
      if (q.current == q.splits.size()) {
        next_ = (next_ + 1) % n;
        ++tries;
        continue;
      }
      State& st = states_[q.splits[q.current]];
      if (IsPaused(st.id)) {
        any_paused = true;
        next_ = (next_ + 1) % n;
        ++tries;
        continue;
      }
      if (!st.lines) {
        Begin(output, st);  // the range after one that ended, or a file added after the first poll
      }
      std::string_view line;  // into the LineReader's buffer, padded (DecodeLent)
      const int64_t line_start = st.lines->bytes_read();
      const LineReader::Result r = st.lines->Next(line);
      if (r == LineReader::Result::kEnd) {
        st.output = nullptr;
        st.final_lines = st.lines->line_number();  // the reader goes; its totals stay reported
        st.final_bytes = st.lines->bytes_read();
        st.lines.reset();
        output.ReleaseOutputForSplit(st.id);
        if (++q.current < q.splits.size()) {
          continue;  // the file's next range begins in the same turn
        }
        next_ = (next_ + 1) % n;
        ++tries;
        continue;
      }
      const int64_t line_no = st.lines->line_number();  // counted from where the reader began
      if (r == LineReader::Result::kTooLong) {
        Error(output, st, line_no, line_start,
              fmt::format("line longer than max-line-bytes ({} bytes)",
                          source_.spec().file.max_line_bytes),
              std::string(line));
        return InputStatus::kMoreAvailable;
      }
      // An empty line is no record. A JSON line of only spaces and tabs holds no value either;
      // a CSV one is fields (tab- or space-delimited: empty ones, NULLs), decoded or reported.
      // (A JSON line almost always starts with its token: no search through it for that.)
      if (csv_ ? line.empty()
               : line.empty() || ((line[0] == ' ' || line[0] == '\t') &&
                                  line.find_first_not_of(" \t") == std::string::npos)) {
        continue;
      }
      if (csv_ && st.line_base == 0 && line_no == 1 && source_.spec().file.csv_header) {
        continue;
      }
      std::string reason;
      if (csv_) {
        decoder_.UseCsvColumns(st.columns);
      }
      if (!decoder_.DecodeLent(line, st.lines->Ahead(), row_, &reason)) {
        Error(output, st, line_no, line_start, reason, std::string(line));
        return InputStatus::kMoreAvailable;
      }
      // row_ is lent downstream and comes back with its buffers when nothing kept it.
      int64_t ts = 0;
      current_ = static_cast<size_t>(&st - states_.data());  // for CurrentRecordPosition
      current_line_no_ = line_no;
      current_line_start_ = line_start;
      if (Int64Cell(row_, ts_slot_, &ts)) {
        st.output->CollectReusing(row_, ts);
      } else {
        st.output->Collect(Row(row_));
      }
      ++st.records;
      ++emitted_total_;
      next_ = next_ + 1 < n ? next_ + 1 : 0;  // no division per record
      return InputStatus::kMoreAvailable;
    }
    return no_more_splits() && !any_paused ? InputStatus::kEndOfInput
                                           : InputStatus::kNothingAvailable;
  }

 private:
  struct State {
    std::string id;      ///< the split id: the path, or path@start for a byte range
    std::string path;    ///< the file (errors name it)
    FilePosition split;  ///< where reading starts (a restored split: where it stopped)
    std::unique_ptr<LineReader> lines;
    int64_t records = 0;
    int64_t line_base = 0;    ///< lines before where `lines` began; -1 until counted
    int64_t final_lines = 0;  ///< lines and bytes of the file once `lines` is gone (end of file)
    int64_t final_bytes = 0;
    SourceOutput* output = nullptr;  ///< set while the split is being read
    size_t queue = 0;                ///< its file's entry in `queues_`
    /// csv: where its fields go (FileSource::csv_columns); null until `Open` reads the header of
    /// a by-name split's file that `path` does not list (a restored split)
    const CsvColumns* columns = nullptr;
  };

  bool ColumnsByName() const {
    const FileSourceSpec& f = source_.spec().file;
    return f.format == "csv" && f.csv_header && f.columns == "by-name";
  }

  // The columns of a by-name file outside the source's list, from its own header (as the
  // FileSource's constructor resolves the listed files'), once per file; stable addresses.
  const CsvColumns& UnlistedColumns(const std::string& path) {
    if (const auto it = unlisted_columns_.find(path); it != unlisted_columns_.end()) {
      return it->second;
    }
    return unlisted_columns_.emplace(path, source_.HeaderColumns(path)).first->second;
  }

  // The splits of one file, read one after another (Flink's FileSource reader holds one split
  // at a time): `splits` (indexes into `states_`) in file order, `current` the one being read or
  // next; the file is done when `current == splits.size()`.
  struct FileQueue {
    std::vector<size_t> splits;
    size_t current = 0;
  };

  void CollectMetrics(MetricsWriter& out) const override {
    for (const State& st : states_) {
      out.Gauge("split." + st.id + ".records", st.records);
      out.Gauge("split." + st.id + ".lines", st.lines ? st.lines->line_number() : st.final_lines);
      out.Gauge("split." + st.id + ".bytes", st.lines ? st.lines->bytes_read() : st.final_bytes);
    }
  }

  // The split's reading begins: its file is opened and its output (watermark generator) created.
  void Begin(ReaderOutput& output, State& st) {
    Open(st);
    st.output = &output.CreateOutputForSplit(st.id);
  }

  // Opens the split's file at its position. A byte range not read yet starts at the first line
  // that begins at or after its start: the line running across `start` belongs to the split
  // before (Flink's FileSource reads a block's records the same way).
  void Open(State& st) {
    const int64_t max_line = source_.spec().file.max_line_bytes;
    FilePosition& p = st.split;
    if (!p.aligned) {
      if (p.start > 0) {
        LineReader probe(p.path, max_line, p.start - 1, 0);
        std::string skipped;
        (void)probe.Next(skipped);  // the rest of the line through its newline
        p.offset = probe.bytes_read();
        p.line = -1;  // counted when an error needs it
      } else {
        p.offset = 0;
        p.line = 0;
      }
      p.aligned = true;
    }
    st.line_base = p.line;
    st.lines = std::make_unique<LineReader>(p.path, max_line, p.offset, 0, p.end);
    if (st.columns == nullptr) {
      st.columns = &UnlistedColumns(p.path);
    }
    const int64_t size = st.lines->size_at_open();
    if (p.size < 0) {
      p.size = size;
    } else if (size < p.size) {
      // Restored: the file is smaller than when this split's reading began, so input the
      // checkpoint counted as still to come is gone (a file that grew is read on).
      throw NonRecoverableError(
          fmt::format("input file '{}' has {} bytes, fewer than the {} it had when it was "
                      "first read: it was truncated or replaced since, and the rest of its "
                      "input is gone",
                      p.path, size, p.size));
    }
  }

  RecordPosition CurrentRecordPosition() override {
    if (current_ >= states_.size()) {
      return {};
    }
    return {FileLine(states_[current_], current_line_no_, current_line_start_),
            current_line_start_};
  }

  // The 1-based line in the file of the split's `line_no`-th line (counted from where the split's
  // reader began), which starts at byte `line_start`.
  static int64_t FileLine(State& st, int64_t line_no, int64_t line_start) {
    if (st.line_base < 0) {
      st.line_base = CountNewlines(st.path, line_start) - (line_no - 1);
    }
    return st.line_base + line_no;
  }

  // `line_no` counts from where the split's reader began, `line_start` is the line's byte offset.
  void Error(ReaderOutput& output, State& st, int64_t line_no, int64_t line_start,
             std::string reason, const std::string& text) {
    output.EmitError(SourceError{st.path, FileLine(st, line_no, line_start), std::move(reason),
                                 text, line_start});
    ++emitted_total_;  // an error line costs pacing time like a record
    next_ = (next_ + 1) % queues_.size();
  }

  const FileSource& source_;
  std::map<std::string, CsvColumns> unlisted_columns_;  // UnlistedColumns' (node-stable)
  const bool csv_;
  const char delimiter_;
  const int ts_slot_;
  LineDecoder decoder_;
  Row row_;  // the record being built; reused across lines
  // The record being emitted (CurrentRecordPosition): its split's index in `states_` (none:
  // past the end), line (counted as `Error`'s `line_no`) and byte offset.
  size_t current_ = SIZE_MAX;
  int64_t current_line_no_ = 0;
  int64_t current_line_start_ = -1;
  SourceReaderContext* context_ = nullptr;
  std::vector<State> states_;      // every split, in the order added
  std::vector<FileQueue> queues_;  // one per file, taking turns
  std::unordered_map<std::string, size_t> queue_of_path_;
  std::unordered_map<std::string, size_t> index_of_id_;  // split id -> `states_` index
  size_t next_ = 0;                                      // the file whose turn it is
  int64_t emitted_total_ = 0;
  Timestamp start_time_ = 0;
  bool opened_ = false;
};

bool HasGlob(const std::string& s) {
  return s.find_first_of("*?[") != std::string::npos;
}

}  // namespace

std::vector<std::string> FileSource::ListFiles(const std::string& path) {
  std::vector<std::string> out;
  std::error_code ec;
  const fs::path p(path);
  if (HasGlob(p.filename().string())) {
    const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
    if (!fs::is_directory(dir, ec)) {
      throw KeyedInvalidArgument("path",
                                 fmt::format("directory '{}' does not exist", dir.string()));
    }
    const std::string pattern = p.filename().string();
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (!entry.is_directory(ec) &&
          fnmatch(pattern.c_str(), entry.path().filename().c_str(), FNM_PERIOD) == 0) {
        CheckRegularFile(entry.path().string());  // a FIFO or device among them is an error
        out.push_back((p.has_parent_path() ? entry.path() : entry.path().filename()).string());
      }
    }
  } else if (fs::is_directory(p, ec)) {
    for (const auto& entry : fs::directory_iterator(p, ec)) {
      if (!entry.is_directory(ec) && entry.path().filename().string().rfind('.', 0) != 0) {
        CheckRegularFile(entry.path().string());
        out.push_back(entry.path().string());
      }
    }
  } else if (fs::exists(p, ec)) {
    CheckRegularFile(path);
    out.push_back(path);
  } else {
    throw KeyedInvalidArgument("path", fmt::format("'{}' does not exist", path));
  }
  std::sort(out.begin(), out.end());
  return out;
}

FileSource::FileSource(const SourceSpec& spec)
    : spec_(spec), schema_(SchemaFromSpec(spec.file.schema)) {
  CheckLineFormatKeys(spec_.file);
  files_ = ListFiles(spec_.file.path);
  if (files_.empty()) {
    throw KeyedInvalidArgument("path", fmt::format("no file matches '{}'", spec_.file.path));
  }
  const FileSourceSpec& f = spec_.file;
  if (f.format == "csv" && f.csv_header) {
    // Each header once, here: a mismatch fails the job before it runs, at the job's key, and
    // the readers resolve no names per record.
    for (const std::string& file : files_) {
      CsvColumns columns = HeaderColumns(file);
      if (f.columns == "by-name") {
        csv_columns_.push_back(std::move(columns));
      }
    }
  }
}

CsvColumns FileSource::HeaderColumns(const std::string& file) const {
  const FileSourceSpec& f = spec_.file;
  LineReader lines(file, f.max_line_bytes);
  std::string header;
  const LineReader::Result r = lines.Next(header);
  if (r == LineReader::Result::kTooLong) {
    throw KeyedInvalidArgument(
        "csv-header", fmt::format("the header of '{}' is longer than max-line-bytes ({} bytes)",
                                  file, f.max_line_bytes));
  }
  if (r != LineReader::Result::kLine) {
    return {};
  }
  return CsvColumnsOfHeader(header, f.csv_delimiter[0], schema_, f.columns == "by-name", file);
}

const CsvColumns& FileSource::csv_columns(size_t file_index) const {
  static const CsvColumns kByPosition;
  return file_index < csv_columns_.size() ? csv_columns_[file_index] : kByPosition;
}

size_t FileSource::FileIndex(const std::string& file) const {
  auto it = std::lower_bound(files_.begin(), files_.end(), file);
  return it != files_.end() && *it == file ? static_cast<size_t>(it - files_.begin())
                                           : files_.size();
}

std::vector<std::unique_ptr<SourceSplit>> FileSource::CreateSplits() const {
  std::vector<std::unique_ptr<SourceSplit>> out;
  for (const std::string& f : files_) {
    std::error_code ec;
    const int64_t size =
        spec_.file.split_bytes > 0 ? static_cast<int64_t>(fs::file_size(f, ec)) : 0;
    if (ec || spec_.file.split_bytes <= 0 || size <= spec_.file.split_bytes) {
      FilePosition p;
      p.path = f;
      out.push_back(std::make_unique<FileSplit>(std::move(p)));
      continue;
    }
    // Byte ranges of equal size; each is aligned to a line start when its reader opens it.
    // At most kMaxRangesPerFile ranges: every split costs a snapshot entry and metrics gauges,
    // so split-bytes: 1 must not mean a split per byte.
    const int64_t n = std::min<int64_t>(
        (size + spec_.file.split_bytes - 1) / spec_.file.split_bytes, kMaxRangesPerFile);
    for (int64_t k = 0; k < n; ++k) {
      FilePosition p;
      p.path = f;
      p.start = size * k / n;
      p.end = k + 1 < n ? size * (k + 1) / n : -1;
      p.offset = p.start;
      p.aligned = k == 0;
      out.push_back(std::make_unique<FileSplit>(std::move(p)));
    }
  }
  return out;
}

std::unique_ptr<SourceSplit> FileSource::RestoreSplit(StateReader& r) const {
  const uint32_t version = r.BeginSection(kSplitSection, kSplitVersion);
  FilePosition p;
  p.path = r.ReadString();
  p.start = r.ReadI64();
  p.end = r.ReadI64();
  p.offset = r.ReadI64();
  p.line = r.ReadI64();
  p.records = r.ReadI64();
  p.aligned = r.ReadBool();
  if (version >= 2) {
    p.size = r.ReadI64();
  }
  r.EndSection();
  if (p.path.empty() || p.start < 0 || p.end < -1 || (p.end >= 0 && p.end < p.start) ||
      p.offset < 0 || p.line < -1 || p.records < 0 || p.size < -1) {
    throw StateCorrupt(
        fmt::format("file split '{}': impossible position (start {}, end {}, "
                    "offset {}, line {}, records {}, size {})",
                    p.path, p.start, p.end, p.offset, p.line, p.records, p.size));
  }
  return std::make_unique<FileSplit>(std::move(p));
}

std::unique_ptr<SourceReader> FileSource::CreateReader(int /*subtask_index*/) const {
  return std::make_unique<FileReader>(*this);
}

}  // namespace tidemark
