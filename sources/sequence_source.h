#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/job_spec.h"
#include "sources/source_reader.h"

namespace tidemark {

/// A bounded source of generated records, configured entirely from YAML (`source.type:
/// sequence`): each split yields `count` records with event times `start, start+step, ...` in the
/// timestamp field, plus the split's constant fields. A reader interleaves its splits
/// round-robin and paces them: its k-th record is due at `start_time + k * pacing_ms` of
/// processing time (0 = as fast as possible). Used for reproducible experiments such as the
/// two-split experiment.
///
/// Schema: the timestamp field (type timestamp) first, then the constant fields in the order
/// of the first split. Every split must list the same fields with the same types.
/// Immutable; shared by the subtasks' readers.
class SequenceSource : public Source {
 public:
  /// Throws InvalidArgument when splits disagree on their fields, a count is negative, or ids
  /// repeat.
  explicit SequenceSource(const SourceSpec& spec);

  const Schema& schema() const override { return schema_; }
  std::vector<std::unique_ptr<SourceSplit>> CreateSplits() const override;
  std::unique_ptr<SourceReader> CreateReader(int subtask_index) const override;
  /// A split with its position (records already emitted); its reader snapshots its unfinished
  /// splits in the order its round-robin reads them next. Pacing restarts with the restored
  /// reader (the records and their timestamps are those of the uninterrupted run).
  std::unique_ptr<SourceSplit> RestoreSplit(StateReader& reader) const override;

  const SourceSpec& spec() const { return spec_; }

 private:
  SourceSpec spec_;
  Schema schema_;
};

}  // namespace tidemark
