// Checkpoints in running jobs (issue 12): a job with `checkpointing:` takes aligned checkpoints on
// the virtual clock at exact times, writes chk-<id>/_metadata, gives the same output as without
// checkpoints, restores from a checkpoint into a fresh job (the output before the checkpoint's
// barrier plus the restored run's equals the uninterrupted run) and refuses checkpoints it cannot
// restore with a clear error.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/job_loader.h"
#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/core/errors.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

/// Forwards everything; at every snapshot writes "#barrier <id>" into the job's output, so a
/// test sees exactly which sink lines came before a checkpoint's barrier (it is chained between
/// the window and the sink). Stateless.
class BarrierProbe : public StreamOperator {
 public:
  explicit BarrierProbe(std::shared_ptr<std::vector<std::string>> out) : out_(std::move(out)) {}
  void ProcessElement(StreamRecord& record, int /*input*/) override { output().Collect(record); }
  void SnapshotState(StateSnapshotContext& context) override {
    out_->push_back("#barrier " + std::to_string(context.checkpoint_id));
  }
  void InitializeState(StateInitializationContext& context) override {
    if (context.restored_checkpoint_id != 0) {
      out_->push_back("#restored " + std::to_string(context.restored_checkpoint_id));
    }
  }

 private:
  std::shared_ptr<std::vector<std::string>> out_;
};

struct JobRun {
  std::vector<std::string> lines;  ///< sink lines and "#barrier" markers, in order
  JobState state = JobState::kCreated;
  std::string failure;
  CheckpointStats stats;
  std::vector<int64_t> completed;  ///< ids, in completion order
};

/// Sink lines only (markers dropped).
std::vector<std::string> Output(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const std::string& l : lines) {
    if (l.rfind("#", 0) != 0) {
      out.push_back(l);
    }
  }
  return out;
}

/// Sink lines before the marker "#barrier <id>".
std::vector<std::string> OutputBefore(const std::vector<std::string>& lines, int64_t id) {
  std::vector<std::string> before;
  for (const std::string& l : lines) {
    if (l == "#barrier " + std::to_string(id)) {
      return Output(before);
    }
    before.push_back(l);
  }
  ADD_FAILURE() << "no barrier " << id << " in the output";
  return {};
}

std::string ReadFileText(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

/// A keyed tumbling count over two paced splits (keys a and b, 100 records each, 100 ms of event
/// time apart, 10 ms of processing time per record, round robin: the source needs 2 s).
std::string JobYaml(int parallelism, const std::string& checkpointing) {
  return "name: ckpt\n"
         "pipeline: {parallelism: " +
         std::to_string(parallelism) +
         ", clock: virtual, auto-watermark-interval: 50ms}\n"
         "operators:\n"
         "  - id: source\n"
         "    type: source\n"
         "    source:\n"
         "      type: sequence\n"
         "      pacing: 10ms\n"
         "      splits:\n"
         "        - {id: a, start: 0ms, step: 100ms, count: 100, fields: {k: a}}\n"
         "        - {id: b, start: 50ms, step: 100ms, count: 100, fields: {k: b}}\n"
         "    watermarks: {max-out-of-orderness: 0ms, timestamp-field: ts}\n"
         "  - id: windows\n"
         "    type: window\n"
         "    input: source\n"
         "    key-by: [k]\n"
         "    window: {assigner: tumbling, size: 1s, aggregate: [count, {fn: max, field: ts, as: "
         "last}]}\n"
         "  - id: probe\n"
         "    type: probe\n"
         "    input: windows\n"
         "  - id: out\n"
         "    type: sink\n"
         "    input: probe\n"
         "    sink: {type: print}\n" +
         checkpointing;
}

std::string Checkpointing(const fs::path& dir, int retained = 3) {
  return "checkpointing:\n"
         "  interval: 100ms\n"
         "  num-retained: " +
         std::to_string(retained) +
         "\n"
         "  dir: " +
         dir.string() + "\n";
}

class CheckpointJobTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tidemark-ckpt-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    registry_ = BuiltinRegistry();
    registry_.Register("probe", [this](const CompileContext& ctx) {
      CompiledOperator c;
      c.output_schema = ctx.input_schemas.at(0);
      c.factory = [this](int, int) {
        return std::make_unique<BarrierProbe>(lines_);
      };
      return c;
    });
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// The error a restore of `yaml` with `options` is refused with; a failure (and "") when it runs.
  std::string RefusalOf(const std::string& yaml, const JobRunOptions& options, const char* what) {
    try {
      RunJob(yaml, options);
    } catch (const Error& e) {
      return e.what();
    }
    ADD_FAILURE() << what;
    return "";
  }

  /// Runs `yaml` to its end; `cancel_at` > 0 cancels the job right after that checkpoint completed.
  JobRun RunJob(const std::string& yaml, JobRunOptions options = {}, int64_t cancel_at = 0) {
    lines_ = std::make_shared<std::vector<std::string>>();
    auto lines = lines_;
    auto job = LocalJob::Create(
        LoadJobSpecString(yaml, "ckpt.yaml"), registry_,
        [lines](const std::string& l) { lines->push_back(l); }, options);
    JobRun run;
    auto* completed = &run.completed;
    LocalJob* raw = job.get();
    job->execution().SetCheckpointCompleteListener([completed, raw, cancel_at](int64_t id) {
      completed->push_back(id);
      if (id == cancel_at) {
        raw->execution().Cancel();
      }
    });
    job->execution().Start();
    run.state = job->execution().Wait();
    run.failure = job->execution().failure_cause();
    run.stats = job->checkpoint_stats();
    run.lines = *lines_;
    return run;
  }

  /// Runs `yaml` and, right after checkpoint `at_id` completed, stops it with a savepoint into
  /// `target` (with or without drain); returns the run (lines, end state) and the savepoint's
  /// outcome.
  std::pair<JobRun, SavepointResult> RunAndStop(const std::string& yaml, int64_t at_id, bool drain,
                                                const fs::path& target) {
    lines_ = std::make_shared<std::vector<std::string>>();
    auto lines = lines_;
    auto job = LocalJob::Create(LoadJobSpecString(yaml, "ckpt.yaml"), registry_,
                                [lines](const std::string& l) { lines->push_back(l); }, {});
    std::future<SavepointResult> savepoint;
    LocalJob* raw = job.get();
    job->execution().SetCheckpointCompleteListener([&, raw](int64_t id) {
      if (id == at_id) {
        savepoint = raw->TriggerSavepoint(SavepointRequest{target, /*stop=*/true, drain});
      }
    });
    job->execution().Start();
    JobRun run;
    run.state = job->execution().Wait();
    run.failure = job->execution().failure_cause();
    run.stats = job->checkpoint_stats();
    run.lines = *lines_;
    SavepointResult result{false, "", "no savepoint was triggered"};
    if (savepoint.valid()) {
      result = savepoint.get();
    }
    // A stopped job takes no further savepoint.
    EXPECT_EQ(raw->TriggerSavepoint(SavepointRequest{target, true, drain}).get().error,
              "the job is not running");
    return {run, result};
  }

  fs::path dir_;
  OperatorRegistry registry_;
  std::shared_ptr<std::vector<std::string>> lines_ = std::make_shared<std::vector<std::string>>();
};

