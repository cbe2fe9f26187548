// The daemon's own threads (the job waiter, the REST I/O thread and submission pool, the expirer)
// when something throws on them: an in-process JobManager + RestServer on a temporary Unix socket
// whose jobs are fakes that throw where a test says. A failure in one job's thread fails that job
// only, with the cause; a failure in a service thread is logged and counted (`/overview`,
// `/metrics`), and the daemon keeps serving.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "runtime/core/thread_entry.h"
#include "tests/testing/daemon_harness.h"
#include "tools/daemon/daemon_client.h"
#include "tools/daemon/job_manager.h"
#include "tools/daemon/rest_server.h"

namespace tidemark {
namespace {

using nlohmann::json;
using testing::Eventually;
using testing::TempDir;

/// A job that does what its YAML text says (the text is the behaviour's name, not a job):
///   finishes                  Run returns FINISHED at once
///   run-throws-bad-alloc      Run throws std::bad_alloc
///   run-throws-int            Run throws 42 (not a std::exception)
///   runs                      Run returns CANCELED once cancelled
///   runs-metrics-throw-once   as `runs`; the first Metrics call throws 42
///   finishes-metrics-throw    Run returns FINISHED; every Metrics call throws
/// Counts its Cancel calls in `cancels`.
class FakeJob : public DaemonJob {
 public:
  FakeJob(std::string behaviour, std::shared_ptr<std::atomic<int>> cancels)
      : behaviour_(std::move(behaviour)),
        name_("fake-" + behaviour_),
        cancels_(std::move(cancels)) {}

  const std::string& name() const override { return name_; }
  std::vector<DaemonJobVertex> Vertices() const override { return {}; }
  std::vector<DaemonJobOutput> Outputs() const override { return {}; }
  JobState Run() override {
    if (behaviour_ == "run-throws-bad-alloc") {
      throw std::bad_alloc();
    }
    if (behaviour_ == "run-throws-int") {
      throw 42;  // NOLINT(hicpp-exception-baseclass): what the test is about
    }
    std::unique_lock<std::mutex> lock(mu_);
    if (behaviour_.starts_with("runs")) {
      state_ = JobState::kRunning;
      cv_.wait(lock, [this] { return cancelled_; });
      state_ = JobState::kCanceled;
    } else {
      state_ = JobState::kFinished;
    }
    return state_;
  }
  void Cancel() override {
    ++*cancels_;
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }
  JobState state() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return state_;
  }
  std::string failure_cause() const override { return ""; }
  std::vector<SubtaskMetrics> Metrics() const override {
    if (behaviour_ == "finishes-metrics-throw") {
      throw std::runtime_error("metrics gone");
    }
    if (behaviour_ == "runs-metrics-throw-once" && !metrics_thrown_.exchange(true)) {
      throw 42;  // NOLINT(hicpp-exception-baseclass): what the test is about
    }
    return {};
  }
  std::optional<std::string> ReportLine() const override { return std::nullopt; }

 private:
  const std::string behaviour_;
  const std::string name_;
  std::shared_ptr<std::atomic<int>> cancels_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool cancelled_ = false;
  JobState state_ = JobState::kCreated;
  mutable std::atomic<bool> metrics_thrown_{false};
};

class DaemonThreadsTest : public ::testing::Test {
 protected:
  void Start(JobManagerOptions options = {}) {
    auto cancels = cancels_;
    jobs_ = std::make_unique<JobManager>(
        [cancels](const std::string& yaml, const std::string&, JobResources::LineWriter,
                  const DaemonRunOptions&) -> std::unique_ptr<DaemonJob> {
          if (yaml == "factory-throws-int") {
            throw 42;  // NOLINT(hicpp-exception-baseclass): what the test is about
          }
          return std::make_unique<FakeJob>(yaml, cancels);
        },
        options);
    server_ = std::make_unique<RestServer>(*jobs_, RestServerOptions{.socket_path = socket_});
    server_->Start();
  }
  void TearDown() override {
    server_.reset();
    jobs_.reset();  // waits for every waiter: a test that leaves one hanging times out here
  }

  DaemonClient Client() { return DaemonClient(DaemonEndpoint{socket_, "", ""}); }
  DaemonClient::Response Get(const std::string& path) { return Client().Request("GET", path); }
  std::string Submit(const std::string& behaviour) {
    auto r = Client().Request("POST", "/jobs?file=fake.yaml", behaviour);
    EXPECT_EQ(r.status, 202) << r.body;
    return r.status == 202 ? json::parse(r.body).at("jid").get<std::string>() : "";
  }
  json Job(const std::string& id) {
    auto r = Get("/jobs/" + id);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false);
  }
  json Overview() {
    auto r = Get("/overview");
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body, nullptr, false);
  }
  std::string Metrics() {
    auto r = Get("/metrics");
    EXPECT_EQ(r.status, 200) << r.body;
    return r.body;
  }

  TempDir dir_;
  const std::string socket_ = dir_.path() + "/d.sock";
  std::shared_ptr<std::atomic<int>> cancels_ = std::make_shared<std::atomic<int>>(0);
  std::unique_ptr<JobManager> jobs_;
  std::unique_ptr<RestServer> server_;
};

