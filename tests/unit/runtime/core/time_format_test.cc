#include "runtime/core/time_format.h"

#include <gtest/gtest.h>

namespace tidemark {
namespace {

TEST(TimeFormatTest, EpochLikeEventTimesPrintAsIso8601UtcWithMilliseconds) {
  EXPECT_EQ(FormatEventTime(988107419999, TimeFormat::kReadable), "2001-04-24T10:16:59.999Z");
  EXPECT_EQ(FormatEventTime(1'700'000'000'000, TimeFormat::kReadable), "2023-11-14T22:13:20.000Z");
  // Before 1967: still a date, with the right day (floor, not truncation toward zero).
  EXPECT_EQ(FormatEventTime(-100'000'000'001, TimeFormat::kReadable), "1966-10-31T14:13:19.999Z");
}

TEST(TimeFormatTest, SyntheticEventTimesAndSentinelsStayShort) {
  EXPECT_EQ(FormatEventTime(9149, TimeFormat::kReadable), "9.149s");
  EXPECT_EQ(FormatEventTime(-1500, TimeFormat::kReadable), "-1.5s");
  EXPECT_EQ(FormatEventTime(99'999'999'999, TimeFormat::kReadable), "99999999.999s");
  EXPECT_EQ(FormatEventTime(kMinTimestamp, TimeFormat::kReadable), "MIN");
  EXPECT_EQ(FormatEventTime(kMaxTimestamp, TimeFormat::kReadable), "MAX");
}

TEST(TimeFormatTest, EpochMsPrintsTheIntegerSentinelsIncluded) {
  EXPECT_EQ(FormatEventTime(988107419999, TimeFormat::kEpochMs), "988107419999");
  EXPECT_EQ(FormatEventTime(kMinTimestamp, TimeFormat::kEpochMs), "-9223372036854775808");
  EXPECT_EQ(FormatEventTime(kMaxTimestamp, TimeFormat::kEpochMs), "9223372036854775807");
  EXPECT_EQ(FormatDuration(207'000, TimeFormat::kEpochMs), "207000ms");
}

TEST(TimeFormatTest, DurationsUseTheTwoLargestUnits) {
  EXPECT_EQ(FormatDuration(0, TimeFormat::kReadable), "0ms");
  EXPECT_EQ(FormatDuration(250, TimeFormat::kReadable), "250ms");
  EXPECT_EQ(FormatDuration(1500, TimeFormat::kReadable), "1.5s");
  EXPECT_EQ(FormatDuration(59'999, TimeFormat::kReadable), "59.999s");
  EXPECT_EQ(FormatDuration(60'000, TimeFormat::kReadable), "1m");
  EXPECT_EQ(FormatDuration(207'400, TimeFormat::kReadable), "3m 27s");
  EXPECT_EQ(FormatDuration(3'720'000, TimeFormat::kReadable), "1h 2m");
  EXPECT_EQ(FormatDuration(3'600'000, TimeFormat::kReadable), "1h");
  // What `status` printed as a lag of 13636001m27s.
  EXPECT_EQ(FormatDuration(818'160'087'000, TimeFormat::kReadable), "9469d 10h");
  EXPECT_EQ(FormatDuration(-1500, TimeFormat::kReadable), "-1.5s");
  EXPECT_EQ(FormatDuration(INT64_MIN, TimeFormat::kReadable).substr(0, 1), "-");
}

TEST(TimeFormatTest, TheProcessWideFormatIsParsedFromTheFlagValue) {
  TimeFormat f = TimeFormat::kReadable;
  EXPECT_TRUE(ParseTimeFormat("epoch-ms", &f));
  EXPECT_EQ(f, TimeFormat::kEpochMs);
  EXPECT_TRUE(ParseTimeFormat("readable", &f));
  EXPECT_EQ(f, TimeFormat::kReadable);
  EXPECT_FALSE(ParseTimeFormat("iso", &f));
  SetTimeFormat(TimeFormat::kEpochMs);
  EXPECT_EQ(FormatEventTime(5000), "5000");
  SetTimeFormat(TimeFormat::kReadable);
  EXPECT_EQ(FormatEventTime(5000), "5s");
}

}  // namespace
}  // namespace tidemark