TEST_F(CheckpointJobTest, CheckpointsEveryHundredMsAndKeepsTheOutput) {
  const JobRun plain = RunJob(JobYaml(1, ""));
  ASSERT_EQ(plain.state, JobState::kFinished) << plain.failure;
  // 10 windows per key, 10 records each; the last of key a ends at 9900, of key b at 9950.
  const std::vector<std::string> out = Output(plain.lines);
  ASSERT_EQ(out.size(), 20u);
  EXPECT_EQ(out.front(), R"({"k":"a","window_start":0,"window_end":1000,"count":10,"last":900})");
  EXPECT_EQ(out.back(),
            R"({"k":"b","window_start":9000,"window_end":10000,"count":10,"last":9950})");
  EXPECT_EQ(plain.stats.completed, 0);

  const JobRun with = RunJob(JobYaml(1, Checkpointing(dir_)));
  ASSERT_EQ(with.state, JobState::kFinished) << with.failure;
  EXPECT_EQ(Output(with.lines), out);
  // Triggers at 100, 200, ..., 1900 ms of virtual time while the source reads (its 200th and
  // last record is at 1990 ms): checkpoints 1..19, each complete within its instant; then the
  // final checkpoint once every task finished (Flink's checkpoint after tasks finish): 20.
  std::vector<int64_t> expected_ids;
  for (int64_t id = 1; id <= 20; ++id) {
    expected_ids.push_back(id);
  }
  EXPECT_EQ(with.completed, expected_ids);
  EXPECT_EQ(with.stats.completed, 20);
  EXPECT_EQ(with.stats.failed, 0);
  EXPECT_EQ(with.stats.last_completed_id, 20);
  // num-retained: 3 keeps the newest three.
  EXPECT_FALSE(fs::exists(dir_ / "chk-17"));
  for (int id : {18, 19, 20}) {
    EXPECT_TRUE(fs::exists(dir_ / ("chk-" + std::to_string(id)) / "_metadata")) << id;
  }
}

TEST_F(CheckpointJobTest, RestoredRunContinuesExactlyAfterTheCheckpoint) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  ASSERT_EQ(uninterrupted.size(), 20u);
  for (int64_t k : {1, 7, 12, 19}) {
    SCOPED_TRACE(k);
    fs::remove_all(dir_);
    const JobRun killed = RunJob(JobYaml(1, Checkpointing(dir_)), {}, k);
    ASSERT_EQ(killed.state, JobState::kCanceled) << killed.failure;
    ASSERT_TRUE(fs::exists(dir_ / ("chk-" + std::to_string(k)) / "_metadata"));
    JobRunOptions options;
    options.restore_from = dir_;  // the root: its latest completed checkpoint, k
    fs::path second = dir_.string() + "-2";
    options.checkpoint_dir = second;
    const JobRun restored = RunJob(JobYaml(1, Checkpointing(dir_)), options);
    fs::remove_all(second);
    ASSERT_EQ(restored.state, JobState::kFinished) << restored.failure;
    // Sink lines before barrier k, then everything of the restored run: the uninterrupted run.
    std::vector<std::string> joined = OutputBefore(killed.lines, k);
    for (const std::string& l : Output(restored.lines)) {
      joined.push_back(l);
    }
    EXPECT_EQ(joined, uninterrupted);
  }
}

TEST_F(CheckpointJobTest, ParallelTasksAlignAndRestore) {
  // Parallelism 2: each window subtask has two input channels (one per source subtask) that
  // align on every barrier.
  const std::vector<std::string> uninterrupted = Sorted(Output(RunJob(JobYaml(2, "")).lines));
  ASSERT_EQ(uninterrupted.size(), 20u);
  const JobRun with = RunJob(JobYaml(2, Checkpointing(dir_)));
  ASSERT_EQ(with.state, JobState::kFinished) << with.failure;
  EXPECT_EQ(Sorted(Output(with.lines)), uninterrupted);
  // Each source subtask reads one split (100 records, 10 ms each, last at 990 ms): triggers at
  // 100..900 ms complete as 1..9, then the final checkpoint 10.
  EXPECT_EQ(with.stats.completed, 10);
  EXPECT_EQ(with.stats.failed, 0);

  fs::remove_all(dir_);
  const JobRun killed = RunJob(JobYaml(2, Checkpointing(dir_)), {}, 9);
  ASSERT_EQ(killed.state, JobState::kCanceled);
  JobRunOptions options;
  options.restore_from = dir_ / "chk-9";
  options.checkpoint_dir = dir_ / "second";
  const JobRun restored = RunJob(JobYaml(2, Checkpointing(dir_)), options);
  ASSERT_EQ(restored.state, JobState::kFinished) << restored.failure;
  // Two window subtasks each write their marker: take each subtask's lines before its own.
  // Both subtasks' probes share the output: lines before the *second* "#barrier 9" include all
  // of both subtasks' pre-barrier output and possibly some of one subtask's post-barrier lines,
  // so compare per key (each key lives on one subtask) instead.
  std::vector<std::string> joined;
  int markers = 0;
  for (const std::string& l : killed.lines) {
    if (l == "#barrier 9") {
      ++markers;
    }
  }
  EXPECT_EQ(markers, 2);
  for (const std::string& l : Output(restored.lines)) {
    joined.push_back(l);
  }
  // Every window result of the restored run is one of the uninterrupted run's, none twice, and
  // together with the cancelled run's results they cover all of them.
  std::vector<std::string> all = Output(killed.lines);
  for (const std::string& l : joined) {
    all.push_back(l);
  }
  std::vector<std::string> unique = Sorted(all);
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  EXPECT_EQ(unique, uninterrupted);
  EXPECT_EQ(Sorted(joined).size(), std::set<std::string>(joined.begin(), joined.end()).size());
}

// A checkpoint root whose newest completed checkpoint does not verify: the newer one completed,
// so an exactly-once sink may have committed its output, and restoring the older one would
// commit that output again. `tidemark run --from-checkpoint ROOT` refuses, as the daemon's
// recovery does, naming both and how to go on; nothing is written.
TEST_F(CheckpointJobTest, AnExactlyOnceSinkDoesNotFallBackPastACompletedCheckpoint) {
  const fs::path checkpoints = dir_ / "checkpoints";
  const fs::path out = dir_ / "parts";
  const std::string yaml =
      "name: eo\n"
      "checkpointing: {interval: 100ms, dir: '" +
      checkpoints.string() +
      "'}\n"
      "operators:\n"
      "  - id: src\n"
      "    type: source\n"
      "    source:\n"
      "      type: sequence\n"
      "      splits: [{id: a, start: 0ms, step: 1ms, count: 100}]\n"
      "  - id: out\n"
      "    type: sink\n"
      "    input: src\n"
      "    sink: {type: file, path: '" +
      out.string() + "', delivery-guarantee: exactly-once}\n";
  CheckpointStorage storage(checkpoints, "eo", 5);
  storage.Finalize(1, 1000, {});
  const StateFileHandle h2 = storage.WriteState(2, "src", 0, "position two");
  storage.Finalize(2, 2000, {h2});
  std::ofstream(checkpoints / "chk-2" / h2.file, std::ios::binary | std::ios::in | std::ios::out)
      .seekp(30)
      .put('X');
  JobRunOptions options;
  options.restore_from = checkpoints;
  EXPECT_EQ(RefusalOf(yaml, options, "the fall-back past chk-2 was not refused"),
            "cannot restore from " + checkpoints.string() +
                ": its newest completed checkpoint does not verify (skipping checkpoint " +
                (checkpoints / "chk-2").string() + ": state file " + h2.file +
                " fails its checksum), and sink 'out' commits at each checkpoint: restoring the "
                "older checkpoint " +
                (checkpoints / "chk-1").string() +
                " would commit again what checkpoint 2 committed; restore from a checkpoint or "
                "savepoint you trust by naming its directory (--from-checkpoint DIR/chk-<id>), "
                "or run without one to start from scratch");
  EXPECT_FALSE(fs::exists(out));
}

