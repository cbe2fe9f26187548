// Barrier alignment: a channel that delivered barrier n is blocked until n came on every open
// channel; a newer barrier subsumes, an abort unblocks, an ended channel holds nothing back; in
// at-least-once nothing blocks.
#include "runtime/checkpoint/checkpoint_barrier_handler.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

struct Recorder {
  std::vector<std::string> events;
  CheckpointBarrierHandler::Callbacks callbacks() {
    return {
        [this](const CheckpointBarrier& b) { events.push_back("aligned " + std::to_string(b.id)); },
        [this](int64_t id) {
          events.push_back("aborted " + std::to_string(id));
        }};
  }
};

CheckpointBarrier Barrier(int64_t id) {
  return CheckpointBarrier{id, 100 * id, SnapshotType::kCheckpoint};
}

TEST(CheckpointBarrierHandlerTest, ExactlyOnceBlocksEachChannelUntilAllDelivered) {
  Recorder r;
  CheckpointBarrierHandler h(CheckpointBarrierHandler::Mode::kExactlyOnce, 3, r.callbacks());
  h.ProcessBarrier(Barrier(1), 1);
  EXPECT_TRUE(h.IsBlocked(1));
  EXPECT_FALSE(h.IsBlocked(0));
  EXPECT_FALSE(h.IsBlocked(2));
  EXPECT_EQ(h.pending_checkpoint_id(), 1);
  h.ProcessBarrier(Barrier(1), 0);
  EXPECT_TRUE(h.IsBlocked(0));
  EXPECT_TRUE(r.events.empty());
  h.ProcessBarrier(Barrier(1), 2);
  EXPECT_EQ(r.events, std::vector<std::string>{"aligned 1"});
  EXPECT_FALSE(h.IsBlocked(0));
  EXPECT_FALSE(h.IsBlocked(1));
  EXPECT_FALSE(h.IsBlocked(2));
  EXPECT_EQ(h.pending_checkpoint_id(), 0);
  // A late duplicate of 1 changes nothing.
  h.ProcessBarrier(Barrier(1), 0);
  EXPECT_FALSE(h.IsBlocked(0));
  EXPECT_EQ(r.events.size(), 1u);
}

TEST(CheckpointBarrierHandlerTest, AnAbortedCheckpointUnblocksAndItsLaterBarriersAreIgnored) {
  Recorder r;
  CheckpointBarrierHandler h(CheckpointBarrierHandler::Mode::kExactlyOnce, 2, r.callbacks());
  h.ProcessBarrier(Barrier(4), 0);
  ASSERT_TRUE(h.IsBlocked(0));
  h.Abort(4);
  EXPECT_FALSE(h.IsBlocked(0));
  EXPECT_EQ(h.pending_checkpoint_id(), 0);
  h.ProcessBarrier(Barrier(4), 1);  // the rest of the aborted checkpoint
  EXPECT_FALSE(h.IsBlocked(1));
  EXPECT_EQ(r.events, std::vector<std::string>{"aborted 4"});
  // The next checkpoint aligns normally.
  h.ProcessBarrier(Barrier(5), 1);
  h.ProcessBarrier(Barrier(5), 0);
  EXPECT_EQ(r.events, (std::vector<std::string>{"aborted 4", "aligned 5"}));
}

TEST(CheckpointBarrierHandlerTest, ANewerBarrierSubsumesTheOneAligning) {
  Recorder r;
  CheckpointBarrierHandler h(CheckpointBarrierHandler::Mode::kExactlyOnce, 2, r.callbacks());
  h.ProcessBarrier(Barrier(1), 0);
  h.ProcessBarrier(Barrier(2), 1);  // channel 1 skipped 1 (it was aborted upstream)
  EXPECT_EQ(r.events, std::vector<std::string>{"aborted 1"});
  EXPECT_FALSE(h.IsBlocked(0));
  EXPECT_TRUE(h.IsBlocked(1));
  h.ProcessBarrier(Barrier(2), 0);
  EXPECT_EQ(r.events, (std::vector<std::string>{"aborted 1", "aligned 2"}));
}

TEST(CheckpointBarrierHandlerTest, AnEndedChannelHoldsNoAlignmentBack) {
  Recorder r;
  CheckpointBarrierHandler h(CheckpointBarrierHandler::Mode::kExactlyOnce, 3, r.callbacks());
  h.ProcessBarrier(Barrier(1), 0);
  h.ProcessBarrier(Barrier(1), 1);
  EXPECT_TRUE(r.events.empty());
  h.ProcessEndOfInput(2);
  EXPECT_EQ(r.events, std::vector<std::string>{"aligned 1"});
  EXPECT_FALSE(h.IsBlocked(0));
  // With channel 2 gone, two barriers make a checkpoint.
  h.ProcessBarrier(Barrier(2), 1);
  h.ProcessBarrier(Barrier(2), 0);
  EXPECT_EQ(r.events, (std::vector<std::string>{"aligned 1", "aligned 2"}));
}

TEST(CheckpointBarrierHandlerTest, OneChannelAlignsAtOnce) {
  Recorder r;
  CheckpointBarrierHandler h(CheckpointBarrierHandler::Mode::kExactlyOnce, 1, r.callbacks());
  h.ProcessBarrier(Barrier(3), 0);
  EXPECT_EQ(r.events, std::vector<std::string>{"aligned 3"});
  EXPECT_FALSE(h.IsBlocked(0));
}

TEST(CheckpointBarrierHandlerTest, AtLeastOnceNeverBlocksAndCountsBarriers) {
  Recorder r;
  CheckpointBarrierHandler h(CheckpointBarrierHandler::Mode::kAtLeastOnce, 2, r.callbacks());
  h.ProcessBarrier(Barrier(1), 0);
  EXPECT_FALSE(h.IsBlocked(0));
  h.ProcessBarrier(Barrier(2), 0);  // channel 0 runs ahead
  EXPECT_TRUE(r.events.empty());
  h.ProcessBarrier(Barrier(1), 1);
  EXPECT_EQ(r.events, std::vector<std::string>{"aligned 1"});
  h.ProcessBarrier(Barrier(2), 1);
  EXPECT_EQ(r.events, (std::vector<std::string>{"aligned 1", "aligned 2"}));
  h.ProcessBarrier(Barrier(3), 1);
  h.Abort(3);
  h.ProcessBarrier(Barrier(3), 0);
  EXPECT_EQ(r.events, (std::vector<std::string>{"aligned 1", "aligned 2", "aborted 3"}));
}

}  // namespace
}  // namespace tidemark
