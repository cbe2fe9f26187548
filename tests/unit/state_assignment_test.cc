// Restoring at another parallelism (runtime/checkpoint/state_assignment.h): snapshots of keyed
// state and of list state cut at their blocks and put together for the new subtasks; the
// sections around them stay readable; a changed max-parallelism and old checkpoints are refused.

#include "runtime/checkpoint/state_assignment.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/state/state_codec.h"

namespace tidemark {
namespace {

constexpr int kMax = 128;

/// A snapshot shaped as an operator's: a section holding a header value, the key groups of
/// `keys` (each key's value: key * 10), a list of `elements`, and a trailer after the section.
struct Snapshot {
  std::string bytes;
  std::vector<StateBlock> blocks;
};

Snapshot Write(int64_t header, const std::vector<int64_t>& keys,
               const std::vector<std::string>& elements) {
  StateWriter w;
  w.BeginSection("op", 1);
  w.WriteI64(header);
  std::vector<Key> ks;
  for (int64_t k : keys) {
    ks.push_back(Key{Value(k)});
  }
  WriteKeyGroups(w, kMax, ks, [&](const Key& k) { w.WriteI64(std::get<int64_t>(k[0]) * 10); });
  w.BeginList(static_cast<uint32_t>(elements.size()));
  for (const std::string& e : elements) {
    w.NextListElement();
    w.WriteString(e);
  }
  w.EndList();
  w.EndSection();
  w.WriteI64(-7);  // after the section: found only if the section's length was corrected
  Snapshot s;
  s.blocks = w.blocks();
  s.bytes = w.Release();
  return s;
}

struct Read {
  int64_t header = 0;
  std::map<int64_t, int64_t> values;
  std::vector<std::string> elements;
};

Read ReadBack(const std::string& bytes, KeyGroupRange range) {
  StateReader r(bytes);
  Read out;
  r.BeginSection("op", 1);
  out.header = r.ReadI64();
  ReadKeyGroups(r, kMax, range,
                [&](const Key& k) { out.values[std::get<int64_t>(k[0])] = r.ReadI64(); });
  const uint32_t n = r.ReadU32();
  for (uint32_t i = 0; i < n; ++i) {
    out.elements.push_back(r.ReadString());
  }
  r.EndSection();
  EXPECT_EQ(r.ReadI64(), -7);
  EXPECT_TRUE(r.AtEnd());
  return out;
}

/// Keys 0..199 spread over the subtasks of `parallelism` that own their groups.
std::vector<std::vector<int64_t>> KeysBySubtask(int parallelism) {
  std::vector<std::vector<int64_t>> out(static_cast<size_t>(parallelism));
  for (int64_t k = 0; k < 200; ++k) {
    const int g = KeyGroupForHash(KeyHash64(Key{Value(k)}), kMax);
    out[static_cast<size_t>(OperatorIndexForKeyGroup(kMax, parallelism, g))].push_back(k);
  }
  return out;
}

TEST(StateAssignmentTest, WriterRecordsItsBlocks) {
  const Snapshot s = Write(1, {3, 4}, {"x", "yy"});
  ASSERT_EQ(s.blocks.size(), 2u);
  EXPECT_EQ(s.blocks[0].kind, StateBlock::Kind::kKeyGroups);
  EXPECT_EQ(s.blocks[1].kind, StateBlock::Kind::kList);
  EXPECT_EQ(s.blocks[0].end, s.blocks[1].begin);
  // The section "op" (2-byte name: 4 + 2, version 4) has its length field at offset 10.
  EXPECT_EQ(s.blocks[0].enclosing, std::vector<uint64_t>{10});
  EXPECT_EQ(s.blocks[0].begin, 10u + 8u + 8u);  // after the length and the header
  EXPECT_EQ(s.blocks[1].elements,
            (std::vector<uint64_t>{s.blocks[1].begin + 4, s.blocks[1].begin + 4 + 5}));
}

TEST(StateAssignmentTest, KeysGoToTheirNewSubtasksAndListsRoundRobin) {
  const std::vector<std::vector<int64_t>> by2 = KeysBySubtask(2);
  ASSERT_FALSE(by2[0].empty());
  ASSERT_FALSE(by2[1].empty());
  const std::vector<Snapshot> old = {Write(100, by2[0], {"a0", "a1", "a2"}),
                                     Write(101, by2[1], {"b0", "b1"})};
  std::vector<SubtaskSnapshot> in;
  for (int i = 0; i < 2; ++i) {
    in.push_back(SubtaskSnapshot{i, &old[static_cast<size_t>(i)].bytes,
                                 &old[static_cast<size_t>(i)].blocks});
  }
  for (int p : {1, 3, 4}) {
    SCOPED_TRACE("parallelism " + std::to_string(p));
    const std::vector<std::vector<int64_t>> want = KeysBySubtask(p);
    std::vector<std::string> all_elements;
    for (int j = 0; j < p; ++j) {
      std::vector<StateBlock> blocks;
      const std::string bytes = AssembleSubtaskState(in, 2, kMax, p, j, &blocks);
      const KeyGroupRange range = KeyGroupRangeForOperator(kMax, p, j);
      // Read with the full range: only the subtask's own groups are in its snapshot.
      const Read got = ReadBack(bytes, KeyGroupRange{0, kMax - 1});
      std::vector<int64_t> keys;
      for (const auto& [k, v] : got.values) {
        EXPECT_EQ(v, k * 10);
        keys.push_back(k);
      }
      std::vector<int64_t> expected = want[static_cast<size_t>(j)];
      std::sort(expected.begin(), expected.end());
      EXPECT_EQ(keys, expected);
      // The header is the first old subtask's whose range overlaps.
      const int first_old = OperatorIndexForKeyGroup(kMax, 2, range.start);
      EXPECT_EQ(got.header, 100 + first_old);
      for (const std::string& e : got.elements) {
        all_elements.push_back(e);
      }
      // Elements: global index e (a0 a1 a2 b0 b1) goes to e mod p.
      std::vector<std::string> mine;
      const std::vector<std::string> order = {"a0", "a1", "a2", "b0", "b1"};
      for (size_t e = 0; e < order.size(); ++e) {
        if (static_cast<int>(e % static_cast<size_t>(p)) == j) {
          mine.push_back(order[e]);
        }
      }
      EXPECT_EQ(got.elements, mine);
      // The blocks of the result describe it: assembling it again alone gives the same bytes.
      const SubtaskSnapshot self{0, &bytes, &blocks};
      EXPECT_EQ(AssembleSubtaskState({self}, 1, kMax, 1, 0), bytes);
    }
    std::sort(all_elements.begin(), all_elements.end());
    EXPECT_EQ(all_elements, (std::vector<std::string>{"a0", "a1", "a2", "b0", "b1"}));
  }
}

CompletedCheckpoint TwoSubtaskCheckpoint(bool with_blocks) {
  const std::vector<std::vector<int64_t>> by2 = KeysBySubtask(2);
  CompletedCheckpoint cp;
  cp.directory = "/ckpt/savepoint-3";
  for (int i = 0; i < 2; ++i) {
    Snapshot s = Write(i, by2[static_cast<size_t>(i)], {});
    cp.states[{"windows", i}] = s.bytes;
    if (with_blocks) {
      cp.blocks[{"windows", i}] = s.blocks;
    }
  }
  if (with_blocks) {
    cp.parallelism["windows"] = OperatorParallelism{2, kMax};
  }
  return cp;
}

TEST(StateAssignmentTest, AssignsOnlyOperatorsWhoseParallelismChanged) {
  CompletedCheckpoint cp = TwoSubtaskCheckpoint(true);
  const auto before = cp.states;
  EXPECT_EQ(AssignStatesForRestore(cp, {{"windows", RestoreTarget{2, kMax, true}}}, false),
            std::vector<std::string>{});
  EXPECT_EQ(cp.states, before);
  EXPECT_EQ(AssignStatesForRestore(cp, {{"windows", RestoreTarget{3, kMax, true}}}, false),
            std::vector<std::string>{"windows"});
  ASSERT_EQ(cp.states.size(), 3u);
  EXPECT_EQ(cp.parallelism.at("windows"), (OperatorParallelism{3, kMax}));
  size_t keys = 0;
  for (int j = 0; j < 3; ++j) {
    keys +=
        ReadBack(cp.states.at({"windows", j}), KeyGroupRangeForOperator(kMax, 3, j)).values.size();
  }
  EXPECT_EQ(keys, 200u);
}

TEST(StateAssignmentTest, RefusesAChangedMaxParallelismAndOldCheckpoints) {
  CompletedCheckpoint cp = TwoSubtaskCheckpoint(true);
  try {
    AssignStatesForRestore(cp, {{"windows", RestoreTarget{2, 256, true}}}, false);
    ADD_FAILURE() << "a changed max-parallelism was accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "cannot restore from /ckpt/savepoint-3: operator \"windows\" was checkpointed "
                 "with max-parallelism 128 and has max-parallelism 256 here; the "
                 "max-parallelism fixes the key groups of keyed state and must stay the same "
                 "across restores (set pipeline.max-parallelism: 128)");
  }
  CompletedCheckpoint old = TwoSubtaskCheckpoint(false);
  try {
    AssignStatesForRestore(old, {{"windows", RestoreTarget{3, kMax, true}}}, false);
    ADD_FAILURE() << "a checkpoint without blocks was rescaled";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "cannot restore from /ckpt/savepoint-3: operator \"windows\" has parallelism 3 "
                 "here and 2 in the checkpoint, and the checkpoint does not say where its state "
                 "can be split (it was written before tidemark rescaled state); restore it at "
                 "parallelism 2");
  }
  CompletedCheckpoint with = TwoSubtaskCheckpoint(true);
  EXPECT_THROW(AssignStatesForRestore(with, {{"windows", RestoreTarget{1, kMax, true}}}, true),
               Error);
}

TEST(StateAssignmentTest, ABlockThatDoesNotReadBackIsAnError) {
  CompletedCheckpoint cp = TwoSubtaskCheckpoint(true);
  cp.blocks[{"windows", 1}][0].begin += 1;  // no longer at the group count
  try {
    AssignStatesForRestore(cp, {{"windows", RestoreTarget{3, kMax, true}}}, false);
    ADD_FAILURE() << "a bad block was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot restore from /ckpt/savepoint-3: the state of "
                                         "operator \"windows\" cannot be redistributed from "
                                         "parallelism 2 to 3: "),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tidemark
