#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/core/prefetch.h"
#include "runtime/core/timestamp.h"

namespace tidemark {

/// Column types a job schema may use. `kTimestamp` is an int64 of milliseconds.
enum class FieldType : uint8_t { kInt64, kDouble, kBool, kString, kTimestamp };

const char* ToString(FieldType t);
/// Parses "int64" | "double" | "bool" | "string" | "timestamp"; nullopt otherwise.
std::optional<FieldType> ParseFieldType(std::string_view s);

/// One boxed cell, for the paths that are not per record: constants in a job, expression
/// constants, generic formatting, snapshots of keys, tests. `std::monostate` is SQL NULL.
/// A timestamp boxes as its int64 milliseconds. Records themselves never hold a `Value`: see `Row`.
using Value = std::variant<std::monostate, int64_t, double, bool, std::string>;

/// Renders a value as JSON (strings quoted and escaped, NULL as `null`).
std::string ValueToJson(const Value& v);
/// Numeric view of a value: int64 and double as themselves, bool as 0/1; nullopt for strings/NULL.
std::optional<double> AsDouble(const Value& v);
std::optional<int64_t> AsInt64(const Value& v);

struct Field {
  std::string name;
  FieldType type = FieldType::kInt64;
  friend bool operator==(const Field&, const Field&) = default;
};

/// The in-memory shape of the rows of one schema: the type of each slot and where the null
/// bitmap sits. Compiled once per distinct list of types and interned for the life of the process
/// (`Of`), so rows compare and copy layouts by pointer. Field names play no part: two schemas with
/// the same types share a layout.
///
/// A row of `n` fields occupies `n` 8-byte slots (int64 and timestamp as int64, double as its
/// IEEE bits, bool as 0/1, a string as a 32-bit offset and a 32-bit length into the row's string
/// bytes), then `ceil(n / 64)` words of null bits, then the string bytes.
///
/// Threading: immutable after `Of` returns it; `Of` is thread-safe. Ownership: the process owns
/// every layout; pointers stay valid until exit.
class RowLayout {
 public:
  /// The interned layout for `types` (the empty layout for none).
  static const RowLayout* Of(const std::vector<FieldType>& types);
  /// The layout of zero fields.
  static const RowLayout* Empty();
  /// The interned layout of `base`'s types followed by `extra` (a lock: not per record).
  static const RowLayout* Extend(const RowLayout* base, const std::vector<FieldType>& extra);

  size_t size() const { return types_.size(); }
  FieldType type(size_t slot) const { return types_[slot]; }
  const std::vector<FieldType>& types() const { return types_; }
  /// Whether rows of `other` can be read as rows of this layout: the same number of fields, each
  /// of the same type, int64 and timestamp counting as one.
  bool StoresAs(const RowLayout& other) const;
  /// Words before the string bytes: the slots and the null bitmap.
  size_t fixed_words() const { return fixed_words_; }
  /// Whether any slot is a string (rows without strings copy as one fixed block).
  bool has_strings() const { return has_strings_; }

 private:
  explicit RowLayout(std::vector<FieldType> types);
  friend class LayoutRegistry;

  std::vector<FieldType> types_;
  size_t fixed_words_ = 0;
  bool has_strings_ = false;
};

class Row;

/// The fixed shape of the rows on one edge of the job graph: named, typed fields.
class Schema {
 public:
  Schema() = default;
  explicit Schema(std::vector<Field> fields) : fields_(std::move(fields)) {}

  const std::vector<Field>& fields() const { return fields_; }
  size_t size() const { return fields_.size(); }
  const Field& field(size_t i) const { return fields_[i]; }
  /// Slot of `name`, or -1 when the schema has no such field.
  int IndexOf(std::string_view name) const;
  /// Appends a field and returns its slot.
  int Add(std::string name, FieldType type);
  /// The row layout of this schema's types (interned; a lookup under a lock: call it when the
  /// job is compiled or an operator opens, never per record).
  const RowLayout* layout() const;
  /// `{"a": 1, "b": "x"}` for a row of this schema (JSON Lines sinks).
  std::string RowToJson(const Row& row) const;

