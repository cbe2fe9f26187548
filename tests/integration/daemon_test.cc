// The daemon end to end: an in-process JobManager + RestServer on a temporary Unix socket, driven
// through the built `tidemark` CLI and raw sockets, and the built `tidemarkd` binary itself.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <random>
#include <regex>
#include <signal.h>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "operators/user_operators.h"
#include "runtime/core/timestamp.h"
#include "runtime/io/kafka_client.h"
#include "tests/testing/daemon_harness.h"
#include "tests/testing/daemon_jobs.h"
#include "tools/daemon/daemon_client.h"
#include "tools/daemon/job_manager.h"
#include "tools/daemon/prometheus_metrics.h"
#include "tools/daemon/rest_server.h"
#include "tools/daemon/worker.h"
#include "tools/tidemarkd/local_job_factory.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

using testing::CliResult;
using testing::Eventually;
using testing::kLongJob;
using testing::ProcessGone;
using testing::ReadFile;
using testing::TempDir;
using testing::ToolsDir;

// A small job that finishes at once; its sink prints one JSON line per record.
constexpr const char* kSmallJob = R"(name: small
operators:
  - id: src
    type: source
    source: {type: sequence, splits: [{id: a, start: 0ms, step: 1s, count: 3}]}
  - id: out
    type: sink
    input: src
    sink: {type: print}
)";

std::string SinkJob(const std::string& path) {
  return fmt::format(R"(name: bad-sink
operators:
  - id: src
    type: source
    source: {{type: sequence, splits: [{{id: a, start: 0ms, step: 1s, count: 100}}]}}
  - id: out
    type: sink
    input: src
    sink: {{type: file, path: {}}}
)",
                     path);
}

/// A user operator type (registered by C++, as an application would) that forwards records and
/// throws from its ProcessElement at the third one: user code failing inside a running job.
class ThrowAtThird : public KeyedProcessFunction {
 public:
  void ProcessElement(const StreamRecord& record, ProcessContext& ctx) override {
    if (++seen_ == 3) {
      throw std::runtime_error(
          fmt::format("poisoned record {} at {}", seen_, FormatSeconds(record.timestamp)));
    }
    ctx.Collect(record.row, record.timestamp);
  }

 private:
  int seen_ = 0;
};

/// A user operator type that dereferences a null pointer at its third record: a C++ bug in user
/// code. Test-only, registered in this binary alone; in the daemon it kills just its worker.
class SegfaultAtThird : public KeyedProcessFunction {
 public:
  void ProcessElement(const StreamRecord& record, ProcessContext& ctx) override {
    if (++seen_ == 3) {
      volatile int* null = nullptr;
      *null = 1;  // SIGSEGV
    }
    ctx.Collect(record.row, record.timestamp);
  }

 private:
  int seen_ = 0;
};

/// A user operator type that takes 1 ms per record (a throttled downstream, e.g. a sink writing
/// to a slow external system): whatever feeds it faster is back-pressured.
class OneMsPerRecord : public KeyedProcessFunction {
 public:
  void ProcessElement(const StreamRecord& record, ProcessContext& ctx) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ctx.Collect(record.row, record.timestamp);
  }
};

template <class Function>
void RegisterForwarding(OperatorRegistry& registry, const std::string& type) {
  RegisterKeyedProcessType(registry, type, [](const Schema& input, const OperatorParams& params) {
    params.CheckKeys({});
    UserFunctionPlan<KeyedProcessFunction> plan;
    plan.output_schema = input;
    plan.factory = [] {
      return std::make_unique<Function>();
    };
    return plan;
  });
}

/// The built-ins plus `throw-at-third`, `segfault-at-third` and `one-ms-per-record`.
std::shared_ptr<const OperatorRegistry> TestRegistry() {
  auto registry = std::make_shared<OperatorRegistry>(BuiltinRegistry());
  RegisterForwarding<ThrowAtThird>(*registry, "throw-at-third");
  RegisterForwarding<SegfaultAtThird>(*registry, "segfault-at-third");
  RegisterForwarding<OneMsPerRecord>(*registry, "one-ms-per-record");
  return registry;
}

/// What this binary's worker processes run (main() below hands them `--worker`).
JobFactory TestJobFactory() {
  return LocalJobFactory(TestRegistry());
}

// Records every 10 ms through `throw-at-third`: fails 20-30 ms after its start.
constexpr const char* kThrowingJob = R"(name: throws
operators:
  - id: src
    type: source
    source:
      type: sequence
      pacing: 10ms
      splits: [{id: a, start: 0ms, step: 1s, count: 100}]
  - id: poisoned
    type: throw-at-third
    input: src
  - id: out
    type: sink
    input: poisoned
    sink: {type: collect}
)";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

/// Reads until the peer closes (or 5 s pass).
std::string ReadUntilClosed(int fd) {
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  std::string reply;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      return reply;
    }
    reply.append(buf, static_cast<size_t>(n));
  }
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer(JobManagerOptions{}); }

  /// Jobs run as in tidemarkd, each in a worker process: this test binary in its --worker mode.
  void StartServer(JobManagerOptions job_options, RestServerOptions server_options = {},
                   WorkerOptions worker_options = {}) {
    server_.reset();
    jobs_.reset();
    socket_ = dir_.path() + "/d.sock";
    jobs_ = std::make_unique<JobManager>(
        WorkerJobFactory(validator_ ? validator_ : LocalJobValidator(TestRegistry()),
                         worker_options),
        job_options);
    server_options.socket_path = socket_;
    server_ = std::make_unique<RestServer>(*jobs_, server_options);
    server_->Start();
  }

  void TearDown() override {
    server_.reset();
    jobs_.reset();
  }

  DaemonClient Client() { return DaemonClient(DaemonEndpoint{socket_, "", ""}); }

  /// Runs the built `tidemark` CLI against this test's socket.
  CliResult Cli(const std::string& args) {
    const std::string out = dir_.path() + "/cli.out";
    const std::string err = dir_.path() + "/cli.err";
    const std::string cmd =
        fmt::format("'{}' --socket '{}' {} >'{}' 2>'{}'", (ToolsDir() / "tidemark").string(),
                    socket_, args, out, err);
    const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(out), ReadFile(err)};
  }

  std::string SubmitYaml(const std::string& yaml) {
    auto r = Client().Request("POST", "/jobs?file=test.yaml", yaml);
    EXPECT_EQ(r.status, 202) << r.body;
    return json::parse(r.body).at("jid").get<std::string>();
  }

  json JobJson(const std::string& id) {
    auto r = Client().Request("GET", "/jobs/" + id);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  }

  /// Waits until the job is RUNNING with records flowing (its source emitted at least one).
  void WaitUntilProducing(const std::string& id) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      json j = JobJson(id);
      // A worker's tasks are listed from its first report on (a few ms after the submission).
      if (j["state"] == "RUNNING" && !j["tasks"].empty() &&
          j["tasks"][0]["subtasks"][0]["records-in"].get<int64_t>() > 0) {
        return;
      }
      jobs_->WaitForJob(id,
                        std::chrono::milliseconds(5));  // a bounded pause that ends early on exit
    }
    FAIL() << "job " << id << " never produced";
  }

  /// A connection to the test's socket that sends nothing (yet); -1 when connect fails.
  int ConnectRaw() {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_.c_str(), sizeof(addr.sun_path) - 1);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      if (fd >= 0) {
        ::close(fd);
      }
      return -1;
    }
    return fd;
  }

  /// Sends raw bytes on a fresh connection, half-closes, and returns whatever comes back.
  std::string RawExchange(const std::string& bytes, bool half_close = true) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, socket_.c_str(), sizeof(addr.sun_path) - 1);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) {
        break;  // the server may close early (oversize body): that is an allowed answer
      }
      sent += static_cast<size_t>(n);
    }
    if (half_close) {
      ::shutdown(fd, SHUT_WR);
    }
    std::string reply;
    char buf[4096];
    for (;;) {
      const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
      if (n <= 0) {
        break;
      }
      reply.append(buf, static_cast<size_t>(n));
    }
    ::close(fd);
    return reply;
  }

  TempDir dir_;
  std::string socket_;
  JobValidator validator_;  ///< StartServer's validator when set (else the test registry's)
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<RestServer> server_;
};

TEST_F(DaemonTest, SubmitsBothTwoSplitJobsThroughTheCliAndReadsResultsWithStatusJson) {
  for (const std::string mode : {"split", "operator"}) {
    const std::string job = "jobs/two_splits_" + mode + ".yaml";
    const std::vector<std::string> expected =
        Lines(ReadFile("tests/golden/two_splits_" + mode + ".expected"));
    ASSERT_FALSE(expected.empty());

    CliResult submit = Cli("submit --wait " + job);
    ASSERT_EQ(submit.rc, 0) << submit.err;
    const std::vector<std::string> out = Lines(submit.out);
    ASSERT_EQ(out.size(), 3u) << submit.out;  // id, "job ID FINISHED in ...", report
    const std::string id = out[0];
    EXPECT_EQ(out[2], expected.back());

    CliResult status = Cli("status --json " + id);
    ASSERT_EQ(status.rc, 0) << status.err;
    json j = json::parse(status.out);
    EXPECT_EQ(j["state"], "FINISHED");
    EXPECT_EQ(j["name"], "two-splits-" + mode);
    EXPECT_EQ(j["file"], fs::absolute(job).lexically_normal().string());  // what submit sends
    EXPECT_EQ(j["report"], expected.back());
    EXPECT_TRUE(j["failure-cause"].is_null());
    // Final watermarks: every operator that emits watermarks ended at end of input (MAX); the sinks
    // emit none. The source read all 400 records.
    std::map<std::string, json> ops;
    for (const auto& task : j["tasks"]) {
      for (const auto& st : task["subtasks"]) {
        EXPECT_TRUE(st["finished"].get<bool>());
        for (const auto& op : st["operators"]) {
          ops[op["name"].get<std::string>()] = op;
        }
      }
    }
    EXPECT_EQ(ops.at("source")["records-out"], 400);
    EXPECT_EQ(ops.at("source")["output-watermark"], kMaxTimestamp);
    EXPECT_EQ(ops.at("windows")["output-watermark"], kMaxTimestamp);
    EXPECT_EQ(ops.at("windows")["records-out"], mode == "split" ? 15 : 11);
    EXPECT_TRUE(ops.at("fired")["output-watermark"].is_null());
    EXPECT_EQ(j["vertices"].size(), mode == "split" ? 4u : 5u);
    // The window operator's own figures: late records went to the side output, none dropped.
    EXPECT_EQ(ops.at("windows")["metrics"]["numLateRecordsSideOutput"], mode == "split" ? 0 : 197);
    EXPECT_EQ(ops.at("windows")["metrics"]["numLateRecordsDropped"], 0);
    EXPECT_EQ(ops.at("windows")["metrics"]["currentWatermark"], kMaxTimestamp);

    // The human table: per operator records, watermarks and late records; per split records and
    // state (a finished job's splits have released their watermark outputs).
    CliResult table = Cli("status " + id);
    ASSERT_EQ(table.rc, 0) << table.err;
    const std::string operators_head = mode == "split"
                                           ? "source#0                           400  -         "
                                             "source            400  MAX        -    -\n"
                                           : "source -> assign#0                 400  -         "
                                             "source            400  MAX        -    -\n"
                                             "                                                  "
                                             "assign            400  MAX        -    -\n";
    EXPECT_EQ(table.out.substr(table.out.find("TASK#SUBTASK")),
              "TASK#SUBTASK                RECORDS IN  INPUT WM  OPERATOR  RECORDS OUT  OUTPUT WM  "
              "LAG  LATE\n" +
                  operators_head +
                  fmt::format("windows -> fired -> late#0         400  MAX       windows           "
                              " {}  MAX        -"
                              "    {} side, 0 dropped\n",
                              mode == "split" ? 15 : 11, mode == "split" ? 0 : 197) +
                  "                                                  fired               0  -      "
                  "    -    -\n"
                  "                                                  late                0  -      "
                  "    -    -\n"
                  "\n"
                  "OPERATOR#SUBTASK  SPLIT  RECORDS  WATERMARK  LAG  BEHIND  STATE\n"
                  "source#0          fast       200  -          -    -       finished\n"
                  "source#0          slow       200  -          -    -       finished\n")
        << table.out;

    // The job's printed lines are in its log, exactly as `tidemark run` prints them.
    CliResult logs = Cli("logs " + id);
    ASSERT_EQ(logs.rc, 0) << logs.err;
    EXPECT_EQ(Lines(logs.out), expected);
  }
  CliResult list = Cli("list --json");
  ASSERT_EQ(list.rc, 0);
  EXPECT_EQ(json::parse(list.out)["jobs"].size(), 2u);
}

TEST_F(DaemonTest, StatusLogsAndSubmitWaitSayWhatTheJobDropped) {
  // Issue 42: the daemon's job said FINISHED and nothing else about 4 rejected lines.
  // The daemon resolves the job's relative paths (against the job file's directory).
  const std::string dropped = "source: 4 input records rejected; first: " +
                              (fs::current_path() / "jobs/data/bad_input.csv").string() +
                              ":3: expected 3 fields, got 2\n";
  CliResult submit = Cli("submit --wait jobs/file_bad_input.yaml");
  ASSERT_EQ(submit.rc, 0) << submit.err;
  EXPECT_EQ(submit.err, dropped);
  const std::string id = Lines(submit.out).at(0);
  CliResult status = Cli("status " + id);
  EXPECT_EQ(status.rc, 0) << status.err;
  EXPECT_EQ(status.err, dropped);
  CliResult logs = Cli("logs " + id);
  EXPECT_EQ(logs.rc, 0) << logs.err;
  EXPECT_EQ(logs.err, dropped);
  EXPECT_EQ(JobJson(id)["dropped-records"], json::array({dropped.substr(0, dropped.size() - 1)}));
  // A job that dropped nothing: nothing on stderr.
  CliResult clean = Cli("submit --wait jobs/two_splits_split.yaml");
  ASSERT_EQ(clean.rc, 0) << clean.err;
  EXPECT_EQ(clean.err, "");
  EXPECT_EQ(Cli("status " + Lines(clean.out).at(0)).err, "");
}