TEST_F(CheckpointJobTest, RefusesCheckpointsItCannotRestore) {
  JobRunOptions options;
  options.restore_from = dir_ / "nowhere";
  EXPECT_THROW(
      {
        try {
          RunJob(JobYaml(1, ""), options);
        } catch (const Error& e) {
          EXPECT_EQ(std::string(e.what()),
                    "cannot restore from " + (dir_ / "nowhere").string() + ": no such directory");
          throw;
        }
      },
      Error);

  ASSERT_EQ(RunJob(JobYaml(1, Checkpointing(dir_, 1))).state, JobState::kFinished);
  // A renamed job restores its predecessor's checkpoint, as Flink's jobs do (an upgrade that
  // renames the job): state is matched by operator id.
  std::string other = JobYaml(1, "");
  other.replace(other.find("name: ckpt"), 10, "name: other");
  options.restore_from = dir_ / "chk-20";
  EXPECT_EQ(RunJob(other, options).state, JobState::kFinished);
  // State of an operator id the job does not have: refused unless allowed.
  std::string renamed = JobYaml(1, "");
  renamed.replace(renamed.find("id: windows"), 11, "id: counts");
  renamed.replace(renamed.find("input: windows"), 14, "input: counts");
  EXPECT_EQ(RefusalOf(renamed, options, "restored state of an unknown operator"),
            "cannot restore from " + (dir_ / "chk-20").string() +
                ": it holds state of operator subtasks this job does not have "
                "(windows#0); pass --allow-non-restored-state to skip it");
  // A checkpoint written before rescaling existed (no blocks, no parallelism in _metadata): the
  // source at a higher parallelism is refused, its state cannot be split.
  fs::copy(dir_ / "chk-20", dir_ / "old-chk-20");
  {
    nlohmann::json meta = nlohmann::json::parse(ReadFileText(dir_ / "old-chk-20" / "_metadata"));
    meta.erase("parallelism");
    for (auto& state : meta["states"]) {
      state.erase("blocks");
    }
    std::ofstream(dir_ / "old-chk-20" / "_metadata") << meta.dump();
  }
  JobRunOptions old_options;
  old_options.restore_from = dir_ / "old-chk-20";
  EXPECT_EQ(RefusalOf(JobYaml(2, ""), old_options, "restored an old checkpoint at parallelism 2"),
            "cannot restore from " + (dir_ / "old-chk-20").string() +
                ": operator \"source\" has parallelism 2 here and 1 in the checkpoint, and the "
                "checkpoint does not say where its state can be split (it was written before "
                "tidemark rescaled state); restore it at parallelism 1");
  // The same at its own parallelism restores.
  EXPECT_EQ(RunJob(JobYaml(1, ""), old_options).state, JobState::kFinished);
  // A keyed operator at a higher parallelism than checkpointed (a current checkpoint): its key
  // groups are redistributed (rescale_test.cc checks the output).
  std::string wider = JobYaml(1, "");
  wider.replace(wider.find("  - id: windows\n"), 16, "  - id: windows\n    parallelism: 2\n");
  EXPECT_EQ(RunJob(wider, options).state, JobState::kFinished);
  options.allow_non_restored_state = true;
  EXPECT_EQ(RunJob(renamed, options).state, JobState::kFinished);
  // A corrupt state file: the checkpoint is refused with the file named.
  for (const auto& entry : fs::directory_iterator(dir_ / "chk-20")) {
    if (entry.path().extension() == ".state") {
      fs::resize_file(entry.path(), fs::file_size(entry.path()) - 1);
      break;
    }
  }
  options.allow_non_restored_state = false;
  try {
    RunJob(JobYaml(1, ""), options);
    ADD_FAILURE() << "restored a corrupt checkpoint";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is truncated or not a state file"), std::string::npos)
        << e.what();
  }
}

/// What an exactly-once sink would have committed from a run with restarts: of every attempt
/// that failed, only the lines before the barrier of the checkpoint the next attempt restored
/// ("#restored k"); then all of the last attempt.
std::vector<std::string> CommittedView(const std::vector<std::string>& lines) {
  std::vector<std::vector<std::string>> attempts(1);
  std::vector<int64_t> restored_from;
  for (const std::string& l : lines) {
    if (l.rfind("#restored ", 0) == 0) {
      restored_from.push_back(std::stoll(l.substr(10)));
      attempts.emplace_back();
      continue;
    }
    attempts.back().push_back(l);
  }
  std::vector<std::string> out;
  for (size_t a = 0; a + 1 < attempts.size(); ++a) {
    for (const std::string& l : OutputBefore(attempts[a], restored_from[a])) {
      out.push_back(l);
    }
    // An attempt that failed before any record leaves nothing; the marker search needs one.
  }
  for (const std::string& l : Output(attempts.back())) {
    out.push_back(l);
  }
  return out;
}

std::string WithFaults(const fs::path& dir, const std::string& faults, int attempts = 1) {
  return Checkpointing(dir) +
         "restart-strategy: {type: fixed-delay, attempts: " + std::to_string(attempts) +
         ", delay: 100ms}\n" + "faults:\n" + faults;
}

TEST_F(CheckpointJobTest, FailureInProcessingRestartsFromTheLatestCheckpoint) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  // The window operator throws at its 121st record (event time 6000 of key a, read at 1200 ms).
  const JobRun run =
      RunJob(JobYaml(1, WithFaults(dir_, "  - {operator: windows, after-records: 120}\n")));
  ASSERT_EQ(run.state, JobState::kFinished) << run.failure;
  EXPECT_EQ(run.stats.restarts, 1);
  // Checkpoints 1..12 (100..1200 ms) completed before the 121st record reached the window task
  // (the trigger at 1200 ms runs before that instant's record); the restart restores 12 and
  // checkpoints continue with the next id, 13.
  EXPECT_NE(std::find(run.lines.begin(), run.lines.end(), "#restored 12"), run.lines.end());
  EXPECT_NE(std::find(run.lines.begin(), run.lines.end(), "#barrier 13"), run.lines.end());
  EXPECT_EQ(CommittedView(run.lines), uninterrupted);
  // The print sink is not transactional: what it printed after barrier 12 is printed again, and
  // nothing is lost.
  std::vector<std::string> printed = Sorted(Output(run.lines));
  printed.erase(std::unique(printed.begin(), printed.end()), printed.end());
  EXPECT_EQ(printed, Sorted(uninterrupted));
}

// A new run's restart never restores a checkpoint an earlier run left in the same directory: a
// failure before the run's own first checkpoint restarts it from the start (as docs/checkpoints.md
// says), not from the earlier run's latest, whose input and output may no longer be the run's.
TEST_F(CheckpointJobTest, ARestartNeverRestoresAnEarlierRunsCheckpoint) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  const JobRun earlier = RunJob(JobYaml(1, Checkpointing(dir_)));
  ASSERT_EQ(earlier.state, JobState::kFinished) << earlier.failure;
  ASSERT_FALSE(earlier.completed.empty());
  // The window operator throws at its 5th record (read at 40 ms), before the first checkpoint
  // of this run (100 ms).
  const JobRun run =
      RunJob(JobYaml(1, WithFaults(dir_, "  - {operator: windows, after-records: 5}\n")));
  ASSERT_EQ(run.state, JobState::kFinished) << run.failure;
  EXPECT_EQ(run.stats.restarts, 1);
  for (const std::string& l : run.lines) {
    EXPECT_EQ(l.rfind("#restored", 0), std::string::npos) << l;
  }
  EXPECT_EQ(Output(run.lines), uninterrupted);
  // This run's checkpoints continue after the earlier run's ids.
  ASSERT_FALSE(run.completed.empty());
  EXPECT_GT(run.completed.front(), earlier.completed.back());
}

