#include "runtime/eventtime/source_coordinator.h"

#include <map>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"

namespace tidemark {
namespace {

WatermarkAlignmentParams Params(const std::string& group, int64_t drift_ms) {
  WatermarkAlignmentParams p;
  p.group = group;
  p.max_drift_ms = drift_ms;
  return p;
}

/// Registers subtasks and records every announcement each one receives.
class Recorder {
 public:
  explicit Recorder(SourceCoordinator& c) : c_(c) {}
  int Register(const std::string& group, int64_t drift_ms) {
    const int slot = next_++;
    return ids_[slot] = c_.RegisterSubtask(Params(group, drift_ms), [this, slot](Timestamp max) {
      events_[slot].push_back(max);
    });
  }
  const std::vector<Timestamp>& events(int slot) { return events_[slot]; }

 private:
  SourceCoordinator& c_;
  int next_ = 0;
  std::map<int, int> ids_;
  std::map<int, std::vector<Timestamp>> events_;
};

TEST(WatermarkAggregatorTest, MinimumOfEachKeysLatestValue) {
  WatermarkAggregator a;
  EXPECT_FALSE(a.aggregated().has_value());
  EXPECT_EQ(a.Aggregate(0, 10), 10);
  EXPECT_EQ(a.Aggregate(1, 12), 10);
  EXPECT_EQ(a.Aggregate(1, 9), 9);               // a newer report replaces the older one
  EXPECT_EQ(a.Aggregate(1, kMaxTimestamp), 10);  // MAX is an ordinary value
  EXPECT_EQ(a.Aggregate(1, 8), 8);               // and may go down again
  EXPECT_TRUE(a.Remove(1));
  EXPECT_FALSE(a.Remove(1));
  EXPECT_EQ(a.aggregated(), 10);
  EXPECT_EQ(a.size(), 1u);
}

TEST(SourceCoordinatorTest, AnnouncesMinimumPlusDriftToEverySubtaskOfTheGroup) {
  SourceCoordinator c;
  Recorder r(c);
  const int s0 = r.Register("g", 1000);
  const int s1 = r.Register("g", 1000);
  c.ReportWatermark(s0, 42);
  EXPECT_EQ(r.events(0), (std::vector<Timestamp>{1042}));
  EXPECT_EQ(r.events(1), (std::vector<Timestamp>{1042}));
  c.ReportWatermark(s1, 44);
  c.ReportWatermark(s0, 5000);
  EXPECT_EQ(r.events(0).back(), 1044);
  EXPECT_EQ(r.events(1).back(), 1044);
  EXPECT_EQ(c.GroupMinimum("g"), 44);
  EXPECT_EQ(c.LastAnnounced(s0), 1044);
}

TEST(SourceCoordinatorTest, MaxAllowedSaturatesAtMax) {
  EXPECT_EQ(MaxAllowedWatermark(kMaxTimestamp, 1000), kMaxTimestamp);
  EXPECT_EQ(MaxAllowedWatermark(kMaxTimestamp - 10, 100), kMaxTimestamp);
  EXPECT_EQ(MaxAllowedWatermark(kMaxTimestamp - 100, 100), kMaxTimestamp);
  EXPECT_EQ(MaxAllowedWatermark(kMaxTimestamp - 101, 100), kMaxTimestamp - 1);
  EXPECT_EQ(MaxAllowedWatermark(-5, 0), -5);
  SourceCoordinator c;
  Recorder r(c);
  const int s0 = r.Register("g", 1000);
  const int s1 = r.Register("g", 1000);
  // Both idle (MAX): the announcement is MAX, not a wrapped negative value.
  c.ReportWatermark(s0, kMaxTimestamp);
  c.ReportWatermark(s1, kMaxTimestamp - 1);
  EXPECT_EQ(r.events(0).back(), kMaxTimestamp);
  EXPECT_EQ(r.events(1).back(), kMaxTimestamp);
}

TEST(SourceCoordinatorTest, IdleSubtaskReportingMaxDoesNotHoldTheGroupBack) {
  SourceCoordinator c;
  Recorder r(c);
  const int s0 = r.Register("g", 1000);
  const int s1 = r.Register("g", 1000);
  c.ReportWatermark(s0, 42);
  c.ReportWatermark(s1, 44);
  c.ReportWatermark(s0, kMaxTimestamp);
  EXPECT_EQ(r.events(1).back(), 1044);
  c.ReportWatermark(s0, 10);  // active again: its real value counts again
  EXPECT_EQ(r.events(1).back(), 1010);
}

TEST(SourceCoordinatorTest, GroupsAreIndependent) {
  SourceCoordinator c;
  Recorder r(c);
  const int a = r.Register("group1", 1000);
  const int b = r.Register("group2", 1000);
  c.ReportWatermark(a, 42);
  c.ReportWatermark(b, 44);
  c.ReportWatermark(a, 5000);
  EXPECT_EQ(r.events(0), (std::vector<Timestamp>{1042, 6000}));
  EXPECT_EQ(r.events(1), (std::vector<Timestamp>{1044}));
  EXPECT_EQ(c.GroupMinimum("group1"), 5000);
  EXPECT_EQ(c.GroupMinimum("group2"), 44);
  EXPECT_FALSE(c.GroupMinimum("nope").has_value());
}

TEST(SourceCoordinatorTest, EachSourceUsesItsOwnDriftOverTheSharedGroupMinimum) {
  SourceCoordinator c;
  Recorder r(c);
  const int s0 = r.Register("g", 100);
  r.Register("g", 5000);
  c.ReportWatermark(s0, 1000);
  EXPECT_EQ(r.events(0).back(), 1100);
  EXPECT_EQ(r.events(1).back(), 6000);
}

TEST(SourceCoordinatorTest, SubtaskWithoutSplitsTakesNoPart) {
  SourceCoordinator c;
  Recorder r(c);
  const int with_splits = r.Register("g", 1000);
  r.Register("g", 1000);             // never reports: no split, no watermark
  EXPECT_TRUE(r.events(0).empty());  // nobody reported: nothing announced, nobody waits
  c.ReportWatermark(with_splits, 7000);
  // The silent subtask does not hold the minimum at MIN, and it is told the limit too.
  EXPECT_EQ(r.events(0).back(), 8000);
  EXPECT_EQ(r.events(1).back(), 8000);
  EXPECT_EQ(c.GroupMinimum("g"), 7000);
}

TEST(SourceCoordinatorTest, UnregisteredSubtaskLeavesTheMinimum) {
  SourceCoordinator c;
  Recorder r(c);
  const int s0 = r.Register("g", 10);
  const int s1 = r.Register("g", 10);
  c.ReportWatermark(s0, 100);
  c.ReportWatermark(s1, 500);
  EXPECT_EQ(r.events(1).back(), 110);
  c.UnregisterSubtask(s0);
  EXPECT_EQ(r.events(1).back(), 510);
  const size_t before = r.events(0).size();
  c.ReportWatermark(s1, 600);
  EXPECT_EQ(r.events(0).size(), before);  // no announcements after unregistering
  c.ReportWatermark(s0, 1);               // unknown ids are ignored
  EXPECT_EQ(c.GroupMinimum("g"), 600);
}

TEST(SourceCoordinatorTest, EmptyGroupIsRejected) {
  SourceCoordinator c;
  EXPECT_THROW(c.RegisterSubtask(Params("", 1), {}), InvalidArgument);
}

}  // namespace
}  // namespace tidemark
