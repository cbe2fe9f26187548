// The coordinator on a manual clock: triggers every interval, completes when every task
// acknowledged (metadata then notify), aborts on timeout and decline, respects max concurrent and
// min-pause, fails the job past the tolerable failures.
#include "runtime/checkpoint/checkpoint_coordinator.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/time/manual_processing_time_service.h"

namespace tidemark {
namespace {

class CheckpointCoordinatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tm_ckpt_coord_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    storage_ = std::make_unique<CheckpointStorage>(dir_, "job", 1);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<CheckpointCoordinator> Make(CheckpointingSpec spec) {
    CheckpointCoordinator::Hooks hooks;
    hooks.trigger_sources = [this](const CheckpointBarrier& b) {
      events_.push_back("trigger " + std::to_string(b.id) + "@" + std::to_string(b.timestamp_ms));
    };
    hooks.notify_complete = [this](int64_t id) {
      // The metadata is on disk before anyone hears of the completion.
      EXPECT_TRUE(std::filesystem::exists(storage_->CheckpointDir(id) / "_metadata"));
      events_.push_back("complete " + std::to_string(id));
    };
    hooks.notify_aborted = [this](int64_t id, const std::string&) {
      events_.push_back("abort " + std::to_string(id));
    };
    hooks.fail_job = [this](const std::string& reason) {
      events_.push_back("fail: " + reason);
    };
    return std::make_unique<CheckpointCoordinator>(
        spec, std::vector<std::string>{"src#0", "sink#0"}, storage_.get(), pts_, hooks);
  }

