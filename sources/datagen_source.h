#pragma once

#include <memory>
#include <vector>

#include "config/job_spec.h"
#include "sources/source_reader.h"

namespace tidemark {

/// A seeded, paced, bounded generator of keyed events (`source.type: datagen`), for experiments
/// with out-of-order and idle inputs. `splits` splits (ids `split-0`, `split-1`, ...), each with
/// `count` records. Schema: `ts` (timestamp), `split` (int64), `key` (int64), `seq` (int64, the
/// record's index in its split), `value` (int64 in [0, 1000)).
///
/// Timing of record k of split s (all integers, so every platform gives the same records):
/// - processing time: `due = floor(k * 1000 / rate)` ms after the reader started, then pushed
///   back by every idle period of s that starts at or before it (an idle period [a, b) delays
///   every record due at or after a by b - a, so s emits nothing during it);
/// - event time: `ts = start + due + s * skew - delay`, where delay is 0 (`disorder: none`),
///   uniform in [0, max-out-of-orderness] (`uniform`), or exponential with mean
///   max-out-of-orderness / 4, cut at max-out-of-orderness (`exponential`);
/// - key and value: uniform, from split s's own SplitMix64 stream seeded with `seed` and s.
/// Same seed, same records, whatever the parallelism: a split's records do not depend on which
/// reader reads it. A reader emits its splits' records in order of `due` (ties: lower split
/// index first), waiting for each with `WakeUpAt`, and registers all its splits on its first
/// poll. Immutable; shared by the subtasks' readers.
class DatagenSource : public Source {
 public:
  /// Throws InvalidArgument for a non-positive rate, split or key count, a negative count or
  /// max-out-of-orderness, or an idle period naming a missing split or with end <= start.
  explicit DatagenSource(const SourceSpec& spec);

  const Schema& schema() const override { return schema_; }
  std::vector<std::unique_ptr<SourceSplit>> CreateSplits() const override;
  std::unique_ptr<SourceReader> CreateReader(int subtask_index) const override;
  /// A split with its position: records emitted, its random stream's state and the processing
  /// time its schedule counts from, so a restored split gives the same records at the same
  /// processing times (records overdue after a restart come at once).
  std::unique_ptr<SourceSplit> RestoreSplit(StateReader& reader) const override;

  const DatagenSourceSpec& spec() const { return spec_; }

 private:
  DatagenSourceSpec spec_;
  Schema schema_;
};

}  // namespace tidemark
