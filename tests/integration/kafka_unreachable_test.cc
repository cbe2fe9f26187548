// A Kafka source whose brokers never answer (issue 40): partition discovery gives up after
// `default.api.timeout.ms` (the Kafka client property Flink's KafkaSource hands its AdminClient;
// 60 s by default) and the job fails naming the brokers, as Flink's KafkaSourceEnumerator fails
// with "Failed to list subscribed topic partitions". Nothing listens on 127.0.0.1:1, so no broker
// is needed.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/testing/daemon_harness.h"
#include "tests/testing/kafka_broker.h"
#include "tools/daemon/daemon_client.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;

std::string UnreachableJob(const std::string& timeout) {
  return fmt::format(R"(name: unreachable
operators:
  - id: source
    type: source
    source:
      type: kafka
      bootstrap-servers: "127.0.0.1:1"
      topics: [orders]
      bounded: latest
      schema: {{n: int64}}
      properties: {{default.api.timeout.ms: "{}"}}
  - id: out
    type: sink
    input: source
    sink: {{type: print, format: json}}
)",
                     timeout);
}

constexpr const char* kCause =
    "task source -> out#0: operator 'source' failed: Failed to list subscribed topic partitions: "
    "no answer from the Kafka brokers at 127.0.0.1:1 within 2000 ms (default.api.timeout.ms)";

std::string LastLine(const std::string& text) {
  const std::string t = text.substr(0, text.find_last_not_of('\n') + 1);
  return t.substr(t.rfind('\n') + 1);
}

TEST(KafkaUnreachableTest, TidemarkRunExitsOneAfterTheTimeoutNamingTheBrokers) {
  testing::TempDir tmp;
  const fs::path job = fs::path(tmp.path()) / "job.yaml";
  std::ofstream(job) << UnreachableJob("2000");
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = testing::SpawnTidemark({"run", job.string()}, fs::path(tmp.path()) / "out",
                                           fs::path(tmp.path()) / "err");
  EXPECT_EQ(testing::WaitExit(pid), 1);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(2000));
  EXPECT_LT(took, std::chrono::milliseconds(10000));
  const std::string err = ReadFile(tmp.path() + "/err");
  EXPECT_EQ(LastLine(err), fmt::format("job 'unreachable' FAILED: {}", kCause)) << err;
  EXPECT_EQ(ReadFile(tmp.path() + "/out"), "");
}

TEST(KafkaUnreachableTest, StatusShowsTheCause) {
  testing::TempDir tmp;
  const std::string socket = tmp.path() + "/d.sock";
  testing::DaemonProcess daemon({"--socket", socket, "--no-self-check"});
  ASSERT_TRUE(daemon.ready()) << daemon.ready_line();
  DaemonClient client(DaemonEndpoint{socket, "", ""});
  auto r = client.Request("POST", "/jobs?file=unreachable.yaml", UnreachableJob("2000"));
  ASSERT_EQ(r.status, 202) << r.body;
  const std::string id = nlohmann::json::parse(r.body).at("jid").get<std::string>();
  ASSERT_TRUE(testing::Eventually(
      [&] {
        auto j = nlohmann::json::parse(client.Request("GET", "/jobs/" + id).body, nullptr, false);
        return j.is_object() && j.value("state", "") == "FAILED";
      },
      std::chrono::seconds(20)));
  testing::CliResult status = testing::RunCli(socket, "status " + id, tmp.path());
  EXPECT_NE(status.out.find(fmt::format("\ncause: {}\n", kCause)), std::string::npos) << status.out;
}

TEST(KafkaUnreachableTest, ATimeoutThatIsNotMillisecondsIsAJobError) {
  testing::TempDir tmp;
  const fs::path job = fs::path(tmp.path()) / "job.yaml";
  std::ofstream(job) << UnreachableJob("soon");
  const pid_t pid = testing::SpawnTidemark({"run", job.string()}, fs::path(tmp.path()) / "out",
                                           fs::path(tmp.path()) / "err");
  EXPECT_EQ(testing::WaitExit(pid), 2);
  EXPECT_EQ(
      LastLine(ReadFile(tmp.path() + "/err")),
      fmt::format("{}:3:5: error: operators[0].source: Kafka property 'default.api.timeout.ms': "
                  "expected milliseconds as a whole number from 1 to 2147483647, got \"soon\"",
                  job.string()));
}

}  // namespace
}  // namespace tidemark