TEST_F(DaemonTest, CancelsALongRunningJobWithinOneSecond) {
  const std::string id = SubmitYaml(kLongJob);
  WaitUntilProducing(id);
  const auto start = std::chrono::steady_clock::now();
  CliResult cancel = Cli("cancel " + id);
  ASSERT_EQ(cancel.rc, 0) << cancel.err;
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(1)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
  CliResult status = Cli("status --json " + id);
  EXPECT_EQ(status.rc, 1);  // CANCELED
  EXPECT_EQ(json::parse(status.out)["state"], "CANCELED");
  // Cancelling again is harmless, but the CLI says nothing was canceled and exits 1.
  EXPECT_EQ(Client().Request("DELETE", "/jobs/" + id).status, 409);
  CliResult again = Cli("cancel " + id);
  EXPECT_EQ(again.rc, 1);
  EXPECT_EQ(again.err,
            "tidemark: job " + id + " has already ended (CANCELED); nothing to cancel\n");
}

TEST_F(DaemonTest, CancelsAJobWhileOneWatermarkFiresMillionsOfWindows) {
  // At end of input the MAX watermark fires 1000 keys x 86,400 sliding windows in one call of the
  // window operator; cancel used to be checked only between mails and records, so the job stayed
  // RUNNING (and the daemon could not shut down) until every window had fired.
  const std::string id = SubmitYaml(R"(
name: many-windows
operators:
  - id: src
    type: source
    source: {type: datagen, splits: 1, count: 20000, rate: 100000000, keys: 1000}
    watermarks: {max-out-of-orderness: 0ms, timestamp-field: ts}
  - id: w
    type: window
    input: src
    key-by: [key]
    window: {assigner: sliding, size: 1d, slide: 1s}
  - id: out
    type: sink
    input: w
    sink: {type: checksum}
)");
  // The 20,000 records arrive within milliseconds; a second later the window task is deep in the
  // final watermark step (firing all of it takes well over ten seconds), where it publishes no
  // metrics, so only the time tells.
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(JobJson(id)["state"], "RUNNING");
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(Client().Request("DELETE", "/jobs/" + id).status, 202);
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(2)));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(JobJson(id)["state"], "CANCELED");
}

TEST_F(DaemonTest, StatusShowsLiveSplitWatermarksAndHowFarEachTrails) {
  // Two endless splits 10 s apart in event time, on the wall clock.
  const std::string id = SubmitYaml(R"(name: live
operators:
  - id: src
    type: source
    source:
      type: sequence
      pacing: 1ms
      splits:
        - {id: early, start: 0s, step: 1ms, count: 100000000}
        - {id: late, start: 10s, step: 1ms, count: 100000000}
    watermarks: {strategy: bounded-out-of-orderness, max-out-of-orderness: 0ms, timestamp-field: ts}
  - id: out
    type: sink
    input: src
    sink: {type: collect}
)");
  ASSERT_TRUE(Eventually(
      [&] {
        const json m = JobJson(id)["tasks"][0]["subtasks"][0]["operators"][0]["metrics"];
        return m.contains("split.early.watermark") && !m["split.early.watermark"].is_null() &&
               m.contains("split.late.watermark") && !m["split.late.watermark"].is_null();
      },
      std::chrono::seconds(5)));
  CliResult status = Cli("status " + id);
  ASSERT_EQ(status.rc, 0) << status.err;
  // Watermarks as event times; the early split trails the late one by 10 s (give or take the one
  // record the round-robin reader may be between them); neither is idle or paused.
  EXPECT_TRUE(std::regex_search(
      status.out,
      std::regex(R"(\nOPERATOR#SUBTASK +SPLIT +RECORDS +WATERMARK +LAG +BEHIND +STATE\n)"
                 R"(src#0 +early +\d+ +\d+(\.\d+)?s +- +(9\.999s|10s|10\.001s) +active\n)"
                 R"(src#0 +late +\d+ +1\d(\.\d+)?s +- +0ms +active\n$)")))
      << status.out;
  EXPECT_TRUE(std::regex_search(
      status.out, std::regex(R"(\nsrc -> out#0 +\d+ +- +src +\d+ +\d+(\.\d+)?s +- +-\n)")))
      << status.out;
  ASSERT_EQ(Client().Request("DELETE", "/jobs/" + id).status, 202);
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(2)));
}

TEST_F(DaemonTest, FlinkRoutesShowThePlanTheVerticesAndTheirFinalWatermarks) {
  CliResult submit = Cli("submit --wait jobs/two_splits_operator.yaml");
  ASSERT_EQ(submit.rc, 0) << submit.err;
  const std::string id = Lines(submit.out)[0];
  const json plan = json::parse(Client().Request("GET", "/jobs/" + id + "/plan").body)["plan"];
  ASSERT_EQ(plan["nodes"].size(), 2u) << plan.dump();
  EXPECT_EQ(plan["nodes"][0]["id"], "source");
  EXPECT_EQ(plan["nodes"][0]["description"], "source -> assign");
  EXPECT_TRUE(plan["nodes"][0]["inputs"].empty());
  EXPECT_EQ(plan["nodes"][1]["id"], "windows");
  EXPECT_EQ(plan["nodes"][1]["description"], "windows -> fired -> late");
  EXPECT_EQ(plan["nodes"][1]["operators"].size(), 3u);
  ASSERT_EQ(plan["nodes"][1]["inputs"].size(), 1u);
  EXPECT_EQ(plan["nodes"][1]["inputs"][0]["id"], "source");
  EXPECT_EQ(plan["nodes"][1]["inputs"][0]["ship_strategy"], "HASH") << plan.dump();

  const json wms =
      json::parse(Client().Request("GET", "/jobs/" + id + "/vertices/windows/watermarks").body);
  EXPECT_EQ(wms, json::parse(fmt::format(R"([{{"id": "0.currentInputWatermark", "value": "{}"}}])",
                                         kMaxTimestamp)));
  const json v = json::parse(Client().Request("GET", "/jobs/" + id + "/vertices/windows").body);
  ASSERT_EQ(v["subtasks"].size(), 1u);
  EXPECT_EQ(v["subtasks"][0]["status"], "FINISHED");
  EXPECT_EQ(v["subtasks"][0]["records-in"], 400);
  EXPECT_EQ(v["subtasks"][0]["operators"][0]["metrics"]["numLateRecordsSideOutput"], 197);
  // What the chained operators after `windows` received: 11 results, 197 late records.
  EXPECT_EQ(v["subtasks"][0]["operators"][0]["records-out"], 11);
  EXPECT_EQ(v["subtasks"][0]["operators"][0]["side-records-out"], json({{"late", 197}}));
  EXPECT_EQ(v["subtasks"][0]["operators"][1]["side-records-out"], json::object());
  const json bp =
      json::parse(Client().Request("GET", "/jobs/" + id + "/vertices/source/backpressure").body);
  EXPECT_EQ(bp["status"], "ok");
  EXPECT_EQ(bp["subtasks"].size(), 1u);
  const json overview = json::parse(Client().Request("GET", "/jobs/overview").body);
  ASSERT_EQ(overview["jobs"].size(), 1u);
  EXPECT_EQ(overview["jobs"][0]["state"], "FINISHED");
  EXPECT_EQ(overview["jobs"][0]["tasks"],
            json::parse(R"({"total": 2, "running": 0, "finished": 2})"));
  EXPECT_EQ(Client().Request("GET", "/jobs/" + id + "/vertices/nope").status, 404);
  EXPECT_EQ(Client().Request("GET", "/jobs/" + id + "/vertices/windows/nope").status, 404);
  EXPECT_EQ(Client().Request("GET", "/jobs/ffff/plan").status, 404);
  EXPECT_EQ(Client().Request("DELETE", "/jobs/" + id + "/plan").status, 405);
}

// The figures of a running subtask's head task, by task name prefix; empty until reported.
json TaskMetrics(const json& job, const std::string& task_prefix) {
  for (const auto& t : job["tasks"]) {
    if (t["name"].get<std::string>().rfind(task_prefix, 0) == 0 && !t["subtasks"].empty()) {
      return t["subtasks"][0]["metrics"];
    }
  }
  return json::object();
}

TEST_F(DaemonTest, ASlowDownstreamBackPressuresItsSourceAndAnIdleSplitIsIdle) {
  // The throttled operator before the sink takes 1 ms per record, far slower than the source,
  // whose channel fills; one split of the source emits nothing (idle after 100 ms).
  const std::string id = SubmitYaml(R"(name: back-pressured
operators:
  - id: src
    type: source
    source:
      type: datagen
      splits: 2
      count: 1000000000
      rate: 100000000
      keys: 1000
      idle-periods: [{split: 1, start: 0s, end: 100000h}]
    watermarks:
      strategy: bounded-out-of-orderness
      max-out-of-orderness: 0ms
      timestamp-field: ts
      idleness: 100ms
  - id: w
    type: one-ms-per-record
    input: src
    key-by: [key]
  - id: out
    type: sink
    input: w
    sink: {type: checksum}
)");
  json last;
  ASSERT_TRUE(Eventually(
      [&] {
        last = JobJson(id);
        const json m = TaskMetrics(last, "src");
        return m.value("backPressuredTimeMsPerSecond", 0) > 500;
      },
      std::chrono::seconds(20)))
      << last.dump();
  const json m = TaskMetrics(last, "src");
  EXPECT_EQ(m["busyTimeMsPerSecond"].get<int64_t>() + m["idleTimeMsPerSecond"].get<int64_t>() +
                m["backPressuredTimeMsPerSecond"].get<int64_t>(),
            1000);
  const json bp =
      json::parse(Client().Request("GET", "/jobs/" + id + "/vertices/src/backpressure").body);
  EXPECT_EQ(bp["backpressure-level"], "high") << bp.dump();
  // The throttled task is the bottleneck: busy, not back-pressured.
  EXPECT_LE(TaskMetrics(last, "w").value("backPressuredTimeMsPerSecond", 1000), 100) << last.dump();
  ASSERT_TRUE(Eventually(
      [&] {
        last = JobJson(id);
        const json ops = last["tasks"][0]["subtasks"][0]["operators"][0]["metrics"];
        return ops.value("split.split-1.idleTimeMsPerSecond", 0) == 1000 &&
               ops.value("split.split-1.idle", 0) == 1;
      },
      std::chrono::seconds(10)))
      << last.dump();

  // /metrics mid-run parses as Prometheus text and has every golden name: with a second job
  // beside it whose window has an input watermark.
  const std::string windowed = SubmitYaml(R"(name: windowed
operators:
  - id: src
    type: source
    source:
      type: sequence
      pacing: 1ms
      splits: [{id: a, start: 0s, step: 10ms, count: 100000000}]
    watermarks:
      strategy: bounded-out-of-orderness
      max-out-of-orderness: 0ms
      timestamp-field: ts
      alignment: {group: g, max-drift: 1h, update-interval: 100ms}  # never pauses; reports its drift
  - id: windows
    type: window
    input: src
    window: {assigner: tumbling, size: 1s, aggregate: [count]}
  - id: out
    type: sink
    input: windows
    sink: {type: checksum}
)");
  ASSERT_TRUE(Eventually(
      [&] {
        last = JobJson(windowed);
        for (const auto& t : last["tasks"]) {
          if (t["name"] == "windows -> out" && !t["subtasks"][0]["input-watermark"].is_null()) {
            return last["tasks"][0]["subtasks"][0]["operators"][0]["metrics"].contains(
                "watermarkAlignmentDrift");
          }
        }
        return false;
      },
      std::chrono::seconds(10)))
      << last.dump();
  const std::string text = Client().Request("GET", "/metrics").body;
  const std::string file = dir_.path() + "/metrics.txt";
  std::ofstream(file) << text;
  std::string names;
  for (std::string_view n : MetricFamilyNames()) {
    names += " " + std::string(n);
  }
  for (const std::string& job : {id, windowed}) {
    ASSERT_EQ(Client().Request("DELETE", "/jobs/" + job).status, 202);
    ASSERT_TRUE(jobs_->WaitForJob(job, std::chrono::seconds(5)));
  }
  const int rc = std::system(
      fmt::format("/usr/bin/python3 tests/integration/check_prometheus_text.py {}{} > {} 2>&1",
                  file, names, dir_.path() + "/parse.out")
          .c_str());
  const std::string parse_out = ReadFile(dir_.path() + "/parse.out");
  if (WEXITSTATUS(rc) == 77) {
    GTEST_SKIP() << parse_out;
  }
  EXPECT_EQ(rc, 0) << parse_out << "\n---\n" << text;
}

