// Restoring at another parallelism (see state_assignment.h): cutting the old subtasks' snapshots
// at their blocks and putting each new subtask's snapshot together.

#include "runtime/checkpoint/state_assignment.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {
namespace {

/// Bounds-checked little-endian reads inside one block of a snapshot.
class Cursor {
 public:
  Cursor(std::string_view data, uint64_t pos, uint64_t end) : data_(data), pos_(pos), end_(end) {}
  template <typename T>
  T Read() {
    Need(sizeof(T));
    T v;
    std::memcpy(&v, data_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  void Skip(uint64_t n) {
    Need(n);
    pos_ += n;
  }
  uint64_t pos() const { return pos_; }

 private:
  void Need(uint64_t n) const {
    if (n > end_ - pos_) {
      throw StateCorrupt(fmt::format(
          "state block: {} bytes wanted at offset {}, the block ends at {}", n, pos_, end_));
    }
  }
  std::string_view data_;
  uint64_t pos_;
  uint64_t end_;
};

/// One "key-group" section of a key-group block: its group and its bytes.
struct GroupSection {
  int group = 0;
  std::string_view bytes;
};

std::vector<GroupSection> SplitKeyGroups(std::string_view data, const StateBlock& b) {
  if (b.end > data.size() || b.begin > b.end) {
    throw StateCorrupt("state block: outside the snapshot");
  }
  Cursor c(data, b.begin, b.end);
  const uint32_t n = c.Read<uint32_t>();
  std::vector<GroupSection> out;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t start = c.pos();
    const uint32_t name_len = c.Read<uint32_t>();
    if (name_len != std::string_view("key-group").size() ||
        data.substr(c.pos(), name_len) != "key-group") {
      throw StateCorrupt("state block: a key-group block holds another section");
    }
    c.Skip(name_len);
    c.Read<uint32_t>();  // version
    const int64_t len = c.Read<int64_t>();
    if (len < 4) {
      throw StateCorrupt("state block: a key-group section too short for its group");
    }
    const uint32_t group = c.Read<uint32_t>();
    c.Skip(static_cast<uint64_t>(len) - 4);
    out.push_back(GroupSection{static_cast<int>(group), data.substr(start, c.pos() - start)});
  }
  if (c.pos() != b.end) {
    throw StateCorrupt("state block: bytes after the last key group");
  }
  return out;
}

std::vector<std::string_view> SplitList(std::string_view data, const StateBlock& b) {
  if (b.end > data.size() || b.begin > b.end) {
    throw StateCorrupt("state block: outside the snapshot");
  }
  Cursor c(data, b.begin, b.end);
  const uint32_t n = c.Read<uint32_t>();
  if (n != b.elements.size()) {
    throw StateCorrupt(
        fmt::format("state block: a list of {} elements with {} offsets", n, b.elements.size()));
  }
  std::vector<std::string_view> out;
  for (size_t i = 0; i < b.elements.size(); ++i) {
    const uint64_t from = b.elements[i];
    const uint64_t to = i + 1 < b.elements.size() ? b.elements[i + 1] : b.end;
    if (from < c.pos() || to < from || to > b.end) {
      throw StateCorrupt("state block: list elements out of order");
    }
    out.push_back(data.substr(from, to - from));
  }
  return out;
}

void AppendU32(std::string& out, uint32_t v) {
  char b[sizeof(v)];
  std::memcpy(b, &v, sizeof(v));
  out.append(b, sizeof(v));
}

bool SameShape(const std::vector<StateBlock>& a, const std::vector<StateBlock>& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].kind != b[i].kind) {
      return false;
    }
  }
  return true;
}

bool Overlaps(KeyGroupRange a, KeyGroupRange b) {
  return a.size() > 0 && b.size() > 0 && a.start <= b.end && b.start <= a.end;
}

}  // namespace

