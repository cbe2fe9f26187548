#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/stream_record.h"

namespace tidemark {

/// The compact form in which a batch of records of one row layout crosses a channel: per record
/// its timestamp word followed by its fixed 8-byte slots, packed back to back in one word array;
/// a bit per record for `has_timestamp`; null words only when some record of the batch has a
/// NULL; the bytes of every string in one arena, a string slot holding its (offset << 32 | length)
/// in that arena. A record of n fixed-width fields crosses as 8 * (n + 1) bytes in the batch's
/// own contiguous memory (three fields: 32 bytes, half a cache line), where a vector of
/// `StreamRecord`s moved 48 bytes of record object plus its row's separate buffer, two lines
/// the consumer's core had to fetch and the producer's core then had to take back to refill.
/// Mirrors what Flink's network stack does with its serialized buffers, within one process.
///
/// Exact (but for fields `SetDroppedFields` leaves out): `Decode` gives back every cell (NULLs,
/// strings, int64 / timestamp / double bits), the timestamp and `has_timestamp` as `Append` saw
/// them. All records of a batch share one layout: `Accepts` says whether a record may join (the
/// writer starts a new batch when not).
///
/// Cost: `Append` and `Decode` are a loop over the fields (an 8-byte copy each, a string copy
/// for each string). `Clear` keeps the capacity, so a recycled batch allocates nothing.
/// Value type; not thread-safe: one thread at a time, handed over through a channel.
class WireBatch {
 public:
  /// Records in the batch.
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  /// The layout of every record in the batch (null while empty).
  const RowLayout* layout() const { return layout_; }

  /// Projection pushdown: the fields the consumer never reads, bit f for field f < 64 of a layout
  /// of exactly `width` fields (the consumer's input schema; 0: none). They are left out of
  /// batches whose layout has strings (those take the per-field path anyway, and a string left
  /// out saves its copy twice): such a field arrives NULL, its slot 0, no string bytes. Other
  /// layouts cross whole. Takes effect at the next batch (`Start`); kept by `Clear`.
  void SetDroppedFields(uint64_t mask, uint32_t width) {
    drop_mask_ = mask;
    drop_width_ = width;
  }
  /// Fields the current batch leaves out (see `SetDroppedFields`).
  uint64_t dropped_fields() const { return dropped_; }

  /// Empties the batch, keeping its buffers.
  void Clear() {
    count_ = 0;
    used_words_ = 0;
    nulls_.clear();
    has_nulls_ = false;
    arena_.clear();
  }
  /// Whether a record of `row`'s layout may be appended (the batch is empty or has that layout).
  bool Accepts(const Row& row) const { return count_ == 0 || row.layout_ptr() == layout_; }
  /// Appends a copy of `record`. Precondition: `Accepts(record.row)`.
  void Append(const StreamRecord& record) {
    const Row& row = record.row;
    if (count_ == 0) {
      Start(row.layout_ptr());
    }
    if (used_words_ + stride_ > words_.size()) [[unlikely]] {
      words_.resize(std::max<size_t>(words_.size() * 2, used_words_ + size_t{stride_} * 64));
    }
    if (count_ % 64 == 0) {
      has_ts_[count_ / 64] = 0;  // sized by Start / Grow
    }
    has_ts_[count_ / 64] |= static_cast<uint64_t>(record.has_timestamp) << (count_ % 64);
    uint64_t* w = words_.data() + used_words_;
    w[0] = static_cast<uint64_t>(record.timestamp);
    if (has_strings_ || has_nulls_ || row.AnyNull()) [[unlikely]] {
      AppendSlow(row, w + 1);
    } else {
      for (uint32_t f = 0; f < fields_; ++f) {
        w[1 + f] = row.GetBits(f);
      }
    }
    used_words_ += stride_;
    ++count_;
    if (count_ % 64 == 0 && count_ / 64 >= has_ts_.size()) [[unlikely]] {
      has_ts_.resize(has_ts_.size() * 2);
    }
  }
  /// Appends copies of `records[0..n)` as long as the batch holds fewer than `limit` records
  /// and the records have its layout; returns how many it appended, at least one when
  /// `Accepts(records[0]->row)` and `size() < limit` (the caller pushes a full batch, or one
  /// whose next record has another layout, and calls again for the rest).
  size_t AppendSome(StreamRecord* const* records, size_t n, size_t limit) {
    size_t i = 0;
    if (count_ == 0 && n > 0) {
      Start(records[0]->row.layout_ptr());
    }
    if (has_strings_ || has_nulls_) [[unlikely]] {
      for (; i < n && count_ < limit && Accepts(records[i]->row); ++i) {
        Append(*records[i]);
      }
      return i;
    }
    const size_t room = std::min(n, limit > count_ ? limit - count_ : 0);
    if (used_words_ + room * stride_ > words_.size()) [[unlikely]] {
      words_.resize(std::max(words_.size() * 2, used_words_ + room * stride_));
    }
    if ((count_ + room) / 64 >= has_ts_.size()) [[unlikely]] {
      has_ts_.resize((count_ + room) / 64 + 1);
    }
    // Locals, not members, in the loop: a store through `w` (uint64_t) may alias any size_t.
    uint64_t* w = words_.data() + used_words_;
    uint64_t* const ts_bits = has_ts_.data();
    const RowLayout* const layout = layout_;
    const uint32_t fields = fields_;
    const uint32_t stride = stride_;
    uint32_t count = count_;
    for (; i < room; ++i, w += stride) {
      const StreamRecord& r = *records[i];
      if (r.row.layout_ptr() != layout || r.row.AnyNull()) [[unlikely]] {
        break;  // another layout, or the first NULL: the general path below
      }
      const uint64_t bit = static_cast<uint64_t>(r.has_timestamp) << (count % 64);
      ts_bits[count / 64] = (count % 64 == 0 ? 0 : ts_bits[count / 64]) | bit;
      w[0] = static_cast<uint64_t>(r.timestamp);
      CopySlots(r.row, w + 1, fields);
      ++count;
    }
    used_words_ += static_cast<size_t>(count - count_) * stride;
    count_ = count;
    if (i < room && Accepts(records[i]->row)) {
      Append(*records[i]);  // a record with a NULL
      ++i;
    }
    return i;
  }
  /// Overwrites `out[j]` with record `begin + j` for `j < end - begin` (`end <= size()`), reusing
  /// each row's buffer when it already has the layout.
  void Decode(size_t begin, size_t end, StreamRecord* out) const {
    if (has_strings_ || has_nulls_) [[unlikely]] {
      for (size_t i = begin; i < end; ++i) {
        DecodeSlow(i, out[i - begin]);
      }
      return;
    }
    const uint64_t* w = words_.data() + begin * stride_;
    const uint64_t* const ts_bits = has_ts_.data();
    const RowLayout* const layout = layout_;
    const uint32_t fields = fields_;
    const uint32_t stride = stride_;
    for (size_t i = begin; i < end; ++i, w += stride) {
      StreamRecord& r = out[i - begin];
      if (r.row.layout_ptr() != layout) [[unlikely]] {
        r.row.Reset(layout);
      }
      r.timestamp = static_cast<Timestamp>(w[0]);
      r.has_timestamp = ((ts_bits[i / 64] >> (i % 64)) & 1) != 0;
      SetSlots(w + 1, r.row, fields);
    }
  }

