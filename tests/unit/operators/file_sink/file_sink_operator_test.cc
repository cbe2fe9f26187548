#include "operators/file_sink/file_sink_operator.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdlib.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "runtime/core/non_recoverable_error.h"
#include "runtime/state/state_serializer.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

Schema TestSchema() {
  return Schema({{"n", FieldType::kInt64}});
}
std::string Line(int64_t n) {
  return fmt::format("{{\"n\":{}}}", n);
}

/// A sink instance on its own manual clock; destroying it without Close is a crash.
struct Sink {
  std::unique_ptr<ManualProcessingTimeService> clock;
  testing::CollectingOutput out;
  std::shared_ptr<SinkResult> result;
  std::unique_ptr<FileSinkOperator> op;

  Sink(const SinkSpec& spec, bool checkpointing, Timestamp now = 0, int subtask = 0)
      : clock(std::make_unique<ManualProcessingTimeService>(now)),
        result(std::make_shared<SinkResult>(TestSchema(), false)),
        op(std::make_unique<FileSinkOperator>(spec, TestSchema(), result, subtask, checkpointing)) {
    OperatorContext ctx;
    ctx.name = "sink";
    ctx.subtask_index = subtask;
    ctx.output = &out;
    ctx.processing_time = clock.get();
    op->Open(ctx);
  }
  void Restore(const std::string* snapshot, int64_t id = 1) {
    std::optional<StateReader> reader;
    StateInitializationContext ctx;
    if (snapshot != nullptr) {
      reader.emplace(*snapshot);
      ctx.reader = &*reader;
      ctx.restored_checkpoint_id = id;
    }
    op->InitializeState(ctx);
  }
  void Write(int64_t n) {
    StreamRecord r(Row{Value{n}}, n);
    op->ProcessElement(r, 0);
  }
  std::string Snapshot(int64_t id) {
    StateWriter writer;
    StateSnapshotContext ctx{id, clock->GetCurrentProcessingTime(), writer};
    op->SnapshotState(ctx);
    return writer.Release();
  }
  void Crash() {
    op.reset();  // no Finish, no Close: the process is gone
    clock.reset();
  }
};

class FileSinkOperatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tm_file_sink_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    root_ = tmpl;
    dir_ = root_ / "out";
    spec_.type = "file";
    spec_.path = dir_.string();
    spec_.delivery_guarantee = "exactly-once";
  }
  void TearDown() override { fs::remove_all(root_); }

  /// Sorted names in the output directory.
  std::vector<std::string> Listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }
  std::vector<std::string> Hidden() const {
    std::vector<std::string> out;
    for (const std::string& n : Listing()) {
      if (n.front() == '.') {
        out.push_back(n);
      }
    }
    return out;
  }
  /// Finished files (non-hidden) in counter order, each as its lines.
  std::map<std::string, std::vector<std::string>> Finished() const {
    std::map<std::string, std::vector<std::string>> files;
    for (const std::string& n : Listing()) {
      if (n.front() == '.') {
        continue;
      }
      std::ifstream in(dir_ / n);
      std::vector<std::string> lines;
      for (std::string l; std::getline(in, l);) {
        lines.push_back(l);
      }
      files[n] = lines;
    }
    return files;
  }
  /// All finished lines, in part-counter order (part-0-2 before part-0-10).
  std::vector<std::string> FinishedLines() const {
    std::vector<std::pair<int64_t, std::string>> order;
    for (const auto& [name, lines] : Finished()) {
      order.emplace_back(std::stoll(name.substr(name.rfind('-') + 1)), name);
    }
    std::sort(order.begin(), order.end());
    std::vector<std::string> all;
    const auto files = Finished();
    for (const auto& [c, name] : order) {
      const auto& lines = files.at(name);
      all.insert(all.end(), lines.begin(), lines.end());
    }
    return all;
  }
  static std::vector<std::string> Lines(int64_t from, int64_t to) {
    std::vector<std::string> v;
    for (int64_t i = from; i < to; ++i) {
      v.push_back(Line(i));
    }
    return v;
  }

  fs::path root_;
  fs::path dir_;
  SinkSpec spec_;
};

