#include "tests/testing/kafka_broker.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <stdlib.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "runtime/io/kafka_client.h"
#include "tests/testing/daemon_harness.h"

namespace tidemark::testing {

namespace fs = std::filesystem;

std::string SharedKafkaBroker() {
  const char* state = std::getenv("TM_KAFKA_BROKER_STATE");  // NOLINT(concurrency-mt-unsafe)
  if (state == nullptr) {
    ADD_FAILURE() << "TM_KAFKA_BROKER_STATE is not set: run through ctest (fixture kafka_broker)";
    return "";
  }
  std::string address = ReadFile((fs::path(state) / "bootstrap").string());
  while (!address.empty() && (address.back() == '\n' || address.back() == ' ')) {
    address.pop_back();
  }
  EXPECT_FALSE(address.empty()) << "no broker: " << state << "/bootstrap is missing "
                                << "(tools/dev/kafka-broker.sh start did not run or failed)";
  return address;
}

std::string UniqueTopic(const std::string& base) {
  static std::atomic<int> counter{0};
  const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
  return fmt::format("{}-{}-{}-{}", base, ::getpid(), counter++, ns);
}

namespace {

KafkaHandle Client(const std::string& bootstrap, rd_kafka_type_t type,
                   std::map<std::string, std::string> extra = {}) {
  extra["bootstrap.servers"] = bootstrap;
  extra.emplace("log_level", "2");
  return MakeKafkaHandle(type, MakeKafkaConf(extra));
}

// Waits (at most 30 s) for the answer to an admin request about one topic on `q` and asserts it
// succeeded; `result_topics(event, &n)` is the request's accessor of its topic results.
template <typename ResultTopics>
void ExpectTopicDone(rd_kafka_queue_t* q, const std::string& topic, const char* request,
                     ResultTopics result_topics) {
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, 30000);
  ASSERT_NE(ev, nullptr) << "no answer to " << request << " " << topic;
  size_t n = 0;
  const rd_kafka_topic_result_t** results = result_topics(ev, &n);
  const rd_kafka_resp_err_t result =
      n == 1 ? rd_kafka_topic_result_error(results[0]) : rd_kafka_event_error(ev);
  rd_kafka_event_destroy(ev);
  ASSERT_EQ(result, RD_KAFKA_RESP_ERR_NO_ERROR) << topic << ": " << rd_kafka_err2str(result);
}

}  // namespace

void CreateTopic(const std::string& bootstrap, const std::string& topic, int partitions) {
  KafkaHandle admin = Client(bootstrap, RD_KAFKA_PRODUCER);
  char err[512];
  rd_kafka_NewTopic_t* nt = rd_kafka_NewTopic_new(topic.c_str(), partitions, 1, err, sizeof err);
  ASSERT_NE(nt, nullptr) << err;
  KafkaQueue q(rd_kafka_queue_new(admin.get()));
  rd_kafka_CreateTopics(admin.get(), &nt, 1, nullptr, q.get());
  rd_kafka_NewTopic_destroy(nt);
  ExpectTopicDone(q.get(), topic, "CreateTopics", [](rd_kafka_event_t* ev, size_t* n) {
    return rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), n);
  });
  if (::testing::Test::HasFatalFailure()) {
    return;
  }
  // The controller answered; wait until the broker's metadata has a leader for every partition.
  const bool ready = Eventually(
      [&] {
        const rd_kafka_metadata_t* md = nullptr;
        if (rd_kafka_metadata(admin.get(), 1, nullptr, &md, 5000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
          return false;
        }
        bool ok = false;
        for (int t = 0; t < md->topic_cnt; ++t) {
          if (topic == md->topics[t].topic && md->topics[t].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
              md->topics[t].partition_cnt == partitions) {
            ok = std::all_of(md->topics[t].partitions, md->topics[t].partitions + partitions,
                             [](const rd_kafka_metadata_partition_t& p) { return p.leader >= 0; });
          }
        }
        rd_kafka_metadata_destroy(md);
        return ok;
      },
      std::chrono::seconds(30));
  ASSERT_TRUE(ready) << "topic " << topic << " has no leader after 30 s";
}

