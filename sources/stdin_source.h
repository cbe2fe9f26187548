#pragma once

#include <memory>
#include <vector>

#include "config/job_spec.h"
#include "sources/source_reader.h"

namespace tidemark {

/// `source.type: stdin`: JSON Lines or CSV read from the process's standard input, so that
/// `cat flights.csv | tidemark run job.yaml` works. The keys and formats are the file source's
/// (`format`, `schema`, `csv-header`, `columns`, `csv-delimiter`, `max-line-bytes`, `errors`;
/// `spec.file`, path unused); the rules of a line are the same (sources/file_source.h): bad lines
/// are counted on side output `errors` (split `<stdin>`, 1-based line, byte offset).
///
/// One split, `<stdin>`, read by subtask 0 (other subtasks read nothing). Bounded: the end of the
/// input ends the split, and its watermark goes to the end of time as a bounded file's does. A
/// CSV header is checked against the schema when it arrives (there is nothing to read when the
/// job is compiled): a mismatch fails the job, naming the header's and the schema's names.
/// Each poll blocks in read(2) until a line (or the end) arrives, as a pipe's reader does; while
/// it waits the task does nothing else (processing-time timers wait too).
///
/// Not restartable: stdin cannot be read again from an offset, so a job with `checkpointing:` and
/// a stdin source is refused when compiled, and a snapshot of the reader throws. Flink has no
/// stdin connector (its `print` is the matching sink side); the Flink SQL export says so.
/// Immutable after construction; shared by the subtasks' readers.
class StdinSource : public Source {
 public:
  /// Throws InvalidArgument for a bad schema or a delimiter that is not one character.
  explicit StdinSource(const SourceSpec& spec);

  const Schema& schema() const override { return schema_; }
  std::vector<std::unique_ptr<SourceSplit>> CreateSplits() const override;
  std::unique_ptr<SourceReader> CreateReader(int subtask_index) const override;
  const SourceSpec& spec() const { return spec_; }

  /// The id of its one split, also the `split` of its errors.
  static constexpr const char* kSplitId = "<stdin>";

 private:
  SourceSpec spec_;
  Schema schema_;
};

}  // namespace tidemark