TEST_F(FileSinkOperatorTest, ReadersSeeNothingUntilTheFileIsFinished) {
  Sink s(spec_, /*checkpointing=*/false);
  s.Restore(nullptr);
  s.Write(1);
  s.Write(2);
  s.Write(3);
  ASSERT_EQ(Listing().size(), 1u);
  EXPECT_TRUE(Listing()[0].starts_with(".part-0-0.inprogress.")) << Listing()[0];
  EXPECT_TRUE(Finished().empty());
  // DefaultRollingPolicy: a checkpoint does not roll a small file; it stays in progress.
  s.Snapshot(1);
  s.op->NotifyCheckpointComplete(1);
  EXPECT_TRUE(Finished().empty());
  s.op->Finish();
  s.op->Close();
  EXPECT_EQ(Listing(), std::vector<std::string>{"part-0-0"});
  EXPECT_EQ(Finished().at("part-0-0"),
            (std::vector<std::string>{"{\"n\":1}", "{\"n\":2}", "{\"n\":3}"}));
  EXPECT_EQ(s.result->count(), 3);
}

TEST_F(FileSinkOperatorTest, RollOnCheckpointMakesPendingAndCompleteFinishes) {
  spec_.rolling_policy.roll_on_checkpoint = true;
  Sink s(spec_, true);
  s.Restore(nullptr);
  s.Write(1);
  s.Write(2);
  s.Snapshot(1);
  EXPECT_EQ(s.op->num_pending_files(), 1u);
  EXPECT_TRUE(Finished().empty());  // pending: still hidden
  ASSERT_EQ(Hidden().size(), 1u);
  s.Write(3);
  s.op->NotifyCheckpointComplete(1);
  EXPECT_EQ(Finished().at("part-0-0"), Lines(1, 3));
  ASSERT_EQ(Hidden().size(), 1u);
  EXPECT_TRUE(Hidden()[0].starts_with(".part-0-1.inprogress.")) << Hidden()[0];
  // End of input with checkpointing: pending until the final checkpoint completes.
  s.op->Finish();
  EXPECT_EQ(Finished().size(), 1u);
  s.Snapshot(2);
  EXPECT_EQ(Finished().size(), 1u);
  s.op->NotifyCheckpointComplete(2);
  s.op->Close();
  EXPECT_EQ(Listing(), (std::vector<std::string>{"part-0-0", "part-0-1"}));
  EXPECT_EQ(Finished().at("part-0-1"), Lines(3, 4));
}

TEST_F(FileSinkOperatorTest, AbortedCheckpointFilesCommitWithTheNextCompletedOne) {
  spec_.rolling_policy.roll_on_checkpoint = true;
  Sink s(spec_, true);
  s.Restore(nullptr);
  s.Write(1);
  s.Snapshot(1);
  s.op->NotifyCheckpointAborted(1);
  s.Write(2);
  s.Snapshot(2);
  EXPECT_TRUE(Finished().empty());
  s.op->NotifyCheckpointComplete(2);
  EXPECT_EQ(FinishedLines(), Lines(1, 3));
  EXPECT_EQ(Listing(), (std::vector<std::string>{"part-0-0", "part-0-1"}));
}

TEST_F(FileSinkOperatorTest, CrashAfterSnapshotBeforeNotifyCommitsOnceAfterRestore) {
  spec_.rolling_policy.roll_on_checkpoint = true;
  std::string snap;
  {
    Sink s(spec_, true);
    s.Restore(nullptr);
    s.Write(1);
    s.Write(2);
    snap = s.Snapshot(1);
    s.Crash();  // checkpoint 1 completed at the coordinator; the notification never came
  }
  EXPECT_TRUE(Finished().empty());
  for (int attempt = 0; attempt < 2; ++attempt) {  // the second restore finds it committed
    Sink s(spec_, true);
    s.Restore(&snap);
    EXPECT_EQ(Listing(), std::vector<std::string>{"part-0-0"});
    EXPECT_EQ(Finished().at("part-0-0"), Lines(1, 3));
    EXPECT_EQ(s.op->num_committed_files(), attempt == 0 ? 1 : 0);
    s.Crash();
  }
  Sink s(spec_, true);
  s.Restore(&snap);
  s.Write(3);
  s.op->Finish();
  s.Snapshot(2);
  s.op->NotifyCheckpointComplete(2);
  s.op->Close();
  EXPECT_EQ(Listing(), (std::vector<std::string>{"part-0-0", "part-0-1"}));
  EXPECT_EQ(FinishedLines(), Lines(1, 4));
}