void DeleteTopic(const std::string& bootstrap, const std::string& topic) {
  KafkaHandle admin = Client(bootstrap, RD_KAFKA_PRODUCER);
  rd_kafka_DeleteTopic_t* dt = rd_kafka_DeleteTopic_new(topic.c_str());
  KafkaQueue q(rd_kafka_queue_new(admin.get()));
  rd_kafka_DeleteTopics(admin.get(), &dt, 1, nullptr, q.get());
  rd_kafka_DeleteTopic_destroy(dt);
  ExpectTopicDone(q.get(), topic, "DeleteTopics", [](rd_kafka_event_t* ev, size_t* n) {
    return rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), n);
  });
}

void Produce(const std::string& bootstrap, const std::string& topic, int32_t partition,
             const std::vector<std::pair<std::string, int64_t>>& values) {
  KafkaHandle p = Client(bootstrap, RD_KAFKA_PRODUCER);
  for (const auto& [value, ts] : values) {
    ASSERT_EQ(
        rd_kafka_producev(p.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                          RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                          RD_KAFKA_V_TIMESTAMP(ts), RD_KAFKA_V_END),
        RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ASSERT_EQ(rd_kafka_flush(p.get(), 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
}

void ProduceSeries(const std::string& bootstrap, const std::string& topic, int32_t partition,
                   int first, int count, int64_t ts0, int64_t step) {
  std::vector<std::pair<std::string, int64_t>> values;
  for (int k = 0; k < count; ++k) {
    const int64_t ts = ts0 + k * step;
    values.emplace_back(fmt::format(R"({{"n":{},"p":{},"ts":{}}})", first + k, partition, ts), ts);
  }
  Produce(bootstrap, topic, partition, values);
}

int64_t EndOffset(const std::string& bootstrap, const std::string& topic, int32_t partition,
                  const std::string& isolation_level) {
  KafkaHandle c =
      Client(bootstrap, RD_KAFKA_CONSUMER,
             {{"group.id", "tidemark-test-end-offset"}, {"isolation.level", isolation_level}});
  int64_t lo = 0;
  int64_t hi = 0;
  const rd_kafka_resp_err_t err =
      rd_kafka_query_watermark_offsets(c.get(), topic.c_str(), partition, &lo, &hi, 10000);
  EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR)
      << topic << "-" << partition << ": " << rd_kafka_err2str(err);
  return err == RD_KAFKA_RESP_ERR_NO_ERROR ? hi : -1;
}

int64_t CommittedOffset(const std::string& bootstrap, const std::string& group,
                        const std::string& topic, int32_t partition) {
  KafkaHandle c = Client(bootstrap, RD_KAFKA_CONSUMER, {{"group.id", group}});
  KafkaPartitionList list(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
  const rd_kafka_resp_err_t err = rd_kafka_committed(c.get(), list.get(), 10000);
  EXPECT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
  return list->elems[0].offset;
}

PrivateKafkaBroker::PrivateKafkaBroker() {
  std::string tmpl = (fs::temp_directory_path() / "tidemark-kafka-state-XXXXXX").string();
  state_ = ::mkdtemp(tmpl.data());
  EXPECT_EQ(Script("start"), 0) << "tools/dev/kafka-broker.sh start failed";
  bootstrap_ = ReadFile((state_ / "bootstrap").string());
  while (!bootstrap_.empty() && bootstrap_.back() == '\n') {
    bootstrap_.pop_back();
  }
}

PrivateKafkaBroker::~PrivateKafkaBroker() {
  Script("stop");
  std::error_code ec;
  fs::remove_all(state_, ec);
}

void PrivateKafkaBroker::Halt() {
  EXPECT_EQ(Script("halt"), 0);
}

void PrivateKafkaBroker::Resume() {
  EXPECT_EQ(Script("resume"), 0);
}

int PrivateKafkaBroker::Script(const std::string& command) const {
  // The tests run in the source tree (WORKING_DIRECTORY), where the script is.
  const std::string cmd =
      fmt::format("KAFKA_BROKER_STATE='{}' bash tools/dev/kafka-broker.sh {} >/dev/null",
                  state_.string(), command);
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string KafkaRecordsJob(const std::string& bootstrap, const std::string& source_extra,
                            const std::string& top_extra) {
  return fmt::format(R"(name: kafka-records
{}operators:
  - id: source
    type: source
    source:
      type: kafka
      bootstrap-servers: "{}"
      schema: {{n: int64, p: int64, ts: timestamp}}
{}
  - id: out
    type: sink
    input: source
    sink: {{type: print, format: json}}
)",
                     top_extra, bootstrap, source_extra);
}

std::string ExactlyOnceCountsJob(const std::string& name, const std::string& bootstrap,
                                 const std::string& topic, const fs::path& dir,
                                 const std::string& interval, const std::string& top_extra) {
  return fmt::format(R"(name: {name}
pipeline:
  parallelism: 1
checkpointing:
  interval: {interval}
  dir: {dir}/chk
{top_extra}operators:
  - id: source
    type: source
    source: {{type: datagen, splits: 2, count: 40000, rate: 20000, keys: 40, seed: 7}}
    watermarks: {{strategy: bounded-out-of-orderness, max-out-of-orderness: 0ms, timestamp-field: ts}}
  - id: windows
    type: window
    input: source
    key-by: key
    window: {{assigner: tumbling, size: 100ms, aggregate: [count]}}
  - id: sink
    type: sink
    input: windows
    sink:
      type: kafka
      bootstrap-servers: "{bootstrap}"
      topic: {topic}
      key-field: key
      delivery-guarantee: exactly-once
      transactional-id-prefix: {topic}
      commit-log: {dir}/commits.jsonl
)",
                     fmt::arg("name", name), fmt::arg("interval", interval),
                     fmt::arg("dir", dir.string()), fmt::arg("top_extra", top_extra),
                     fmt::arg("bootstrap", bootstrap), fmt::arg("topic", topic));
}

pid_t SpawnTidemark(const std::vector<std::string>& args, const fs::path& out, const fs::path& err,
                    const std::vector<std::string>& env) {
  const std::string bin = (ToolsDir() / "tidemark").string();
  std::vector<std::string> all = {bin};
  all.insert(all.end(), args.begin(), args.end());
  // Built before the fork: the child of a threaded process only execs.
  std::vector<std::string> environment = env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('=') + 1);
    if (std::none_of(env.begin(), env.end(),
                     [&](const std::string& own) { return own.starts_with(name); })) {
      environment.emplace_back(entry);
    }
  }
  std::vector<char*> argv;
  for (std::string& a : all) {
    argv.push_back(a.data());
  }
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& e : environment) {
    envp.push_back(e.data());
  }
  envp.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int out_fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err_fd =
        err == out ? out_fd : ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    ::execve(bin.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

bool WaitStopped(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, WUNTRACED) != pid) {
    ADD_FAILURE() << "waitpid " << pid << " failed";
    return false;
  }
  if (WIFSTOPPED(status)) {
    return true;
  }
  ADD_FAILURE() << "tidemark (pid " << pid << ") ended before it stopped: "
                << (WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status))
                                      : fmt::format("signal {}", WTERMSIG(status)));
  return false;
}

int WaitExit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int64_t LatestCheckpoint(const fs::path& dir) {
  int64_t latest = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("chk-") && fs::exists(e.path() / "_metadata")) {
      latest = std::max<int64_t>(latest, std::stoll(name.substr(4)));
    }
  }
  return latest;
}

}  // namespace tidemark::testing