  /// Bytes the batch's records occupy (words, timestamp bits, null words, string bytes): the
  /// bytes a consumer reads and a producer rewrites per batch.
  size_t WireBytes() const {
    return (used_words_ + (count_ + 63) / 64 + nulls_.size()) * sizeof(uint64_t) + arena_.size();
  }

 private:
  // The fixed slots of a row without NULLs and strings, out and in; unrolled for narrow rows.
  template <uint32_t N>
  static void CopySlotsN(const Row& row, uint64_t* w) {
    for (uint32_t f = 0; f < N; ++f) {
      w[f] = row.GetBits(f);
    }
  }
  static void CopySlots(const Row& row, uint64_t* w, uint32_t fields) {
    switch (fields) {
      case 1:
        return CopySlotsN<1>(row, w);
      case 2:
        return CopySlotsN<2>(row, w);
      case 3:
        return CopySlotsN<3>(row, w);
      case 4:
        return CopySlotsN<4>(row, w);
      default:
        for (uint32_t f = 0; f < fields; ++f) {
          w[f] = row.GetBits(f);
        }
    }
  }
  template <uint32_t N>
  static void SetSlotsN(const uint64_t* w, Row& row) {
    for (uint32_t f = 0; f < N; ++f) {
      row.SetBits(f, w[f]);
    }
  }
  static void SetSlots(const uint64_t* w, Row& row, uint32_t fields) {
    switch (fields) {
      case 1:
        return SetSlotsN<1>(w, row);
      case 2:
        return SetSlotsN<2>(w, row);
      case 3:
        return SetSlotsN<3>(w, row);
      case 4:
        return SetSlotsN<4>(w, row);
      default:
        for (uint32_t f = 0; f < fields; ++f) {
          row.SetBits(f, w[f]);
        }
    }
  }

  void Start(const RowLayout* layout);
  void AppendSlow(const Row& row, uint64_t* slots);
  void DecodeSlow(size_t i, StreamRecord& out) const;

  const RowLayout* layout_ = nullptr;
  uint32_t count_ = 0;
  uint32_t stride_ = 1;  ///< words per record: the timestamp and the fixed slots
  size_t used_words_ = 0;
  uint32_t fields_ = 0;
  uint32_t null_words_ = 0;  ///< null words per record of the layout
  bool has_strings_ = false;
  uint64_t drop_mask_ = 0;   ///< SetDroppedFields
  uint32_t drop_width_ = 0;  ///< SetDroppedFields
  uint64_t dropped_ = 0;     ///< fields this batch leaves out (Start)
  /// Bit f: field f (of the first 64) is a string (Start).
  uint64_t string_fields_ = 0;
  /// Per record: timestamp, then the fixed slots; `used_words_` of them in use (the rest is
  /// capacity, kept allocated and never cleared).
  std::vector<uint64_t> words_;
  std::vector<uint64_t> has_ts_ = std::vector<uint64_t>(1);  ///< bit i: record i has a timestamp
  /// Per record its null words once some record had a NULL (`has_nulls_`; zero words for the
  /// records before it), else empty.
  std::vector<uint64_t> nulls_;
  bool has_nulls_ = false;
  std::string arena_;  ///< string bytes
};

}  // namespace tidemark
