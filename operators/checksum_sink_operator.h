#pragma once

#include <array>
#include <deque>
#include <memory>
#include <vector>

#include "runtime/graph/job_resources.h"
#include "runtime/task/stream_operator.h"

namespace tidemark {

/// The benchmark sink (`sink.type: checksum`): counts records and sums their order-independent
/// hashes (runtime/core/checksum.h) over every field except the instrumentation fields `wm` and
/// `emit_ns`; when the input has `emit_ns`, a non-zero value is a sampled record's source emit
/// time (steady clock, ns) and the sink keeps `now - emit_ns` as a latency sample.
/// Everything is kept in the subtask and added to the SinkResult once, at `Finish`, so the hot
/// path touches no shared cache line. Mailbox thread only; no allocation per record (samples
/// grow a vector).
class ChecksumSinkOperator : public StreamOperator {
 public:
  ChecksumSinkOperator(const Schema& schema, std::shared_ptr<SinkResult> result);

  void ProcessElement(StreamRecord& record, int input) override;
  /// The same per record, in one loop (the checksum is a sum: the result is exactly the
  /// per-record one).
  void ProcessBatch(RecordBatch& batch, int input) override;
  void ProcessWatermark(Watermark, int) override {}
  void ProcessWatermarkStatus(WatermarkStatus, int) override {}
  void Finish() override;

 private:
  /// One record's hash (checksum.h's `FieldHash` of every checksummed field, inline).
  uint64_t Hash(const Row& row) const;
  /// The sum of `Hash` over `batch` when every checksummed field is one of `N` fixed-width ones
  /// (no strings): the field loop unrolled and without a branch per field; a row with a NULL
  /// takes `Hash`.
  template <size_t N>
  uint64_t HashFixedBatch(const RecordBatch& batch) const;
  /// The sum of `Hash` over `batch` when it has string fields too (at most kMaxUnrolledFields
  /// fixed-width and as many string fields): one loop over the rows, the strings hashed inline
  /// (checksum.h's `StringHash`); a row with a NULL takes `Hash`. `F` fixed-width and `S` string
  /// fields, unrolled; kAnyCount: as many as the schema has, in a loop.
  template <size_t F, size_t S>
  uint64_t HashMixedBatch(const RecordBatch& batch) const;
  static constexpr size_t kAnyCount = ~size_t{0};
  /// Most fixed-width fields `HashFixedBatch` is instantiated for.
  static constexpr size_t kMaxUnrolledFields = 8;
  using HashFixedBatchFn = uint64_t (ChecksumSinkOperator::*)(const RecordBatch&) const;
  void SampleLatency(const Row& row);

  /// A checksummed field, compiled from the schema: where it is, how its type hashes (see
  /// checksum.h's `CellHashBits`) and its position's salt (checksum.h's `FieldHash`).
  enum class Kind : uint8_t { kBits, kDouble, kString };
  struct Field {
    size_t slot = 0;
    Kind kind = Kind::kBits;
    uint64_t salt = 0;
  };

  std::vector<size_t> slots_;  // checksummed fields, in schema order
  std::vector<Field> fields_;  // the same, compiled
  // The fixed-width fields and the string fields apart: a row without NULLs hashes its fixed
  // fields in a loop with no NULL check and no call, then its strings.
  std::vector<Field> fixed_fields_;
  std::vector<Field> string_fields_;
  // `fixed_fields_` as plain arrays for HashFixedBatch: slot, salt, and the sign bit for a double
  // (cleared when the rest of the bits are 0: -0.0 hashes as 0.0), 0 for other types.
  std::array<size_t, kMaxUnrolledFields> unrolled_slot_{};
  std::array<uint64_t, kMaxUnrolledFields> unrolled_salt_{};
  std::array<uint64_t, kMaxUnrolledFields> unrolled_zero_sign_{};
  // `string_fields_` as plain arrays for HashMixedBatch: slot and salt.
  std::array<size_t, kMaxUnrolledFields> string_slot_{};
  std::array<uint64_t, kMaxUnrolledFields> string_salt_{};
  /// `HashFixedBatch<fixed_fields_.size()>` when it applies (no strings, at most
  /// kMaxUnrolledFields fields), `HashMixedBatch` with strings (at most kMaxUnrolledFields of
  /// each), else null (ProcessBatch calls `Hash` per row).
  HashFixedBatchFn hash_fixed_batch_ = nullptr;
  int latency_slot_ = -1;
  std::shared_ptr<SinkResult> result_;
  int64_t count_ = 0;
  uint64_t checksum_ = 0;
  /// Latency samples (ns) in the order they arrived. A deque: growing it never copies the
  /// samples taken so far or faults in a doubled buffer at once (a multi-ms stall of the sink
  /// thread at a million samples, which the samples behind it would measure).
  std::deque<int64_t> latency_ns_;
  bool published_ = false;
};

}  // namespace tidemark