TEST_F(FileSinkOperatorTest, CrashInTheMiddleOfTheRenamesCommitsEachFileOnce) {
  spec_.rolling_policy.part_size_bytes = 10;  // a line is 8 bytes: two lines per part file
  std::string snap;
  std::vector<std::string> hidden;
  {
    Sink s(spec_, true);
    s.Restore(nullptr);
    for (int i = 1; i <= 5; ++i) {
      s.Write(i);
    }
    snap = s.Snapshot(1);  // part-0-0 and part-0-1 pending, part-0-2 (8 bytes) in progress
    EXPECT_EQ(s.op->num_pending_files(), 2u);
    hidden = Hidden();
    s.Crash();
  }
  ASSERT_EQ(hidden.size(), 3u);
  // The crash came after the first rename of NotifyCheckpointComplete(1).
  const std::string first = *std::find_if(hidden.begin(), hidden.end(), [](const std::string& n) {
    return n.starts_with(".part-0-0.");
  });
  fs::rename(dir_ / first, dir_ / "part-0-0");
  Sink s(spec_, true);
  s.Restore(&snap);
  EXPECT_EQ(s.op->num_committed_files(), 1);
  EXPECT_EQ(Finished().at("part-0-0"), Lines(1, 3));
  EXPECT_EQ(Finished().at("part-0-1"), Lines(3, 5));
  s.op->Finish();
  s.Snapshot(2);
  s.op->NotifyCheckpointComplete(2);
  EXPECT_EQ(Listing(), (std::vector<std::string>{"part-0-0", "part-0-1", "part-0-2"}));
  EXPECT_EQ(FinishedLines(), Lines(1, 6));
}

TEST_F(FileSinkOperatorTest, CrashMidIntervalTruncatesAndTheReplayWritesOnce) {
  std::string snap;
  std::string in_progress;
  {
    Sink s(spec_, true);
    s.Restore(nullptr);
    for (int i = 0; i < 5; ++i) {
      s.Write(i);
    }
    snap = s.Snapshot(1);
    s.op->NotifyCheckpointComplete(1);
    for (int i = 5; i < 8; ++i) {
      s.Write(i);
    }
    s.Snapshot(2);  // flushes 5..7 into the file; checkpoint 2 never completes
    in_progress = Hidden().at(0);
    EXPECT_EQ(fs::file_size(dir_ / in_progress), 5 * Line(0).size() + 5 + 3 * (Line(5).size() + 1));
    s.Crash();
  }
  Sink s(spec_, true);
  s.Restore(&snap);
  EXPECT_EQ(Hidden(), std::vector<std::string>{in_progress});
  EXPECT_EQ(fs::file_size(dir_ / in_progress), 5 * (Line(0).size() + 1));  // back to checkpoint 1
  for (int i = 5; i < 10; ++i) {  // the source replays from checkpoint 1
    s.Write(i);
  }
  s.op->Finish();
  s.Snapshot(3);
  s.op->NotifyCheckpointComplete(3);
  EXPECT_EQ(Listing(), std::vector<std::string>{"part-0-0"});
  EXPECT_EQ(FinishedLines(), Lines(0, 10));
}

// An in-progress part file the checkpoint recorded, deleted outside the job: every restart from
// that checkpoint would meet the same missing file, so the restore fails without a restart
// (NonRecoverableError, docs/checkpoints.md), as a part file shorter than recorded does.
TEST_F(FileSinkOperatorTest, AMissingInProgressFileFailsTheRestoreForGood) {
  std::string snap;
  std::string in_progress;
  {
    Sink s(spec_, true);
    s.Restore(nullptr);
    for (int i = 0; i < 3; ++i) {
      s.Write(i);
    }
    snap = s.Snapshot(1);
    in_progress = Hidden().at(0);
    s.Crash();
  }
  fs::remove(dir_ / in_progress);
  Sink s(spec_, true);
  try {
    s.Restore(&snap);
    ADD_FAILURE() << "the restore did not fail";
  } catch (const NonRecoverableError& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot resume in-progress part file '" + (dir_ / in_progress).string() +
                  "': it is missing, and the checkpoint recorded " +
                  std::to_string(3 * (Line(0).size() + 1)) +
                  " bytes of it (it was removed outside the job); restore another checkpoint "
                  "or start the job without one");
  }
}