// A daemon's job has no standard input: a stdin source would finish at once with nothing.
TEST_F(DaemonTest, AStdinSourceIsRefusedAtSubmission) {
  auto r = Client().Request("POST", "/jobs?file=jobs/pipe.yaml",
                            "name: pipe\noperators:\n  - id: in\n    type: source\n"
                            "    source: {type: stdin, format: csv, schema: {ts: int64}}\n"
                            "  - id: out\n    type: sink\n    input: in\n"
                            "    sink: {type: print}\n");
  ASSERT_EQ(r.status, 400) << r.body;
  json j = json::parse(r.body);
  ASSERT_EQ(j["errors"].size(), 1u) << r.body;
  EXPECT_EQ(j["errors"][0],
            "jobs/pipe.yaml:5:20: error: operators[0].source.type: a stdin source reads the "
            "standard input of `tidemark run`; jobs submitted to the daemon have none: run it "
            "with `tidemark run`, or read a file");
}

TEST_F(DaemonTest, InvalidJobGets400WithFileLineColumnDiagnostics) {
  auto r =
      Client().Request("POST", "/jobs?file=jobs/broken.yaml",
                       "name: broken\noperators:\n  - id: src\n    type: source\n    sourse: {}\n");
  ASSERT_EQ(r.status, 400) << r.body;
  json j = json::parse(r.body);
  ASSERT_EQ(j["errors"].size(), 2u) << r.body;
  EXPECT_EQ(j["errors"][0],
            "jobs/broken.yaml:3:5: error: operators[0].source: missing required key");
  EXPECT_TRUE(std::regex_search(
      j["errors"][1].get<std::string>(),
      std::regex(R"(^jobs/broken\.yaml:5:5: error: operators\[0\]\.sourse: unknown key)")))
      << j["errors"][1];

  // Through the CLI: exit 2 and the same lines as `tidemark run` on stderr.
  const std::string path = dir_.path() + "/syntax.yaml";
  std::ofstream(path) << "name: x\noperators: [\n";
  CliResult submit = Cli("submit " + path);
  EXPECT_EQ(submit.rc, 2);
  EXPECT_TRUE(std::regex_search(submit.err,
                                std::regex(std::regex_replace(path, std::regex(R"([.])"), R"(\.)") +
                                           R"(:\d+:\d+: error: YAML syntax error)")))
      << submit.err;
  CliResult run = [&] {
    const std::string cmd = fmt::format("'{}' run '{}' 2>'{}/run.err'",
                                        (ToolsDir() / "tidemark").string(), path, dir_.path());
    const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
    return CliResult{WEXITSTATUS(status), "", ReadFile(dir_.path() + "/run.err")};
  }();
  EXPECT_EQ(run.rc, 2);
  EXPECT_EQ(run.err, submit.err);
  EXPECT_EQ(json::parse(Client().Request("GET", "/jobs").body)["jobs"].size(), 0u);
}

TEST_F(DaemonTest, AnswersOrClosesGarbageAndKeepsServing) {
  StartServer(JobManagerOptions{}, RestServerOptions{.max_body_bytes = 64 << 10});
  std::mt19937 rng(7);
  std::string garbage(4096, '\0');
  for (char& c : garbage) {
    c = static_cast<char>(rng());
  }
  const std::string reply = RawExchange(garbage);
  EXPECT_TRUE(reply.empty() || reply.rfind("HTTP/1.1 400", 0) == 0) << reply.substr(0, 80);

  // A truncated request: headers promise a body that never comes.
  EXPECT_EQ(RawExchange("POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nname: x"),
            "");
  EXPECT_EQ(RawExchange("GET /jobs HTTP/1.1\r\nHost: x\r\n"), "");

  // An oversize body (1 MB against a 64 KB limit): 413 as soon as the header is read.
  const std::string big = "POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\n" +
                          std::string(1 << 20, 'a');
  const std::string too_big = RawExchange(big);
  EXPECT_TRUE(too_big.empty() || too_big.rfind("HTTP/1.1 413", 0) == 0) << too_big.substr(0, 80);
  EXPECT_EQ(RawExchange("POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n")
                .rfind("HTTP/1.1 413", 0),
            0u);

  // A huge header line, an unknown route, a wrong method.
  EXPECT_EQ(RawExchange("GET /" + std::string(64 << 10, 'x') + " HTTP/1.1\r\n\r\n")
                .rfind("HTTP/1.1 431", 0),
            0u);
  EXPECT_EQ(Client().Request("GET", "/nope").status, 404);
  EXPECT_EQ(Client().Request("PUT", "/jobs").status, 405);
  EXPECT_EQ(Client().Request("GET", "/jobs/..%2f..%2fetc").status, 404);
  // The route table: a literal segment wins over a `{param}` one at the same place, a path that
  // fits a route of another method is 405, one that fits none 404, empty segments are skipped.
  EXPECT_EQ(Client().Request("GET", "//jobs/").status, 200);
  EXPECT_EQ(Client().Request("GET", "/jobs/overview").status, 200);
  EXPECT_EQ(Client().Request("DELETE", "/jobs/overview").status, 405);
  EXPECT_EQ(Client().Request("POST", "/jobs/ffff").status, 405);
  EXPECT_EQ(Client().Request("GET", "/jobs/ffff").status, 404);
  EXPECT_EQ(Client().Request("GET", "/jobs/ffff/savepoints").status, 405);
  EXPECT_EQ(Client().Request("POST", "/jobs/ffff/checkpoints").status, 405);
  EXPECT_EQ(Client().Request("GET", "/jobs/ffff/stop/1").status, 404);
  EXPECT_EQ(Client().Request("GET", "/jobs/ffff/checkpoints/1").status, 404);
  EXPECT_EQ(Client().Request("GET", "/jobs/ffff/nope").status, 404);
  EXPECT_EQ(Client().Request("GET", "/overview/x").status, 404);

  // Still serving: a job runs correctly and keep-alive requests on one connection work.
  const std::string id = SubmitYaml(kSmallJob);
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
  EXPECT_EQ(JobJson(id)["state"], "FINISHED");
  const std::string two = RawExchange(
      "GET /overview HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(two.rfind("HTTP/1.1 200", 0), 0u);
  EXPECT_NE(two.find("tidemark_jobs_submitted_total 1"), std::string::npos) << two;
}

/// Resident memory of this process (the test's in-process daemon), in KiB.
int64_t RssKib() {
  std::istringstream in(ReadFile("/proc/self/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stoll(line.substr(6));
    }
  }
  return -1;
}

TEST_F(DaemonTest, AChunkExtensionThatNeverEndsIsRefusedNotBuffered) {
  // The read buffer had no bound: the parser waits for the end of a chunk-size line, and the
  // daemon kept every byte of "1;aaaa..." (1.7 GB in 8 s from one connection; a few such clients
  // make the 21 GB a garbage run once reached). Now the line may be as long as the buffer, 16 KiB
  // of header limit + 64 KiB: 64 MiB of it get a 400 and a closed connection.
  [[maybe_unused]] const int64_t before = RssKib();  // read only without a sanitizer
  const std::string reply =
      RawExchange("POST /jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;" +
                  std::string(64u << 20, 'a'));
  EXPECT_EQ(reply.substr(0, reply.find("\r\n")), "HTTP/1.1 400 Bad Request")
      << reply.substr(0, 200);
  EXPECT_NE(reply.find("\"malformed HTTP request: a line longer than 81920 bytes\""),
            std::string::npos)
      << reply;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // Not under a sanitizer: its allocator keeps freed blocks (this test's own 64 MiB request
  // string among them) in quarantine, resident, so RSS no longer measures the daemon's buffer.
  EXPECT_LT(RssKib() - before, 16 << 10) << before;
#endif
  // A request line that never ends, likewise; and a 1 MiB job body still goes through whole.
  const std::string line = RawExchange("GET /" + std::string(1u << 20, 'x'));
  EXPECT_EQ(line.rfind("HTTP/1.1 4", 0), 0u) << line.substr(0, 200);
  StartServer(JobManagerOptions{}, RestServerOptions{.max_body_bytes = 2u << 20});
  const std::string id =
      SubmitYaml(std::string(kSmallJob) + "# " + std::string((1u << 20) + 100, 'x') + "\n");
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
  EXPECT_EQ(JobJson(id)["state"], "FINISHED");
}

TEST_F(DaemonTest, FailingJobsEndFailedWithTheCauseWhileAnotherFinishes) {
  // The good job runs first and is still running while the others fail beside it.
  const std::string good = SubmitYaml(ReadFile("jobs/two_splits_split.yaml"));
  const std::string throws = SubmitYaml(kThrowingJob);
  const std::string unopenable = SubmitYaml(SinkJob("/proc/forbidden/x.jsonl"));
  const std::string unwritable = SubmitYaml(SinkJob("/dev/full"));
  for (const auto& id : {unopenable, unwritable, throws, good}) {
    ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
  }
  json t = JobJson(throws);
  EXPECT_EQ(t["state"], "FAILED");
  EXPECT_NE(t["failure-cause"].get<std::string>().find("poisoned record 3 at 2s"),
            std::string::npos)
      << t["failure-cause"];
  EXPECT_EQ(json::parse(
                Client().Request("GET", "/jobs/" + throws + "/exceptions").body)["root-exception"],
            t["failure-cause"]);
  json a = JobJson(unopenable);
  EXPECT_EQ(a["state"], "FAILED");
  EXPECT_NE(
      a["failure-cause"].get<std::string>().find("cannot open sink file '/proc/forbidden/x.jsonl'"),
      std::string::npos)
      << a["failure-cause"];
  json b = JobJson(unwritable);
  EXPECT_EQ(b["state"], "FAILED");
  EXPECT_NE(b["failure-cause"].get<std::string>().find("cannot write sink file '/dev/full'"),
            std::string::npos)
      << b["failure-cause"];
  json ex = json::parse(Client().Request("GET", "/jobs/" + unopenable + "/exceptions").body);
  EXPECT_EQ(ex["root-exception"], a["failure-cause"]);
  json c = JobJson(good);
  EXPECT_EQ(c["state"], "FINISHED");
  EXPECT_EQ(c["report"], Lines(ReadFile("tests/golden/two_splits_split.expected")).back());
  EXPECT_TRUE(
      json::parse(Client().Request("GET", "/jobs/" + good + "/exceptions").body)["root-exception"]
          .is_null());
  CliResult status = Cli("status " + unopenable);
  EXPECT_EQ(status.rc, 1);
  EXPECT_NE(status.out.find("FAILED"), std::string::npos);
  json overview = json::parse(Client().Request("GET", "/overview").body);
  EXPECT_EQ(overview["jobs-failed"], 3);
  EXPECT_EQ(overview["jobs-finished"], 1);
}

TEST_F(DaemonTest, AJobNameThatIsNotUtf8DoesNotBreakListingForEveryone) {
  // Such a name made every GET /jobs (and this job's GET /jobs/ID) answer 500 with nlohmann's
  // "invalid UTF-8 byte" until the job left the history.
  const std::string id = SubmitYaml(
      "name: \"bad\xff\xfename\"\n"
      "operators:\n"
      "  - id: src\n"
      "    type: source\n"
      "    source: {type: sequence, splits: [{id: a, start: 0ms, step: 1s, count: 3}]}\n"
      "  - id: out\n"
      "    type: sink\n"
      "    input: src\n"
      "    sink: {type: print}\n");
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
  auto r = Client().Request("GET", "/jobs");
  ASSERT_EQ(r.status, 200) << r.body;
  json list = json::parse(r.body);
  ASSERT_EQ(list["jobs"].size(), 1u);
  EXPECT_EQ(list["jobs"][0]["name"], "bad\xef\xbf\xbd\xef\xbf\xbdname");
  EXPECT_EQ(JobJson(id)["state"], "FINISHED");
  CliResult cli = Cli("list");
  EXPECT_EQ(cli.rc, 0) << cli.err;
  EXPECT_NE(cli.out.find("bad\xef\xbf\xbd\xef\xbf\xbdname"), std::string::npos) << cli.out;
}

TEST_F(DaemonTest, SubmitResolvesAJobsRelativeInputPathAgainstTheJobFileNotTheDaemonsDirectory) {
  // `tidemark submit sub/job.yaml` from another directory than the daemon's used to fail with
  // "path: 'in.csv' does not exist": the daemon resolved sub/in.csv against its own directory.
  fs::create_directories(dir_.path() + "/sub");
  std::ofstream(dir_.path() + "/sub/in.csv") << "1000,a\n2000,b\n";
  std::ofstream(dir_.path() + "/sub/job.yaml") << "name: rel\n"
                                                  "operators:\n"
                                                  "  - id: src\n"
                                                  "    type: source\n"
                                                  "    source:\n"
                                                  "      type: file\n"
                                                  "      path: in.csv\n"
                                                  "      format: csv\n"
                                                  "      schema: {ts: timestamp, v: string}\n"
                                                  "  - id: out\n"
                                                  "    type: sink\n"
                                                  "    input: src\n"
                                                  "    sink: {type: print}\n";
  std::ofstream(dir_.path() + "/sub/bad.yaml") << "name: bad\nbogus: 1\n";
  auto cli_in_dir = [&](const std::string& args) {
    const std::string cmd =
        fmt::format("cd '{}' && '{}' --socket '{}' {} >'{}/out' 2>'{}/err'", dir_.path(),
                    (ToolsDir() / "tidemark").string(), socket_, args, dir_.path(), dir_.path());
    const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
    return CliResult{WEXITSTATUS(status), ReadFile(dir_.path() + "/out"),
                     ReadFile(dir_.path() + "/err")};
  };
  CliResult ok = cli_in_dir("submit --wait sub/job.yaml");
  EXPECT_EQ(ok.rc, 0) << ok.err;
  const std::string id = ok.out.substr(0, ok.out.find('\n'));
  EXPECT_EQ(json::parse(Client().Request("GET", "/jobs/" + id + "/logs").body)["lines"],
            json::array({"{\"ts\":1000,\"v\":\"a\"}", "{\"ts\":2000,\"v\":\"b\"}"}));
  // Diagnostics still name the file as it was typed.
  CliResult bad = cli_in_dir("submit sub/bad.yaml");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_EQ(bad.err,
            "sub/bad.yaml:1:1: error: operators: missing required key\n"
            "sub/bad.yaml:2:1: error: bogus: unknown key \"bogus\"; allowed keys: name, pipeline, "
            "operators, report, "
            "checkpointing, restart-strategy, faults\n");
}

TEST_F(DaemonTest, CliMisuseIsAUsageErrorNamingTheProblem) {
  // An unknown command used to be "A subcommand is required", a malformed --url exit 3 (daemon
  // unreachable) instead of 2.
  CliResult unknown = Cli("stauts 1234");
  EXPECT_EQ(unknown.rc, 2);
  EXPECT_EQ(unknown.err,
            "tidemark: unknown command 'stauts' (commands: run, validate, analyze, export, bench, "
            "kafka-mock, submit, list, status, cancel, logs, explain, "
            "savepoint, stop)\n"
            "Run with --help for more information.\n");
  CliResult ftp = Cli("--url ftp://x list");
  EXPECT_EQ(ftp.rc, 2);
  EXPECT_EQ(ftp.err, "tidemark: --url: expected http://HOST:PORT, got 'ftp://x'\n");
  CliResult no_port = Cli("--url http://127.0.0.1 list");
  EXPECT_EQ(no_port.rc, 2);
  EXPECT_EQ(no_port.err, "tidemark: --url: expected http://HOST:PORT, got 'http://127.0.0.1'\n");
}

TEST_F(DaemonTest, AnUnknownIdIsOneLineAndExitTwo) {
  for (const char* command : {"status", "logs", "cancel"}) {
    CliResult r = Cli(std::string(command) + " deadbeef");
    EXPECT_EQ(r.rc, 2) << command;
    EXPECT_EQ(r.err, "tidemark: no job with id 'deadbeef' (see `tidemark list`)\n") << command;
  }
}

TEST_F(DaemonTest, LimitsRunningJobsAndTrimsHistory) {
  StartServer(JobManagerOptions{.max_running_jobs = 1, .max_finished_jobs = 2});
  const std::string id = SubmitYaml(kLongJob);
  auto refused = Client().Request("POST", "/jobs", kSmallJob);
  EXPECT_EQ(refused.status, 429) << refused.body;
  ASSERT_EQ(Client().Request("DELETE", "/jobs/" + id).status, 202);
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(2)));
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(SubmitYaml(kSmallJob));
    ASSERT_TRUE(jobs_->WaitForJob(ids.back(), std::chrono::seconds(10)));
  }
  json list = json::parse(Client().Request("GET", "/jobs").body);
  ASSERT_EQ(list["jobs"].size(), 2u);
  EXPECT_EQ(list["jobs"][0]["jid"], ids[1]);
  EXPECT_EQ(list["jobs"][1]["jid"], ids[2]);
  EXPECT_EQ(Client().Request("GET", "/jobs/" + id).status, 404);
  // Print-sink output went to the job's log, not to the daemon's stdout.
  json log = json::parse(Client().Request("GET", "/jobs/" + ids[2] + "/logs").body);
  EXPECT_EQ(log["lines"].size(), 3u);
}