TEST_F(CheckpointJobTest, FailuresInSnapshotRestoreAndCloseRecover) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  {
    SCOPED_TRACE("snapshot");
    // The first snapshot after 50 records (checkpoint 5) throws: as in Flink, the task fails
    // ("could not perform checkpoint"), checkpoint 5 is aborted (one failed checkpoint) and the
    // job restarts from checkpoint 4.
    const JobRun run = RunJob(
        JobYaml(1, WithFaults(dir_, "  - {operator: windows, in: snapshot, after-records: 50}\n")));
    ASSERT_EQ(run.state, JobState::kFinished) << run.failure;
    EXPECT_NE(std::find(run.lines.begin(), run.lines.end(), "#restored 4"), run.lines.end());
    EXPECT_EQ(run.stats.restarts, 1);
    EXPECT_EQ(run.stats.failed, 1);
    EXPECT_EQ(CommittedView(run.lines), uninterrupted);
  }
  {
    SCOPED_TRACE("snapshot, failures tolerated");
    fs::remove_all(dir_);
    // tolerable-failed-checkpoints does not keep a task whose operator failed to snapshot
    // running: the task failed, and the job restarts all the same.
    std::string yaml =
        JobYaml(1, WithFaults(dir_, "  - {operator: windows, in: snapshot, after-records: 50}\n"));
    const std::string dir_line = "  dir: " + dir_.string() + "\n";
    ASSERT_NE(yaml.find(dir_line), std::string::npos);
    yaml.insert(yaml.find(dir_line), "  tolerable-failed-checkpoints: 5\n");
    const JobRun run = RunJob(yaml);
    ASSERT_EQ(run.state, JobState::kFinished) << run.failure;
    EXPECT_EQ(run.stats.restarts, 1);
    EXPECT_EQ(run.stats.failed, 1);
    EXPECT_EQ(CommittedView(run.lines), uninterrupted);
  }
  {
    SCOPED_TRACE("snapshot, no restart");
    fs::remove_all(dir_);
    // Without restarts the job fails for the operator's own cause, never for the checkpoint
    // count (which the abort does not raise).
    std::string yaml =
        JobYaml(1, Checkpointing(dir_) + "restart-strategy: {type: none}\nfaults:\n" +
                       "  - {operator: windows, in: snapshot, after-records: 50}\n");
    const JobRun run = RunJob(yaml);
    EXPECT_EQ(run.state, JobState::kFailed);
    EXPECT_EQ(run.failure,
              "task windows -> probe -> out#0: operator 'windows' failed: injected fault (faults: "
              "snapshot) while snapshotting checkpoint 5");
  }
  {
    SCOPED_TRACE("restore");
    fs::remove_all(dir_);
    // Fails while processing, then the restored attempt fails in its restore; the third attempt
    // restores the same checkpoint and finishes.
    const JobRun run = RunJob(JobYaml(1, WithFaults(dir_,
                                                    "  - {operator: windows, after-records: 120}\n"
                                                    "  - {operator: windows, in: restore}\n",
                                                    2)));
    ASSERT_EQ(run.state, JobState::kFinished) << run.failure;
    EXPECT_EQ(run.stats.restarts, 2);
    EXPECT_EQ(CommittedView(run.lines), uninterrupted);
  }
  {
    SCOPED_TRACE("close");
    fs::remove_all(dir_);
    // Every record was processed and the final checkpoint completed before close threw: the
    // restarted attempt restores the final checkpoint and has nothing left to do.
    const JobRun run = RunJob(JobYaml(1, WithFaults(dir_, "  - {operator: windows, in: close}\n")));
    ASSERT_EQ(run.state, JobState::kFinished) << run.failure;
    EXPECT_EQ(run.stats.restarts, 1);
    EXPECT_EQ(CommittedView(run.lines), uninterrupted);
    EXPECT_EQ(Output(run.lines), uninterrupted);
  }
  {
    SCOPED_TRACE("no attempts left");
    fs::remove_all(dir_);
    const JobRun run = RunJob(
        JobYaml(1, WithFaults(dir_, "  - {operator: windows, after-records: 10, times: 2}\n")));
    EXPECT_EQ(run.state, JobState::kFailed);
    EXPECT_EQ(run.stats.restarts, 1);
    EXPECT_EQ(run.failure,
              "task windows -> probe -> out#0: operator 'windows' failed: injected fault (faults: "
              "process) "
              "while processing its record 11");
  }
}

TEST_F(CheckpointJobTest, StopWithSavepointAndResumeContinuesExactly) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  const fs::path target = dir_ / "savepoints";
  // After checkpoint 6 (600 ms), stop with a savepoint without drain: no window fires for it.
  const auto [run, result] =
      RunAndStop(JobYaml(1, Checkpointing(dir_)), 6, /*drain=*/false, target);
  EXPECT_EQ(run.state, JobState::kFinished) << run.failure;
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.path, (target / "savepoint-7").string());
  EXPECT_TRUE(fs::exists(target / "savepoint-7" / "_metadata"));
  // The latest completed is the savepoint, in its own directory (not chk-7).
  EXPECT_EQ(run.stats.last_completed_id, 7);
  EXPECT_EQ(run.stats.last_path, (target / "savepoint-7").string());
  EXPECT_FALSE(CheckpointStorage::Load(result.path, "ckpt").drained);
  const std::vector<std::string> stopped = run.lines;

  JobRunOptions options;
  options.restore_from = result.path;
  options.checkpoint_dir = dir_ / "after";
  const JobRun resumed = RunJob(JobYaml(1, Checkpointing(dir_)), options);
  ASSERT_EQ(resumed.state, JobState::kFinished) << resumed.failure;
  std::vector<std::string> joined = OutputBefore(stopped, 7);
  for (const std::string& l : Output(resumed.lines)) {
    joined.push_back(l);
  }
  EXPECT_EQ(joined, uninterrupted);

  // A job without checkpointing cannot take a savepoint.
  auto plain = LocalJob::Create(LoadJobSpecString(JobYaml(1, ""), "ckpt.yaml"), registry_,
                                [](const std::string&) {}, {});
  plain->execution().Start();
  const SavepointResult refused =
      plain->TriggerSavepoint(SavepointRequest{target, false, false}).get();
  EXPECT_FALSE(refused.ok);
  EXPECT_EQ(refused.error, "the job does not checkpoint (no checkpointing: block)");
  plain->execution().Wait();
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

