// Barrier alignment inside a StreamTask with two input channels: records behind a barrier wait
// until the barrier came on every channel, the snapshot sees exactly the records before it, and
// an aborted checkpoint unblocks the channel.
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/checkpoint/checkpoint_coordinator.h"
#include "runtime/io/channel.h"
#include "runtime/task/stream_task.h"
#include "runtime/time/manual_processing_time_service.h"

namespace tidemark {
namespace {

/// Head operator that logs every record (by timestamp), snapshot and notification.
class LoggingOperator : public StreamOperator {
 public:
  explicit LoggingOperator(std::vector<std::string>* log) : log_(log) {}
  void ProcessElement(StreamRecord& record, int /*input*/) override {
    log_->push_back("record " + std::to_string(record.timestamp));
    ++count_;
  }
  void SnapshotState(StateSnapshotContext& ctx) override {
    log_->push_back("snapshot " + std::to_string(ctx.checkpoint_id) + " after " +
                    std::to_string(count_));
  }
  void NotifyCheckpointAborted(int64_t id) override {
    log_->push_back("aborted " + std::to_string(id));
  }
  void NotifyCheckpointComplete(int64_t id) override {
    log_->push_back("complete " + std::to_string(id));
  }

 private:
  std::vector<std::string>* log_;
  int count_ = 0;
};

std::unique_ptr<StreamElement> Records(std::initializer_list<Timestamp> ts) {
  auto e = std::make_unique<StreamElement>();
  for (Timestamp t : ts) {
    e->records.emplace_back(Row{}, t);
  }
  return e;
}

class StreamTaskAlignmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    task_ = std::make_unique<StreamTask>("sink", 0);
    auto pts = std::make_unique<ManualProcessingTimeService>();
    task_pts_ = pts.get();
    task_->SetProcessingTimeService(std::move(pts), nullptr);
    task_->AddOperator(std::make_unique<LoggingOperator>(&log_), "sink");
    a_ = std::make_unique<Channel>(16, &task_->wakeup());
    b_ = std::make_unique<Channel>(16, &task_->wakeup());
    task_->AddInput(0, {a_.get(), b_.get()});
  }
  void Push(Channel& c, std::unique_ptr<StreamElement> e) { ASSERT_TRUE(c.TryPush(e)); }
  void Turns(int n) {
    for (int i = 0; i < n; ++i) {
      task_->Turn();
    }
  }
  std::vector<std::string> log_;
  ManualProcessingTimeService* task_pts_ = nullptr;
  std::unique_ptr<StreamTask> task_;
  std::unique_ptr<Channel> a_, b_;
};

TEST_F(StreamTaskAlignmentTest, RecordsBehindABarrierWaitForTheOtherChannel) {
  task_->EnableCheckpoints(CheckpointBarrierHandler::Mode::kExactlyOnce, nullptr, nullptr, nullptr);
  ASSERT_TRUE(task_->Begin());
  Push(*a_, Records({1}));
  Push(*a_, StreamElement::OfBarrier(CheckpointBarrier{1, 0, SnapshotType::kCheckpoint}));
  Push(*a_, Records({2}));
  Push(*b_, Records({10, 11}));
  Turns(4);
  // Channel a is blocked after its barrier: record 2 waits; b's records go through.
  EXPECT_EQ(log_, (std::vector<std::string>{"record 1", "record 10", "record 11"}));
  Push(*b_, StreamElement::OfBarrier(CheckpointBarrier{1, 0, SnapshotType::kCheckpoint}));
  Push(*b_, Records({12}));
  Turns(4);
  EXPECT_EQ(log_, (std::vector<std::string>{"record 1", "record 10", "record 11",
                                            "snapshot 1 after 3", "record 2", "record 12"}));
  task_->NotifyCheckpointComplete(1);
  Turns(1);
  EXPECT_EQ(log_.back(), "complete 1");
  task_->End();
}

