#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "sources/source_reader.h"
#include "sources/text_input.h"

namespace tidemark {

/// A bounded source reading JSON Lines or CSV files (`source.type: file`), one split per file.
/// `path` names a file, a directory (each regular file in it) or a glob in the last component
/// (`data/part-*.csv`); the files are listed once, at construction, sorted by path, and split i
/// is the i-th file (its split id is the path). With `split-bytes`, a larger file becomes
/// byte-range splits of about that size instead (ids `<path>@<start byte>`), each holding the
/// lines that start in its range, so several readers share one big file (Flink's FileSource
/// block splits); errors still name the file and its 1-based line.
///
/// Records follow the declared schema (`schema:` name → type). The first field of type
/// `timestamp`, when present and not NULL, is also the record's source timestamp.
///
/// Bad input never stops the job (unless the source's `errors: fail`, SourceOperatorOptions) and
/// is never dropped silently: a CSV line with the wrong number
/// of fields, a value that does not fit its type, invalid JSON, and a line longer than
/// `max_line_bytes` (skipped without being buffered) each become one row of side output `errors`
/// (SourceErrorSchema: file, 1-based line, byte offset, reason, text) and are counted by the
/// SourceOperator.
/// Empty lines are skipped. A file that cannot be opened or read fails the job (IoError naming the
/// file and the OS reason): a missing file means the input is not what the job was written for.
///
/// Reading order. A reader reads its files round-robin, one line per poll; with `pacing` its
/// k-th record is due at `start + k * pacing` of processing time. On its first poll it opens
/// every file (an unreadable one fails the job before any record) and registers the output
/// (watermark generator) of the split each file begins with, so a file not read yet holds the
/// watermark back. The byte ranges of one file are read one after another, in file order (range
/// k before range k + 2 when a reader holds both), as Flink's FileSource reader holds one split
/// at a time and asks its enumerator for the next when it finishes one: a range's output is
/// created when its reading begins and released at its end, and a range not begun has none
/// (`IsSplitQueued`), so it does not hold the watermark back. With one range per reader of a
/// time-ordered file, reader 0 would read the first half of the file's event time and reader 1
/// the second, and every window of the second half would wait for the first half to be read;
/// with several smaller ranges per reader the readers move through event time together.
/// A split's output is released at the end of its file or range.
///
/// Snapshots (Flink's `FileSourceSplit` with its `CheckpointedPosition`): a split carries the
/// byte offset and line number of the next line and its record count; `SnapshotState` gives the
/// unfinished splits, the range being read at its position after the last record emitted and a
/// file's later ranges not begun, so a restored reader continues in the same order.
/// Immutable after construction; shared by the subtasks' readers.
class FileSource : public Source {
 public:
  /// `spec.file.path` must already be resolved (see ResolveAgainstJobFile). Throws
  /// InvalidArgument for a bad schema, a delimiter that is not one character, a path that
  /// names no file, or (csv with `csv-header: true`) a file whose header does not name the
  /// schema's fields (CsvColumnsOfHeader; read once per file, here, so the error comes before
  /// the job runs and names the job's key). IoError when a file cannot be read.
  explicit FileSource(const SourceSpec& spec);

  const Schema& schema() const override { return schema_; }
  std::vector<std::unique_ptr<SourceSplit>> CreateSplits() const override;
  std::unique_ptr<SourceReader> CreateReader(int subtask_index) const override;
  /// A split written by its `WriteTo` (section `file-split` v1: path, byte range, the byte offset
  /// and line number of the next line, records emitted). Its reader continues at that line; the
  /// file is expected unchanged (as Flink's FileSource expects). Throws StateCorrupt for a
  /// truncated or impossible split.
  std::unique_ptr<SourceSplit> RestoreSplit(StateReader& reader) const override;

  const std::vector<std::string>& files() const { return files_; }
  /// csv with `columns: by-name`: where each field of the lines of `file` goes (CsvColumns,
  /// resolved from its header once, at construction); empty for by-position.
  const CsvColumns& csv_columns(size_t file_index) const;
  /// The index of `file` in files(); files().size() when `path` does not list it.
  size_t FileIndex(const std::string& file) const;
  /// csv with `csv-header: true`: `file`'s header read and resolved against the schema: by
  /// name, where each column goes; by position, checked to name the schema's fields in order
  /// (empty). Empty for an empty file. Throws IoError when the file cannot be read and
  /// KeyedInvalidArgument (key `csv-header`) for a header that does not fit. Any thread.
  CsvColumns HeaderColumns(const std::string& file) const;
  const SourceSpec& spec() const { return spec_; }

  /// The files `path` names (see class comment); empty when none. Throws InvalidArgument when
  /// `path` does not exist, IoError (CheckRegularFile) when it or a file it lists is not a
  /// regular file (a FIFO, /dev/zero): those could block the reader or never end.
  static std::vector<std::string> ListFiles(const std::string& path);

 private:
  SourceSpec spec_;
  Schema schema_;
  std::vector<std::string> files_;
  std::vector<CsvColumns> csv_columns_;  // per file; empty vector when none is by name
};

}  // namespace tidemark