// Stop with a savepoint and --drain (Flink's stop-with-savepoint --drain): the sources end their
// input, MAX_WATERMARK fires every window, the savepoint is the checkpoint after every task
// finished, and the job ends FINISHED. A resume from it reads the rest of the input into fresh
// windows.
TEST_F(CheckpointJobTest, StopWithDrainFiresEveryWindowBeforeTheSavepoint) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  const fs::path target = dir_ / "savepoints";
  const auto [run, result] = RunAndStop(JobYaml(1, Checkpointing(dir_)), 6, /*drain=*/true, target);
  EXPECT_EQ(run.state, JobState::kFinished) << run.failure;
  ASSERT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.path, (target / "savepoint-7").string());
  EXPECT_TRUE(fs::exists(target / "savepoint-7" / "_metadata"));
  const std::vector<std::string> drained = run.lines;
  // Every window holding a record read before the drain fired before the savepoint (the final
  // snapshot, "#barrier 7"): the three full ones of each key, and key a's [3s,4s) with its one
  // record (3000; b's next one, 3050, was not read).
  std::vector<std::string> expected(uninterrupted.begin(), uninterrupted.begin() + 6);
  expected.push_back(R"({"k":"a","window_start":3000,"window_end":4000,"count":1,"last":3000})");
  EXPECT_EQ(OutputBefore(drained, 7), expected);
  EXPECT_EQ(Output(drained), expected);

  // Resumed from the drained savepoint: the sources continue after their positions and the
  // windows start empty (and, as in Flink, event time at Long.MIN, not at the drain's MAX).
  JobRunOptions options;
  options.restore_from = result.path;
  options.checkpoint_dir = dir_ / "after";
  const JobRun resumed = RunJob(JobYaml(1, Checkpointing(dir_)), options);
  ASSERT_EQ(resumed.state, JobState::kFinished) << resumed.failure;
  std::vector<std::string> rest{
      R"({"k":"a","window_start":3000,"window_end":4000,"count":9,"last":3900})",
      R"({"k":"b","window_start":3000,"window_end":4000,"count":10,"last":3950})"};
  rest.insert(rest.end(), uninterrupted.begin() + 8, uninterrupted.end());
  EXPECT_EQ(Output(resumed.lines), rest);

  // Its watermarks are MAX: restoring them (restore-watermarks) would make every record late,
  // so that restore is refused, naming the savepoint and the way out.
  EXPECT_TRUE(CheckpointStorage::Load(result.path, "ckpt").drained);
  try {
    LocalJob::Create(
        LoadJobSpecString(JobYaml(1, Checkpointing(dir_) + "  restore-watermarks: true\n"),
                          "ckpt.yaml"),
        registry_, [](const std::string&) {}, options);
    ADD_FAILURE() << "restore-watermarks from a drained savepoint was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot restore from " + result.path +
                                         " with checkpointing.restore-watermarks: it is the "
                                         "savepoint of a stop with drain, whose "
                                         "watermarks are at the end of time, so every record read "
                                         "after it would be late; restore "
                                         "it without restore-watermarks (as Flink does), or from a "
                                         "savepoint taken without drain");
  }

  // Drain needs stop.
  auto again = LocalJob::Create(LoadJobSpecString(JobYaml(1, Checkpointing(dir_)), "ckpt.yaml"),
                                registry_, [](const std::string&) {}, {});
  EXPECT_EQ(
      again->TriggerSavepoint(SavepointRequest{target, /*stop=*/false, /*drain=*/true}).get().error,
      "drain needs stop (stop-with-savepoint --drain)");
}

// Drain past idle splits: both splits of a replay fall silent after 500 ms and go idle (1 s
// idleness); the source's watermark is then the maximum over them, 499, so window [0s,1s) stays
// open. Stop without drain at 3 s: nothing fires. With drain: MAX goes out although the source is
// IDLE, and the window fires with all 7 records.
TEST_F(CheckpointJobTest, DrainSendsMaxPastIdleSplits) {
  fs::create_directories(dir_);
  const fs::path data = dir_ / "idle.jsonl";
  {
    std::ofstream out(data);
    out << R"({"split": "b", "at": 0, "record": {"ts": 50, "split": "b"}})"
        << "\n";
    for (int at = 0; at <= 500; at += 100) {
      out << R"({"split": "a", "at": )" << at << R"(, "record": {"ts": )" << at
          << R"(, "split": "a"}})"
          << "\n";
    }
  }
  const std::string yaml =
      "name: idle-drain\n"
      "pipeline: {parallelism: 1, clock: virtual, auto-watermark-interval: 200ms}\n"
      "operators:\n"
      "  - id: source\n"
      "    type: source\n"
      "    source: {type: replay, path: " +
      data.string() +
      ", until: 10s, schema: {ts: timestamp, split: string}}\n"
      "    watermarks: {max-out-of-orderness: 0ms, timestamp-field: ts, idleness: 1s}\n"
      "  - id: windows\n"
      "    type: window\n"
      "    input: source\n"
      "    window: {assigner: tumbling, size: 1s, emit-watermark: true, aggregate: [count]}\n"
      "  - id: out\n"
      "    type: sink\n"
      "    input: windows\n"
      "    sink: {type: print}\n";
  for (const bool drain : {false, true}) {
    SCOPED_TRACE(drain ? "drain" : "no drain");
    const std::string job_yaml = yaml + Checkpointing(dir_ / (drain ? "chk-drain" : "chk"));
    const auto [run, result] = RunAndStop(job_yaml, 30, drain, dir_ / "sp");  // at 3000 ms
    ASSERT_EQ(run.state, JobState::kFinished) << run.failure;
    ASSERT_TRUE(result.ok) << result.error;
    if (drain) {
      EXPECT_EQ(
          Output(run.lines),
          std::vector<std::string>{
              R"({"window_start":0,"window_end":1000,"count":7,"watermark":9223372036854775807})"});
    } else {
      EXPECT_EQ(Output(run.lines), std::vector<std::string>{});
    }
  }
}

/// A job file's text with its `path: data/...` taken from the repository root (the tests' working
/// directory), so it loads as a string.
std::string ReadJobText(const fs::path& p) {
  std::ifstream in(p);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "path: data/";
  if (size_t at = text.find(from); at != std::string::npos) {
    text.replace(at, from.size(), "path: jobs/data/");
  }
  return text;
}

// A keyed process function's event-time and processing-time timers survive a savepoint: the job
// (jobs/keyed_process_timers.yaml, every 100 ms a checkpoint) is stopped with a savepoint
// (without drain) at 2000 ms, with every timer of alice and bob pending, and resumed from it.
TEST_F(CheckpointJobTest, KeyedTimersSurviveASavepoint) {
  const std::string file = "jobs/keyed_process_timers.yaml";
  const std::string yaml = ReadJobText(file) + Checkpointing(dir_);
  const JobRun plain = RunJob(ReadJobText(file));
  ASSERT_EQ(plain.state, JobState::kFinished) << plain.failure;
  const std::vector<std::string> uninterrupted = Output(plain.lines);
  ASSERT_EQ(uninterrupted.size(), 11u);

  const auto [run, result] = RunAndStop(yaml, 3, /*drain=*/false, dir_ / "savepoints");
  EXPECT_EQ(run.state, JobState::kFinished) << run.failure;
  ASSERT_TRUE(result.ok) << result.error;
  // At 300 ms: alice's payment at 0 and bob's at 200 were read; their processing-time timers
  // (1000, 1200) and event-time timers (4000, 4500) are in the savepoint, nothing fired yet.
  EXPECT_EQ(Output(run.lines), std::vector<std::string>{});

  JobRunOptions options;
  options.restore_from = result.path;
  options.checkpoint_dir = dir_ / "after";
  const JobRun resumed = RunJob(yaml, options);
  ASSERT_EQ(resumed.state, JobState::kFinished) << resumed.failure;
  // The restored timers fire at their times, with the restored keyed state (alice's 30 + 50 =
  // 80 at 1000 ms, bob's 5 at 1200 ms): exactly the uninterrupted output.
  EXPECT_EQ(Output(resumed.lines), uninterrupted);
  EXPECT_EQ(
      Output(resumed.lines).front(),
      R"({"user":"alice","report":"processing","total":80,"payments":2,"at":1000,"watermark":1999})");
}