TEST_F(DaemonTest, FinishedJobsExpireAfterTheirTtlAndTheDaemonKeepsServing) {
  StartServer(JobManagerOptions{.max_finished_jobs = 10,
                                .finished_job_ttl = std::chrono::milliseconds(100)});
  const std::string expected = Lines(ReadFile("tests/golden/two_splits_split.expected")).back();
  for (int round = 0; round < 2; ++round) {
    CliResult submit = Cli("submit --wait jobs/two_splits_split.yaml");
    ASSERT_EQ(submit.rc, 0) << submit.err;
    ASSERT_EQ(Lines(submit.out).size(), 3u) << submit.out;
    EXPECT_EQ(Lines(submit.out)[2], expected);
    // Gone from the history once 100 ms old; the expirer then renewed the I/O thread (the daemon
    // was idle), and the next round is served by the new one.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    json list = json::parse(Client().Request("GET", "/jobs").body);
    while (!list["jobs"].empty() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling, not timing
      list = json::parse(Client().Request("GET", "/jobs").body);
    }
    EXPECT_TRUE(list["jobs"].empty()) << list.dump();
    EXPECT_EQ(Client().Request("GET", "/jobs/" + Lines(submit.out)[0]).status, 404);
    const std::string metrics = Client().Request("GET", "/metrics").body;
    EXPECT_NE(metrics.find(fmt::format("tidemark_jobs_expired_total {}\n", round + 1)),
              std::string::npos)
        << metrics;
    EXPECT_NE(metrics.find("tidemark_jobs_retained 0\n"), std::string::npos) << metrics;
  }
  EXPECT_EQ(json::parse(Client().Request("GET", "/overview").body)["finished-job-ttl"], 100);
}

TEST_F(DaemonTest, RenewingTheIoThreadKeepsAHalfReadRequest) {
  const int fd = ConnectRaw();
  ASSERT_GE(fd, 0);
  const std::string request = "GET /overview HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  ASSERT_EQ(::send(fd, request.data(), 20, MSG_NOSIGNAL), 20);
  server_->RenewIoThread();
  server_->RenewIoThread();
  ASSERT_EQ(::send(fd, request.data() + 20, request.size() - 20, MSG_NOSIGNAL),
            static_cast<ssize_t>(request.size() - 20));
  const std::string reply = ReadUntilClosed(fd);
  ::close(fd);
  EXPECT_EQ(reply.rfind("HTTP/1.1 200", 0), 0u) << reply;
  EXPECT_NE(reply.find("\"jobs-submitted-total\": 0,"), std::string::npos) << reply;
}

TEST_F(DaemonTest, SubmittingAJobFileOverTheBodyLimitSays413NotUnreachable) {
  // The daemon answers 413 and closes before reading the body; the CLI's send then broke its pipe
  // and it reported the daemon unreachable (exit 3, with a hint to start it).
  StartServer(JobManagerOptions{}, RestServerOptions{.max_body_bytes = 4096});
  const std::string job = dir_.path() + "/big.yaml";
  std::ofstream(job) << "name: big\n# " << std::string(8u << 20, 'x') << "\n";
  CliResult submit = Cli("submit " + job);
  EXPECT_EQ(submit.rc, 1) << submit.err;
  EXPECT_EQ(submit.err, "tidemark: request body larger than 4096 bytes\n");
  EXPECT_EQ(Client().Request("GET", "/overview").status, 200);  // and it keeps serving
}

TEST_F(DaemonTest, SubmitWaitSaysWhenTheJobLeftTheHistoryBeforeItWasSeen) {
  StartServer(JobManagerOptions{.max_finished_jobs = 0});
  // A poll can still catch the job FINISHED between its tasks' end and the daemon recording that
  // end (it drops the job from the history in the same step): on a loaded machine (the ASan
  // suite) it sometimes does. Then --wait reports it as ended, and the test submits again: the
  // 404 path must be seen within a few submissions.
  bool left_history = false;
  for (int attempt = 0; attempt < 5 && !left_history; ++attempt) {
    CliResult submit = Cli("submit --wait jobs/two_splits_split.yaml");
    if (submit.rc == 0) {
      EXPECT_NE(submit.out.find(" FINISHED in "), std::string::npos) << submit.out;
      continue;
    }
    left_history = true;
    EXPECT_EQ(submit.rc, 1);
    EXPECT_NE(submit.err.find(
                  "ended and already left the daemon's history, so its final state is unknown"),
              std::string::npos)
        << submit.err;
  }
  EXPECT_TRUE(left_history);
}

TEST_F(DaemonTest, TcpNeedsTheBearerTokenAndLoopback) {
  RestServerOptions opts{.tcp_host = "127.0.0.1", .tcp_port = 0, .bearer_token = "s3cret"};
  StartServer(JobManagerOptions{}, opts);
  ASSERT_GT(server_->tcp_port(), 0);
  const std::string url = fmt::format("http://127.0.0.1:{}", server_->tcp_port());
  EXPECT_EQ(DaemonClient(DaemonEndpoint{"", url, ""}).Request("GET", "/jobs").status, 401);
  EXPECT_EQ(DaemonClient(DaemonEndpoint{"", url, "wrong!"}).Request("GET", "/jobs").status, 401);
  EXPECT_EQ(DaemonClient(DaemonEndpoint{"", url, "s3cret"}).Request("GET", "/jobs").status, 200);

  JobManager jobs(MakeLocalDaemonJob, {});
  RestServer remote(jobs,
                    RestServerOptions{.tcp_host = "0.0.0.0", .tcp_port = 0, .bearer_token = "t"});
  EXPECT_THROW(remote.Start(), DaemonSetupError);
  RestServer no_token(jobs, RestServerOptions{.tcp_host = "127.0.0.1", .tcp_port = 0});
  EXPECT_THROW(no_token.Start(), DaemonSetupError);

  const std::string token_file = dir_.path() + "/token";
  std::ofstream(token_file) << "abc\n";
  ::chmod(token_file.c_str(), 0644);
  EXPECT_THROW(ReadTokenFile(token_file, false), DaemonSetupError);
  ::chmod(token_file.c_str(), 0600);
  EXPECT_EQ(ReadTokenFile(token_file, false), "abc");
}

TEST_F(DaemonTest, BadListenOptionsAreSetupErrorsAndBindNothing) {
  // A 120-byte socket path aborted tidemarkd with an uncaught boost::system::system_error
  // ("File name too long"); port 99999 was silently cut to 34463.
  auto setup_error = [](RestServerOptions opts) {
    JobManager jobs(MakeLocalDaemonJob, {});
    RestServer server(jobs, std::move(opts));
    try {
      server.Start();
    } catch (const DaemonSetupError& e) {
      return std::string(e.what());
    }
    return std::string("<started>");
  };
  const std::string long_path = dir_.path() + "/" + std::string(120, 'x') + ".sock";
  EXPECT_EQ(
      setup_error(RestServerOptions{.socket_path = long_path}),
      fmt::format("socket path '{}' is too long: {} bytes, a Unix socket path has at most 107",
                  long_path, long_path.size()));
  const std::string socket = dir_.path() + "/other.sock";
  EXPECT_EQ(
      setup_error(RestServerOptions{
          .socket_path = socket, .tcp_host = "127.0.0.1", .tcp_port = 99999, .bearer_token = "t"}),
      "bad listen port 99999: a TCP port is 0 to 65535");
  EXPECT_EQ(setup_error(RestServerOptions{
                .socket_path = socket, .tcp_host = "0.0.0.0", .tcp_port = 0, .bearer_token = "t"}),
            "refusing to listen on non-loopback address 0.0.0.0 (pass --allow-remote to do so "
            "deliberately)");
  EXPECT_FALSE(fs::exists(socket)) << "a refused option must not leave a socket behind";
}

