#include "operators/interval_join_operator.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

using testing::CollectingOutput;
using testing::DescribeRecord;

class IntervalJoinOperatorTest : public ::testing::Test {
 protected:
  void Open(int64_t lower, int64_t upper, std::string left_late = "") {
    IntervalJoinOperator::Options options;
    options.lower_bound_ms = lower;
    options.upper_bound_ms = upper;
    options.left_late_output_tag = std::move(left_late);
    op_ = std::make_unique<IntervalJoinOperator>(options, nullptr);
    OperatorContext ctx;
    ctx.output = &out_;
    ctx.processing_time = &clock_;
    op_->Open(ctx);
  }
  void Element(int input, const std::string& v, Timestamp ts) {
    StreamRecord r(Row{v}, ts);
    op_->ProcessElement(r, input);
  }
  void Watermark(int input, Timestamp ts) { op_->ProcessWatermark(tidemark::Watermark{ts}, input); }
  static std::string Joined(const std::string& l, const std::string& r, Timestamp ts) {
    return DescribeRecord(StreamRecord(Row{l, r}, ts));
  }

  ManualProcessingTimeService clock_;
  CollectingOutput out_;
  std::unique_ptr<IntervalJoinOperator> op_;
};

TEST_F(IntervalJoinOperatorTest, JoinsWithinInclusiveBoundsStampedWithTheLaterTimestamp) {
  Open(-1, 1);
  Element(0, "l1", 1);
  Element(1, "r3", 3);  // 3 - 1 = 2 > 1: no match
  Element(1, "r2", 2);
  Element(0, "l3", 3);
  EXPECT_EQ(out_.Describe(), (std::vector<std::string>{Joined("l1", "r2", 2), Joined("l3", "r2", 3),
                                                       Joined("l3", "r3", 3)}));
}

TEST_F(IntervalJoinOperatorTest, EventTimeIsTheMinimumOfBothInputsAndCleansBuffers) {
  Open(-1, 0);
  Element(0, "l", 1);
  Element(1, "r", 1);
  Watermark(0, 5);
  EXPECT_TRUE(out_.Watermarks().empty());  // right input still at MIN
  EXPECT_EQ(op_->BufferedTimestamps(Key{}, 0), std::vector<Timestamp>{1});
  Watermark(1, 1);
  EXPECT_EQ(out_.Watermarks(), std::vector<Timestamp>{1});
  // Left cleanup at ts (upper 0), right at ts + 1 (relative upper = -lower = 1).
  EXPECT_TRUE(op_->BufferedTimestamps(Key{}, 0).empty());
  EXPECT_EQ(op_->BufferedTimestamps(Key{}, 1), std::vector<Timestamp>{1});
  Watermark(1, 2);
  EXPECT_TRUE(op_->BufferedTimestamps(Key{}, 1).empty());
}

TEST_F(IntervalJoinOperatorTest, LateElementsGoToTheSideOutputAndAreNotJoined) {
  Open(-1, 1, "left_late");
  Watermark(0, 3);
  Watermark(1, 3);
  Element(1, "r3", 3);
  Element(0, "l2", 2);  // 2 < 3: late
  ASSERT_EQ(out_.SideOutput("left_late").size(), 1u);
  EXPECT_EQ(DescribeRecord(out_.SideOutput("left_late")[0]),
            DescribeRecord(StreamRecord(Row{"l2"}, 2)));
  EXPECT_TRUE(out_.Records().empty());
  StreamRecord no_ts(Row{"x"});
  EXPECT_THROW(op_->ProcessElement(no_ts, 1), NoTimestamp);
  IntervalJoinOperator::Options inverted;
  inverted.lower_bound_ms = 2;
  inverted.upper_bound_ms = 1;
  EXPECT_THROW(IntervalJoinOperator(inverted, nullptr), InvalidArgument);
  inverted.upper_inclusive = false;  // [2, 1] would be empty anyway; (2, 2) too
  inverted.upper_bound_ms = 2;
  EXPECT_THROW(IntervalJoinOperator(inverted, nullptr), InvalidArgument);
}

}  // namespace
}  // namespace tidemark