// Seed 000 §7 (jobs/failover_watermarks_*.yaml): one failover after checkpoint 1. In Flink's mode
// the restored assigner starts at Long.MIN and three slow records are not late (194 instead of
// 197); with checkpointing.restore-watermarks the output equals the run without the failure.
TEST_F(CheckpointJobTest, RestoredWatermarksGiveTheFailureFreeOutput) {
  auto run = [](JobSpec spec) {
    std::vector<std::string> out;
    auto job = LocalJob::Create(spec, [&out](const std::string& l) { out.push_back(l); });
    job->execution().Start();
    EXPECT_EQ(job->execution().Wait(), JobState::kFinished) << job->execution().failure_cause();
    EXPECT_EQ(job->checkpoint_stats().restarts, spec.faults.empty() ? 0 : 1);
    out.push_back(job->ReportLine().value_or(""));
    return out;
  };
  const JobSpec restored = LoadJobSpecFile("jobs/failover_watermarks_restored.yaml");
  JobSpec failure_free = restored;
  failure_free.faults.clear();
  const std::vector<std::string> expected = run(failure_free);
  EXPECT_EQ(expected.back(),
            ">>> mode=operator, failover restored: windows fired=11, records in windows=203, late "
            "records=197 "
            "(from slow split: 197), total=400");
  EXPECT_EQ(run(restored), expected);

  JobSpec flink = restored;
  flink.checkpointing->restore_watermarks = false;
  const std::vector<std::string> flink_out = run(flink);
  EXPECT_EQ(flink_out.back(),
            ">>> mode=operator, failover restored: windows fired=12, records in windows=206, late "
            "records=194 "
            "(from slow split: 194), total=400");
  EXPECT_EQ(flink_out[1], ">>> FIRE window=[5s,6s) count=3 watermark=9.649s");
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

std::vector<std::string> FileLines(const fs::path& p) {
  std::vector<std::string> lines;
  std::ifstream in(p);
  for (std::string l; std::getline(in, l);) {
    lines.push_back(l);
  }
  return lines;
}

/// JobYaml with its print sink replaced by a plain `file` sink (delivery-guarantee none) at `out`.
std::string FileSinkJob(const fs::path& out, const std::string& rest,
                        const std::string& extra = "") {
  std::string yaml = JobYaml(1, rest);
  const std::string print = "sink: {type: print}";
  yaml.replace(yaml.find(print), print.size(),
               "sink: {type: file, path: " + out.string() + extra + "}");
  return yaml;
}

// Issue 41 item 1: a plain file sink opened its file with O_TRUNC at every (re)start, so a restart
// from checkpoint 12 erased the windows written before it (6 of 10 kept per key). Now each
// checkpoint records the file's length and a restore truncates back to it and appends: the file
// equals the uninterrupted run's output.
TEST_F(CheckpointJobTest, PlainFileSinkKeepsCheckpointedOutputAcrossARestart) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  ASSERT_EQ(uninterrupted.size(), 20u);
  fs::create_directories(dir_);
  const fs::path out = dir_ / "out.jsonl";
  const JobRun run = RunJob(
      FileSinkJob(out, WithFaults(dir_ / "chk", "  - {operator: windows, after-records: 120}\n")));
  ASSERT_EQ(run.state, JobState::kFinished) << run.failure;
  EXPECT_EQ(run.stats.restarts, 1);
  EXPECT_EQ(FileLines(out), uninterrupted);
}

// ... and across a restore into a new run (`--from-checkpoint`, a daemon's resume, a savepoint).
TEST_F(CheckpointJobTest, PlainFileSinkKeepsCheckpointedOutputAcrossARestore) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  fs::create_directories(dir_);
  const fs::path out = dir_ / "out.jsonl";
  const JobRun killed = RunJob(FileSinkJob(out, Checkpointing(dir_ / "chk")), {}, 12);
  ASSERT_EQ(killed.state, JobState::kCanceled) << killed.failure;
  JobRunOptions options;
  options.restore_from = dir_ / "chk";
  options.checkpoint_dir = dir_ / "chk2";
  const JobRun restored = RunJob(FileSinkJob(out, Checkpointing(dir_ / "chk")), options);
  ASSERT_EQ(restored.state, JobState::kFinished) << restored.failure;
  EXPECT_EQ(FileLines(out), uninterrupted);

  // A file changed outside the job (shorter than checkpoint 12 recorded) is not silently reused.
  fs::resize_file(out, 10);
  options.restore_from = dir_ / "chk" / "chk-12";
  options.checkpoint_dir = dir_ / "chk3";
  const JobRun shorter = RunJob(
      FileSinkJob(out, Checkpointing(dir_ / "chk") + "restart-strategy: {type: none}\n"), options);
  EXPECT_EQ(shorter.state, JobState::kFailed);
  EXPECT_NE(shorter.failure.find("cannot restore sink file '" + out.string() +
                                 "': it has 10 bytes, fewer than the"),
            std::string::npos)
      << shorter.failure;
  // Every restart would meet the same file: under the default restart strategy (checkpointing
  // on: exponential-delay, which always restarts) the job still fails at once.
  options.checkpoint_dir = dir_ / "chk4";
  const JobRun shorter_default = RunJob(FileSinkJob(out, Checkpointing(dir_ / "chk")), options);
  EXPECT_EQ(shorter_default.state, JobState::kFailed);
  EXPECT_EQ(shorter_default.stats.restarts, 0);
}

// Tryout 33: a job restored without a `checkpointing:` block (allowed, as in Flink) opened its
// plain file sink fresh, truncating the output the checkpoint covered: 64 of 155 windows lost. The
// restore keeps it, as with the block.
TEST_F(CheckpointJobTest, PlainFileSinkKeepsCheckpointedOutputInARestoredJobWithoutCheckpointing) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  fs::create_directories(dir_);
  const fs::path out = dir_ / "out.jsonl";
  const JobRun killed = RunJob(FileSinkJob(out, Checkpointing(dir_ / "chk")), {}, 12);
  ASSERT_EQ(killed.state, JobState::kCanceled) << killed.failure;
  ASSERT_FALSE(FileLines(out).empty());
  JobRunOptions options;
  options.restore_from = dir_ / "chk";
  const JobRun restored = RunJob(FileSinkJob(out, ""), options);
  ASSERT_EQ(restored.state, JobState::kFinished) << restored.failure;
  EXPECT_EQ(FileLines(out), uninterrupted);
}