TEST_F(FileSinkOperatorTest, InProgressFilesWrittenAfterTheCheckpointAreRemoved) {
  spec_.rolling_policy.part_size_bytes = 10;  // two 8-byte lines per part file
  std::string snap;
  {
    Sink s(spec_, true);
    s.Restore(nullptr);
    s.Write(0);
    snap = s.Snapshot(1);  // part-0-0 in progress, valid length 8
    for (int i = 1; i <= 4; ++i) {
      s.Write(i);  // part-0-0 = 0,1 rolls (in no checkpoint), part-0-1 = 2,3 rolls, part-0-2 = 4
    }
    s.Snapshot(2);  // never completes
    EXPECT_EQ(Hidden().size(), 3u);
    s.Crash();
  }
  Sink s(spec_, true);
  s.Restore(&snap);
  ASSERT_EQ(Hidden().size(), 1u);
  EXPECT_TRUE(Hidden()[0].starts_with(".part-0-0.inprogress.")) << Hidden()[0];
  EXPECT_EQ(fs::file_size(dir_ / Hidden()[0]), 8u);
  for (int i = 1; i <= 4; ++i) {
    s.Write(i);
  }
  s.op->Finish();
  s.Snapshot(3);
  s.op->NotifyCheckpointComplete(3);
  EXPECT_EQ(Listing(), (std::vector<std::string>{"part-0-0", "part-0-1", "part-0-2"}));
  EXPECT_EQ(Finished().at("part-0-0"), Lines(0, 2));
  EXPECT_EQ(Finished().at("part-0-1"), Lines(2, 4));
  EXPECT_EQ(Finished().at("part-0-2"), Lines(4, 5));
}

TEST_F(FileSinkOperatorTest, OtherSubtasksFilesAreLeftAlone) {
  std::string snap;
  {
    Sink s0(spec_, true, 0, 0);
    Sink s1(spec_, true, 0, 1);
    s0.Restore(nullptr);
    s1.Restore(nullptr);
    s0.Write(1);
    s1.Write(2);
    snap = s0.Snapshot(1);
    s0.Write(3);
    s0.Crash();
    s1.Crash();
  }
  Sink s0(spec_, true, 0, 0);
  s0.Restore(&snap);
  ASSERT_EQ(Hidden().size(), 2u);
  EXPECT_TRUE(Hidden()[0].starts_with(".part-0-0.")) << Hidden()[0];
  EXPECT_TRUE(Hidden()[1].starts_with(".part-1-0.")) << Hidden()[1];
  std::string state;
  {
    StateWriter w;
    w.BeginSection("file-sink", 1);
    w.WriteU32(1);
    w.WriteI64(0);
    w.WriteBool(false);
    w.WriteU32(0);
    w.EndSection();
    state = w.Release();
  }
  Sink wrong(spec_, true, 0, 0);
  EXPECT_THROW(wrong.Restore(&state), StateCorrupt);  // subtask 1's state into subtask 0
}

TEST_F(FileSinkOperatorTest, AFreshStartNeverOverwritesFinishedFiles) {
  for (int run = 0; run < 2; ++run) {
    Sink s(spec_, false);
    s.Restore(nullptr);
    s.Write(run);
    s.op->Finish();
    s.op->Close();
  }
  EXPECT_EQ(Listing(), (std::vector<std::string>{"part-0-0", "part-0-1"}));
  EXPECT_EQ(FinishedLines(), Lines(0, 2));
}