  std::filesystem::path dir_;
  std::unique_ptr<CheckpointStorage> storage_;
  ManualProcessingTimeService pts_;
  std::vector<std::string> events_;
};

TEST_F(CheckpointCoordinatorTest, TriggersEveryIntervalAndCompletesOnTheLastAck) {
  CheckpointingSpec spec;
  spec.interval_ms = 100;
  auto c = Make(spec);
  c->Start();
  pts_.AdvanceTo(99);
  EXPECT_TRUE(events_.empty());
  pts_.AdvanceTo(100);
  EXPECT_EQ(events_, std::vector<std::string>{"trigger 1@100"});
  c->Acknowledge(1, "src#0", {storage_->WriteState(1, "src", 0, "pos=5")});
  EXPECT_EQ(events_.size(), 1u);
  c->Acknowledge(1, "src#0", {});  // duplicate: ignored
  c->Acknowledge(1, "sink#0", {});
  EXPECT_EQ(events_, (std::vector<std::string>{"trigger 1@100", "complete 1"}));
  EXPECT_EQ(c->stats().completed, 1);
  EXPECT_EQ(c->stats().latest_completed_id, 1);
  EXPECT_EQ(c->stats().latest_size_bytes, 5u);
  EXPECT_EQ(*storage_->LoadLatest()->Find("src", 0), "pos=5");
  pts_.AdvanceTo(200);
  EXPECT_EQ(events_.back(), "trigger 2@200");
}

TEST_F(CheckpointCoordinatorTest, ATimedOutCheckpointIsAbortedAndTheJobFailsPastTheTolerance) {
  CheckpointingSpec spec;
  spec.interval_ms = 100;
  spec.timeout_ms = 50;
  spec.tolerable_failed_checkpoints = 1;
  auto c = Make(spec);
  c->Start();
  pts_.AdvanceTo(100);
  c->Acknowledge(1, "src#0", {});
  pts_.AdvanceTo(149);
  EXPECT_EQ(c->pending_ids(), std::vector<int64_t>{1});
  pts_.AdvanceTo(150);
  EXPECT_EQ(events_, (std::vector<std::string>{"trigger 1@100", "abort 1"}));
  EXPECT_TRUE(c->pending_ids().empty());
  c->Acknowledge(1, "sink#0", {});  // too late: nothing completes
  EXPECT_EQ(c->stats().completed, 0);
  pts_.AdvanceTo(200);
  pts_.AdvanceTo(250);  // the second consecutive failure exceeds the tolerance of 1
  ASSERT_EQ(events_.size(), 5u);
  EXPECT_EQ(events_[2], "trigger 2@200");
  EXPECT_EQ(events_[3], "abort 2");
  EXPECT_EQ(events_[4],
            "fail: exceeded checkpoint tolerable failure threshold (1): checkpoint 2 expired "
            "before completing (timeout 50ms)");
  EXPECT_EQ(c->stats().failed, 2);
}

TEST_F(CheckpointCoordinatorTest, TheHistoryKeepsTheLastTenEndedCheckpointsWithTheirFigures) {
  CheckpointingSpec spec;
  spec.interval_ms = 100;
  spec.timeout_ms = 50;
  spec.tolerable_failed_checkpoints = 100;
  auto c = Make(spec);
  c->Start();
  // 1 expires; 2 .. 12 complete 10 ms after their trigger with 5 bytes of state.
  pts_.AdvanceTo(150);
  for (int64_t id = 2; id <= 12; ++id) {
    pts_.AdvanceTo(id * 100);
    pts_.AdvanceTo(id * 100 + 10);
    c->Acknowledge(id, "src#0", {storage_->WriteState(id, "src", 0, "pos=5")});
    c->Acknowledge(id, "sink#0", {});
  }
  const auto history = c->stats().history;
  ASSERT_EQ(history.size(), CheckpointCoordinator::kHistory);
  EXPECT_EQ(history.front().id, 3);  // 1 (failed) and 2 fell out
  const CheckpointCoordinator::HistoryEntry last = history.back();
  EXPECT_EQ(last.id, 12);
  EXPECT_TRUE(last.completed);
  EXPECT_FALSE(last.savepoint);
  EXPECT_EQ(last.trigger_ms, 1200);
  EXPECT_EQ(last.duration_ms, 10);
  EXPECT_EQ(last.size_bytes, 5u);
  EXPECT_EQ(last.failure, "");

  // A failed one: its reason and the time from trigger to abort.
  CheckpointCoordinator::Stats before = c->stats();
  pts_.AdvanceTo(1300);
  pts_.AdvanceTo(1350);
  const CheckpointCoordinator::HistoryEntry failed = c->stats().history.back();
  EXPECT_EQ(failed.id, 13);
  EXPECT_FALSE(failed.completed);
  EXPECT_EQ(failed.trigger_ms, 1300);
  EXPECT_EQ(failed.duration_ms, 50);
  EXPECT_EQ(failed.failure, "checkpoint 13 expired before completing (timeout 50ms)");
  EXPECT_EQ(c->stats().history.front().id, before.history[1].id);
}

TEST_F(CheckpointCoordinatorTest, DeclineAbortsAndMaxConcurrentAndMinPauseDelayTriggers) {
  CheckpointingSpec spec;
  spec.interval_ms = 100;
  spec.min_pause_ms = 70;
  spec.tolerable_failed_checkpoints = 5;
  auto c = Make(spec);
  c->Start();
  pts_.AdvanceTo(100);  // 1 triggered
  pts_.AdvanceTo(200);  // 1 still pending: max-concurrent 1 holds 2 back
  EXPECT_EQ(events_, std::vector<std::string>{"trigger 1@100"});
  pts_.AdvanceTo(230);
  c->Decline(1, "sink#0", "snapshot threw");
  EXPECT_EQ(events_.back(), "abort 1");
  pts_.AdvanceTo(299);  // min-pause: not before 230 + 70 = 300
  EXPECT_EQ(events_.size(), 2u);
  pts_.AdvanceTo(300);
  EXPECT_EQ(events_.back(), "trigger 2@300");
}

// Durations near Long.MAX ms (106751991166d loads: it is in range) on a wall clock at 2026:
// now + interval, now + timeout and the end + min-pause wrapped to negative times, so the
// coordinator triggered checkpoints back to back for ever (a bounded `tidemark run` never
// ended), or every checkpoint expired at once. They saturate: "never", as in Flink, where
// these are delays rather than absolute times.
TEST_F(CheckpointCoordinatorTest, AnIntervalNearLongMaxMeansNeverRatherThanWrapping) {
  constexpr Timestamp kNow = 1'796'115'600'000;  // 2026-12-01T09:00:00Z
  constexpr int64_t kHuge = int64_t{106'751'991'166} * 24 * 3600 * 1000;
  pts_.AdvanceTo(kNow);
  CheckpointingSpec spec;
  spec.interval_ms = kHuge;
  auto c = Make(spec);
  c->Start();
  // The first tick is at the end of time, not at a wrapped (negative) time, which a manual
  // clock would fire again and again without end.
  ASSERT_EQ(pts_.NextTimerTime(), kMaxTimestamp);
  pts_.AdvanceTo(kNow + 1'000'000'000);  // 11.6 days later: no periodic checkpoint
  EXPECT_TRUE(events_.empty());
  EXPECT_TRUE(c->pending_ids().empty());
}

TEST_F(CheckpointCoordinatorTest, ATimeoutAndAMinPauseNearLongMaxNeverPass) {
  constexpr Timestamp kNow = 1'796'115'600'000;  // 2026-12-01T09:00:00Z
  constexpr int64_t kHuge = int64_t{106'751'991'166} * 24 * 3600 * 1000;
  pts_.AdvanceTo(kNow);
  CheckpointingSpec spec;
  spec.interval_ms = 100;
  spec.timeout_ms = kHuge;
  spec.min_pause_ms = kHuge;
  const Timestamp t0 = pts_.GetCurrentProcessingTime();
  auto c = Make(spec);
  c->Start();
  pts_.AdvanceTo(t0 + 100);
  pts_.AdvanceTo(t0 + 10'000);  // the timeout has not passed: still pending, not aborted
  EXPECT_EQ(events_, std::vector<std::string>{"trigger 1@" + std::to_string(t0 + 100)});
  EXPECT_EQ(c->pending_ids(), std::vector<int64_t>{1});
  c->Acknowledge(1, "src#0", {});
  c->Acknowledge(1, "sink#0", {});
  EXPECT_EQ(events_.back(), "complete 1");
  pts_.AdvanceTo(t0 + 1'000'000);  // the min-pause after it has not passed: no second trigger
  EXPECT_EQ(events_.size(), 2u);
  EXPECT_EQ(c->stats().failed, 0);
}

TEST_F(CheckpointCoordinatorTest, AFinishedTasksStateThatCannotBeWrittenFailsTheCheckpoint) {
  // The storage refuses a finished task's final state (here chk-1 is a plain file, so nothing can
  // be written under it; on a real machine a full disk): the checkpoint fails and is counted,
  // rather than completing without that state; the next one takes the state and completes.
  CheckpointingSpec spec;
  spec.interval_ms = 100;
  spec.tolerable_failed_checkpoints = 1;
  auto c = Make(spec);
  c->Start();
  pts_.AdvanceTo(100);  // 1 triggered
  std::filesystem::create_directories(dir_);
  std::ofstream(storage_->CheckpointDir(1)) << "in the way";
  c->TaskFinished("sink#0", {CheckpointCoordinator::FinishedState{"sink", 0, "final", {}}});
  EXPECT_EQ(events_, (std::vector<std::string>{"trigger 1@100", "abort 1"}));
  c->Acknowledge(1, "src#0", {});  // too late: nothing completes
  EXPECT_EQ(c->stats().failed, 1);
  EXPECT_EQ(c->stats().completed, 0);
  EXPECT_EQ(c->stats().history.back().failure.find("checkpoint 1: cannot write the final state "
                                                   "of sink#0: "),
            0u)
      << c->stats().history.back().failure;
  pts_.AdvanceTo(200);  // 2 triggered: the finished task's state is written with it
  EXPECT_EQ(events_.back(), "trigger 2@200");
  c->Acknowledge(2, "src#0", {storage_->WriteState(2, "src", 0, "pos=9")});
  EXPECT_EQ(events_.back(), "complete 2");
  const std::optional<CompletedCheckpoint> latest = storage_->LoadLatest();
  ASSERT_TRUE(latest.has_value());
  EXPECT_EQ(latest->id, 2);
  EXPECT_EQ(*latest->Find("sink", 0), "final");
  EXPECT_EQ(*latest->Find("src", 0), "pos=9");
}

TEST_F(CheckpointCoordinatorTest, CompletionIsPostedToTheCoordinatorThread) {
  CheckpointingSpec spec;
  spec.interval_ms = 100;
  std::vector<std::function<void()>> posted;
  CheckpointCoordinator::Hooks hooks;
  hooks.notify_complete = [this](int64_t id) {
    events_.push_back("complete " + std::to_string(id));
  };
  hooks.post = [&](std::function<void()> f) {
    posted.push_back(std::move(f));
  };
  CheckpointCoordinator c(spec, {"t#0"}, storage_.get(), pts_, hooks);
  ASSERT_EQ(c.TriggerCheckpoint(), std::optional<int64_t>(1));
  c.Acknowledge(1, "t#0", {});
  EXPECT_TRUE(events_.empty());
  ASSERT_EQ(posted.size(), 1u);
  posted[0]();
  EXPECT_EQ(events_, std::vector<std::string>{"complete 1"});
}

}  // namespace
}  // namespace tidemark