// Tryout 33: a restore whose sink path changed since the checkpoint truncated the file at the new
// path (an info line only); it now keeps it and appends, as for a sink the checkpoint lacks.
TEST_F(CheckpointJobTest, PlainFileSinkWithAChangedPathKeepsWhatTheNewFileHolds) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  fs::create_directories(dir_);
  const JobRun killed =
      RunJob(FileSinkJob(dir_ / "old.jsonl", Checkpointing(dir_ / "chk")), {}, 12);
  ASSERT_EQ(killed.state, JobState::kCanceled) << killed.failure;
  const std::vector<std::string> before = FileLines(dir_ / "old.jsonl");
  ASSERT_FALSE(before.empty());
  const fs::path out = dir_ / "new.jsonl";
  { std::ofstream(out) << "kept\n"; }
  JobRunOptions options;
  options.restore_from = dir_ / "chk";
  options.checkpoint_dir = dir_ / "chk2";
  const JobRun restored = RunJob(FileSinkJob(out, Checkpointing(dir_ / "chk")), options);
  ASSERT_EQ(restored.state, JobState::kFinished) << restored.failure;
  // "kept", then what came after the checkpoint: the uninterrupted output's tail, at least the
  // part old.jsonl had not written when the run was cancelled.
  const std::vector<std::string> lines = FileLines(out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.front(), "kept");
  const size_t tail = lines.size() - 1;
  ASSERT_GE(tail, uninterrupted.size() - before.size());
  ASSERT_LE(tail, uninterrupted.size());
  EXPECT_EQ(std::vector<std::string>(lines.begin() + 1, lines.end()),
            std::vector<std::string>(uninterrupted.end() - static_cast<ptrdiff_t>(tail),
                                     uninterrupted.end()));
}

// Tester 28/06: an incremental RocksDB checkpoint restored into a job on the heap backend (or at
// another parallelism) fails the same way on every attempt, so it is refused before the job
// starts; one that slips past (no shared files listed) fails the job at once, never restarting.
TEST_F(CheckpointJobTest, IncrementalCheckpointRestoresOnlyOnRocksDbAtItsParallelism) {
  auto rocks = [](std::string yaml) {
    yaml.replace(yaml.find("clock: virtual"), 14, "clock: virtual, state-backend: rocksdb");
    return yaml;
  };
  const std::string incremental = Checkpointing(dir_) + "  incremental: true\n";
  ASSERT_EQ(RunJob(rocks(JobYaml(1, incremental)), {}, 12).state, JobState::kCanceled);
  JobRunOptions options;
  options.restore_from = dir_ / "chk-12";
  options.checkpoint_dir = dir_ / "chk2";
  EXPECT_EQ(RefusalOf(JobYaml(1, ""), options, "restored an incremental checkpoint on heap"),
            "cannot restore from " + (dir_ / "chk-12").string() +
                ": the state of operator \"windows\" is an incremental RocksDB checkpoint, which "
                "restores only with pipeline.state-backend: rocksdb (this job has heap); to "
                "change the state backend, restore from a savepoint (tidemark savepoint, or stop "
                "--savepoint), which is canonical and backend-independent");
  std::string wider = rocks(JobYaml(1, ""));
  wider.replace(wider.find("  - id: windows\n"), 16, "  - id: windows\n    parallelism: 2\n");
  EXPECT_EQ(RefusalOf(wider, options, "restored an incremental checkpoint at parallelism 2"),
            "cannot restore from " + (dir_ / "chk-12").string() +
                ": operator \"windows\" has parallelism 2 here and 1 in the checkpoint, and its "
                "state is an incremental RocksDB checkpoint, which restores only at the "
                "parallelism it was taken at; to change the parallelism, restore from a savepoint "
                "(tidemark savepoint, or stop --savepoint), which is canonical and "
                "redistributable");
  // The same checkpoint on RocksDB at its parallelism restores.
  const JobRun restored = RunJob(rocks(JobYaml(1, "")), options);
  EXPECT_EQ(restored.state, JobState::kFinished) << restored.failure;
  // Without its "shared" list the heap job starts, and the window operator's restore fails the
  // job without a restart, although checkpointing's default restart strategy always restarts.
  {
    nlohmann::json meta = nlohmann::json::parse(ReadFileText(dir_ / "chk-12" / "_metadata"));
    for (auto& state : meta["states"]) {
      state.erase("shared");
    }
    std::ofstream(dir_ / "chk-12" / "_metadata") << meta.dump();
  }
  options.checkpoint_dir = dir_ / "chk3";
  const JobRun heap = RunJob(JobYaml(1, Checkpointing(dir_ / "chk3")), options);
  EXPECT_EQ(heap.state, JobState::kFailed);
  EXPECT_EQ(heap.stats.restarts, 0);
  EXPECT_EQ(heap.failure,
            "task windows -> probe -> out#0: operator 'windows' failed: operator \"windows\": "
            "its state is an incremental RocksDB checkpoint, which restores only with "
            "pipeline.state-backend: rocksdb on the sliced window path; to change the state "
            "backend, restore from a savepoint (canonical, backend-independent)");
}