TEST_F(FileSinkOperatorTest, ProcessingTimeRollsByInactivityAndRolloverInterval) {
  spec_.rolling_policy.rollover_interval_ms = 10000;
  spec_.rolling_policy.inactivity_interval_ms = 5000;
  spec_.rolling_policy.check_interval_ms = 1000;
  Sink s(spec_, true);
  s.Restore(nullptr);
  s.Write(0);                // t=0: part-0-0 created
  s.clock->AdvanceTo(4999);  // checks at 1s..4s: inactive 4 s, open 4 s
  s.Snapshot(1);
  EXPECT_EQ(s.op->num_pending_files(), 0u);
  s.clock->AdvanceTo(5000);  // inactive 5 s: rolls
  s.Snapshot(2);
  EXPECT_EQ(s.op->num_pending_files(), 1u);
  s.op->NotifyCheckpointComplete(2);
  EXPECT_EQ(Finished().at("part-0-0"), Lines(0, 1));
  // Written every second: never inactive, rolled when open 10 s (t=6000 + 10000).
  for (Timestamp t = 6000; t <= 17000; t += 1000) {
    s.clock->AdvanceTo(t);
    s.Write(t / 1000);
  }
  s.Snapshot(3);
  s.op->NotifyCheckpointComplete(3);
  // part-0-1 opened at 6000 and rolled by the check at 16000: records 6..16 (16 came after).
  EXPECT_EQ(Finished().at("part-0-1"), Lines(6, 16));
  ASSERT_EQ(Hidden().size(), 1u);
  EXPECT_TRUE(Hidden()[0].starts_with(".part-0-2.")) << Hidden()[0];
}

TEST_F(FileSinkOperatorTest, PartSizeRollsBeforeTheRecordThatWouldGoOver) {
  spec_.rolling_policy.part_size_bytes = 20;  // each line is 8 bytes: 24 > 20 rolls before the 4th
  Sink s(spec_, false);
  s.Restore(nullptr);
  for (int i = 0; i < 7; ++i) {
    s.Write(i);
  }
  s.op->Finish();
  EXPECT_EQ(Finished().at("part-0-0"), Lines(0, 3));
  EXPECT_EQ(Finished().at("part-0-1"), Lines(3, 6));
  EXPECT_EQ(Finished().at("part-0-2"), Lines(6, 7));
}

TEST_F(FileSinkOperatorTest, PrefixAndSuffixNameThePartFiles) {
  spec_.part_prefix = "out";
  spec_.part_suffix = ".jsonl";
  Sink s(spec_, false);
  s.Restore(nullptr);
  s.Write(1);
  EXPECT_TRUE(Hidden().at(0).starts_with(".out-0-0.jsonl.inprogress.")) << Hidden()[0];
  s.op->Finish();
  EXPECT_EQ(Listing(), std::vector<std::string>{"out-0-0.jsonl"});
}

TEST_F(FileSinkOperatorTest, BadDirectoriesFailAtOpen) {
  std::ofstream(root_ / "plain") << "x";
  spec_.path = (root_ / "plain").string();
  EXPECT_THROW(Sink(spec_, false), IoError);
  spec_.path = (root_ / "missing" / "out").string();
  EXPECT_THROW(Sink(spec_, false), IoError);
  spec_.create_dirs = true;
  Sink s(spec_, false);
  EXPECT_TRUE(fs::is_directory(root_ / "missing" / "out"));
  EXPECT_EQ(fs::status(root_ / "missing" / "out").permissions() & fs::perms::all,
            fs::perms::owner_all);
}

TEST_F(FileSinkOperatorTest, CorruptStateIsStateCorruptNeverAPathOutsideTheDirectory) {
  auto state = [](const std::string& ip, const std::string& fin) {
    StateWriter w;
    w.BeginSection("file-sink", 1);
    w.WriteU32(0);
    w.WriteI64(1);
    w.WriteBool(false);
    w.WriteU32(1);
    w.WriteI64(1);
    w.WriteString(ip);
    w.WriteString(fin);
    w.WriteI64(0);
    w.EndSection();
    return w.Release();
  };
  for (const auto& [ip, fin] :
       std::vector<std::pair<std::string, std::string>>{{".part-0-0.inprogress.x", "../escape"},
                                                        {"../.x", "part-0-0"},
                                                        {"part-0-0", "part-0-0"},
                                                        {".a", ".b"},
                                                        {"", "part-0-0"}}) {
    Sink s(spec_, true);
    const std::string bytes = state(ip, fin);
    EXPECT_THROW(s.Restore(&bytes), StateCorrupt) << ip << " " << fin;
  }
  const std::string good = state(".part-0-0.inprogress.x", "part-0-0");
  for (size_t cut = 0; cut < good.size(); ++cut) {
    Sink s(spec_, true);
    const std::string bytes = good.substr(0, cut);
    EXPECT_THROW(s.Restore(&bytes), StateCorrupt) << cut;
  }
  EXPECT_FALSE(fs::exists(root_ / "escape"));
}

