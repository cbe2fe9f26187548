#include "runtime/io/wire_batch.h"

#include <string_view>

namespace tidemark {

void WireBatch::Start(const RowLayout* layout) {
  layout_ = layout;
  fields_ = static_cast<uint32_t>(layout->size());
  stride_ = 1 + fields_;
  null_words_ = static_cast<uint32_t>(layout->fixed_words() - layout->size());
  has_strings_ = layout->has_strings();
  dropped_ = has_strings_ && fields_ == drop_width_ ? drop_mask_ : 0;
  string_fields_ = 0;
  for (uint32_t f = 0; f < fields_ && f < 64; ++f) {
    if (layout->type(f) == FieldType::kString) {
      string_fields_ |= uint64_t{1} << f;
    }
  }
}

void WireBatch::AppendSlow(const Row& row, uint64_t* slots) {
  const bool any_null = row.AnyNull();
  for (uint32_t f = 0; f < fields_; ++f) {
    // Slot bits of a NULL cell are not part of its value; a field left out (the consumer never
    // reads it) arrives NULL. Which of the first 64 fields are strings is known per batch
    // (Start), and a row without NULLs needs no check per field.
    const bool first64 = f < 64;
    if ((first64 && ((dropped_ >> f) & 1) != 0) || (any_null && row.IsNull(f))) {
      slots[f] = 0;
    } else if (first64 ? ((string_fields_ >> f) & 1) != 0 : row.type(f) == FieldType::kString) {
      const std::string_view s = row.GetString(f);
      slots[f] = (static_cast<uint64_t>(arena_.size()) << 32) | s.size();
      arena_.append(s);
    } else {
      slots[f] = row.GetBits(f);
    }
  }
  if (any_null && !has_nulls_) {
    nulls_.assign(static_cast<size_t>(count_) * null_words_, 0);  // the records before had none
    has_nulls_ = true;
  }
  if (has_nulls_) {
    const size_t n = nulls_.size();
    nulls_.resize(n + null_words_, 0);
    if (any_null) {
      for (uint32_t f = 0; f < fields_; ++f) {
        if (row.IsNull(f)) {
          nulls_[n + f / 64] |= uint64_t{1} << (f % 64);
        }
      }
    }
  }
}

void WireBatch::DecodeSlow(size_t i, StreamRecord& out) const {
  Row& row = out.row;
  const uint64_t* w = words_.data() + i * stride_;
  out.timestamp = static_cast<Timestamp>(w[0]);
  out.has_timestamp = ((has_ts_[i / 64] >> (i % 64)) & 1) != 0;
  if (row.layout_ptr() != layout_ || has_strings_) {
    row.Reset(layout_);  // every field NULL, no string bytes
  }
  // Which of the first 64 fields are strings is known per batch (Start): a record of up to 64
  // fields (every key-by exchange seen so far) reads no layout per field.
  for (uint32_t f = 0; f < fields_; ++f) {
    const bool first64 = f < 64;
    if (first64 && ((dropped_ >> f) & 1) != 0) {
      continue;  // left out: stays NULL from the Reset above (has_strings_)
    }
    if (first64 ? ((string_fields_ >> f) & 1) != 0 : row.type(f) == FieldType::kString) {
      const uint64_t s = w[1 + f];
      row.SetString(f, std::string_view(arena_.data() + (s >> 32), s & 0xFFFFFFFFu));
    } else {
      row.SetBits(f, w[1 + f]);
    }
  }
  if (has_nulls_) {
    const uint64_t* n = nulls_.data() + i * null_words_;
    for (uint32_t f = 0; f < fields_; ++f) {
      if (((n[f / 64] >> (f % 64)) & 1) != 0) {
        row.SetNull(f);
      }
    }
  }
}

}  // namespace tidemark
