#include "sources/datagen_source.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "tests/unit/sources/fake_reader_output.h"

namespace tidemark {
namespace {

using testing::FakeReaderContext;
using testing::FakeReaderOutput;
using testing::RunReader;

SourceSpec Spec() {
  SourceSpec spec;
  spec.type = "datagen";
  spec.datagen.split_count = 2;
  spec.datagen.count = 3;
  spec.datagen.rate = 10;  // one record per 100 ms per split
  spec.datagen.key_count = 4;
  spec.datagen.first_timestamp_ms = 1000;
  spec.datagen.seed = 7;
  return spec;
}

std::vector<std::string> Generate(const SourceSpec& spec, int subtask = 0, int parallelism = 1) {
  DatagenSource source(spec);
  FakeReaderContext ctx(subtask, parallelism);
  FakeReaderOutput out(source.schema(), ctx.time);
  RunReader(source, out, ctx, subtask, parallelism);
  return out.events;
}

TEST(DatagenSourceTest, PacesEachSplitAtItsRateAndOrdersByDueTime) {
  const std::vector<std::string> events = Generate(Spec());
  ASSERT_EQ(events.size(), 10u);
  EXPECT_EQ(events[0], "register split-0");
  EXPECT_EQ(events[1], "register split-1");
  // Due times 0, 0, 100, 100, 200, 200: split 0 first on ties; event time = 1000 + due.
  EXPECT_EQ(events[2].rfind("rec split-0 @0 ts=1000 {\"ts\":1000,\"split\":0,", 0), 0u)
      << events[2];
  EXPECT_EQ(events[3].rfind("rec split-1 @0 ts=1000 {\"ts\":1000,\"split\":1,", 0), 0u)
      << events[3];
  EXPECT_EQ(events[4].rfind("rec split-0 @100 ts=1100 ", 0), 0u) << events[4];
  EXPECT_EQ(events[5].rfind("rec split-1 @100 ts=1100 ", 0), 0u) << events[5];
  EXPECT_EQ(events[6].rfind("rec split-0 @200 ts=1200 ", 0), 0u) << events[6];
  EXPECT_EQ(events[7], "release split-0");
  EXPECT_EQ(events[8].rfind("rec split-1 @200 ts=1200 ", 0), 0u) << events[8];
  EXPECT_EQ(events[9], "release split-1");
}

TEST(DatagenSourceTest, SameSeedSameRecordsOtherSeedOtherKeys) {
  SourceSpec spec = Spec();
  spec.datagen.count = 50;
  spec.datagen.disorder = "uniform";
  spec.datagen.max_out_of_orderness_ms = 500;
  EXPECT_EQ(Generate(spec), Generate(spec));
  SourceSpec other = spec;
  other.datagen.seed = 8;
  EXPECT_NE(Generate(spec), Generate(other));
}

TEST(DatagenSourceTest, ASplitsRecordsDoNotDependOnParallelism) {
  SourceSpec spec = Spec();
  spec.datagen.count = 20;
  spec.datagen.disorder = "exponential";
  spec.datagen.max_out_of_orderness_ms = 300;
  std::vector<std::string> split1_alone;
  for (const std::string& e : Generate(spec, 1, 2)) {
    if (e.rfind("rec ", 0) == 0) {
      split1_alone.push_back(e);
    }
  }
  std::vector<std::string> split1_shared;
  for (const std::string& e : Generate(spec)) {
    if (e.rfind("rec split-1 ", 0) == 0) {
      split1_shared.push_back(e);
    }
  }
  EXPECT_EQ(split1_alone.size(), 20u);
  EXPECT_EQ(split1_alone, split1_shared);
}

TEST(DatagenSourceTest, DisorderStaysWithinTheBoundAndSkewShiftsSplits) {
  SourceSpec spec = Spec();
  spec.datagen.count = 200;
  spec.datagen.disorder = "uniform";
  spec.datagen.max_out_of_orderness_ms = 250;
  spec.datagen.skew_ms = 5000;
  DatagenSource source(spec);
  FakeReaderContext ctx;
  FakeReaderOutput out(source.schema(), ctx.time);
  RunReader(source, out, ctx);
  int64_t max_delay = 0;
  int64_t delayed = 0;
  for (const std::string& e : out.records) {
    // "rec split-S @P ts=T ..."
    const int64_t split = e[10] - '0';
    const int64_t p = std::stoll(e.substr(e.find('@') + 1));
    const int64_t ts = std::stoll(e.substr(e.find("ts=") + 3));
    const int64_t delay = 1000 + p + split * 5000 - ts;
    EXPECT_GE(delay, 0) << e;
    EXPECT_LE(delay, 250) << e;
    max_delay = std::max(max_delay, delay);
    delayed += delay > 0 ? 1 : 0;
  }
  EXPECT_GT(max_delay, 200);  // the distribution reaches near its bound
  EXPECT_GT(delayed, 300);
}

TEST(DatagenSourceTest, IdlePeriodPushesASplitsRecordsBack) {
  SourceSpec spec = Spec();
  spec.datagen.split_count = 1;
  spec.datagen.count = 4;
  spec.datagen.idle_periods = {IdlePeriodSpec{0, 150, 1150, {}}};
  DatagenSource source(spec);
  FakeReaderContext ctx;
  FakeReaderOutput out(source.schema(), ctx.time);
  RunReader(source, out, ctx);
  ASSERT_EQ(out.records.size(), 4u);
  // Due 0, 100, then 200 and 300 fall after the idle start: pushed back by 1000 ms.
  EXPECT_EQ(out.records[0].rfind("rec split-0 @0 ts=1000 ", 0), 0u);
  EXPECT_EQ(out.records[1].rfind("rec split-0 @100 ts=1100 ", 0), 0u);
  EXPECT_EQ(out.records[2].rfind("rec split-0 @1200 ts=2200 ", 0), 0u);
  EXPECT_EQ(out.records[3].rfind("rec split-0 @1300 ts=2300 ", 0), 0u);
  EXPECT_EQ(ctx.wakeups, (std::vector<Timestamp>{100, 1200, 1300}));
}

// The error of constructing a datagen source over `spec`, as "<key path>: <reason>" (the key
// path is what the job compiler reports the error at); "" when it constructs.
std::string KeyedError(const SourceSpec& spec) {
  try {
    DatagenSource source(spec);
  } catch (const KeyedInvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), e.key_path() + ": " + e.reason());
    return e.key_path() + ": " + e.reason();
  }
  return "";
}

TEST(DatagenSourceTest, RejectsBadSettingsAtTheirKeys) {
  EXPECT_EQ(KeyedError(Spec()), "");
  SourceSpec spec = Spec();
  spec.datagen.rate = 0;
  EXPECT_EQ(KeyedError(spec), "rate: must be at least 1, got 0");
  spec = Spec();
  spec.datagen.count = -1;
  EXPECT_EQ(KeyedError(spec), "count: must not be negative, got -1");
  spec = Spec();
  spec.datagen.max_out_of_orderness_ms = -5;
  EXPECT_EQ(KeyedError(spec), "max-out-of-orderness: must not be negative, got -5ms");
  spec = Spec();
  spec.datagen.idle_periods = {IdlePeriodSpec{2, 0, 10, {}}};
  EXPECT_EQ(KeyedError(spec), "idle-periods[0].split: no split 2 (splits: 2)");
}

}  // namespace
}  // namespace tidemark