/// Scripted input: record i at processing time 100*i; a checkpoint after every 4th record (its
/// notification two records later; every third checkpoint aborted). For every record boundary
/// as the crash point, restore from the latest completed checkpoint, replay the input after it:
/// the finished lines are exactly the uninterrupted run's, no line twice, nothing left hidden.
class FileSinkCutTest : public FileSinkOperatorTest,
                        public ::testing::WithParamInterface<std::tuple<bool, int64_t>> {};

TEST_P(FileSinkCutTest, EveryCutGivesTheUninterruptedOutput) {
  spec_.rolling_policy.roll_on_checkpoint = std::get<0>(GetParam());
  spec_.rolling_policy.part_size_bytes = std::get<1>(GetParam());
  spec_.rolling_policy.check_interval_ms = 250;
  spec_.rolling_policy.inactivity_interval_ms = 60000;
  spec_.rolling_policy.rollover_interval_ms = 700;
  constexpr int kRecords = 26;
  const std::vector<std::string> expected = Lines(0, kRecords);

  for (int cut = 0; cut <= kRecords; ++cut) {
    SCOPED_TRACE(::testing::Message() << "cut before record " << cut);
    fs::remove_all(dir_);
    struct Completed {
      int64_t id = 0;
      std::string state;
      int next_record = 0;
    };
    std::optional<Completed> latest;  // latest checkpoint completed at the coordinator
    std::vector<std::pair<int, int64_t>> notify_at;  // (record index, checkpoint id)
    auto run = [&](Sink& s, int from, int to, int64_t& next_id) {
      for (int i = from; i < to; ++i) {
        s.clock->AdvanceTo(100 * i);
        for (auto it = notify_at.begin(); it != notify_at.end();) {
          if (it->first == i) {
            s.op->NotifyCheckpointComplete(it->second);
            it = notify_at.erase(it);
          } else {
            ++it;
          }
        }
        s.Write(i);
        if ((i + 1) % 4 == 0) {
          const int64_t id = next_id++;
          std::string state = s.Snapshot(id);
          if (id % 3 != 0) {
            latest = Completed{id, std::move(state), i + 1};
            notify_at.emplace_back(i + 3, id);
          }
        }
      }
    };
    int64_t next_id = 1;
    {
      Sink s(spec_, true);
      s.Restore(nullptr);
      run(s, 0, cut, next_id);
      s.Crash();
    }
    notify_at.clear();  // the failed attempt's notifications are lost with it
    Sink s(spec_, true, latest ? 100 * (latest->next_record - 1) : 0);
    s.Restore(latest ? &latest->state : nullptr, latest ? latest->id : 0);
    run(s, latest ? latest->next_record : 0, kRecords, next_id);
    s.op->Finish();
    const int64_t final_id = next_id++;
    s.Snapshot(final_id);
    s.op->NotifyCheckpointComplete(final_id);
    s.op->Close();

    std::vector<std::string> got = FinishedLines();
    std::vector<std::string> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_TRUE(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end()) << "a line twice";
    EXPECT_EQ(got, expected);
    EXPECT_TRUE(Hidden().empty()) << Hidden().front();
  }
}

INSTANTIATE_TEST_SUITE_P(RollingPolicies, FileSinkCutTest,
                         ::testing::Values(std::make_tuple(false, int64_t{128} << 20),
                                           std::make_tuple(false, int64_t{20}),
                                           std::make_tuple(true, int64_t{128} << 20),
                                           std::make_tuple(true, int64_t{30})));

}  // namespace
}  // namespace tidemark
