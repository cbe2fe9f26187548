// Request flood against the daemon (label `slow`, not in the default run): 8 clients each send a
// request every millisecond for a minute (TM_DAEMON_LOAD_SECONDS overrides the length) over the
// Unix socket, while jobs are submitted one after another and a long job runs throughout. Every
// request must be answered with the expected status, every job must end with its exact result.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/testing/daemon_jobs.h"
#include "tools/daemon/daemon_client.h"
#include "tools/daemon/job_manager.h"
#include "tools/daemon/rest_server.h"
#include "tools/tidemarkd/local_job_factory.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string LastLine(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::string last;
  while (std::getline(in, line)) {
    if (!line.empty()) {
      last = line;
    }
  }
  return last;
}

using testing::kLongJob;

struct ClientStats {
  int64_t sent = 0;
  int64_t answered = 0;  ///< with the expected status
  int64_t unexpected = 0;
  int64_t unreachable = 0;
  std::vector<int64_t> latencies_us;
  std::string first_problem;
};

TEST(DaemonLoadSlowTest, EightClientsARequestEveryMillisecondWhileJobsRunCorrectly) {
  const char* env =
      std::getenv("TM_DAEMON_LOAD_SECONDS");  // NOLINT(concurrency-mt-unsafe): before threads
  const int seconds = env != nullptr ? std::max(1, std::atoi(env)) : 60;
  constexpr int kClients = 8;

  std::string tmpl = (fs::temp_directory_path() / "tidemark-load-test-XXXXXX").string();
  const std::string dir = ::mkdtemp(tmpl.data());
  const std::string socket = dir + "/d.sock";
  JobManager jobs(MakeLocalDaemonJob, JobManagerOptions{});
  RestServer server(jobs, RestServerOptions{.socket_path = socket});
  server.Start();
  const DaemonEndpoint endpoint{socket, "", ""};

  const std::string long_id =
      json::parse(DaemonClient(endpoint).Request("POST", "/jobs", kLongJob).body)["jid"];
  std::mutex id_mu;
  std::string current_id = long_id;  // the job the clients ask about; guarded by id_mu

  const auto start = Clock::now();
  const auto end = start + std::chrono::seconds(seconds);
  std::vector<ClientStats> stats(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      ClientStats& s = stats[c];
      DaemonClient client(endpoint, std::chrono::seconds(10));
      auto next = start;
      // A fixed schedule: a client that fell behind (waiting for answers) catches up without
      // sleeping; whatever is still unsent at the end is counted as missed, not sent late.
      for (int64_t k = 0; next < end && Clock::now() < end; ++k) {
        std::this_thread::sleep_until(next);
        next += std::chrono::milliseconds(1);
        std::string id;
        {
          std::lock_guard<std::mutex> lock(id_mu);
          id = current_id;
        }
        std::string target;
        int expected = 200;
        switch ((k + c) % 6) {
          case 0:
            target = "/overview";
            break;
          case 1:
            target = "/jobs";
            break;
          case 2:
            target = "/jobs/" + id;
            break;
          case 3:
            target = "/metrics";
            break;
          case 4:
            target = "/jobs/" + id + "/exceptions";
            break;
          default:
            target = "/no-such-route";
            expected = 404;
            break;
        }
        ++s.sent;
        const auto t0 = Clock::now();
        try {
          const auto r = client.Request("GET", target);
          s.latencies_us.push_back(
              std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0).count());
          if (r.status == expected) {
            ++s.answered;
          } else {
            ++s.unexpected;
            if (s.first_problem.empty()) {
              s.first_problem = fmt::format("GET {}: HTTP {} {}", target, r.status, r.body);
            }
          }
        } catch (const std::exception& e) {
          ++s.unreachable;
          if (s.first_problem.empty()) {
            s.first_problem = fmt::format("GET {}: {}", target, e.what());
          }
        }
      }
    });
  }

  // Meanwhile: the two experiment jobs, one after another, each with its exact result.
  const std::string split_report = LastLine(ReadFile("tests/golden/two_splits_split.expected"));
  const std::string operator_report =
      LastLine(ReadFile("tests/golden/two_splits_operator.expected"));
  ASSERT_FALSE(split_report.empty());
  int jobs_run = 0;
  int jobs_correct = 0;
  DaemonClient submitter(endpoint, std::chrono::seconds(10));
  while (Clock::now() < end) {
    const bool split = jobs_run % 2 == 0;
    const std::string yaml =
        ReadFile(split ? "jobs/two_splits_split.yaml" : "jobs/two_splits_operator.yaml");
    const auto r = submitter.Request("POST", "/jobs?file=load.yaml", yaml);
    ++jobs_run;
    if (r.status != 202) {
      ADD_FAILURE() << "submit: HTTP " << r.status << " " << r.body;
      continue;
    }
    const std::string id = json::parse(r.body)["jid"];
    {
      std::lock_guard<std::mutex> lock(id_mu);
      current_id = id;
    }
    if (!jobs.WaitForJob(id, std::chrono::seconds(30))) {
      ADD_FAILURE() << "job " << id << " did not end";
      continue;
    }
    const json j = json::parse(submitter.Request("GET", "/jobs/" + id).body);
    if (j["state"] == "FINISHED" && j["report"] == (split ? split_report : operator_report)) {
      ++jobs_correct;
    } else {
      ADD_FAILURE() << "job " << id << ": " << j["state"] << " " << j["report"] << " "
                    << j["failure-cause"];
    }
  }
  for (auto& t : clients) {
    t.join();
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

  // The long job ran beside all of it and is still producing; it cancels cleanly.
  const json long_job = json::parse(DaemonClient(endpoint).Request("GET", "/jobs/" + long_id).body);
  EXPECT_EQ(long_job["state"], "RUNNING");
  EXPECT_EQ(DaemonClient(endpoint).Request("DELETE", "/jobs/" + long_id).status, 202);
  ASSERT_TRUE(jobs.WaitForJob(long_id, std::chrono::seconds(5)));
  EXPECT_EQ(json::parse(DaemonClient(endpoint).Request("GET", "/jobs/" + long_id).body)["state"],
            "CANCELED");

  ClientStats total;
  for (const ClientStats& s : stats) {
    total.sent += s.sent;
    total.answered += s.answered;
    total.unexpected += s.unexpected;
    total.unreachable += s.unreachable;
    total.latencies_us.insert(total.latencies_us.end(), s.latencies_us.begin(),
                              s.latencies_us.end());
    EXPECT_EQ(s.unexpected + s.unreachable, 0) << s.first_problem;
  }
  std::sort(total.latencies_us.begin(), total.latencies_us.end());
  auto percentile = [&](double p) {
    return total.latencies_us.empty()
               ? 0
               : total.latencies_us[static_cast<size_t>(
                     p * static_cast<double>(total.latencies_us.size() - 1))];
  };
  std::cout << fmt::format(
      "{} clients for {:.1f} s: {} requests scheduled ({} per ms), {} sent, {} answered as "
      "expected, {} "
      "unexpected, {} unreachable; {:.0f} requests/s; latency p50 {} us, p99 {} us, max {} us; "
      "jobs {} run, {} "
      "correct\n",
      kClients, elapsed, static_cast<int64_t>(kClients) * seconds * 1000, kClients, total.sent,
      total.answered, total.unexpected, total.unreachable,
      static_cast<double>(total.answered) / elapsed, percentile(0.5), percentile(0.99),
      percentile(1.0), jobs_run, jobs_correct);
  // Every request sent was answered as expected. How many of the scheduled ones were sent in time
  // depends on the machine (reported above; the daemon answers one at a time on its I/O thread).
  EXPECT_GT(total.sent, 0);
  EXPECT_EQ(total.answered, total.sent);
  EXPECT_GT(jobs_run, 0);
  EXPECT_EQ(jobs_correct, jobs_run);
  // Every client connection is closed again (the server sees the last closes asynchronously).
  const auto closed_by = Clock::now() + std::chrono::seconds(5);
  while (server.open_connections() > 0 && Clock::now() < closed_by) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(server.open_connections(), 0u);

  server.Stop();
  jobs.Shutdown();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace tidemark