TEST_F(DaemonTest, AnotherUserCannotConnect) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root to switch to another user";
  }
  // The daemon's default directory is 0700 and the socket 0600: another user gets EACCES.
  const std::string priv = dir_.path() + "/private";
  EnsurePrivateDirectory(priv);
  struct stat st {};
  ASSERT_EQ(::stat(priv.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  RestServer server(*jobs_, RestServerOptions{.socket_path = priv + "/d.sock"});
  server.Start();
  ASSERT_EQ(::stat((priv + "/d.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ::chmod(dir_.path().c_str(), 0755);  // the test's parent dir is traversable; the daemon's is not
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) {
      ::_exit(10);
    }
    try {
      DaemonClient(DaemonEndpoint{priv + "/d.sock", "", ""}).Request("GET", "/jobs");
      ::_exit(0);  // reached the daemon: a failure
    } catch (const DaemonUnreachable&) {
      ::_exit(7);
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 7);
}

TEST_F(DaemonTest, RefusesALiveSocketAndReplacesAStaleOne) {
  JobManager jobs(MakeLocalDaemonJob, {});
  RestServer second(jobs, RestServerOptions{.socket_path = socket_});
  EXPECT_THROW(second.Start(), DaemonSetupError);
  EXPECT_EQ(Client().Request("GET", "/overview").status, 200);  // the first one is untouched

  // A stale socket: bound, never listened on, left behind.
  const std::string stale = dir_.path() + "/stale.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, stale.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);
  RestServer third(jobs, RestServerOptions{.socket_path = stale});
  third.Start();
  EXPECT_EQ(DaemonClient(DaemonEndpoint{stale, "", ""}).Request("GET", "/overview").status, 200);
  third.Stop();
  EXPECT_FALSE(fs::exists(stale));

  // A regular file in the way is never deleted.
  const std::string file = dir_.path() + "/file.sock";
  std::ofstream(file) << "x";
  RestServer fourth(jobs, RestServerOptions{.socket_path = file});
  EXPECT_THROW(fourth.Start(), DaemonSetupError);
  EXPECT_TRUE(fs::exists(file));
}

TEST_F(DaemonTest, CliExitsThreeWithAHintWhenNoDaemonRuns) {
  server_.reset();
  CliResult r = Cli("list");
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("hint: start the daemon with `tidemarkd"), std::string::npos) << r.err;
  CliResult bad = Cli("status");
  EXPECT_EQ(bad.rc, 2);
}

TEST_F(DaemonTest, HoldsAThousandIdleConnectionsRefusesBeyondTheLimitAndRecovers) {
  // Both ends of every connection live in this process: raise the soft limit as tidemarkd does.
  constexpr size_t kIdle = 1000;
  constexpr size_t kLimit = 1024;
  rlimit lim{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &lim), 0);
  const rlim_t need = 2 * kLimit + 512;
  if (lim.rlim_cur < need) {
    lim.rlim_cur = std::min<rlim_t>(lim.rlim_max, 8192);
    ::setrlimit(RLIMIT_NOFILE, &lim);
    ::getrlimit(RLIMIT_NOFILE, &lim);
  }
  if (lim.rlim_cur < need) {
    GTEST_SKIP() << "needs " << need << " file descriptors; the hard limit is " << lim.rlim_max;
  }
  StartServer(JobManagerOptions{}, RestServerOptions{.max_connections = kLimit,
                                                     .idle_timeout = std::chrono::seconds(120)});

  std::vector<int> idle;
  for (size_t i = 0; i < kLimit; ++i) {
    idle.push_back(ConnectRaw());
    ASSERT_GE(idle.back(), 0) << "connection " << i << ": "
                              << std::generic_category().message(errno);
  }
  ASSERT_TRUE(
      Eventually([&] { return server_->open_connections() == kLimit; }, std::chrono::seconds(10)))
      << server_->open_connections();

  // At the limit a new connection gets a 503 before it has sent anything, and is closed.
  const int extra = ConnectRaw();
  ASSERT_GE(extra, 0);
  const std::string busy = ReadUntilClosed(extra);
  ::close(extra);
  EXPECT_EQ(busy.substr(0, busy.find("\r\n")), "HTTP/1.1 503 Service Unavailable");
  EXPECT_NE(busy.find("\r\n\r\n{\"errors\": [\"too many open connections\"]}\n"), std::string::npos)
      << busy;
  EXPECT_EQ(server_->open_connections(), kLimit);

  // It recovers as soon as connections end: with 1,000 idle connections still open, a job is
  // submitted and finishes with the exact result.
  for (size_t i = kIdle; i < kLimit; ++i) {
    ::close(idle[i]);
  }
  idle.resize(kIdle);
  ASSERT_TRUE(
      Eventually([&] { return server_->open_connections() == kIdle; }, std::chrono::seconds(10)))
      << server_->open_connections();
  const std::string id = SubmitYaml(ReadFile("jobs/two_splits_split.yaml"));
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
  const std::string report = Lines(ReadFile("tests/golden/two_splits_split.expected")).back();
  json j = JobJson(id);
  EXPECT_EQ(j["state"], "FINISHED");
  EXPECT_EQ(j["report"], report);

  // Every idle connection is still served: each asks for the job (all requests are sent before
  // any answer is read) and gets it.
  const std::string request =
      "GET /jobs/" + id + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  for (const int fd : idle) {
    ASSERT_EQ(::send(fd, request.data(), request.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(request.size()));
  }
  size_t answered = 0;
  for (const int fd : idle) {
    const std::string reply = ReadUntilClosed(fd);
    ::close(fd);
    if (reply.rfind("HTTP/1.1 200", 0) == 0 &&
        reply.find("\"state\": \"FINISHED\"") != std::string::npos &&
        reply.find(report) != std::string::npos) {
      ++answered;
    }
  }
  EXPECT_EQ(answered, kIdle);
  EXPECT_TRUE(
      Eventually([&] { return server_->open_connections() == 0; }, std::chrono::seconds(10)))
      << server_->open_connections();
  EXPECT_EQ(Client().Request("GET", "/overview").status, 200);
}

// Records every 10 ms through `segfault-at-third`: its worker dies 20-30 ms after its start.
constexpr const char* kSegfaultingJob = R"(name: segfaults
operators:
  - id: src
    type: source
    source:
      type: sequence
      pacing: 10ms
      splits: [{id: a, start: 0ms, step: 1s, count: 100}]
  - id: poisoned
    type: segfault-at-third
    input: src
  - id: out
    type: sink
    input: poisoned
    sink: {type: collect}
)";

/// A job writing `path` (one file per subtask when parallel) until cancelled.
std::string LongFileJob(const std::string& path, int parallelism = 1) {
  return fmt::format(R"(name: long-file
operators:
  - id: src
    type: source
    source:
      type: sequence
      pacing: 1ms
      splits: [{{id: a, start: 0ms, step: 1ms, count: 100000000}}]
  - id: out
    type: sink
    parallelism: {}
    inputs: [{{from: src, partition: rebalance}}]
    sink: {{type: file, path: '{}'}}
)",
                     parallelism, path);
}

/// True once `pid` no longer runs: gone, or a zombie its new parent has not reaped yet.
// 32 channels of 2 x 2^20 slots: 512 MiB of channel buffers when the worker deploys the job.
constexpr const char* kTooBigJob = R"(
name: too-big
pipeline: {parallelism: 8, channel-capacity: 1048576}
operators:
  - id: src
    type: source
    parallelism: 4
    source: {type: sequence, splits: [{id: a, start: 0ms, step: 1s, count: 10}]}
  - id: out
    type: sink
    inputs: [{from: src, partition: rebalance}]
    sink: {type: collect}
)";

class DaemonIsolationTest : public DaemonTest {
 protected:
  int WorkerPid(const std::string& id) {
    const json pid = JobJson(id)["worker-pid"];
    EXPECT_TRUE(pid.is_number_integer()) << pid;
    return pid.is_number_integer() ? pid.get<int>() : -1;
  }

  int64_t RecordsIn(const std::string& id) {
    return JobJson(id)["tasks"][0]["subtasks"][0]["records-in"].get<int64_t>();
  }

  /// Kills or crashes the worker of `victim` with `fail`, with a long job and a two-split job
  /// running beside it, and checks that only `victim` ended, FAILED with `cause`; that the
  /// long job kept running and the two-split job's result is exact; and that the daemon answers
  /// and runs the next two-split job exactly.
  void ExpectOnlyTheVictimFails(const std::string& victim, const std::function<void()>& fail,
                                const std::string& cause_pattern) {
    const std::string report = Lines(ReadFile("tests/golden/two_splits_split.expected")).back();
    const std::string bystander = SubmitYaml(kLongJob);
    WaitUntilProducing(bystander);
    const int bystander_pid = WorkerPid(bystander);
    const std::string two_splits = SubmitYaml(ReadFile("jobs/two_splits_split.yaml"));
    fail();
    ASSERT_TRUE(jobs_->WaitForJob(victim, std::chrono::seconds(10)));
    const json v = JobJson(victim);
    EXPECT_EQ(v["state"], "FAILED");
    EXPECT_TRUE(std::regex_match(v["failure-cause"].get<std::string>(), std::regex(cause_pattern)))
        << v["failure-cause"];
    EXPECT_TRUE(v["worker-pid"].is_null());
    EXPECT_EQ(
        json::parse(
            Client().Request("GET", "/jobs/" + victim + "/exceptions").body)["root-exception"],
        v["failure-cause"]);

    ASSERT_TRUE(jobs_->WaitForJob(two_splits, std::chrono::seconds(10)));
    EXPECT_EQ(JobJson(two_splits)["state"], "FINISHED");
    EXPECT_EQ(JobJson(two_splits)["report"], report);
    EXPECT_EQ(
        json::parse(Client().Request("GET", "/jobs/" + two_splits + "/logs").body)["lines"].back(),
        report);

    // The bystander is untouched: same worker, still RUNNING, records still flowing.
    EXPECT_EQ(WorkerPid(bystander), bystander_pid);
    const int64_t before = RecordsIn(bystander);
    EXPECT_TRUE(Eventually([&] { return RecordsIn(bystander) > before; }, std::chrono::seconds(5)));
    EXPECT_EQ(JobJson(bystander)["state"], "RUNNING");

    CliResult list = Cli("list");
    EXPECT_EQ(list.rc, 0) << list.err;
    CliResult again = Cli("submit --wait jobs/two_splits_split.yaml");
    ASSERT_EQ(again.rc, 0) << again.err;
    EXPECT_EQ(Lines(again.out).back(), report);

    ASSERT_EQ(Client().Request("DELETE", "/jobs/" + bystander).status, 202);
    ASSERT_TRUE(jobs_->WaitForJob(bystander, std::chrono::seconds(2)));
    EXPECT_EQ(JobJson(bystander)["state"], "CANCELED");
    EXPECT_TRUE(Eventually([&] { return ProcessGone(bystander_pid); }, std::chrono::seconds(5)));
    const json overview = json::parse(Client().Request("GET", "/overview").body);
    EXPECT_EQ(overview["jobs-failed"], 1);
    EXPECT_EQ(overview["jobs-finished"], 2);
    EXPECT_EQ(overview["jobs-cancelled"], 1);
  }
};

TEST_F(DaemonIsolationTest, AWorkerKilledWithSigkillFailsOnlyItsJob) {
  const std::string victim = SubmitYaml(kLongJob);
  WaitUntilProducing(victim);
  const int pid = WorkerPid(victim);
  ASSERT_GT(pid, 0);
  EXPECT_NE(pid, ::getpid());
  ExpectOnlyTheVictimFails(
      victim, [&] { ASSERT_EQ(::kill(pid, SIGKILL), 0); },
      R"(worker killed by signal 9 \(SIGKILL\))");
  EXPECT_TRUE(ProcessGone(pid));
}

TEST_F(DaemonIsolationTest, AWorkerThatSegfaultsInAUserOperatorFailsOnlyItsJob) {
  // The segfault comes 20-30 ms after the job starts, while the two others run.
  std::string victim;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizers catch SIGSEGV themselves, report it and exit with a status.
  const std::string cause =
      R"(worker (killed by signal 11 \(SIGSEGV\)|exited with status \d+ before the job ended))";
#else
  const std::string cause = R"(worker killed by signal 11 \(SIGSEGV\))";
#endif
  // `victim` is passed by reference and set by the failure step.
  ExpectOnlyTheVictimFails(
      victim, [&] { victim = SubmitYaml(kSegfaultingJob); }, cause);
}

TEST_F(DaemonIsolationTest, ASecondRunningJobWritingTheSamePathIsRefusedUntilTheFirstEnds) {
  const std::string out = dir_.path() + "/out.jsonl";
  const std::string first = SubmitYaml(LongFileJob(out));
  // The same file spelled differently, and through a symbolic link to its directory.
  fs::create_directory_symlink(dir_.path(), dir_.path() + "/link");
  for (const std::string& spelling :
       {dir_.path() + "/./out.jsonl", dir_.path() + "/link/out.jsonl"}) {
    auto r = Client().Request("POST", "/jobs?file=second.yaml", LongFileJob(spelling));
    ASSERT_EQ(r.status, 400) << r.body;
    EXPECT_EQ(json::parse(r.body)["errors"],
              json::array({fmt::format(
                  "second.yaml: sink 'out' writes '{}', which running job {} ('long-file') "
                  "writes too; cancel that job or wait until it ends, or write another path",
                  out, first)}));
  }
  // A parallel sink owns one file per subtask: out2.1 is taken, out2 itself is not.
  const std::string parallel = SubmitYaml(LongFileJob(dir_.path() + "/out2", 2));
  auto taken =
      Client().Request("POST", "/jobs?file=third.yaml", LongFileJob(dir_.path() + "/out2.1"));
  ASSERT_EQ(taken.status, 400) << taken.body;
  EXPECT_NE(taken.body.find(fmt::format("writes '{}/out2.1', which running job {} ('long-file')",
                                        dir_.path(), parallel)),
            std::string::npos)
      << taken.body;
  // Through the CLI: exit 2 with the daemon's line.
  std::ofstream(dir_.path() + "/second.yaml") << LongFileJob(out);
  CliResult cli = Cli("submit " + dir_.path() + "/second.yaml");
  EXPECT_EQ(cli.rc, 2);
  EXPECT_NE(cli.err.find(fmt::format("sink 'out' writes '{}', which running job {}", out, first)),
            std::string::npos)
      << cli.err;

  // Once the first job ended, the path is free.
  ASSERT_EQ(Client().Request("DELETE", "/jobs/" + first).status, 202);
  ASSERT_TRUE(jobs_->WaitForJob(first, std::chrono::seconds(2)));
  const std::string second = SubmitYaml(LongFileJob(dir_.path() + "/link/out.jsonl"));
  WaitUntilProducing(second);
  for (const std::string& id : {second, parallel}) {
    ASSERT_EQ(Client().Request("DELETE", "/jobs/" + id).status, 202);
    ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(2)));
  }
  EXPECT_EQ(json::parse(Client().Request("GET", "/overview").body)["jobs-submitted-total"], 3);
}

/// A long job whose exactly-once Kafka sink(s) use `prefix` on `servers` (one sink per id).
std::string LongKafkaJob(const std::string& servers, const std::string& prefix,
                         const std::string& commit_log,
                         const std::vector<std::string>& sinks = {"out"}) {
  // kLongJob's source, under another name, without its sink.
  const std::string long_job = testing::kLongJob;
  const size_t body = long_job.find('\n') + 1;
  std::string yaml =
      "name: long-kafka\n" + long_job.substr(body, long_job.find("  - id: out") - body);
  for (const std::string& sink : sinks) {
    yaml += fmt::format(R"(  - id: {}
    type: sink
    input: src
    sink: {{type: kafka, bootstrap-servers: '{}', topic: out, delivery-guarantee: exactly-once,
            transactional-id-prefix: '{}', commit-log: '{}-{}'}}
)",
                        sink, servers, prefix, commit_log, sink);
  }
  return yaml;
}