  friend bool operator==(const Schema&, const Schema&) = default;

 private:
  std::vector<Field> fields_;
};

/// A record's payload: one typed cell per field of its layout, in schema order, in one flat
/// buffer (see `RowLayout`): fixed 8-byte slots, a null bitmap, and the bytes of its strings out
/// of line in the same buffer. Mirrors Flink's `BinaryRowData` (null bits, a fixed-length part of
/// 8-byte fields, a variable-length part, in one memory segment). Field names are resolved to
/// slots once, when the job is compiled; nothing looks up a name or dispatches on a cell's type
/// per record. The strings live in the row, not in a batch-wide arena, so an operator may keep a
/// row (a window's buffered elements, a join's buffer) without copying it out of its batch.
///
/// The typed accessors (`GetInt64`, `SetDouble`, ...) are the hot path: a load or a store, no
/// check of the type, which the caller knows from the schema it was compiled against (checked in
/// debug builds). `Get` / `Set` box a cell as a `Value` for paths that are not per record.
///
/// Strings: `GetString` returns a view into the row's buffer, valid until the row is next
/// modified, moved from or destroyed. `SetString` overwrites in place when the new string fits
/// the old one's bytes, else appends; the old bytes stay unused until `Reset`, or until they are
/// most of 4 KiB or more of string bytes, when the next append compacts the strings first.
///
/// Value type: copying copies the buffer (one allocation at most, none when the destination's
/// capacity suffices: a recycled row allocates nothing); moving steals it and leaves the source
/// an empty row of zero fields. A default row has the empty layout. Not thread-safe; a row
/// belongs to one thread at a time.
class Row {
 public:
  Row() = default;
  /// A row of `layout` with every field NULL.
  explicit Row(const RowLayout* layout) { Reset(layout); }
  /// A row holding `values`, its layout inferred from them (int64, double, bool, string; a NULL
  /// cell is an int64 slot): tests and paths that are not per record.
  Row(std::initializer_list<Value> values);
  /// A row of `layout` holding `values` (boxed; converted as `Set` does).
  /// Precondition: `values.size() == layout->size()`.
  static Row Of(const RowLayout* layout, const std::vector<Value>& values);
  /// `Row(values)` for a vector.
  static Row FromValues(const std::vector<Value>& values);

  Row(const Row& other) { CopyFrom(other); }
  Row(Row&& other) noexcept
      : layout_(other.layout_),
        buf_(other.buf_),
        cap_words_(other.cap_words_),
        heap_bytes_(other.heap_bytes_),
        size_(other.size_),
        fixed_words_(other.fixed_words_) {
    other.layout_ = RowLayout::Empty();
    other.buf_ = nullptr;
    other.cap_words_ = 0;
    other.heap_bytes_ = 0;
    other.size_ = 0;
    other.fixed_words_ = 0;
  }
  Row& operator=(const Row& other) {
    if (this != &other) {
      CopyFrom(other);
    }
    return *this;
  }
  Row& operator=(Row&& other) noexcept {
    swap(other);
    return *this;
  }
  ~Row() { delete[] buf_; }

  void swap(Row& other) noexcept {
    std::swap(layout_, other.layout_);
    std::swap(buf_, other.buf_);
    std::swap(cap_words_, other.cap_words_);
    std::swap(heap_bytes_, other.heap_bytes_);
    std::swap(size_, other.size_);
    std::swap(fixed_words_, other.fixed_words_);
  }
  friend void swap(Row& a, Row& b) noexcept { a.swap(b); }

