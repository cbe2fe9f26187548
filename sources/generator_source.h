#pragma once

#include <cstdint>
#include <libdivide.h>
#include <memory>

#include "config/job_spec.h"
#include "runtime/core/checksum.h"
#include "sources/source_reader.h"

namespace tidemark {

/// Deterministic record generator shared by the `generator` source and the benchmark baselines
/// (tools/bench), so both see exactly the same records. Record `i` (0-based, over all subtasks):
/// `key = Mix(i) % keys`, `value = uniform [0, 1) from Mix(i ^ salt)`, `ts = i * step_ms`.
struct GeneratedRecord {
  int64_t key = 0;
  double value = 0.0;
  int64_t ts = 0;
};

/// Makes record `i` for one `keys` / `step_ms`. The key's modulo divides by a multiply and shift
/// computed once (libdivide, exact for every 64-bit value) instead of a hardware division per
/// record, which on some cores costs more than the rest of the record. Immutable; thread-safe.
class RecordGenerator {
 public:
  /// `keys` >= 1 (the source checks it).
  RecordGenerator(int64_t keys, int64_t step_ms)
      : keys_(static_cast<uint64_t>(keys)),
        divide_by_keys_(static_cast<uint64_t>(keys)),
        step_ms_(step_ms) {}

  GeneratedRecord operator()(int64_t i) const {
    const auto u = static_cast<uint64_t>(i);
    const uint64_t mixed = Mix64(u);
    GeneratedRecord r;
    r.key = static_cast<int64_t>(mixed - (mixed / divide_by_keys_) * keys_);
    r.value = static_cast<double>(Mix64(u ^ 0x5DEECE66DULL) >> 11) * 0x1.0p-53;
    r.ts = i * step_ms_;
    return r;
  }

 private:
  uint64_t keys_;
  libdivide::divider<uint64_t> divide_by_keys_;
  int64_t step_ms_;
};

/// Record `i` made with the plain `%`: the definition RecordGenerator must equal (tests).
inline GeneratedRecord GenerateRecord(int64_t i, int64_t keys, int64_t step_ms) {
  const auto u = static_cast<uint64_t>(i);
  GeneratedRecord r;
  r.key = static_cast<int64_t>(Mix64(u) % static_cast<uint64_t>(keys));
  r.value = static_cast<double>(Mix64(u ^ 0x5DEECE66DULL) >> 11) * 0x1.0p-53;
  r.ts = i * step_ms;
  return r;
}

/// The in-memory benchmark source (`source.type: generator`): `count` records over all subtasks
/// (subtask s of p makes records s, s + p, s + 2p, ...; so each subtask's timestamps ascend), with
/// no I/O and, on the chained path, no allocation per record (the reader reuses its row).
///
/// Schema: `key` int64, `value` double, `ts` timestamp (the record's event time, also given as the
/// source timestamp), then optionally `wm` int64 (`watermark-every: n`: set to `ts` on every n-th
/// record of a subtask, NULL otherwise — for `strategy: punctuated, watermark-field: wm`) and
/// `emit_ns` int64 (`latency-every: n`: the steady-clock time in ns at which every n-th record was
/// made, 0 otherwise — sinks measure source → sink latency from it).
///
/// `rate > 0` paces each subtask to that many records per second: a reader ahead of its schedule
/// returns `kNothingAvailable` with a wake-up at the due time (`SourceReaderContext::WakeUpAfter`,
/// sub-millisecond), so the task flushes what was read before it waits. Under the system clock a
/// batch is released once the records due within 20 µs are (at most a batch), like a network
/// source receiving bursts; `emit_ns` is the time a record is made. Under the virtual clock gaps
/// below 2 ms are slept on the task thread (no processing time passes) and longer ones wait for a
/// processing-time wake-up. Immutable; shared by the subtasks' readers.
class GeneratorSource : public Source {
 public:
  /// Throws InvalidArgument for keys < 1 or count < 0.
  explicit GeneratorSource(const SourceSpec& spec);

  const Schema& schema() const override { return schema_; }
  /// One split per reader is not needed: readers partition the index space by subtask.
  std::vector<std::unique_ptr<SourceSplit>> CreateSplits() const override { return {}; }
  std::unique_ptr<SourceReader> CreateReader(int subtask_index) const override;
  /// A reader's snapshot is its one implicit split `generator-<subtask>` with the next record
  /// index and the count emitted (finished or not); restoring it into a reader of the same
  /// subtask and parallelism continues the same records. Rate pacing restarts.
  std::unique_ptr<SourceSplit> RestoreSplit(StateReader& reader) const override;

  const SourceSpec& spec() const { return spec_; }

 private:
  SourceSpec spec_;
  Schema schema_;
};

}  // namespace tidemark