// Two exactly-once Kafka sinks with one transactional-id prefix on one cluster fence each other's
// producers (trial 29: two copy-pasted jobs restarted each other): a submission doing that beside
// a running job, or with two such sinks of its own, is refused as a shared file path is.
TEST_F(DaemonIsolationTest, ASecondRunningJobWithTheSameTransactionalIdPrefixIsRefused) {
  KafkaMockCluster cluster;
  cluster.CreateTopic("out", 1);
  const std::string servers = cluster.bootstrap_servers();
  const std::string first = SubmitYaml(LongKafkaJob(servers, "shared", dir_.path() + "/c1"));
  // The same cluster named with other spellings of its one broker's address.
  const std::string spelled = " " + servers + " ,127.0.0.1:1";
  auto r = Client().Request("POST", "/jobs?file=second.yaml",
                            LongKafkaJob(spelled, "shared", dir_.path() + "/c2"));
  ASSERT_EQ(r.status, 400) << r.body;
  EXPECT_EQ(json::parse(r.body)["errors"],
            json::array({fmt::format(
                "second.yaml: sink 'out' uses transactional-id-prefix 'shared' on {}, which sink "
                "'out' of running job {} ('long-kafka') uses too (on {}); their producers would "
                "fence each other: give each job its own transactional-id-prefix, or cancel that "
                "job or wait until it ends",
                spelled, first, servers)}));
  // Two such sinks in one job.
  auto both = Client().Request("POST", "/jobs?file=both.yaml",
                               LongKafkaJob(servers, "mine", dir_.path() + "/c3", {"out", "out2"}));
  ASSERT_EQ(both.status, 400) << both.body;
  EXPECT_EQ(json::parse(both.body)["errors"],
            json::array({"both.yaml: sinks 'out' and 'out2' both use transactional-id-prefix "
                         "'mine' on the same Kafka cluster; their producers would fence each "
                         "other: give each its own transactional-id-prefix"}));
  // Another prefix is free; once the first job ended, so is its prefix.
  const std::string other = SubmitYaml(LongKafkaJob(servers, "other", dir_.path() + "/c4"));
  ASSERT_EQ(Client().Request("DELETE", "/jobs/" + first).status, 202);
  ASSERT_TRUE(jobs_->WaitForJob(first, std::chrono::seconds(10)));
  const std::string again = SubmitYaml(LongKafkaJob(servers, "shared", dir_.path() + "/c5"));
  for (const std::string& id : {other, again}) {
    ASSERT_EQ(Client().Request("DELETE", "/jobs/" + id).status, 202);
    ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
  }
}

TEST_F(DaemonIsolationTest, AnExactlyOnceSinksDirectoryIsOwnedWithEverythingInIt) {
  // An exactly-once file sink writes part files of every subtask into one directory.
  const std::string dir = dir_.path() + "/eo";
  std::string job = LongFileJob(dir, 2);
  job.replace(job.find("type: file,"), std::string("type: file,").size(),
              "type: file, delivery-guarantee: exactly-once,");
  const std::string first = SubmitYaml(job);
  WaitUntilProducing(first);
  // A file inside it, and the directory itself as a plain file sink's path, are refused.
  auto inside = Client().Request("POST", "/jobs?file=inside.yaml", LongFileJob(dir + "/part-0-0"));
  ASSERT_EQ(inside.status, 400) << inside.body;
  EXPECT_EQ(
      json::parse(inside.body)["errors"],
      json::array({fmt::format(
          "inside.yaml: sink 'out' writes '{}/part-0-0', which overlaps '{}' of running "
          "job {} ('long-file'); cancel that job or wait until it ends, or write another path",
          dir, dir, first)}));
  auto same = Client().Request("POST", "/jobs?file=same.yaml", LongFileJob(dir));
  ASSERT_EQ(same.status, 400) << same.body;
  EXPECT_NE(same.body.find(fmt::format("writes '{}', which running job {} ('long-file') writes too",
                                       dir, first)),
            std::string::npos)
      << same.body;
  // A file beside it is not.
  const std::string beside = SubmitYaml(LongFileJob(dir_.path() + "/eo2"));
  for (const std::string& id : {first, beside}) {
    ASSERT_EQ(Client().Request("DELETE", "/jobs/" + id).status, 202);
    ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(2)));
  }
}

TEST_F(DaemonIsolationTest, AWorkerOverItsMemoryLimitFailsNamingTheLimit) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "workers of sanitizer builds run without an address-space limit";
#endif
  StartServer(JobManagerOptions{}, RestServerOptions{},
              WorkerOptions{.memory_limit_bytes = uint64_t{1} << 30});
  const std::string too_big = kTooBigJob;
  const std::string beside = SubmitYaml(kLongJob);
  auto submit = [&](const std::string& query) {
    return Client().Request("POST", "/jobs?file=big.yaml" + query, too_big);
  };
  // Under the job's own limit of 256 MiB it fails, naming that limit ...
  auto r = submit("&memory-limit=256m");
  ASSERT_EQ(r.status, 202) << r.body;
  const std::string small = json::parse(r.body)["jid"];
  ASSERT_TRUE(jobs_->WaitForJob(small, std::chrono::seconds(10)));
  EXPECT_EQ(JobJson(small)["state"], "FAILED");
  EXPECT_EQ(JobJson(small)["failure-cause"],
            "worker exceeded memory limit of 256 MiB (RLIMIT_AS, the job's memory-limit): "
            "std::bad_alloc");
  // ... under the daemon's 1 GiB it fits.
  const std::string fits = SubmitYaml(too_big);
  ASSERT_TRUE(jobs_->WaitForJob(fits, std::chrono::seconds(10)));
  EXPECT_EQ(JobJson(fits)["state"], "FINISHED") << JobJson(fits)["failure-cause"];
  // A job cannot raise its limit over the daemon's, and a size needs a known unit.
  r = submit("&memory-limit=2g");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["errors"],
            json::array({"memory-limit 2 GiB is over the daemon's limit of 1 GiB (tidemarkd "
                         "--worker-memory-limit)"}));
  r = submit("&memory-limit=12parsecs");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["errors"],
            json::array({"memory-limit: expected a memory size like \"128mb\" (a whole number "
                         "of bytes, or one followed by a unit, in any case: b|bytes, "
                         "k|kb|kibibytes, m|mb|mebibytes, g|gb|gibibytes, t|tb|tebibytes; "
                         "1024-based), got \"12parsecs\""}));
  CliResult cli = Cli("submit --memory-limit 3g jobs/two_splits_split.yaml");
  EXPECT_EQ(cli.rc, 2);
  EXPECT_EQ(
      cli.err,
      "memory-limit 3 GiB is over the daemon's limit of 1 GiB (tidemarkd --worker-memory-limit)\n");
  cli = Cli("submit --wait --memory-limit 64m jobs/two_splits_split.yaml");
  EXPECT_EQ(cli.rc, 0) << cli.err;
  EXPECT_EQ(Lines(cli.out).back(),
            Lines(ReadFile("tests/golden/two_splits_split.expected")).back());

  EXPECT_EQ(JobJson(beside)["state"], "RUNNING");
  ASSERT_EQ(Client().Request("DELETE", "/jobs/" + beside).status, 202);
  ASSERT_TRUE(jobs_->WaitForJob(beside, std::chrono::seconds(2)));
}

TEST(TidemarkRunBinaryTest, AJobWhoseThreadsCannotStartFailsWithTheCauseInsteadOfAborting) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers reserve more address space than the limit this test sets";
#endif
  // 600 sink subtasks need 600 thread stacks (8 MiB of address space each); under a 1 GiB
  // address-space limit std::thread throws, which used to end `tidemark run` with SIGABRT (and
  // left a daemon job RUNNING forever with a task count that never reached zero).
  TempDir dir;
  const std::string job = dir.path() + "/threads.yaml";
  std::ofstream(job)
      << "name: threads\n"
         "operators:\n"
         "  - id: src\n"
         "    type: source\n"
         "    source: {type: sequence, splits: [{id: a, start: 0ms, step: 1s, count: 3}]}\n"
         "  - id: out\n"
         "    type: sink\n"
         "    parallelism: 600\n"
         "    inputs: [{from: src, partition: rebalance}]\n"
         "    sink: {type: collect}\n";
  const std::string err = dir.path() + "/err";
  // One malloc arena: glibc reserves 64 MiB of address space per arena (up to 8 per core) as
  // threads first allocate, so how many arenas the limit must hold would depend on how the
  // threads happen to overlap; the stacks alone should hit the limit.
  const std::string cmd =
      fmt::format("ulimit -v 1048576 && MALLOC_ARENA_MAX=1 '{}' run '{}' >/dev/null 2>'{}'",
                  (ToolsDir() / "tidemark").string(), job, err);
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
  ASSERT_TRUE(WIFEXITED(status)) << ReadFile(err);
  EXPECT_EQ(WEXITSTATUS(status), 1) << ReadFile(err);
  EXPECT_TRUE(std::regex_search(
      ReadFile(err),
      std::regex(
          R"(job 'threads' FAILED: cannot start the thread of task out#\d+ \(\d+ of 601 task )"
          R"(threads started\): Resource temporarily unavailable)")))
      << ReadFile(err);
}

TEST(TidemarkdBinaryTest, BadOptionValuesAreUsageErrorsNamingTheOption) {
  TempDir dir;
  const std::string socket = dir.path() + "/d.sock";
  auto run = [&](const std::string& args) {
    const std::string err = dir.path() + "/err";
    const std::string cmd = fmt::format("'{}' --socket '{}' {} >/dev/null 2>'{}'",
                                        (ToolsDir() / "tidemarkd").string(), socket, args, err);
    const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(err));
  };
  // std::stoi took "80abc" as port 80 and "-5" as "no TCP at all".
  for (const std::string port : {"80abc", "-5", "", "65536"}) {
    auto [rc, err] = run("--listen 127.0.0.1:" + port);
    EXPECT_EQ(rc, 2) << port;
    EXPECT_EQ(
        err,
        fmt::format("tidemarkd: --listen: bad port '{}' (0 to 65535; 0 picks a free one), expected "
                    "HOST:PORT, e.g. 127.0.0.1:8081\n",
                    port));
  }
  auto [rc, err] = run("--max-running-jobs 0");
  EXPECT_EQ(rc, 2);
  EXPECT_NE(err.find("--max-running-jobs: Value 0 not in range 1 to 1048576"), std::string::npos)
      << err;
  std::tie(rc, err) = run("--finished-job-ttl 5");
  EXPECT_EQ(rc, 2);
  EXPECT_EQ(err, "tidemarkd: --finished-job-ttl: missing unit: ms, s, m, h or d\n");
  EXPECT_FALSE(fs::exists(socket));
}

TEST(TidemarkdBinaryTest, DaemonizePrintsOnlyTheReadyLineAndDetaches) {
  TempDir dir;
  const std::string socket = dir.path() + "/d.sock";
  const std::string out = dir.path() + "/out";
  const std::string err = dir.path() + "/err";
  const std::string cmd = fmt::format("'{}' --socket '{}' --daemonize >'{}' 2>'{}'",
                                      (ToolsDir() / "tidemarkd").string(), socket, out, err);
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0) << ReadFile(err);
  // The command returned once the daemon listens: it answers at once.
  EXPECT_EQ(DaemonClient(DaemonEndpoint{socket, "", ""}).Request("GET", "/overview").status, 200);
  const pid_t pid = std::stoi(ReadFile(socket + ".pid"));
  EXPECT_EQ(::getsid(pid), pid);  // detached into a session of its own
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  // Not our child: its exit shows as the socket and pid file being removed.
  EXPECT_TRUE(Eventually([&] { return !fs::exists(socket) && !fs::exists(socket + ".pid"); },
                         std::chrono::seconds(5)));
  // Nothing but the ready line reached the terminal, before or after detaching; the log file has
  // the daemon's lines.
  EXPECT_EQ(ReadFile(out), "tidemarkd: listening on unix:" + socket + "\n");
  EXPECT_EQ(ReadFile(err), "");
  const std::string log = ReadFile(socket + ".log");
  EXPECT_NE(log.find("ready on unix:" + socket), std::string::npos) << log;
  EXPECT_NE(log.find("received SIGTERM"), std::string::npos) << log;
  // Only its owner reads the log, even in a shared directory.
  EXPECT_EQ(fs::status(socket + ".log").permissions(),
            fs::perms::owner_read | fs::perms::owner_write);
}

