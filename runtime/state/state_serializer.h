#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/errors.h"
#include "runtime/core/key.h"
#include "runtime/core/row.h"
#include "runtime/state/shared_state_file.h"

namespace tidemark {

/// A snapshot that cannot be read back: truncated, corrupt, written by an incompatible version or
/// for another operator. Thrown by `StateReader` and by `InitializeState`; a restore that throws it
/// fails, and the checkpoint is skipped for an older one where there is one.
class StateCorrupt : public Error {
 public:
  using Error::Error;
};

/// Where redistributable state sits in one operator subtask's snapshot bytes, so a restore at
/// another parallelism can cut the snapshots of the old subtasks apart and put the pieces of a new
/// subtask together without the operator (Flink's `KeyGroupRangeOffsets` of a
/// `KeyGroupsStateHandle`, and the offsets of an `OperatorStateHandle`'s list state). Kept in the
/// checkpoint's `_metadata` beside the state file. Offsets are bytes into the snapshot body.
struct StateBlock {
  enum class Kind : uint8_t {
    /// What `WriteKeyGroups` wrote: `U32` number of groups, then one "key-group" section per
    /// group (its body starts with the `U32` group). Split by key-group range.
    kKeyGroups,
    /// Operator list state (`StateWriter::BeginList`): `U32` count, then the elements, each
    /// starting at `elements[i]`. Split round-robin over the new subtasks (Flink's
    /// `RoundRobinOperatorStateRepartitioner`).
    kList,
  };
  Kind kind = Kind::kKeyGroups;
  uint64_t begin = 0;              ///< offset of the `U32` count
  uint64_t end = 0;                ///< one past the block's last byte
  std::vector<uint64_t> elements;  ///< kList: start offset of each element, ascending
  /// Offsets of the length fields of the sections enclosing the block, outermost first: a
  /// restore that changes the block's length corrects them.
  std::vector<uint64_t> enclosing;
  friend bool operator==(const StateBlock&, const StateBlock&) = default;
};

/// Writes operator and split state in tidemark's snapshot format. Mirrors Flink's
/// `DataOutputView` as used by `TypeSerializer#serialize`: the bytes follow the values (and the
/// schema of a row), never the in-memory layout, so a snapshot taken today restores after the
/// layout of `Row` or of the state tables changes.
///
/// Encoding: little-endian fixed width for `U8`/`U32`/`I64`/`F64`, `Bool` as one byte, strings as
/// a `U32` length and the bytes. `WriteValue` writes a one-byte tag (0 NULL, 1 int64, 2 double,
/// 3 bool, 4 string; int64 and timestamp cells both as 1) and the value; `WriteRow` (a record's
/// row) and `WriteKey` (a key's values) a `U32` arity and the values.
/// A section (`BeginSection` ... `EndSection`) is a name, a version and a length-prefixed body, so
/// a reader can check it reads what it expects and skip what it does not know.
///
/// Ownership: owns its buffer; `bytes()` borrows it. Threading: one thread at a time (the
/// snapshotting task's mailbox thread).
class StateWriter {
 public:
  void WriteU8(uint8_t v);
  void WriteU32(uint32_t v);
  void WriteI64(int64_t v);
  void WriteF64(double v);
  void WriteBool(bool v);
  void WriteString(std::string_view v);
  void WriteValue(const Value& v);
  void WriteRow(const Row& row);
  void WriteKey(const Key& key);

  /// Opens a named, versioned section; sections nest. Every `BeginSection` needs its `EndSection`.
  void BeginSection(std::string_view name, uint32_t version);
  void EndSection();

  /// Marks what follows, up to `EndKeyGroups`, as a key-group block (`WriteKeyGroups` does).
  void BeginKeyGroups();
  void EndKeyGroups();
  /// Operator list state (Flink's `ListState` of operator state): writes the `U32` `count`;
  /// call `NextListElement` before each of the `count` elements, then `EndList`. A restore at
  /// another parallelism hands the elements of all old subtasks round-robin to the new ones.
  void BeginList(uint32_t count);
  void NextListElement();
  void EndList();

