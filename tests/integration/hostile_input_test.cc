// Hostile input through the `tidemark` CLI and LocalJob, end to end: `validate` lists every
// problem and exits 2, `--version`, a FIFO source path is refused at once (it used to block `run`
// and ignore Ctrl-C), a 200 KB line of 100,000 nested '[' goes to the errors output, and a file
// sink's missing directory fails the job unless `create-dirs: true` (which makes it 0700, its
// file 0600).

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

struct CliResult {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class HostileInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           fmt::format("tidemark_hostile_{}_{}", ::getpid(),
                       ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }

  /// Runs the built `tidemark` CLI with `args` (under `timeout 10`: a hang fails the test).
  CliResult Cli(const std::string& args) {
    const fs::path tools = fs::canonical("/proc/self/exe").parent_path().parent_path() / "tools";
    const std::string cmd =
        fmt::format("timeout 10 '{}' {} >'{}' 2>'{}'", (tools / "tidemark").string(), args,
                    (dir_ / "out").string(), (dir_ / "err").string());
    const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(dir_ / "out"),
            ReadFile(dir_ / "err")};
  }

  fs::path dir_;
};

// A file source over `path` (jsonl, {ts, user}) feeding `sink`, and its errors printed.
std::string FileJob(const std::string& path, const std::string& sink) {
  return fmt::format(R"(name: hostile
pipeline: {{parallelism: 1}}
operators:
  - id: source
    type: source
    source: {{type: file, path: '{}', format: jsonl, schema: {{ts: timestamp, user: int64}}}}
    watermarks: {{max-out-of-orderness: 0ms, timestamp-field: ts}}
  - id: out
    type: sink
    input: source
    sink: {}
  - id: errors
    type: sink
    inputs: [{{from: source, side-output: errors}}]
    sink: {{type: print}}
)",
                     path, sink);
}

TEST_F(HostileInputTest, ValidateListsEveryProblemAndExitsTwo) {
  const std::string bad = Write("bad.yaml", R"(name: bad
operators:
  - id: source
    type: source
    source: {type: sequence, splits: [{id: a, start: 0s, step: 1s, count: 3}]}
  - id: w
    type: window
    input: source
    window: {assigner: tumbling, size: 1s, trigger: count(-1)}
  - id: f
    type: filter
    input: source
    filter: "ts > 'x'"
  - id: out
    type: sink
    inputs: [w, f]
    sink: {type: collect}
)");
  CliResult r = Cli("validate '" + bad + "'");
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            bad +
                ":9:53: error: operators[1].window.trigger: trigger 'count(-1)': count(N) needs at "
                "least 1 element, got -1\n" +
                bad +
                ":13:17: error: operators[2].filter: in expression \"ts > 'x'\": cannot "
                "compare timestamp with string using '>'\n");
  CliResult ok = Cli("validate jobs/two_splits_split.yaml");
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(ok.out, "jobs/two_splits_split.yaml: valid: job 'two-splits-split', 4 operators\n");
  // Loader problems are all listed too (before compiling).
  CliResult keys =
      Cli("validate '" + Write("keys.yaml", "name: x\nwat: 1\noperators: []\nalso: 2\n") + "'");
  EXPECT_EQ(keys.rc, 2);
  EXPECT_EQ(std::count(keys.err.begin(), keys.err.end(), '\n'), 3) << keys.err;
}

TEST_F(HostileInputTest, VersionIsPrinted) {
  CliResult r = Cli("--version");
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "tidemark 0.1.0\n");
}

TEST_F(HostileInputTest, AFifoSourceIsRefusedAtOnceInsteadOfBlockingRun) {
  const std::string fifo = (dir_ / "in.jsonl").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string job = Write("fifo.yaml", FileJob(fifo, "{type: collect}"));
  CliResult r = Cli("run '" + job + "'");  // no writer: it used to block here forever
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err, job + ":6:32: error: operators[0].source.path: input file '" + fifo +
                       "' is a FIFO; a source reads regular files only\n");
  // Both point at the path's value (they pointed at the operator's first key), as other value
  // errors do.
  const std::string missing = (dir_ / "none.jsonl").string();
  const std::string job2 = Write("missing.yaml", FileJob(missing, "{type: collect}"));
  CliResult m = Cli("validate '" + job2 + "'");
  EXPECT_EQ(m.rc, 2);
  EXPECT_EQ(m.err,
            job2 + ":6:32: error: operators[0].source.path: '" + missing + "' does not exist\n");
  CliResult zero = Cli("run '" + Write("zero.yaml", FileJob("/dev/zero", "{type: collect}")) + "'");
  EXPECT_EQ(zero.rc, 2);
  EXPECT_NE(zero.err.find(
                "input file '/dev/zero' is a character device; a source reads regular files only"),
            std::string::npos)
      << zero.err;
}