TEST(TidemarkdBinaryTest, SigtermCancelsJobsRemovesTheSocketAndExitsZero) {
  TempDir dir;
  const std::string socket = dir.path() + "/d.sock";
  int out_pipe[2];
  ASSERT_EQ(::pipe(out_pipe), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::close(out_pipe[0]);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, 2);
    const std::string bin = (ToolsDir() / "tidemarkd").string();
    ::execl(bin.c_str(), bin.c_str(), "--socket", socket.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  // The daemon prints one line once it listens; reading it is the readiness handshake.
  std::string line;
  char c = 0;
  while (::read(out_pipe[0], &c, 1) == 1 && c != '\n') {
    line += c;
  }
  ::close(out_pipe[0]);
  ASSERT_EQ(line, "tidemarkd: listening on unix:" + socket);
  struct stat st {};
  ASSERT_EQ(::stat(socket.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  DaemonClient client(DaemonEndpoint{socket, "", ""});
  auto r = client.Request("POST", "/jobs", kLongJob);
  ASSERT_EQ(r.status, 202);
  const std::string id = json::parse(r.body)["jid"];
  EXPECT_EQ(json::parse(client.Request("GET", "/jobs/" + id).body)["state"], "RUNNING");

  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_FALSE(fs::exists(socket));
  const std::string log = ReadFile(socket + ".log");
  EXPECT_NE(log.find(fmt::format("[job {}] 'long' CANCELED", id)), std::string::npos) << log;
  // Before listening it ran the experiment and got the exact report.
  EXPECT_NE(log.find("self-check passed in "), std::string::npos) << log;
  EXPECT_NE(log.find(Lines(ReadFile("tests/golden/two_splits_split.expected")).back()),
            std::string::npos)
      << log;
}

TEST(TidemarkdBinaryTest, KillingTheDaemonLeavesNoWorkerBehind) {
  TempDir dir;
  const std::string socket = dir.path() + "/d.sock";
  int out_pipe[2];
  ASSERT_EQ(::pipe(out_pipe), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_pipe[1], 1);
    ::close(out_pipe[0]);
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, 2);
    const std::string bin = (ToolsDir() / "tidemarkd").string();
    ::execl(bin.c_str(), bin.c_str(), "--socket", socket.c_str(), "--no-self-check",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(out_pipe[1]);
  std::string line;
  char c = 0;
  while (::read(out_pipe[0], &c, 1) == 1 && c != '\n') {
    line += c;
  }
  ::close(out_pipe[0]);
  ASSERT_EQ(line, "tidemarkd: listening on unix:" + socket);
  DaemonClient client(DaemonEndpoint{socket, "", ""});
  std::vector<int> workers;
  for (int i = 0; i < 2; ++i) {
    auto r = client.Request("POST", "/jobs", kLongJob);
    ASSERT_EQ(r.status, 202) << r.body;
    const std::string id = json::parse(r.body)["jid"];
    json pid_json;
    ASSERT_TRUE(Eventually(
        [&] {
          pid_json = json::parse(client.Request("GET", "/jobs/" + id).body)["worker-pid"];
          return pid_json.is_number_integer();
        },
        std::chrono::seconds(5)));
    workers.push_back(pid_json.get<int>());
    // A worker is the daemon binary again, a child of the daemon in a process group of its own.
    const std::string stat = ReadFile(fmt::format("/proc/{}/stat", workers.back()));
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string state;
    int ppid = 0;
    int pgrp = 0;
    fields >> state >> ppid >> pgrp;
    EXPECT_EQ(ppid, pid);
    EXPECT_EQ(pgrp, workers.back());
  }
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  for (const int worker : workers) {
    EXPECT_TRUE(Eventually([&] { return ProcessGone(worker); }, std::chrono::seconds(5))) << worker;
  }
}

// ---------------------------------------------------------------------------------------------
// Every hostile input class against one daemon, and submissions validated off the I/O thread.

/// Asks `GET /jobs` on its own thread, every 20 ms from construction to `Stop`, on a fresh
/// connection each time with a 2 s deadline: how many were answered, the slowest answer, and every
/// request that failed or took 2 s or more.
class ListWatch {
 public:
  explicit ListWatch(const std::string& socket) : thread_([this, socket] { Loop(socket); }) {}
  ~ListWatch() { Stop(); }
  ListWatch(const ListWatch&) = delete;
  ListWatch& operator=(const ListWatch&) = delete;

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) {
      thread_.join();
    }
  }
  // After Stop:
  int64_t answered() const { return answered_; }
  std::chrono::milliseconds slowest() const { return slowest_; }
  const std::vector<std::string>& failures() const { return failures_; }

 private:
  void Loop(const std::string& socket) {
    DaemonClient client(DaemonEndpoint{socket, "", ""}, std::chrono::seconds(2));
    while (!stop_) {
      const auto start = std::chrono::steady_clock::now();
      std::string failure;
      try {
        const auto r = client.Request("GET", "/jobs");
        if (r.status != 200) {
          failure = fmt::format("GET /jobs answered {}: {}", r.status, r.body);
        }
      } catch (const std::exception& e) {
        failure = e.what();
      }
      const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
      slowest_ = std::max(slowest_, took);
      if (failure.empty() && took >= std::chrono::seconds(2)) {
        failure = fmt::format("GET /jobs took {} ms", took.count());
      }
      if (!failure.empty()) {
        failures_.push_back(failure);
      } else {
        ++answered_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::atomic<bool> stop_{false};
  int64_t answered_ = 0;  // the watch thread's until Stop
  std::chrono::milliseconds slowest_{0};
  std::vector<std::string> failures_;
  std::thread thread_;  // last: starts once the fields above exist
};

/// A job of one file source (jsonl {ts, user}) at `path` through a filter into a print sink, with
/// its `errors` side output printed too.
std::string FilteredFileJob(const std::string& path, const std::string& filter) {
  return fmt::format(R"(name: hostile-file
operators:
  - id: source
    type: source
    source: {{type: file, path: '{}', format: jsonl, schema: {{ts: timestamp, user: int64}}}}
    watermarks: {{max-out-of-orderness: 0ms, timestamp-field: ts}}
  - id: f
    type: filter
    input: source
    filter: "{}"
  - id: out
    type: sink
    input: f
    sink: {{type: print}}
  - id: errors
    type: sink
    inputs: [{{from: source, side-output: errors}}]
    sink: {{type: print}}
)",
                     path, filter);
}

/// A sequence job whose window has `trigger: <spec>`.
std::string TriggerJob(const std::string& spec) {
  return fmt::format(R"(name: hostile-trigger
operators:
  - id: src
    type: source
    source: {{type: sequence, splits: [{{id: a, start: 0ms, step: 1s, count: 3}}]}}
  - id: w
    type: window
    input: src
    window: {{assigner: tumbling, size: 1s, trigger: {}}}
  - id: out
    type: sink
    input: w
    sink: {{type: collect}}
)",
                     spec);
}

TEST(DaemonClientTest, ADaemonThatAcceptsButNeverAnswersTimesOut) {
  // The client's timeout did not bound its read (asio polls on past SO_RCVTIMEO): `tidemark list`
  // against a daemon whose I/O thread was stuck waited for ever.
  TempDir dir;
  const std::string path = dir.path() + "/mute.sock";
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(fd, 4), 0);  // the kernel accepts the connection; nobody ever reads or answers
  DaemonClient client(DaemonEndpoint{path, "", ""}, std::chrono::milliseconds(200));
  std::string what;
  try {
    client.Request("GET", "/jobs");
  } catch (const DaemonUnreachable& e) {
    what = e.what();
  }
  EXPECT_EQ(what, "no answer from the daemon at unix:" + path + ": Connection timed out");
  ::close(fd);
}

TEST_F(DaemonIsolationTest, EveryHostileInputClassAgainstOneDaemonLeavesItAnsweringAndExact) {
  // Slow requests are closed after half a second of silence; bodies over 1 MiB get 413.
  StartServer(JobManagerOptions{},
              RestServerOptions{.max_body_bytes = 1u << 20,
                                .idle_timeout = std::chrono::milliseconds(500)});
  ListWatch watch(socket_);
  // A job that runs throughout, writing a file: it must be untouched by everything below.
  const std::string owned = dir_.path() + "/owned.jsonl";
  const std::string bystander = SubmitYaml(LongFileJob(owned));
  WaitUntilProducing(bystander);
  const int bystander_pid = WorkerPid(bystander);

  // 1. Refused with the located reason (400), nothing started.
  const std::string fifo = dir_.path() + "/in.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string purging;
  for (int i = 0; i < 20000; ++i) {
    purging += "purging(";
  }
  purging += "event-time" + std::string(20000, ')');
  std::string laughs =
      "name: t\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";  // 10^10 nodes through aliases
  for (int i = 1; i < 10; ++i) {
    laughs += fmt::format(
        "a{0}: &a{0} [*a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}, *a{1}]\n", i,
        i - 1);
  }
  std::mt19937 rng(11);
  std::string garbage(64u << 10, '\0');
  for (char& c : garbage) {
    c = static_cast<char>(rng());
  }
  const std::vector<std::pair<std::string, std::string>> refused = {
      // body, the first error (regex)
      {FilteredFileJob(owned, std::string(10000, '(') + "user > 1" + std::string(10000, ')')),
       R"(hostile\.yaml:10:\d+: error: operators\[1\]\.filter: in expression "\(+\.\.\.": parentheses nest )"
       R"(deeper than 256 levels)"},
      {TriggerJob(purging),
       R"(hostile\.yaml:9:\d+: error: operators\[1\]\.window\.trigger: trigger )"
       R"('(purging\()+purg\.\.\.': purging\(\.\.\.\) nests deeper than 8 levels)"},
      {"name: t\nmeta: " + std::string(100000, '[') + std::string(100000, ']'),
       R"(hostile\.yaml:2:38: error: YAML nests deeper than 32 levels)"},
      {laughs, R"(hostile\.yaml:\d+:\d+: error: the job has more than 1000000 YAML nodes .*)"},
      {garbage, R"(hostile\.yaml:\d+:\d+: error: .*)"},
      {"name: " + std::string(900u << 10, 'n') + "\noperators: []\nwat: 1\n",
       R"(hostile\.yaml:\d+:\d+: error: .*)"},
      {FilteredFileJob("/dev/zero", "user > 1"),
       R"(hostile\.yaml:\d+:\d+: error: operators\[0\]\.source\.path: input file '/dev/zero' is a character )"
       R"(device; a source reads regular files only)"},
      {FilteredFileJob(fifo, "user > 1"),
       R"(hostile\.yaml:\d+:\d+: error: operators\[0\]\.source\.path: input file '.*/in\.fifo' is a FIFO; a )"
       R"(source reads regular files only)"},
      {TriggerJob("count(-1)"),
       R"(hostile\.yaml:9:\d+: error: operators\[1\]\.window\.trigger: trigger )"
       R"('count\(-1\)': count\(N\) needs at least 1 element, got -1)"},
      {TriggerJob("continuous-event-time(0ms)"),
       R"(hostile\.yaml:9:\d+: error: .*the interval must be positive, got 0ms)"},
      {TriggerJob("continuous-event-time(1000)"),
       R"(hostile\.yaml:9:\d+: error: .*the interval needs a unit, e\.g\. continuous-event-time\(1000ms\))"},
      {LongFileJob(owned),
       R"(hostile\.yaml: sink 'out' writes '.*/owned\.jsonl', which running job )" + bystander +
           R"( \('long-file'\) writes too; .*)"},
  };
  // Submitted from four clients at once, so that several are being validated together.
  std::vector<DaemonClient::Response> answers(refused.size());
  {
    std::vector<std::thread> clients;
    for (size_t t = 0; t < 4; ++t) {
      clients.emplace_back([&, t] {
        for (size_t i = t; i < refused.size(); i += 4) {
          answers[i] = Client().Request("POST", "/jobs?file=hostile.yaml", refused[i].first);
        }
      });
    }
    for (auto& c : clients) {
      c.join();
    }
  }
  for (size_t i = 0; i < refused.size(); ++i) {
    SCOPED_TRACE(fmt::format("refused case {}", i));
    ASSERT_EQ(answers[i].status, 400) << answers[i].body.substr(0, 300);
    const json errors = json::parse(answers[i].body)["errors"];
    ASSERT_FALSE(errors.empty());
    EXPECT_TRUE(std::regex_match(errors[0].get<std::string>(), std::regex(refused[i].second)))
        << errors[0].get<std::string>().substr(0, 300);
  }

  // 2. Hostile requests: garbage, an oversized body, a line that never ends, slow clients.
  const std::string reply = RawExchange(garbage);
  EXPECT_TRUE(reply.empty() || reply.rfind("HTTP/1.1 400", 0) == 0) << reply.substr(0, 80);
  const std::string too_big =
      RawExchange("POST /jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 2097152\r\n\r\n" +
                  std::string(2u << 20, 'a'));
  EXPECT_TRUE(too_big.empty() || too_big.rfind("HTTP/1.1 413", 0) == 0) << too_big.substr(0, 80);
  const std::string chunked =
      RawExchange("POST /jobs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1;" +
                  std::string(8u << 20, 'a'));
  EXPECT_EQ(chunked.rfind("HTTP/1.1 400", 0), 0u) << chunked.substr(0, 80);
  std::vector<int> slow;
  for (int i = 0; i < 50; ++i) {
    const int fd = ConnectRaw();
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::send(fd, "POST /jobs HTTP/1.1\r\nContent-Le", 31, MSG_NOSIGNAL), 31);
    slow.push_back(fd);
  }

  // 3. Accepted, then FAILED with the cause (or FINISHED with the bad lines counted), each in its
  // own worker.
  const std::string deep_data = dir_.path() + "/deep.jsonl";
  std::ofstream(deep_data) << "{\"ts\": 1, \"user\": 1}\n"
                           << std::string(100000, '[') << std::string(100000, ']') << "\n"
                           << "{\"ts\": 2, \"user\": 2}\n";
  const std::string deep =
      SubmitYaml(FilteredFileJob(deep_data, std::string(100000, '!') + "(user > 1)"));
  const std::string throws = SubmitYaml(kThrowingJob);
  const std::string segfaults = SubmitYaml(kSegfaultingJob);
  const std::string full = SubmitYaml(SinkJob("/dev/full"));
  const std::string no_dir = SubmitYaml(SinkJob(dir_.path() + "/no/such/out.jsonl"));
  const std::string killed = SubmitYaml(kLongJob);
  WaitUntilProducing(killed);
  const int killed_pid = WorkerPid(killed);
  ASSERT_EQ(::kill(killed_pid, SIGKILL), 0);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  // 512 MiB of channel buffers under a 256 MiB limit (sanitizer workers run without one).
  auto big = Client().Request("POST", "/jobs?file=big.yaml&memory-limit=256m", kTooBigJob);
  ASSERT_EQ(big.status, 202) << big.body;
  const std::string hungry = json::parse(big.body)["jid"];
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  const std::string segv =
      R"(worker (killed by signal 11 \(SIGSEGV\)|exited with status \d+ before the job ended))";
#else
  const std::string segv = R"(worker killed by signal 11 \(SIGSEGV\))";
#endif
  const std::vector<std::pair<std::string, std::string>> failed = {
    {throws, R"(.*poisoned record 3 at 2s.*)"},
    {segfaults, segv},
    {full, R"(.*cannot write sink file '/dev/full'.*)"},
    {no_dir,
     R"(.*cannot open sink file '.*/no/such/out\.jsonl': directory '.*/no/such' does not exist; )"
     R"(create it or set create-dirs: true.*)"},
    {killed, R"(worker killed by signal 9 \(SIGKILL\))"},
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    {hungry,
     R"(worker exceeded memory limit of 256 MiB \(RLIMIT_AS, the job's memory-limit\): std::bad_alloc)"},
#endif
  };
  for (const auto& [id, cause] : failed) {
    SCOPED_TRACE("job " + id);
    ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
    const json j = JobJson(id);
    EXPECT_EQ(j["state"], "FAILED");
    EXPECT_TRUE(std::regex_match(j["failure-cause"].get<std::string>(), std::regex(cause)))
        << j["failure-cause"];
  }
  EXPECT_TRUE(ProcessGone(killed_pid));
  ASSERT_TRUE(jobs_->WaitForJob(deep, std::chrono::seconds(10)));
  EXPECT_EQ(JobJson(deep)["state"], "FINISHED") << JobJson(deep)["failure-cause"];
  const json deep_lines =
      json::parse(Client().Request("GET", "/jobs/" + deep + "/logs").body)["lines"];
  // Two sinks print into one log: their lines may interleave, each is whole. 100,000 `!` are even:
  // `user > 1` passes the second record only.
  ASSERT_EQ(deep_lines.size(), 2u) << deep_lines;
  std::vector<std::string> sorted = deep_lines.get<std::vector<std::string>>();
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted[1], "{\"ts\":2,\"user\":2}");
  EXPECT_EQ(sorted[0].rfind(
                "{\"split\":\"" + deep_data +
                    "\",\"line\":2,\"offset\":21,\"reason\":\"JSON nests deeper than 1000 levels\"",
                0),
            0u)
      << sorted[0].substr(0, 200);

  // The slow clients were closed at their idle deadline (the watch holds one connection at most).
  EXPECT_TRUE(Eventually([&] { return server_->open_connections() <= 1; }, std::chrono::seconds(5)))
      << server_->open_connections();
  for (const int fd : slow) {
    EXPECT_EQ(ReadUntilClosed(fd), "");
    ::close(fd);
  }

  // 4. Afterwards: both two-split jobs exact, and the bystander untouched.
  for (const std::string mode : {"split", "operator"}) {
    const std::vector<std::string> expected =
        Lines(ReadFile("tests/golden/two_splits_" + mode + ".expected"));
    const std::string id = SubmitYaml(ReadFile("jobs/two_splits_" + mode + ".yaml"));
    ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
    EXPECT_EQ(JobJson(id)["state"], "FINISHED");
    EXPECT_EQ(JobJson(id)["report"], expected.back());
    EXPECT_EQ(json::parse(Client().Request("GET", "/jobs/" + id + "/logs").body)["lines"],
              json(expected))
        << mode;
  }
  EXPECT_EQ(WorkerPid(bystander), bystander_pid);
  EXPECT_EQ(JobJson(bystander)["state"], "RUNNING");
  ASSERT_EQ(Client().Request("DELETE", "/jobs/" + bystander).status, 202);
  ASSERT_TRUE(jobs_->WaitForJob(bystander, std::chrono::seconds(2)));

  watch.Stop();
  EXPECT_TRUE(watch.failures().empty()) << watch.failures().front();
  EXPECT_GT(watch.answered(), 10);
  RecordProperty("list_answered", static_cast<int>(watch.answered()));
  RecordProperty("list_slowest_ms", static_cast<int>(watch.slowest().count()));
  std::cout << "GET /jobs answered " << watch.answered() << " times, slowest "
            << watch.slowest().count() << " ms\n";
}