TEST_F(StreamTaskAlignmentTest, AnAbortedCheckpointUnblocks) {
  task_->EnableCheckpoints(CheckpointBarrierHandler::Mode::kExactlyOnce, nullptr, nullptr, nullptr);
  ASSERT_TRUE(task_->Begin());
  Push(*a_, StreamElement::OfBarrier(CheckpointBarrier{1, 0, SnapshotType::kCheckpoint}));
  Push(*a_, Records({2}));
  Turns(3);
  EXPECT_TRUE(log_.empty());
  task_->NotifyCheckpointAborted(1);  // the coordinator's timeout
  Turns(2);
  EXPECT_EQ(log_, (std::vector<std::string>{"aborted 1", "record 2"}));
  // The rest of checkpoint 1 is ignored: no snapshot, nothing blocks.
  Push(*b_, StreamElement::OfBarrier(CheckpointBarrier{1, 0, SnapshotType::kCheckpoint}));
  Push(*b_, Records({3}));
  Turns(2);
  EXPECT_EQ(log_, (std::vector<std::string>{"aborted 1", "record 2", "record 3"}));
  task_->End();
}

TEST_F(StreamTaskAlignmentTest, AtLeastOnceDoesNotBlock) {
  task_->EnableCheckpoints(CheckpointBarrierHandler::Mode::kAtLeastOnce, nullptr, nullptr, nullptr);
  ASSERT_TRUE(task_->Begin());
  Push(*a_, StreamElement::OfBarrier(CheckpointBarrier{1, 0, SnapshotType::kCheckpoint}));
  Push(*a_, Records({2}));
  Turns(3);
  EXPECT_EQ(log_, std::vector<std::string>{"record 2"});
  Push(*b_, StreamElement::OfBarrier(CheckpointBarrier{1, 0, SnapshotType::kCheckpoint}));
  Turns(2);
  EXPECT_EQ(log_, (std::vector<std::string>{"record 2", "snapshot 1 after 1"}));
  task_->End();
}

// Alignment time (Flink's alignmentDurationNanos): from the first barrier of a checkpoint to the
// last, on the task's clock; the coordinator keeps the longest of any task per checkpoint.
TEST_F(StreamTaskAlignmentTest, AlignmentTimeIsFirstBarrierToLastOnTheTasksClock) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tm_alignment_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  CheckpointStorage storage(dir, "job", 1);
  ManualProcessingTimeService coordinator_pts;
  CheckpointingSpec spec;
  spec.interval_ms = 1000;
  CheckpointCoordinator coordinator(spec, {"sink#0"}, &storage, coordinator_pts, {});
  task_->EnableCheckpoints(CheckpointBarrierHandler::Mode::kExactlyOnce, &storage, &coordinator,
                           nullptr);
  ASSERT_TRUE(task_->Begin());
  ASSERT_EQ(coordinator.TriggerCheckpoint(), 1);
  task_pts_->AdvanceTo(100);
  Push(*a_, StreamElement::OfBarrier(CheckpointBarrier{1, 0, SnapshotType::kCheckpoint}));
  Turns(2);
  task_pts_->AdvanceTo(137);
  Push(*b_, Records({5}));
  Push(*b_, StreamElement::OfBarrier(CheckpointBarrier{1, 0, SnapshotType::kCheckpoint}));
  Turns(3);
  EXPECT_EQ(log_, (std::vector<std::string>{"record 5", "snapshot 1 after 1"}));
  CheckpointCoordinator::Stats stats = coordinator.stats();
  EXPECT_EQ(stats.completed, 1);
  EXPECT_EQ(stats.latest_alignment_ms, 37);
  ASSERT_EQ(coordinator.alignment_history_ns().size(), 1u);
  EXPECT_GT(coordinator.alignment_history_ns()[0], 0);

  // Both barriers in one instant: no alignment time.
  ASSERT_EQ(coordinator.TriggerCheckpoint(), 2);
  task_pts_->AdvanceTo(500);
  Push(*a_, StreamElement::OfBarrier(CheckpointBarrier{2, 0, SnapshotType::kCheckpoint}));
  Push(*b_, StreamElement::OfBarrier(CheckpointBarrier{2, 0, SnapshotType::kCheckpoint}));
  Turns(3);
  stats = coordinator.stats();
  EXPECT_EQ(stats.completed, 2);
  EXPECT_EQ(stats.latest_alignment_ms, 0);
  task_->End();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tidemark