// A fresh start over an existing file follows `write-mode` (Flink's FileSystem.WriteMode).
TEST_F(CheckpointJobTest, PlainFileSinkWriteModeDecidesAFreshStart) {
  fs::create_directories(dir_);
  const fs::path out = dir_ / "out.jsonl";
  { std::ofstream(out) << "old\n"; }
  const JobRun refused = RunJob(FileSinkJob(out, "", ", write-mode: no-overwrite"));
  EXPECT_EQ(refused.state, JobState::kFailed);
  EXPECT_NE(
      refused.failure.find("cannot open sink file '" + out.string() +
                           "': it exists and the sink's write-mode is no-overwrite (remove it, "
                           "or set write-mode: overwrite)"),
      std::string::npos)
      << refused.failure;
  EXPECT_EQ(FileLines(out), std::vector<std::string>{"old"});
  const JobRun overwritten =
      RunJob(FileSinkJob(out, Checkpointing(dir_ / "chk"), ", write-mode: overwrite"));
  ASSERT_EQ(overwritten.state, JobState::kFinished) << overwritten.failure;
  EXPECT_EQ(FileLines(out).size(), 20u);
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

// Issue 41 item 2: a savepoint is never a checkpoint failure. A target that cannot be created is
// refused before anything starts, naming the path and why; a savepoint that fails later (its
// snapshot cannot be written) leaves the job running: with restart-strategy none and
// tolerable-failed-checkpoints 0 it still finishes, with the uninterrupted output.
TEST_F(CheckpointJobTest, ASavepointFailureNeverFailsOrRestartsTheJob) {
  const std::vector<std::string> uninterrupted = Output(RunJob(JobYaml(1, "")).lines);
  fs::create_directories(dir_ / "sp");
  { std::ofstream(dir_ / "plain-file") << "x"; }
  // savepoint-5 (the id after checkpoint 4) is taken by a regular file: the snapshot fails late.
  { std::ofstream(dir_ / "sp" / "savepoint-5") << "x"; }
  const std::string yaml =
      JobYaml(1, Checkpointing(dir_ / "chk") + "restart-strategy: {type: none}\n");
  lines_ = std::make_shared<std::vector<std::string>>();
  auto lines = lines_;
  auto job = LocalJob::Create(LoadJobSpecString(yaml, "ckpt.yaml"), registry_,
                              [lines](const std::string& l) { lines->push_back(l); }, {});
  LocalJob* raw = job.get();
  std::future<SavepointResult> refused;
  std::future<SavepointResult> late;
  job->execution().SetCheckpointCompleteListener([&, raw](int64_t id) {
    if (id == 4) {
      refused = raw->TriggerSavepoint(SavepointRequest{dir_ / "plain-file" / "sp", false, false});
      late = raw->TriggerSavepoint(SavepointRequest{dir_ / "sp", false, false});
    }
  });
  job->execution().Start();
  EXPECT_EQ(job->execution().Wait(), JobState::kFinished) << job->execution().failure_cause();
  ASSERT_TRUE(refused.valid());
  const SavepointResult r1 = refused.get();
  EXPECT_FALSE(r1.ok);
  EXPECT_EQ(r1.error, "savepoint target directory '" + (dir_ / "plain-file" / "sp").string() +
                          "' cannot be used: '" + (dir_ / "plain-file").string() +
                          "' is not a directory");
  const SavepointResult r2 = late.get();
  EXPECT_FALSE(r2.ok);
  EXPECT_NE(r2.error.find((dir_ / "sp" / "savepoint-5").string()), std::string::npos) << r2.error;
  EXPECT_EQ(job->checkpoint_stats().restarts, 0);
  EXPECT_EQ(Output(*lines_), uninterrupted);
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

// Issue 41 item 4: a restore into a job whose `key-by` changed was accepted and one window came
// out split over the old and the new key. Now what an operator's state means (key fields and
// types, window assigner, aggregate layout) is recorded in `_metadata` and a change for the same
// operator id is refused, naming the operator and the change. (Dropped operators need
// --allow-non-restored-state: RefusesCheckpointsItCannotRestore.)
TEST_F(CheckpointJobTest, RestoreRefusesAChangedKeyWindowOrAggregate) {
  ASSERT_EQ(RunJob(JobYaml(1, Checkpointing(dir_, 1))).state, JobState::kFinished);
  JobRunOptions options;
  options.restore_from = dir_ / "chk-20";
  const std::string head =
      "cannot restore from " + (dir_ / "chk-20").string() + ": operator \"windows\" changed its ";
  const std::string tail =
      "; its checkpointed state cannot be read as the new one. Restore it into the job as it was, "
      "or give the "
      "changed operator a new id and pass --allow-non-restored-state to start it empty";
  auto changed = [](std::string yaml, const std::string& from, const std::string& to) {
    yaml.replace(yaml.find(from), from.size(), to);
    return yaml;
  };
  EXPECT_EQ(
      RefusalOf(changed(JobYaml(1, ""), "key-by: [k]", "key-by: [k, ts]"), options,
                "a changed key-by"),
      head + "key-by (key fields and types) from [k string] to [k string, ts timestamp]" + tail);
  EXPECT_EQ(
      RefusalOf(changed(JobYaml(1, ""), "size: 1s", "size: 2s"), options, "a changed window size"),
      head +
          "window assigner from tumbling event-time size 1000ms to tumbling event-time size "
          "2000ms" +
          tail);
  EXPECT_EQ(RefusalOf(changed(JobYaml(1, ""), "aggregate: [count, ",
                              "aggregate: [{fn: sum, field: ts}, "),
                      options, "a changed aggregate"),
            head +
                "aggregate layout from [count() as count, max(ts) as last] to [sum(ts) as sum_ts, "
                "max(ts) as last]" +
                tail);
  // The unchanged job restores.
  EXPECT_EQ(RunJob(JobYaml(1, ""), options).state, JobState::kFinished);
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

// Issue 41 item 9: a FIFO as a checkpoint's `_metadata` blocked the restore for ever (and, in the
// daemon, a cancel then waited 30 s for the kill). It is opened without blocking and refused.
TEST_F(CheckpointJobTest, AFifoAsMetadataIsRefusedInsteadOfBlocking) {
  fs::create_directories(dir_ / "fake");
  ASSERT_EQ(::mkfifo((dir_ / "fake" / "_metadata").c_str(), 0600), 0);
  JobRunOptions options;
  options.restore_from = dir_ / "fake";
  EXPECT_EQ(RefusalOf(JobYaml(1, ""), options, "restored from a FIFO"),
            "cannot restore from " + (dir_ / "fake").string() +
                ": _metadata: it is a FIFO, not a regular file");
  // A checkpoint root whose only checkpoint has one is skipped with that reason.
  fs::create_directories(dir_ / "root" / "chk-3");
  ASSERT_EQ(::mkfifo((dir_ / "root" / "chk-3" / "_metadata").c_str(), 0600), 0);
  options.restore_from = dir_ / "root";
  EXPECT_EQ(RefusalOf(JobYaml(1, ""), options, "restored from a root with a FIFO"),
            "cannot restore from " + (dir_ / "root").string() + ": skipping checkpoint " +
                (dir_ / "root" / "chk-3").string() +
                ": _metadata: it is a FIFO, not a regular file");
}

}  // namespace
}  // namespace tidemark

namespace tidemark {
namespace {

// Issue 45: the state a checkpoint holds under an operator id, restored into a block of another
// operator type with that id (a `window` block's state into a `dedup` block), failed in the task
// and restarted for ever under the default exponential-delay strategy. The checkpoint records
// each operator's type and the restore refuses the change, naming the id, both types and the
// checkpoint; a checkpoint without types (written before they were recorded) fails the job once,
// without a restart.
TEST_F(CheckpointJobTest, AnotherOperatorTypesStateFailsTheRestoreOnceInsteadOfRestarting) {
  ASSERT_EQ(RunJob(JobYaml(1, Checkpointing(dir_, 1))).state, JobState::kFinished);
  auto as_dedup = [](std::string yaml) {
    const std::string window_type = "    type: window\n";
    yaml.replace(yaml.find(window_type), window_type.size(), "    type: dedup\n");
    const size_t w = yaml.find("    window: {");
    yaml.replace(w, yaml.find('\n', w) + 1 - w, "    dedup: {within: 650ms}\n");
    return yaml;
  };
  // Checkpointing on and no restart-strategy: exponential-delay, which always restarts.
  const std::string dedup = as_dedup(JobYaml(1, Checkpointing(dir_ / "after", 1)));
  ASSERT_EQ(dedup.find("restart-strategy"), std::string::npos);
  JobRunOptions options;
  options.restore_from = dir_ / "chk-20";
  EXPECT_EQ(RefusalOf(dedup, options, "restored a window's state into a dedup"),
            "cannot restore from " + (dir_ / "chk-20").string() +
                ": operator \"windows\" changed its operator type from window to dedup; its "
                "checkpointed state cannot be read as the new one. Restore it into the job as it "
                "was, or give the changed operator a new id and pass --allow-non-restored-state "
                "to start it empty");
  // Without recorded types the task meets the window's state: the job fails at once.
  {
    nlohmann::json meta = nlohmann::json::parse(ReadFileText(dir_ / "chk-20" / "_metadata"));
    for (auto& [op, layout] : meta["operators"].items()) {
      layout.erase("type");
    }
    std::ofstream(dir_ / "chk-20" / "_metadata") << meta.dump();
  }
  const JobRun run = RunJob(dedup, options);
  EXPECT_EQ(run.state, JobState::kFailed);
  EXPECT_EQ(run.stats.restarts, 0);
  EXPECT_EQ(run.failure,
            "task windows -> probe -> out#0: operator 'windows' failed: cannot restore its state "
            "from " +
                (dir_ / "chk-20").string() +
                ": state: section 'window-operator' where 'keyed-process' was expected; every "
                "restart would fail the same way, so the job fails. Restore it into the job the "
                "checkpoint was taken of, or give this operator a new id and pass "
                "--allow-non-restored-state to start it empty");
  // A user function failing in its restore is not that: it still restarts (FailuresInSnapshot-
  // RestoreAndCloseRecover). The unchanged job restores from the same checkpoint.
  EXPECT_EQ(RunJob(JobYaml(1, ""), options).state, JobState::kFinished);
}

}  // namespace
}  // namespace tidemark
