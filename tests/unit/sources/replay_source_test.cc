#include "sources/replay_source.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "tests/unit/sources/fake_reader_output.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using testing::FakeReaderContext;
using testing::FakeReaderOutput;
using testing::RunReader;

class ReplaySourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() /
             ("tidemark_replay_test_" + std::to_string(::getpid()) + "_" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".jsonl"))
                .string();
  }
  void TearDown() override { fs::remove(path_); }

  SourceSpec Spec(const std::string& text) {
    std::ofstream(path_) << text;
    SourceSpec spec;
    spec.type = "replay";
    spec.replay.path = path_;
    spec.replay.schema = {{"ts", "timestamp", {}}, {"v", "int64", {}}};
    return spec;
  }

  std::string path_;
};

TEST_F(ReplaySourceTest, ReplaysArrivalsAtTheirProcessingTimeWithIdleActiveAndEnd) {
  ReplaySource source(
      Spec("{\"split\": \"a\", \"at\": 0, \"record\": {\"ts\": 5000, \"v\": 1}}\n"
           "{\"split\": \"b\", \"at\": 100, \"record\": {\"ts\": 9000, \"v\": 2}}\n"
           "\n"
           "{\"split\": \"a\", \"at\": 100, \"idle\": true}\n"
           "{\"split\": \"a\", \"at\": 2500, \"active\": true}\n"
           "{\"split\": \"a\", \"at\": 2500, \"record\": {\"ts\": 4000, \"v\": \"x\"}}\n"
           "{\"split\": \"b\", \"at\": 3000, \"end\": true}\n"
           "{\"at\": 7000}\n"));
  EXPECT_EQ(source.split_ids(), (std::vector<std::string>{"a", "b"}));
  FakeReaderContext ctx;
  FakeReaderOutput out(source.schema(), ctx.time);
  RunReader(source, out, ctx);
  EXPECT_EQ(out.events, (std::vector<std::string>{
                            "register a",
                            "register b",
                            "rec a @0 ts=5000 {\"ts\":5000,\"v\":1}",
                            "rec b @100 ts=9000 {\"ts\":9000,\"v\":2}",
                            "idle a",
                            "active a",
                            "err a:6 field \"v\": expected int64, got \"x\"",
                            "release b",
                        }));
  EXPECT_EQ(ctx.wakeups, (std::vector<Timestamp>{100, 2500, 3000, 7000}));
  EXPECT_EQ(ctx.time.GetCurrentProcessingTime(), 7000);
}

TEST_F(ReplaySourceTest, ReadersTakeTheirOwnSplitsOnly) {
  ReplaySource source(
      Spec("{\"split\": \"a\", \"at\": 0, \"record\": {\"ts\": 1}}\n"
           "{\"split\": \"b\", \"at\": 10, \"record\": {\"ts\": 2}}\n"
           "{\"split\": \"a\", \"at\": 20, \"record\": {\"ts\": 3}}\n"));
  FakeReaderContext ctx(1, 2);
  FakeReaderOutput out(source.schema(), ctx.time);
  RunReader(source, out, ctx, 1, 2);
  EXPECT_EQ(out.events,
            (std::vector<std::string>{"register b", "rec b @10 ts=2 {\"ts\":2,\"v\":null}"}));
}

TEST_F(ReplaySourceTest, MalformedEnvelopeNamesFileAndLine) {
  auto message = [&](const std::string& text) -> std::string {
    try {
      ReplaySource source(Spec(text));
    } catch (const InvalidArgument& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(message("{\"split\": \"a\", \"at\": 5, \"end\": true}\n{\"split\": \"a\", \"at\": 4, "
                    "\"end\": true}\n"),
            path_ + ":2: replay line: \"at\" goes back in time (4 after 5)");
  EXPECT_EQ(message("{\"split\": \"a\", \"record\": {}}\n"),
            path_ +
                ":1: replay line: \"at\" must be a non-negative integer (ms of processing time "
                "since the start)");
  EXPECT_EQ(
      message("{\"split\": \"a\", \"at\": 1}\n"),
      path_ +
          ":1: replay line: a line with a split needs exactly one of record, idle, active, end");
  EXPECT_EQ(
      message("{\"at\": 1, \"wat\": 2}\n"),
      path_ +
          ":1: replay line: unknown key \"wat\" (allowed: split, at, record, idle, active, end)");
  EXPECT_EQ(message("not json\n"), path_ + ":1: replay line: expected a JSON object");
  EXPECT_EQ(message("{\"at\": 1}\n{\"at\": 2, \"x\": " + std::string(2000, '[') + "}\n"),
            path_ + ":2: replay line: JSON nests deeper than 1000 levels");
}

TEST_F(ReplaySourceTest, AFileTooLargeToReadAtCompileTimeIsRefused) {
  SourceSpec spec = Spec("{\"at\": 1}\n");
  fs::resize_file(path_, static_cast<uintmax_t>(kMaxReplayFileBytes) + 1);  // sparse: no disk used
  try {
    ReplaySource source(spec);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()),
              path_ +
                  ": a replay file is read whole when the job is compiled and may "
                  "be at most 64 MiB; this one is 65 MiB");
  }
}

TEST_F(ReplaySourceTest, ADeviceIsRefusedInsteadOfReadForever) {
  // /dev/zero used to keep the compiling thread (the daemon's I/O thread) busy forever.
  SourceSpec spec = Spec("");
  spec.replay.path = "/dev/zero";
  try {
    ReplaySource source(spec);
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "input file '/dev/zero' is a character device; a source reads regular files only");
  }
}

}  // namespace
}  // namespace tidemark