TEST_F(DaemonThreadsTest, AJobWhoseRunThrowsFailsWithTheCauseAndOnlyThatJob) {
  Start();
  const std::string oom = Submit("run-throws-bad-alloc");
  const std::string odd = Submit("run-throws-int");
  const std::string fine = Submit("finishes");
  for (const std::string& id : {oom, odd, fine}) {
    ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10))) << id;
  }
  const json oom_job = Job(oom);
  EXPECT_EQ(oom_job["state"], "FAILED");
  // The out-of-memory cause names the address-space limit, as a task thread's does.
  EXPECT_EQ(oom_job["failure-cause"], "the daemon's thread running the job failed: " +
                                          OutOfMemoryCause(AddressSpaceLimitBytes()));
  const json odd_job = Job(odd);
  EXPECT_EQ(odd_job["state"], "FAILED");
  EXPECT_EQ(odd_job["failure-cause"],
            "the daemon's thread running the job failed: unknown exception");
  EXPECT_EQ(Job(fine)["state"], "FINISHED");
  EXPECT_EQ(cancels_->load(), 2);  // each failed job was asked to stop whatever still ran
  const json overview = Overview();
  EXPECT_EQ(overview["jobs-failed"], 2);
  EXPECT_EQ(overview["jobs-finished"], 1);
  EXPECT_EQ(overview["jobs-running"], 0);
  // A job's own failure is the job's, not the daemon's.
  EXPECT_EQ(overview["service-thread-failures"], 0);
  EXPECT_TRUE(overview["last-service-thread-failure"].is_null());
  EXPECT_NE(Metrics().find("\ntidemark_jobs_ended_total{state=\"FAILED\"} 2\n"), std::string::npos);
}

TEST_F(DaemonThreadsTest, AWaiterThatCannotRecordTheEndFailsTheJobAndCountsTheFailure) {
  Start();
  // Run returns FINISHED, then reading the final figures throws on the waiter thread.
  const std::string id = Submit("finishes-metrics-throw");
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
  const json j = Job(id);
  EXPECT_EQ(j["state"], "FAILED");
  EXPECT_EQ(j["failure-cause"], "the daemon could not record the job's end: metrics gone");
  const json overview = Overview();
  EXPECT_EQ(overview["jobs-running"], 0);
  EXPECT_EQ(overview["jobs-failed"], 1);
  EXPECT_EQ(overview["service-thread-failures"], 1);
  EXPECT_EQ(overview["last-service-thread-failure"], "job waiter: metrics gone");
  EXPECT_NE(Metrics().find("\ntidemark_daemon_thread_failures_total 1\n"), std::string::npos);
  // Its slot is free: another job runs and finishes.
  const std::string next = Submit("finishes");
  ASSERT_TRUE(jobs_->WaitForJob(next, std::chrono::seconds(10)));
  EXPECT_EQ(Job(next)["state"], "FINISHED");
}

TEST_F(DaemonThreadsTest, ARequestWhoseHandlerThrowsGets500IsCountedAndTheDaemonKeepsServing) {
  Start();
  const std::string id = Submit("runs-metrics-throw-once");
  // The status request reads the running job's figures, which throw 42 (not a std::exception,
  // which once ended the daemon in std::terminate).
  auto r = Get("/jobs/" + id);
  EXPECT_EQ(r.status, 500);
  EXPECT_EQ(json::parse(r.body), json({{"errors", {"unknown exception"}}}));
  EXPECT_EQ(Job(id)["state"], "RUNNING");
  EXPECT_EQ(Get("/jobs").status, 200);
  const json overview = Overview();
  EXPECT_EQ(overview["service-thread-failures"], 1);
  EXPECT_EQ(overview["last-service-thread-failure"],
            "REST request: GET /jobs/" + id + ": unknown exception");
  EXPECT_NE(Metrics().find("\ntidemark_daemon_thread_failures_total 1\n"), std::string::npos);
  EXPECT_EQ(Client().Request("DELETE", "/jobs/" + id).status, 202);
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
  EXPECT_EQ(Job(id)["state"], "CANCELED");
}

TEST_F(DaemonThreadsTest, AFactoryThrowingANonStdExceptionRefusesTheSubmissionAndFreesItsSlot) {
  Start(JobManagerOptions{.max_running_jobs = 1});
  for (int i = 0; i < 3; ++i) {  // a leaked slot would refuse the later ones with 429
    auto r = Client().Request("POST", "/jobs?file=fake.yaml", "factory-throws-int");
    EXPECT_EQ(r.status, 500) << r.body;
    EXPECT_EQ(json::parse(r.body),
              json({{"errors", {"the job factory threw an unknown exception"}}}));
  }
  const std::string id = Submit("finishes");
  ASSERT_TRUE(jobs_->WaitForJob(id, std::chrono::seconds(10)));
  EXPECT_EQ(Job(id)["state"], "FINISHED");
  const json overview = Overview();
  EXPECT_EQ(overview["jobs-submitted-total"], 1);
  EXPECT_EQ(overview["service-thread-failures"], 0);  // refused, not a thread failure
}

TEST_F(DaemonThreadsTest, AnExpirerThatThrowsIsCountedAndStartsAgain) {
  Start(JobManagerOptions{.finished_job_ttl = std::chrono::milliseconds(1)});
  // The hook the expirer calls after dropping expired jobs while none runs (the RestServer's
  // I/O thread renewal) throws.
  jobs_->SetIdleHook([] { throw std::runtime_error("hook failed"); });
  for (int round = 1; round <= 2; ++round) {
    const std::string id = Submit("finishes");
    ASSERT_TRUE(
        Eventually([&] { return Get("/jobs/" + id).status == 404; }, std::chrono::seconds(10)))
        << "round " << round << ": job " << id << " never expired";
    ASSERT_TRUE(Eventually([&] { return Overview()["service-thread-failures"] == round; },
                           std::chrono::seconds(10)))
        << Overview().dump();
    EXPECT_EQ(Overview()["last-service-thread-failure"], "job expirer: hook failed");
    EXPECT_NE(Metrics().find(fmt::format("\ntidemark_jobs_expired_total {}\n", round)),
              std::string::npos);
  }
  EXPECT_EQ(Get("/jobs").status, 200);
}

}  // namespace
}  // namespace tidemark