  const RowLayout& layout() const { return *layout_; }
  const RowLayout* layout_ptr() const { return layout_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  FieldType type(size_t i) const { return layout_->type(i); }

  /// Makes this a row of `layout` with every field NULL, keeping the buffer when it is large
  /// enough. O(fields / 64) when the layout is unchanged.
  void Reset(const RowLayout* layout) {
    // The common case inline: the same layout again, of up to 64 fields (a decoded record, a
    // result row): the buffer holds the fixed words already; every field NULL, no string bytes.
    if (layout == layout_ && size_ != 0 && fixed_words_ == size_ + 1) {
      heap_bytes_ = 0;
      const uint32_t tail = size_ % 64;
      buf_[size_] = tail == 0 ? ~uint64_t{0} : (uint64_t{1} << tail) - 1;
      return;
    }
    ResetSlow(layout);
  }
  /// Sets every field NULL and drops the string bytes; the layout stays.
  void Clear() { Reset(layout_); }

  // ---- Typed access (hot path; the caller knows the slot's type) ----

  bool IsNull(size_t i) const { return (NullWord(i) >> (i & 63)) & 1; }
  /// Whether any field is NULL: one load for a row of up to 64 fields (hot loops check it once
  /// per row, then read the cells without a NULL check each).
  bool AnyNull() const {
    for (size_t w = size_; w < fixed_words_; ++w) {
      if (buf_[w] != 0) {
        return true;
      }
    }
    return false;
  }
  /// Reads an int64 or timestamp slot. Undefined (an arbitrary number) when the cell is NULL.
  int64_t GetInt64(size_t i) const {
    DCheckType(i, FieldType::kInt64);
    return static_cast<int64_t>(buf_[i]);
  }
  double GetDouble(size_t i) const {
    DCheckType(i, FieldType::kDouble);
    return std::bit_cast<double>(buf_[i]);
  }
  bool GetBool(size_t i) const {
    DCheckType(i, FieldType::kBool);
    return buf_[i] != 0;
  }
  std::string_view GetString(size_t i) const {
    DCheckType(i, FieldType::kString);
    const uint64_t s = buf_[i];
    return {Heap() + (s >> 32), static_cast<size_t>(s & 0xFFFFFFFFu)};
  }
  /// The raw 8 bytes of a fixed-width slot (int64/timestamp, double bits, bool 0/1): hashing and
  /// copying without caring which.
  uint64_t GetBits(size_t i) const { return buf_[i]; }

  void SetNull(size_t i) { NullWord(i) |= uint64_t{1} << (i & 63); }
  void SetInt64(size_t i, int64_t v) {
    DCheckType(i, FieldType::kInt64);
    buf_[i] = static_cast<uint64_t>(v);
    MarkSet(i);
  }
  void SetDouble(size_t i, double v) {
    DCheckType(i, FieldType::kDouble);
    buf_[i] = std::bit_cast<uint64_t>(v);
    MarkSet(i);
  }
  void SetBool(size_t i, bool v) {
    DCheckType(i, FieldType::kBool);
    buf_[i] = v ? 1 : 0;
    MarkSet(i);
  }
  /// Stores the bytes of `v` (which may point into this row). Invalidates earlier `GetString`
  /// views of this row when the bytes have to grow.
  void SetString(size_t i, std::string_view v) {
    DCheckType(i, FieldType::kString);
    // The common case inline (a NULL cell, as a row just Reset has, whose bytes are appended
    // within the capacity, no compaction due: every decoded record and result row's key);
    // what SetStringSlow does then, without its checks.
    if (const size_t off = heap_bytes_; IsNull(i) && off < 4096 && v.size() < 4096 &&
                                        static_cast<size_t>(fixed_words_) * 8 + off + v.size() <=
                                            static_cast<size_t>(cap_words_) * 8) {
      std::memcpy(Heap() + off, v.data(), v.size());
      heap_bytes_ = static_cast<uint32_t>(off + v.size());
      buf_[i] = (static_cast<uint64_t>(off) << 32) | v.size();
      MarkSet(i);
      return;
    }
    SetStringSlow(i, v);
  }
  /// Stores the raw bits of a fixed-width slot (see `GetBits`).
  void SetBits(size_t i, uint64_t bits) {
    buf_[i] = bits;
    MarkSet(i);
  }
  /// Copies cell `from_slot` of `from` into cell `i` of this row (same type; NULL stays NULL).
  void CopyCell(size_t i, const Row& from, size_t from_slot);
  /// Makes this a row of `wider`, whose first fields have this row's types, keeping the cells
  /// and leaving the new ones NULL (a column appended to a record). Allocates a new buffer.
  void Widen(const RowLayout* wider);

  // ---- Boxed access (not per record) ----

  /// The cell as a `Value` (a timestamp as its int64).
  Value Get(size_t i) const;
  /// Stores `v` in cell `i`: NULL, or a value of the slot's type; an int64 in a double slot, a
  /// double in an int64 / timestamp slot (truncated) and a bool in a numeric slot are converted.
  /// Throws `InvalidArgument` for a string in a non-string slot or the reverse.
  void Set(size_t i, const Value& v);
  /// Every cell boxed, in order.
  std::vector<Value> ToValues() const;

  /// Same number of fields, and per field both NULL or equal values (as `Value ==` compares
  /// them: an int64 slot and a timestamp slot holding the same number are equal).
  friend bool operator==(const Row& a, const Row& b);
  /// Lexicographic over the boxed cells (`std::vector<Value>`'s order).
  friend bool operator<(const Row& a, const Row& b);
  /// `[1, 2.5, "x", null]` (gtest prints rows with it).
  friend std::ostream& operator<<(std::ostream& os, const Row& row);

  /// Heap bytes the row holds (its buffer's capacity), for state-size figures.
  size_t AllocatedBytes() const { return static_cast<size_t>(cap_words_) * 8; }

  /// Requests every cache line of the row's values (fixed slots, null bitmap, string bytes) for
  /// a read a few records later: a batch loop over rows another thread wrote (a channel's
  /// batch), whose first read of each row is otherwise a miss to the other core. Reads only the
  /// row object itself; changes nothing.
  [[gnu::always_inline]] void PrefetchValues() const {
    PrefetchLines(buf_, fixed_words_ * 8 + heap_bytes_);
  }

 private:
  void CopyFrom(const Row& other);
  // Whether `v` points into this row's buffer.
  bool IsInside(std::string_view v) const;
  // Drops the bytes of replaced strings when they are most of the string bytes (a row whose
  // strings were set over and over without a Reset).
  void CompactStrings();
  /// Ensures capacity for `words` words, keeping the first `keep_bytes` bytes.
  void Reserve(size_t words, size_t keep_bytes);
  void ResetSlow(const RowLayout* layout);
  void SetStringSlow(size_t i, std::string_view v);
  char* Heap() { return reinterpret_cast<char*>(buf_ + fixed_words_); }
  const char* Heap() const { return reinterpret_cast<const char*>(buf_ + fixed_words_); }
  uint64_t& NullWord(size_t i) { return buf_[size_ + (i >> 6)]; }
  uint64_t NullWord(size_t i) const { return buf_[size_ + (i >> 6)]; }
  void MarkSet(size_t i) { NullWord(i) &= ~(uint64_t{1} << (i & 63)); }
  void DCheckType([[maybe_unused]] size_t i, [[maybe_unused]] FieldType t) const {
#ifndef NDEBUG
    DCheckTypeSlow(i, t);
#endif
  }
  void DCheckTypeSlow(size_t i, FieldType t) const;

  const RowLayout* layout_ = RowLayout::Empty();
  uint64_t* buf_ = nullptr;
  uint32_t cap_words_ = 0;
  uint32_t heap_bytes_ = 0;  // string bytes in use after the fixed words
  // The layout's size and fixed words, kept here so that a cell access reads no layout.
  uint32_t size_ = 0;
  uint32_t fixed_words_ = 0;
};

}  // namespace tidemark