std::string AssembleSubtaskState(const std::vector<SubtaskSnapshot>& old, int old_parallelism,
                                 int max_parallelism, int parallelism, int index,
                                 std::vector<StateBlock>* blocks_out) {
  TM_CHECK(!old.empty(), "AssembleSubtaskState without old snapshots");
  static const std::vector<StateBlock> kNoBlocks;
  auto blocks_of = [](const SubtaskSnapshot& s) -> const std::vector<StateBlock>& {
    return s.blocks != nullptr ? *s.blocks : kNoBlocks;
  };
  const std::vector<StateBlock>& shape = blocks_of(old.front());
  for (const SubtaskSnapshot& s : old) {
    if (!SameShape(blocks_of(s), shape)) {
      throw StateCorrupt(
          fmt::format("the snapshots of subtasks {} and {} differ in shape (their blocks)",
                      old.front().subtask, s.subtask));
    }
  }
  const KeyGroupRange range = KeyGroupRangeForOperator(max_parallelism, parallelism, index);
  const bool keyed = std::any_of(shape.begin(), shape.end(), [](const StateBlock& b) {
    return b.kind == StateBlock::Kind::kKeyGroups;
  });
  // The base: its bytes outside the blocks become the new subtask's.
  const SubtaskSnapshot* base = nullptr;
  for (const SubtaskSnapshot& s : old) {
    const bool fits =
        keyed
            ? Overlaps(KeyGroupRangeForOperator(max_parallelism, old_parallelism, s.subtask), range)
            : s.subtask == std::min(index, old_parallelism - 1);
    if (fits) {
      base = &s;
      break;
    }
  }
  if (base == nullptr) {
    base = &old.front();
  }
  const std::string_view base_bytes = *base->bytes;
  const std::vector<StateBlock>& base_blocks = blocks_of(*base);

  std::string out;
  out.reserve(base_bytes.size());
  std::vector<StateBlock> new_blocks;
  std::vector<std::pair<uint64_t, int64_t>> shifts;  // (base offset of a block's end, delta)
  auto to_out = [&shifts](uint64_t base_offset) {
    int64_t shift = 0;
    for (const auto& [end, delta] : shifts) {
      if (end <= base_offset) {
        shift += delta;
      }
    }
    return static_cast<uint64_t>(static_cast<int64_t>(base_offset) + shift);
  };
  uint64_t copied = 0;  // base bytes up to here are handled
  for (size_t k = 0; k < base_blocks.size(); ++k) {
    const StateBlock& b = base_blocks[k];
    if (b.begin < copied || b.end > base_bytes.size()) {
      throw StateCorrupt("state blocks overlap or lie outside the snapshot");
    }
    out.append(base_bytes.substr(copied, b.begin - copied));
    StateBlock nb;
    nb.kind = b.kind;
    nb.begin = out.size();
    if (b.kind == StateBlock::Kind::kKeyGroups) {
      std::vector<std::string_view> sections;
      for (const SubtaskSnapshot& s : old) {
        for (const GroupSection& g : SplitKeyGroups(*s.bytes, blocks_of(s)[k])) {
          if (g.group < 0 || g.group >= max_parallelism) {
            throw StateCorrupt(
                fmt::format("state block: key group {} of {}", g.group, max_parallelism));
          }
          if (range.Contains(g.group)) {
            sections.push_back(g.bytes);
          }
        }
      }
      AppendU32(out, static_cast<uint32_t>(sections.size()));
      for (std::string_view sec : sections) {
        out.append(sec);
      }
    } else {
      std::vector<std::string_view> mine;
      size_t e = 0;
      for (const SubtaskSnapshot& s : old) {
        for (std::string_view element : SplitList(*s.bytes, blocks_of(s)[k])) {
          if (static_cast<int>(e % static_cast<size_t>(parallelism)) == index) {
            mine.push_back(element);
          }
          ++e;
        }
      }
      AppendU32(out, static_cast<uint32_t>(mine.size()));
      for (std::string_view element : mine) {
        nb.elements.push_back(out.size());
        out.append(element);
      }
    }
    nb.end = out.size();
    const int64_t delta =
        static_cast<int64_t>(nb.end - nb.begin) - static_cast<int64_t>(b.end - b.begin);
    // The sections around the block grow or shrink with it.
    for (uint64_t len_at : b.enclosing) {
      const uint64_t at = to_out(len_at);
      if (at + sizeof(int64_t) > out.size()) {
        throw StateCorrupt("state block: an enclosing section outside the snapshot");
      }
      int64_t len = 0;
      std::memcpy(&len, out.data() + at, sizeof(len));
      len += delta;
      std::memcpy(out.data() + at, &len, sizeof(len));
      nb.enclosing.push_back(at);
    }
    shifts.emplace_back(b.end, delta);
    copied = b.end;
    new_blocks.push_back(std::move(nb));
  }
  out.append(base_bytes.substr(copied));
  if (blocks_out != nullptr) {
    *blocks_out = std::move(new_blocks);
  }
  return out;
}