TEST_F(DaemonTest, ASubmissionBeingValidatedDoesNotHoldUpOtherRequests) {
  // A validator that holds one submission (a job named `held`) until released: as a pathological
  // job that takes long to compile would, but deterministic. Before, it ran on the I/O thread and
  // every other request waited for it.
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false;
  bool released = false;
  JobValidator real = LocalJobValidator(TestRegistry());
  validator_ = [&, real](const std::string& yaml, const std::string& file) {
    if (yaml.rfind("name: held\n", 0) == 0) {
      std::unique_lock<std::mutex> lock(mu);
      entered = true;
      cv.notify_all();
      cv.wait_for(lock, std::chrono::seconds(5),
                  [&] { return released; });  // bounded: a regression fails, not hangs
    }
    return real(yaml, file);
  };
  StartServer(JobManagerOptions{});
  const std::string held_job =
      "name: held\n" + std::string(kSmallJob).substr(std::string(kSmallJob).find('\n') + 1);
  DaemonClient::Response held;
  std::thread submitter([&] { held = Client().Request("POST", "/jobs?file=held.yaml", held_job); });
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return entered; }));
  }
  // While it is held: list, overview and another submission are answered, well before it is let go.
  DaemonClient quick(DaemonEndpoint{socket_, "", ""}, std::chrono::seconds(2));
  std::string failure;
  const auto start = std::chrono::steady_clock::now();
  try {
    EXPECT_EQ(json::parse(quick.Request("GET", "/jobs").body)["jobs"].size(), 0u);
    EXPECT_EQ(quick.Request("GET", "/overview").status, 200);
    const auto other = quick.Request("POST", "/jobs?file=small.yaml", kSmallJob);
    EXPECT_EQ(other.status, 202) << other.body;
    ASSERT_TRUE(jobs_->WaitForJob(json::parse(other.body)["jid"], std::chrono::seconds(10)));
    EXPECT_EQ(json::parse(quick.Request("GET", "/jobs").body)["jobs"].size(), 1u);
  } catch (const DaemonUnreachable& e) {
    failure = e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  {
    std::lock_guard<std::mutex> lock(mu);
    released = true;
    cv.notify_all();
  }
  submitter.join();
  EXPECT_EQ(failure, "");
  ASSERT_EQ(held.status, 202) << held.body;
  const std::string id = json::parse(held.body)["jid"];
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
  EXPECT_EQ(JobJson(id)["state"], "FINISHED");
  EXPECT_EQ(JobJson(id)["name"], "held");
}

// ---------------------------------------------------------------------------------------------
// `tidemark explain` and GET /jobs/{id}/explain: `run --explain`'s text, computed in the worker.

TEST_F(DaemonTest, CheckpointHistoryAndRestartCausesForTheDashboard) {
  // The job with its checkpoints in this test's directory (not the repository's).
  std::string yaml = ReadFile("jobs/checkpoint_restart.yaml");
  const std::string dir_key = "dir: checkpoints/checkpoint-restart";
  ASSERT_NE(yaml.find(dir_key), std::string::npos);
  yaml.replace(yaml.find(dir_key), dir_key.size(), "dir: " + dir_.path() + "/checkpoints");
  const std::string id = SubmitYaml(yaml);
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(30)));
  ASSERT_EQ(JobJson(id)["state"], "FINISHED");
  const json c = json::parse(Client().Request("GET", "/jobs/" + id + "/checkpoints").body);
  EXPECT_EQ(c["counts"]["completed"], 20) << c.dump();
  EXPECT_EQ(c["restarts"], 1);
  ASSERT_EQ(c["history"].size(), 10u) << c.dump();
  // The last 10 on the virtual clock: every 100 ms from 1.2 s, the last at the end of input. The
  // ids continue those already in the job's checkpoint directory (`dir:`, kept across runs).
  const int64_t last = c["latest"]["completed"]["id"].get<int64_t>();
  for (size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(c["history"][i]["id"], last - 9 + static_cast<int64_t>(i));
    EXPECT_EQ(c["history"][i]["status"], "COMPLETED");
  }
  EXPECT_EQ(c["history"][0], json({{"id", last - 9},
                                   {"status", "COMPLETED"},
                                   {"is_savepoint", false},
                                   {"trigger_timestamp", 1200},
                                   {"end_to_end_duration", 0},
                                   {"state_size", 474},
                                   {"alignment_duration", 0},
                                   {"failure_message", nullptr}}));
  EXPECT_EQ(c["history"][9]["trigger_timestamp"], 2075);
  const json ex = json::parse(Client().Request("GET", "/jobs/" + id + "/exceptions").body);
  EXPECT_EQ(ex, json({{"root-exception", nullptr},
                      {"timestamp", nullptr},
                      {"restart-causes",
                       {"task windows -> out#0: operator 'windows' failed: injected fault "
                        "(faults: process) while processing its record 41"}}}));
}

TEST_F(DaemonTest, ExplainsAnEndedJobsWatermarksAsRunExplainDoes) {
  CliResult submit = Cli("submit --wait jobs/slow_split_stops_no_idleness.yaml");
  ASSERT_EQ(submit.rc, 0) << submit.err;
  const std::string id = Lines(submit.out).at(0);
  CliResult explain = Cli("explain " + id);
  ASSERT_EQ(explain.rc, 0) << explain.err;
  for (const char* line :
       {"windows#0: input watermark 6.449s",
        "split slow: 6.449s, active, 50 records, the last before 3s <- holds the "
        "minimum",
        "likely mistake: split slow stopped (no record after 3s",
        "no idleness is set on source 'source' (watermarks.idleness)"}) {
    EXPECT_NE(explain.out.find(line), std::string::npos) << line << "\n" << explain.out;
  }
  auto r = Client().Request("GET", "/jobs/" + id + "/explain");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body), json({{"jid", id},
                                       {"state", "FINISHED"},
                                       {"operator", ""},
                                       {"live", false},
                                       {"operator-found", true},
                                       {"explain", explain.out}}));
  CliResult op = Cli("explain " + id + " windows");
  EXPECT_EQ(op.rc, 0) << op.err;
  EXPECT_EQ(op.out.rfind("windows#0: input watermark 6.449s", 0), 0u) << op.out;
  CliResult nope = Cli("explain " + id + " nope");
  EXPECT_EQ(nope.rc, 2);
  EXPECT_EQ(nope.err, "tidemark: job " + id + " has no operator 'nope'\n");

  // Operator mode: the assigner after the source is named.
  CliResult op_mode = Cli("submit --wait jobs/two_splits_operator.yaml");
  ASSERT_EQ(op_mode.rc, 0) << op_mode.err;
  CliResult assign = Cli("explain " + Lines(op_mode.out).at(0));
  EXPECT_EQ(assign.rc, 0) << assign.err;
  EXPECT_NE(
      assign.out.find("likely mistake: the watermark strategy is set after the source: 'assign' "),
      std::string::npos)
      << assign.out;

  // A running job is explained live, from its tasks in the worker (it used to be refused).
  const std::string running = SubmitYaml(kLongJob);
  WaitUntilProducing(running);
  CliResult live = Cli("explain " + running + " src");
  EXPECT_EQ(live.rc, 0) << live.err;
  EXPECT_EQ(live.out.rfind("src#0: input watermark MIN (none yet) at processing time 20", 0), 0u)
      << live.out;
  EXPECT_NE(live.out.find("Z (now, while the job runs)\n"), std::string::npos) << live.out;
  auto live_json = Client().Request("GET", "/jobs/" + running + "/explain?operator=src");
  ASSERT_EQ(live_json.status, 200) << live_json.body;
  EXPECT_EQ(json::parse(live_json.body)["live"], true);
  CliResult live_nope = Cli("explain " + running + " nope");
  EXPECT_EQ(live_nope.rc, 2);
  EXPECT_EQ(live_nope.err, "tidemark: job " + running + " has no operator 'nope'\n");
  // Cancelled before end of input reached its operators: said so (it used to say "no such
  // operator" for an operator the job has), exit 1 as `status` of a CANCELED job.
  ASSERT_EQ(Client().Request("DELETE", "/jobs/" + running).status, 202);
  ASSERT_TRUE(jobs_->WaitForJob(running, std::chrono::seconds(2)));
  CliResult cancelled = Cli("explain " + running + " src");
  EXPECT_EQ(cancelled.rc, 1) << cancelled.err;
  EXPECT_EQ(cancelled.out,
            "src: the job was CANCELED before end of input reached this operator, so there is no "
            "final state to explain; `tidemark explain` of a running job shows where its "
            "watermarks stand\n");
  CliResult unknown = Cli("explain 0123456789abcdef");
  EXPECT_EQ(unknown.rc, 2);
  EXPECT_EQ(unknown.err, "tidemark: no job with id '0123456789abcdef' (see `tidemark list`)\n");
}

}  // namespace
}  // namespace tidemark

int main(int argc, char** argv) {
  if (tidemark::IsWorkerInvocation(argc, argv)) {
    return tidemark::WorkerMain(argc, argv, tidemark::TestJobFactory());
  }
  // Every tidemarkd a test starts without --state-dir keeps its registry in a directory of this
  // process's own, not in the user's ~/.local/state (tests run in parallel).
  tidemark::testing::TempDir state_home;  // removed at exit
  ::setenv("XDG_STATE_HOME", state_home.path().c_str(),
           1);  // NOLINT(concurrency-mt-unsafe): before threads
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