TEST_F(HostileInputTest, DeeplyNestedJsonLineGoesToTheErrorsOutput) {
  const std::string data =
      Write("deep.jsonl", "{\"ts\": 1, \"user\": 1}\n" + std::string(100000, '[') +
                              std::string(100000, ']') + "\n{\"ts\": 2, \"user\": 1}\n");
  CliResult r = Cli("run '" + Write("deep.yaml", FileJob(data, "{type: print}")) + "'");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n') + 1), "{\"ts\":1,\"user\":1}\n");
  EXPECT_NE(
      r.out.find("{\"split\":\"" + data +
                 "\",\"line\":2,\"offset\":21,\"reason\":\"JSON nests deeper than 1000 levels\""),
      std::string::npos)
      << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("{\"ts\":2,\"user\":1}\n"), std::string::npos);
}

TEST_F(HostileInputTest, SinkDirectoryMustExistUnlessCreateDirs) {
  const std::string data = Write("in.jsonl", "{\"ts\": 1, \"user\": 7}\n");
  const std::string missing = (dir_ / "no" / "such" / "out.jsonl").string();
  JobSpec spec =
      LoadJobSpecString(FileJob(data, "{type: file, path: '" + missing + "'}"), "j.yaml");
  auto job = LocalJob::Create(spec, [](const std::string&) {});
  job->execution().Start();
  EXPECT_EQ(job->execution().Wait(), JobState::kFailed);
  EXPECT_NE(
      job->execution().failure_cause().find("cannot open sink file '" + missing + "': directory '" +
                                            (dir_ / "no" / "such").string() +
                                            "' does not exist; create it or set create-dirs: true"),
      std::string::npos)
      << job->execution().failure_cause();
  EXPECT_FALSE(fs::exists(dir_ / "no"));

  JobSpec create = LoadJobSpecString(
      FileJob(data, "{type: file, path: '" + missing + "', create-dirs: true}"), "j.yaml");
  auto made = LocalJob::Create(create, [](const std::string&) {});
  made->execution().Start();
  ASSERT_EQ(made->execution().Wait(), JobState::kFinished) << made->execution().failure_cause();
  EXPECT_EQ(ReadFile(missing), "{\"ts\":1,\"user\":7}\n");
  struct stat st {};
  ASSERT_EQ(::stat(missing.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ASSERT_EQ(::stat((dir_ / "no").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  ASSERT_EQ(::stat((dir_ / "no" / "such").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(HostileInputTest, CreateDirsIsOnlyForFileSinks) {
  try {
    LoadJobSpecString(FileJob("x.jsonl", "{type: print, create-dirs: true}"), "j.yaml");
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "j.yaml:11:25: error: operators[1].sink.create-dirs: applies only to a sink of type "
              "file, not "
              "print");
  }
}

TEST_F(HostileInputTest, ASinkFifoWithoutAReaderFailsTheJobInsteadOfBlockingIt) {
  const std::string data = Write("in.jsonl", "{\"ts\": 1, \"user\": 7}\n");
  const std::string fifo = (dir_ / "out.fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  JobSpec spec = LoadJobSpecString(FileJob(data, "{type: file, path: '" + fifo + "'}"), "j.yaml");
  auto job = LocalJob::Create(spec, [](const std::string&) {});
  job->execution().Start();
  ASSERT_TRUE(job->execution().WaitFor(std::chrono::seconds(10)));
  EXPECT_EQ(job->execution().Wait(), JobState::kFailed);
  EXPECT_NE(job->execution().failure_cause().find(
                "cannot open sink file '" + fifo +
                "': No such device or address (a FIFO without a reader)"),
            std::string::npos)
      << job->execution().failure_cause();
}

}  // namespace
}  // namespace tidemark