  const std::string& bytes() const { return buf_; }
  std::string Release() { return std::move(buf_); }
  /// The blocks marked so far, in the order they begin.
  const std::vector<StateBlock>& blocks() const { return blocks_; }
  std::vector<StateBlock> ReleaseBlocks() { return std::move(blocks_); }

 private:
  void BeginBlock(StateBlock::Kind kind);
  void EndBlock(StateBlock::Kind kind);

  std::string buf_;
  std::vector<size_t> open_sections_;  // offsets of the length fields of open sections
  std::vector<StateBlock> blocks_;
  int open_block_ = -1;  // index in blocks_ of the block being written, -1 when none
};

/// Reads what a `StateWriter` wrote. Every read checks bounds: reading past the end, an unknown
/// value tag, a length larger than what is left or a section of another name throws
/// `StateCorrupt` (never undefined behaviour, whatever the bytes). Mirrors Flink's `DataInputView`.
///
/// Ownership: borrows `bytes`, which must outlive the reader. Threading: one thread at a time.
class StateReader {
 public:
  explicit StateReader(std::string_view bytes) : data_(bytes) {}

  uint8_t ReadU8();
  uint32_t ReadU32();
  int64_t ReadI64();
  double ReadF64();
  bool ReadBool();
  std::string ReadString();
  Value ReadValue();
  /// A row written by `WriteRow`, read into `layout` (the schema the operator was compiled
  /// against): `StateCorrupt` when the arity or a value's type does not fit it.
  Row ReadRow(const RowLayout* layout);
  Key ReadKey();

  /// Enters the section `name` and returns its version; throws `StateCorrupt` when the next
  /// section has another name or a version above `max_version` (written by a newer tidemark).
  uint32_t BeginSection(std::string_view name, uint32_t max_version);
  /// Leaves the current section, skipping whatever of its body was not read.
  void EndSection();

  bool AtEnd() const { return pos_ == data_.size(); }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  std::string_view Take(size_t n);

  std::string_view data_;
  size_t pos_ = 0;
  std::vector<size_t> section_ends_;
};

/// What an operator gets at a checkpoint barrier (Flink's `StateSnapshotContext`).
/// `writer` is the operator's own, empty at the call; what it holds afterwards is the operator's
/// state for checkpoint `checkpoint_id`. An operator that writes nothing is stateless.
struct StateSnapshotContext {
  int64_t checkpoint_id = 0;
  int64_t checkpoint_timestamp_ms = 0;  ///< processing time of the trigger
  StateWriter& writer;
  /// Non-null when this checkpoint may be incremental (`checkpointing.incremental: true`, a
  /// checkpoint and not a savepoint): an operator on RocksDB may then write a native handle that
  /// references shared files instead of its canonical state (rocksdb_native_checkpoint.h).
  /// Null: the canonical, backend-independent format.
  IncrementalSnapshotTarget* incremental = nullptr;
};

/// What an operator gets before its first input (Flink's `StateInitializationContext`).
/// `reader` is null on a fresh start; otherwise it reads what this operator (same operator `id`,
/// same subtask) wrote in `SnapshotState` of checkpoint `restored_checkpoint_id`.
struct StateInitializationContext {
  StateReader* reader = nullptr;
  int64_t restored_checkpoint_id = 0;
  /// `checkpointing.restore-watermarks` (a tidemark option): false, as in Flink, an operator's
  /// event time starts again at Long.MIN after a restore; true, it restores its checkpointed
  /// watermark (and an assigner re-emits it before its first record).
  bool restore_watermarks = false;
  /// The restored checkpoint's directory (`chk-<id>/`, or a savepoint's); its parent is the
  /// root the shared files of an incremental checkpoint are relative to. Empty when unknown.
  std::filesystem::path restored_directory;
  bool is_restored() const { return reader != nullptr; }
};

}  // namespace tidemark