std::vector<std::string> AssignStatesForRestore(CompletedCheckpoint& checkpoint,
                                                const std::map<std::string, RestoreTarget>& targets,
                                                bool restore_watermarks) {
  std::vector<std::string> redistributed;
  const std::string dir = checkpoint.directory.string();
  for (const auto& [op, target] : targets) {
    std::vector<SubtaskSnapshot> old;
    bool has_blocks = false;
    bool has_key_groups = false;
    for (const auto& [key, bytes] : checkpoint.states) {
      if (key.first != op) {
        continue;
      }
      auto b = checkpoint.blocks.find(key);
      const std::vector<StateBlock>* blocks = b == checkpoint.blocks.end() ? nullptr : &b->second;
      if (blocks != nullptr && !blocks->empty()) {
        has_blocks = true;
        for (const StateBlock& block : *blocks) {
          has_key_groups = has_key_groups || block.kind == StateBlock::Kind::kKeyGroups;
        }
      }
      old.push_back(SubtaskSnapshot{key.second, &bytes, blocks});
    }
    if (old.empty()) {
      continue;  // stateless, or no state in the checkpoint
    }
    const auto recorded = checkpoint.parallelism.find(op);
    const int old_parallelism = recorded != checkpoint.parallelism.end()
                                    ? recorded->second.parallelism
                                    : old.back().subtask + 1;
    if (has_key_groups && recorded != checkpoint.parallelism.end() &&
        recorded->second.max_parallelism != target.max_parallelism) {
      throw Error(fmt::format(
          "cannot restore from {}: operator \"{}\" was checkpointed with max-parallelism {} and "
          "has max-parallelism {} here; the max-parallelism fixes the key groups of keyed state "
          "and must stay the same across restores (set pipeline.max-parallelism: {})",
          dir, op, recorded->second.max_parallelism, target.max_parallelism,
          recorded->second.max_parallelism));
    }
    if (old_parallelism == target.parallelism) {
      continue;
    }
    // An incremental checkpoint's state is one RocksDB instance per subtask (its "shared" SST
    // files), which is not cut apart by key group: the restore would fail the same way on every
    // attempt, so it is refused before the job starts.
    for (const auto& [key, files] : checkpoint.shared) {
      if (key.first == op && !files.empty()) {
        throw Error(fmt::format(
            "cannot restore from {}: operator \"{}\" has parallelism {} here and {} in the "
            "checkpoint, and its state is an incremental RocksDB checkpoint, which restores only "
            "at the parallelism it was taken at; to change the parallelism, restore from a "
            "savepoint (tidemark savepoint, or stop --savepoint), which is canonical and "
            "redistributable",
            dir, op, target.parallelism, old_parallelism));
      }
    }
    if (!has_blocks) {
      if (target.needs_redistribution) {
        throw Error(fmt::format(
            "cannot restore from {}: operator \"{}\" has parallelism {} here and {} in the "
            "checkpoint, "
            "and the checkpoint does not say where its state can be split (it was written before "
            "tidemark rescaled state); restore it at parallelism {}",
            dir, op, target.parallelism, old_parallelism, old_parallelism));
      }
      continue;
    }
    if (old.back().subtask >= old_parallelism) {
      throw Error(
          fmt::format("cannot restore from {}: operator \"{}\" has state of subtask {} but ran at "
                      "parallelism {}",
                      dir, op, old.back().subtask, old_parallelism));
    }
    if (restore_watermarks) {
      throw Error(fmt::format(
          "cannot restore from {} with checkpointing.restore-watermarks: operator \"{}\" runs "
          "at parallelism {} here and {} in the checkpoint, and restored watermarks are kept "
          "per subtask and input channel, which a rescale changes; restore it without "
          "restore-watermarks (as Flink does) or at parallelism {}",
          dir, op, target.parallelism, old_parallelism, old_parallelism));
    }
    std::map<int, std::string> states;
    std::map<int, std::vector<StateBlock>> blocks;
    for (int j = 0; j < target.parallelism; ++j) {
      try {
        states[j] = AssembleSubtaskState(old, old_parallelism, target.max_parallelism,
                                         target.parallelism, j, &blocks[j]);
      } catch (const StateCorrupt& e) {
        throw Error(fmt::format(
            "cannot restore from {}: the state of operator \"{}\" cannot be redistributed from "
            "parallelism {} to {}: {}",
            dir, op, old_parallelism, target.parallelism, e.what()));
      }
    }
    for (auto it = checkpoint.states.begin(); it != checkpoint.states.end();) {
      it = it->first.first == op ? checkpoint.states.erase(it) : std::next(it);
    }
    for (auto it = checkpoint.blocks.begin(); it != checkpoint.blocks.end();) {
      it = it->first.first == op ? checkpoint.blocks.erase(it) : std::next(it);
    }
    for (auto& [j, bytes] : states) {
      checkpoint.states[{op, j}] = std::move(bytes);
      checkpoint.blocks[{op, j}] = std::move(blocks[j]);
    }
    checkpoint.parallelism[op] = OperatorParallelism{target.parallelism, target.max_parallelism};
    redistributed.push_back(op);
  }
  return redistributed;
}

}  // namespace tidemark
