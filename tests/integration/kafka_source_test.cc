// The Kafka source (issue 13) on librdkafka's in-process mock cluster: per-partition watermarks,
// starting offsets (timestamp through the look-up seam: the mock cannot answer
// offsets_for_times), bounded mode on empty topics / partitions / more readers than partitions,
// idleness, alignment pausing without loss, a broker down for 3 s, partition discovery, offsets
// in snapshots and commits on checkpoint completion (a failed commit counted, reading goes on).
// Jobs with `bounded` run on the virtual clock and are exact; the rest wait for their data,
// never for a fixed time (but the broker-down test, whose 3 s are the point).

#include "sources/kafka/kafka_source.h"

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "config/job_loader.h"
#include "runtime/io/kafka_client.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/kafka_broker.h"
#include "tests/testing/live_job.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

using namespace std::chrono_literals;

using testing::LiveJob;
using testing::Ns;
using testing::Produce;
using testing::ProduceSeries;

struct JobRun {
  JobState state = JobState::kCreated;
  std::string cause;
  std::vector<std::string> printed;
  std::optional<std::string> report;
};

JobRun RunYaml(const std::string& yaml) {
  JobRun r;
  auto job = LocalJob::Create(LoadJobSpecString(yaml),
                              [&r](const std::string& line) { r.printed.push_back(line); });
  job->execution().Start();
  r.state = job->execution().Wait();
  r.cause = job->execution().failure_cause();
  r.report = job->ReportLine();
  return r;
}

// A job printing every record as JSON (bounded ones run on the virtual clock).
std::string RecordsJob(const std::string& servers, const std::string& source_extra,
                       int parallelism = 1, bool virtual_clock = true) {
  return testing::KafkaRecordsJob(servers, source_extra,
                                  fmt::format("pipeline: {{parallelism: {}{}}}\n", parallelism,
                                              virtual_clock ? ", clock: virtual" : ""));
}

// Each test's own mock cluster, with helpers to make topics and fill partitions.
class KafkaSourceJobTest : public ::testing::Test {
 protected:
  const std::string& servers() const { return mock_.bootstrap_servers(); }
  // Creates `topic` with `partitions` partitions and fills each partition p listed in `series`
  // with series[p] = {first n, count, first ts, ts step} (ProduceSeries).
  struct Series {
    int32_t partition;
    int first;
    int count;
    int64_t ts0;
    int64_t step;
  };
  void Topic(const std::string& topic, int partitions, const std::vector<Series>& series = {}) {
    mock_.CreateTopic(topic, partitions);
    for (const Series& s : series) {
      ProduceSeries(servers(), topic, s.partition, s.first, s.count, s.ts0, s.step);
    }
  }
  // Topic w: partition 0 fast (event time 100 s on), partition 1 slow (1 s on), 100 records each.
  void FastAndSlowPartitions() {
    Topic("w", 2, {{0, 0, 100, 100000, 100}, {1, 1000, 100, 1000, 100}});
  }

  KafkaMockCluster mock_;
};

std::vector<int64_t> Range(int64_t a, int64_t b) {
  std::vector<int64_t> v;
  for (int64_t i = a; i < b; ++i) {
    v.push_back(i);
  }
  return v;
}

TEST_F(KafkaSourceJobTest, BoundedLatestReadsEveryRecordRoundRobinExactly) {
  Topic("t", 2, {{0, 0, 3, 1000, 10}, {1, 100, 2, 1000, 10}});
  const JobRun r = RunYaml(RecordsJob(servers(), "      topics: [t]\n      bounded: latest"));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  // Partitions t-0, t-1 round-robin, t-0 alone once t-1 ended.
  EXPECT_EQ(Ns(r.printed), (std::vector<int64_t>{0, 100, 1, 101, 2}));
}

// Issue 42: a Kafka record without a timestamp was reported at "line 0"; it is its partition and
// offset. With `errors: fail` the first one fails the job, naming them.
TEST_F(KafkaSourceJobTest, ErrorsFailNamesThePartitionAndOffsetOfTheBadRecord) {
  Topic("e", 1);
  Produce(servers(), "e", 0, {{R"({"n":0,"p":0,"ts":1000})", 1000}, {R"({"n":1,"p":0})", 2000}});
  const JobRun r = RunYaml(RecordsJob(servers(),
                                      "      topics: [e]\n      bounded: latest\n"
                                      "      errors: fail\n"
                                      "    watermarks: {max-out-of-orderness: 0ms, "
                                      "timestamp-field: ts}"));
  EXPECT_EQ(r.state, JobState::kFailed);
  EXPECT_EQ(
      r.cause,
      "task source -> out#0: operator 'source' failed: bad input (errors: fail): partition e-0 "
      "offset 1: no timestamp: field 'ts' is missing or NULL");
}

TEST_F(KafkaSourceJobTest, StartingOffsets) {
  Topic("t", 2, {{0, 0, 10, 1000, 10}, {1, 100, 10, 1000, 10}});
  const std::string s = servers();
  {
    const JobRun r = RunYaml(RecordsJob(s,
                                        "      topics: [t]\n      bounded: latest\n"
                                        "      starting-offsets: latest"));
    ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
    EXPECT_TRUE(Ns(r.printed).empty());
  }
  {
    const JobRun r = RunYaml(RecordsJob(s,
                                        "      topics: [t]\n      bounded: latest\n"
                                        "      starting-offsets: specific\n"
                                        "      starting-specific-offsets: {t-0: 7}\n"
                                        "      starting-offsets-reset: latest"));
    ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
    EXPECT_EQ(Ns(r.printed), (std::vector<int64_t>{7, 8, 9}));  // t-1 not listed: its end
  }
  {
    // Committed offsets of the group: t-0 at 4, t-1 none (→ reset earliest).
    KafkaHandle c = MakeKafkaHandle(RD_KAFKA_CONSUMER,
                                    MakeKafkaConf({{"bootstrap.servers", s}, {"group.id", "g1"}}));
    {
      KafkaPartitionList list(rd_kafka_topic_partition_list_new(1));
      rd_kafka_topic_partition_list_add(list.get(), "t", 0)->offset = 4;
      ASSERT_EQ(rd_kafka_commit(c.get(), list.get(), 0), RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    c.reset();
    const JobRun r = RunYaml(RecordsJob(s,
                                        "      topics: [t]\n      bounded: latest\n"
                                        "      group-id: g1\n      starting-offsets: committed"));
    ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
    std::vector<int64_t> ns = Ns(r.printed);
    std::sort(ns.begin(), ns.end());
    std::vector<int64_t> want = Range(4, 10);
    for (int64_t n : Range(100, 110)) {
      want.push_back(n);
    }
    EXPECT_EQ(ns, want);
  }
  {
    const JobRun r =
        RunYaml(RecordsJob(s,
                           "      topics: [t]\n      bounded: latest\n"
                           "      group-id: nobody\n      starting-offsets: committed\n"
                           "      starting-offsets-reset: none"));
    EXPECT_EQ(r.state, JobState::kFailed);
    EXPECT_NE(r.cause.find("has no committed offset and starting-offsets-reset is none"),
              std::string::npos)
        << r.cause;
  }
}

TEST_F(KafkaSourceJobTest, BoundedEndsOnEmptyTopicEmptyPartitionsAndMoreReadersThanPartitions) {
  Topic("empty", 3);
  Topic("some", 2, {{1, 0, 5, 1000, 10}});  // some-0 stays empty
  {
    const JobRun r = RunYaml(RecordsJob(servers(), "      topics: [empty]\n      bounded: latest"));
    ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
    EXPECT_TRUE(Ns(r.printed).empty());
  }
  for (int parallelism : {1, 4}) {
    const JobRun r = RunYaml(
        RecordsJob(servers(), "      topics: [some, empty]\n      bounded: latest", parallelism));
    ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
    std::vector<int64_t> ns = Ns(r.printed);
    std::sort(ns.begin(), ns.end());
    EXPECT_EQ(ns, Range(0, 5)) << "parallelism " << parallelism;
  }
  // A topic that does not exist fails the job with its name.
  const JobRun r = RunYaml(RecordsJob(servers(), "      topics: [nope]\n      bounded: latest"));
  EXPECT_EQ(r.state, JobState::kFailed);
  EXPECT_NE(r.cause.find("Kafka topic 'nope' does not exist"), std::string::npos) << r.cause;
}

// Windows over a fast partition (event time 100 s on) and a slow one (0 s on), one reader.
std::string WindowsJob(const std::string& servers, const std::string& watermarks_extra,
                       const std::string& sink = "{type: print, format: fire}") {
  return fmt::format(R"(name: kafka-windows
pipeline: {{parallelism: 1, clock: virtual, auto-watermark-interval: 100ms}}
operators:
  - id: source
    type: source
    source:
      type: kafka
      bootstrap-servers: "{}"
      topics: [w]
      bounded: latest
      pacing: 10ms
      schema: {{n: int64, p: int64, ts: timestamp}}
    watermarks:
      strategy: bounded-out-of-orderness
      max-out-of-orderness: 0ms
{}
  - id: windows
    type: window
    input: source
    window: {{assigner: tumbling, size: 1s, late-output: late, aggregate: [count]}}
  - id: fired
    type: sink
    input: windows
    sink: {}
  - id: late
    type: sink
    inputs: [{{from: windows, side-output: late}}]
    sink: {{type: collect}}
  - id: seen
    type: sink
    input: source
    sink: {{type: print, format: json}}
report:
  label: kafka
  windows-sink: fired
  late-sink: late
)",
                     servers, watermarks_extra, sink);
}

TEST_F(KafkaSourceJobTest, PerPartitionWatermarkNeverMakesTheSlowPartitionLate) {
  // Flink's KafkaSourceITCase#testPerPartitionWatermark: the fast partition alone would put the
  // watermark 100 s ahead of the slow one's records.
  FastAndSlowPartitions();
  const JobRun r = RunYaml(WindowsJob(servers(), ""));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  ASSERT_TRUE(r.report.has_value());
  EXPECT_EQ(*r.report,
            ">>> kafka: windows fired=20, records in windows=200, late records=0, total=200");
}

TEST_F(KafkaSourceJobTest, AlignmentPausesThePartitionFarAheadAndLosesNothing) {
  FastAndSlowPartitions();
  const JobRun r = RunYaml(
      WindowsJob(servers(), "      alignment: {group: g, max-drift: 1s, update-interval: 100ms}"));
  ASSERT_EQ(r.state, JobState::kFinished) << r.cause;
  ASSERT_TRUE(r.report.has_value());
  EXPECT_EQ(*r.report,
            ">>> kafka: windows fired=20, records in windows=200, late records=0, total=200");
  // Without the pause the reader alternates w-0, w-1 (runs of 1); paused, w-1 runs alone.
  const std::vector<int64_t> ns = Ns(r.printed);
  ASSERT_EQ(ns.size(), 200u);
  size_t longest = 0;
  size_t run = 0;
  for (int64_t n : ns) {
    run = n >= 1000 ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  EXPECT_GE(longest, 50u);
  std::vector<int64_t> sorted = ns;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> want = Range(0, 100);
  for (int64_t n : Range(1000, 1100)) {
    want.push_back(n);
  }
  EXPECT_EQ(sorted, want);
}

TEST_F(KafkaSourceJobTest, ASilentPartitionGoesIdleAndWindowsFire) {
  Topic("w", 2, {{0, 0, 100, 10000, 100}});  // w-1 stays silent
  const std::string yaml = fmt::format(R"(name: kafka-idle
pipeline: {{parallelism: 1, clock: virtual, auto-watermark-interval: 100ms}}
operators:
  - id: source
    type: source
    source:
      type: kafka
      bootstrap-servers: "{}"
      topics: [w]
      schema: {{n: int64, p: int64, ts: timestamp}}
    watermarks: {{strategy: bounded-out-of-orderness, max-out-of-orderness: 0ms, idleness: 1s}}
  - id: windows
    type: window
    input: source
    window: {{assigner: tumbling, size: 1s, aggregate: [count]}}
  - id: fired
    type: sink
    input: windows
    sink: {{type: print, format: fire}}
)",
                                       servers());
  LiveJob job(yaml);
  // Records 10 .. 19.9 s: with w-1 idle the watermark reaches 19.899 s, so [10 s, 19 s) fire with
  // 10 records each. Without idleness w-1 would hold the watermark at MIN for ever.
  ASSERT_TRUE(job.WaitFor([](const std::vector<std::string>& lines) {
    for (const std::string& l : lines) {
      if (l.find("window=[18s,19s)") != std::string::npos) {
        return true;
      }
    }
    return false;
  })) << fmt::format("{}", fmt::join(job.Lines(), "\n"));
  const std::vector<std::string> lines = job.Lines();
  ASSERT_GE(lines.size(), 9u);
  for (int w = 0; w < 9; ++w) {
    EXPECT_NE(lines[static_cast<size_t>(w)].find(
                  fmt::format("window=[{}s,{}s) count=10", w + 10, w + 11)),
              std::string::npos)
        << lines[static_cast<size_t>(w)];
  }
}

TEST_F(KafkaSourceJobTest, ANewPartitionIsDiscovered) {
  Topic("disc-a", 1, {{0, 0, 3, 1000, 10}});
  const std::string yaml = RecordsJob(
      servers(), "      topic-pattern: \"disc-.*\"\n      partition-discovery-interval: 100ms", 1,
      false);
  LiveJob job(yaml);
  ASSERT_TRUE(job.WaitFor([](const std::vector<std::string>& l) { return Ns(l).size() == 3; }));
  Topic("disc-b", 1, {{0, 100, 2, 1000, 10}});
  ASSERT_TRUE(job.WaitFor([](const std::vector<std::string>& l) { return Ns(l).size() == 5; }))
      << fmt::format("{}", fmt::join(job.Lines(), "\n"));
  EXPECT_EQ(Ns(job.Lines()), (std::vector<int64_t>{0, 1, 2, 100, 101}));
}

TEST_F(KafkaSourceJobTest, ABrokerDownForThreeSecondsLosesAndRepeatsNothing) {
  Topic("b", 1, {{0, 0, 50, 1000, 10}});
  const std::string yaml =
      RecordsJob(servers(),
                 "      topics: [b]\n      bounded: specific\n"
                 "      bounded-specific-offsets: {b-0: 100}\n"
                 "      properties: {fetch.wait.max.ms: \"20\", reconnect.backoff.max.ms: \"200\"}",
                 1, false);
  auto job = std::make_unique<LiveJob>(yaml);
  ASSERT_TRUE(job->WaitFor([](const std::vector<std::string>& l) { return Ns(l).size() == 50; }));
  mock_.SetBrokerUp(1, false);
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(Ns(job->Lines()).size(), 50u);  // nothing while down, and no failure:
  EXPECT_EQ(job->job().execution().state(), JobState::kRunning);
  mock_.SetBrokerUp(1, true);
  ProduceSeries(servers(), "b", 0, 50, 50, 2000, 10);
  EXPECT_EQ(job->job().execution().Wait(), JobState::kFinished)
      << job->job().execution().failure_cause();
  EXPECT_EQ(Ns(job->Lines()), Range(0, 100));
}

// The input topic deleted mid-run (the mock's metadata reports it unknown): the job fails naming
// the topic and partition once it stayed missing for topic.metadata.propagation.max.ms; the
// restart strategy applies, and the restarted attempt finds the topic missing at its start.
TEST_F(KafkaSourceJobTest, ADeletedTopicFailsTheJobAndTheRestartFindsItMissing) {
  Topic("gone", 2, {{0, 0, 5, 1000, 10}, {1, 100, 5, 1000, 10}});
  const std::string source =
      "      topics: [gone]\n      bounded: specific\n"
      "      bounded-specific-offsets: {gone-0: 10, gone-1: 10}\n"
      "      properties: {topic.metadata.refresh.interval.ms: \"100\", "
      "topic.metadata.propagation.max.ms: \"300\"}";
  for (const bool restart : {false, true}) {
    SCOPED_TRACE(restart ? "restart" : "no restart");
    if (restart) {
      rd_kafka_mock_topic_set_error(mock_.raw(), "gone", RD_KAFKA_RESP_ERR_NO_ERROR);
    }
    testing::LiveJob job(testing::KafkaRecordsJob(
        servers(), source,
        restart ? "restart-strategy: {type: fixed-delay, attempts: 1, delay: 100ms}\n" : ""));
    ASSERT_TRUE(job.WaitFor([](const std::vector<std::string>& l) { return Ns(l).size() == 10; }))
        << job.job().execution().failure_cause();
    rd_kafka_mock_topic_set_error(mock_.raw(), "gone", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
    EXPECT_EQ(job.job().execution().Wait(), JobState::kFailed);
    const std::string cause = job.job().execution().failure_cause();
    if (restart) {
      EXPECT_EQ(job.job().execution().restarts(), 1);
      EXPECT_NE(cause.find(fmt::format("Kafka topic 'gone' does not exist at {}", servers())),
                std::string::npos)
          << cause;
    } else {
      EXPECT_TRUE(std::regex_search(
          cause,
          std::regex("Kafka topic 'gone' partition [01] no longer exists at .* \\(deleted\\?\\)")))
          << cause;
    }
  }
}

// ---- the reader alone: snapshots, restore, commits, the timestamp seam ----

class FakeOutput : public ReaderOutput {
 public:
  struct Split : SourceOutput {
    std::vector<std::pair<Row, Timestamp>>* rows;
    void Collect(Row row) override { rows->emplace_back(std::move(row), kMinTimestamp); }
    void Collect(Row row, Timestamp ts) override { rows->emplace_back(std::move(row), ts); }
    void EmitWatermark(Watermark) override {}
    void MarkIdle() override {}
    void MarkActive() override {}
  };
  void Collect(Row row) override { rows.emplace_back(std::move(row), kMinTimestamp); }
  void Collect(Row row, Timestamp ts) override { rows.emplace_back(std::move(row), ts); }
  void EmitWatermark(Watermark) override {}
  void MarkIdle() override {}
  void MarkActive() override {}
  SourceOutput& CreateOutputForSplit(const std::string& id) override {
    auto& s = splits[id];
    s.rows = &rows;
    return s;
  }
  void ReleaseOutputForSplit(const std::string& id) override { released.insert(id); }
  void EmitError(const SourceError& e) override { errors.push_back(e); }

  std::vector<std::pair<Row, Timestamp>> rows;
  std::map<std::string, Split> splits;
  std::set<std::string> released;
  std::vector<SourceError> errors;
};

class FakeContext : public SourceReaderContext {
 public:
  int subtask_index() const override { return 0; }
  int parallelism() const override { return 1; }
  ProcessingTimeService& processing_time() override { return time; }
  void WakeUpAt(Timestamp) override {}
  ManualProcessingTimeService time;
};

// Polls until `n` rows were emitted in all (or 30 s passed).
void PollUntil(SourceReader& reader, FakeOutput& out, size_t n) {
  for (int i = 0; i < 30000 && out.rows.size() < n; ++i) {
    if (reader.PollNext(out) != InputStatus::kMoreAvailable) {
      std::this_thread::sleep_for(1ms);
    }
  }
}

// Polls until the end of input (or 30 s passed); the last status.
InputStatus PollToEnd(SourceReader& reader, FakeOutput& out) {
  InputStatus status = InputStatus::kNothingAvailable;
  for (int i = 0; i < 30000 && status != InputStatus::kEndOfInput; ++i) {
    status = reader.PollNext(out);
    if (status == InputStatus::kNothingAvailable) {
      std::this_thread::sleep_for(1ms);
    }
  }
  return status;
}

std::map<std::string, int64_t> Gauges(const SourceReader& reader) {
  MetricsWriter w;
  reader.CollectMetrics(w);
  std::map<std::string, int64_t> m;
  for (const auto& [k, v] : w.gauges()) {
    m[k] = v;
  }
  return m;
}

SourceSpec ReaderSpec(const std::string& servers, const std::string& extra) {
  const JobSpec job = LoadJobSpecString(RecordsJob(servers, "      topics: [r]\n" + extra));
  return *job.operators.front().source;
}

using KafkaSourceReaderTest = KafkaSourceJobTest;

TEST_F(KafkaSourceReaderTest, SnapshotRestoreContinuesAfterTheLastRecordAndCommitsOnCompletion) {
  Topic("r", 1, {{0, 0, 10, 1000, 10}});
  KafkaSource source(ReaderSpec(servers(), "      group-id: g\n"));
  FakeContext ctx;
  std::string state;
  {
    auto reader = source.CreateReader(0);
    reader->Start(ctx);
    FakeOutput out;
    PollUntil(*reader, out, 4);
    ASSERT_EQ(out.rows.size(), 4u);
    EXPECT_EQ(std::get<int64_t>(out.rows[3].first.Get(0)), 3);
    EXPECT_EQ(out.rows[3].second, 1030);  // the record's CreateTime is the source timestamp
    auto splits = reader->SnapshotState(1);
    ASSERT_EQ(splits.size(), 1u);
    EXPECT_EQ(splits[0]->SplitId(), "r-0");
    StateWriter w;
    splits[0]->WriteTo(w);
    state = w.Release();
    reader->NotifyCheckpointComplete(1);
    for (int i = 0; i < 3000 && Gauges(*reader)["commitsSucceeded"] == 0; ++i) {
      (void)reader->PollNext(out);
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(Gauges(*reader)["commitsSucceeded"], 1);
    EXPECT_EQ(Gauges(*reader)["split.r-0.committedOffset"], 4);
    // A failed commit is counted; the reader reads on.
    rd_kafka_mock_push_request_errors(mock_.raw(), 8 /* OffsetCommit */, 1,
                                      RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS);
    PollUntil(*reader, out, 6);
    (void)reader->SnapshotState(2);
    reader->NotifyCheckpointComplete(2);
    for (int i = 0; i < 3000 && Gauges(*reader)["commitsFailed"] == 0; ++i) {
      (void)reader->PollNext(out);
      std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(Gauges(*reader)["commitsFailed"], 1);
    EXPECT_EQ(Gauges(*reader)["split.r-0.committedOffset"], 4);
    PollUntil(*reader, out, 10);
    EXPECT_EQ(out.rows.size(), 10u);
    reader->Close();
  }
  // Restore from checkpoint 1: records 4.. again, not from the committed offset of the group.
  StateReader r(state);
  std::vector<std::unique_ptr<SourceSplit>> restored;
  restored.push_back(source.RestoreSplit(r));
  auto reader = source.CreateReader(0);
  reader->Start(ctx);
  reader->AddSplits(std::move(restored));
  FakeOutput out;
  PollUntil(*reader, out, 6);
  ASSERT_EQ(out.rows.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(std::get<int64_t>(out.rows[i].first.Get(0)), static_cast<int64_t>(4 + i));
  }
  for (int i = 0; i < 50; ++i) {  // nothing more, no duplicate
    (void)reader->PollNext(out);
  }
  EXPECT_EQ(out.rows.size(), 6u);
  reader->Close();
}

// Under the system clock a partition's fetched messages are emitted as a run, partitions
// interleaved as they were fetched: each partition's records still come in offset order, and a
// snapshot taken between two polls holds for every partition the offset after its last record
// emitted (what a restore and the commit rely on), whatever the interleaving was.
TEST_F(KafkaSourceReaderTest, SnapshotHoldsEachPartitionsOffsetAfterItsLastRecordEmitted) {
  Topic("r", 3, {{0, 0, 40, 1000, 10}, {1, 100, 40, 1000, 10}, {2, 200, 40, 1000, 10}});
  KafkaSource source(ReaderSpec(servers(), ""));
  FakeContext ctx;
  auto reader = source.CreateReader(0);
  reader->Start(ctx);
  FakeOutput out;
  // Per partition (n / 100), the records emitted so far: its next n must be the next one.
  auto check_order = [&out](std::vector<int64_t>& emitted) {
    emitted.assign(3, 0);
    for (const auto& [row, ts] : out.rows) {
      const int64_t n = std::get<int64_t>(row.Get(0));
      const auto p = static_cast<size_t>(n / 100);
      ASSERT_LT(p, 3u);
      EXPECT_EQ(n, static_cast<int64_t>(p) * 100 + emitted[p]) << "partition " << p;
      ++emitted[p];
    }
  };
  PollUntil(*reader, out, 70);
  ASSERT_EQ(out.rows.size(), 70u);
  std::vector<int64_t> emitted;
  check_order(emitted);
  std::vector<std::unique_ptr<SourceSplit>> splits = reader->SnapshotState(1);
  ASSERT_EQ(splits.size(), 3u);
  // (A partition none of whose records was emitted yet is still at the logical `earliest`.)
  std::map<std::string, std::pair<int64_t, int64_t>> positions;  // next offset, records
  std::map<std::string, std::pair<int64_t, int64_t>> want;
  for (size_t p = 0; p < 3; ++p) {
    want[fmt::format("r-{}", p)] = {emitted[p] > 0 ? emitted[p] : RD_KAFKA_OFFSET_BEGINNING,
                                    emitted[p]};
  }
  for (const auto& split : splits) {
    const auto* kafka = dynamic_cast<const KafkaSplit*>(split.get());
    ASSERT_NE(kafka, nullptr);
    positions[kafka->SplitId()] = {kafka->position().next_offset, kafka->position().records};
  }
  EXPECT_EQ(positions, want);
  PollUntil(*reader, out, 120);
  ASSERT_EQ(out.rows.size(), 120u);
  check_order(emitted);
  EXPECT_EQ(emitted, (std::vector<int64_t>{40, 40, 40}));
  reader->Close();
}

TEST_F(KafkaSourceReaderTest, TimestampStartAndBadValuesToErrors) {
  Topic("r", 1);
  Produce(servers(), "r", 0,
          {{R"({"n":0,"p":0,"ts":1})", 1000},
           {"not json", 2000},
           {R"({"n":"two"})", 3000},
           {R"({"n":3,"p":0,"ts":4})", 4000}});
  KafkaSource source(
      ReaderSpec(servers(),
                 "      starting-offsets: timestamp\n      starting-timestamp: 1500\n"
                 "      bounded: latest\n"));
  std::vector<int64_t> asked;
  source.SetTimestampLookup(
      [&asked](rd_kafka_t*, const std::string& topic, int32_t partition, int64_t ts) {
        EXPECT_EQ(topic, "r");
        EXPECT_EQ(partition, 0);
        asked.push_back(ts);
        return int64_t{1};  // the first record at or after 1500 ms
      });
  FakeContext ctx;
  auto reader = source.CreateReader(0);
  reader->Start(ctx);
  FakeOutput out;
  ASSERT_EQ(PollToEnd(*reader, out), InputStatus::kEndOfInput);
  EXPECT_EQ(asked, (std::vector<int64_t>{1500}));
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(out.rows[0].first.Get(0)), 3);
  ASSERT_EQ(out.errors.size(), 2u);
  EXPECT_EQ(out.errors[0].split_id, "r-0");
  // A Kafka record has no line: its partition and offset say where it was read.
  EXPECT_EQ(out.errors[0].line, 0);
  EXPECT_EQ(out.errors[0].offset, 1);
  EXPECT_EQ(out.errors[0].unit, OffsetUnit::kRecord);
  EXPECT_EQ(out.errors[0].text, "not json");
  EXPECT_EQ(out.errors[1].offset, 2);
  EXPECT_EQ(out.errors[1].Place(),
            "partition r-0 offset 2: field \"n\": expected int64, got \"two\"");
  // Its row: no line (NULL), the record's offset.
  EXPECT_EQ(SourceErrorSchema().RowToJson(SourceErrorRow(out.errors[1])),
            "{\"split\":\"r-0\",\"line\":null,\"offset\":2,\"reason\":\"field \\\"n\\\": expected "
            "int64, got \\\"two\\\"\",\"text\":\"{\\\"n\\\":\\\"two\\\"}\"}");
  EXPECT_EQ(out.released, (std::set<std::string>{"r-0"}));
  reader->Close();
}

// ---- a topic deleted under a running reader (the mock reports it unknown in its metadata) ----

// librdkafka sees the topic gone at its next metadata refresh (every 100 ms here); the grace
// (topic.metadata.propagation.max.ms) counts on the reader's clock, which the test moves.
constexpr const char* kMissingProps =
    "      properties: {topic.metadata.refresh.interval.ms: \"100\", "
    "topic.metadata.propagation.max.ms: \"2000\"}\n";

// Polls (the reader's clock still) until `pred()` holds or 30 s passed.
template <typename Pred>
bool PollWhile(SourceReader& reader, FakeOutput& out, Pred pred) {
  for (int i = 0; i < 30000 && !pred(); ++i) {
    (void)reader.PollNext(out);
    std::this_thread::sleep_for(1ms);
  }
  return pred();
}

TEST_F(KafkaSourceReaderTest, ADeletedTopicFailsTheReaderAfterTheGraceAndItClosesAtOnce) {
  Topic("r", 2, {{0, 0, 5, 1000, 10}, {1, 100, 5, 1000, 10}});
  auto source = std::make_unique<KafkaSource>(
      ReaderSpec(servers(),
                 "      bounded: specific\n"
                 "      bounded-specific-offsets: {r-0: 10, r-1: 10}\n" +
                     std::string(kMissingProps)));
  // (Generous: the close must end, not be left behind by the safety net.)
  source->SetCloseTimeoutForTesting(20s);
  const int64_t leaked = KafkaSource::LeakedConsumers();
  FakeContext ctx;
  auto reader = source->CreateReader(0);
  reader->Start(ctx);
  FakeOutput out;
  PollUntil(*reader, out, 10);
  ASSERT_EQ(out.rows.size(), 10u);
  rd_kafka_mock_topic_set_error(mock_.raw(), "r", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  // Reported missing: nothing fails while the reader's clock stands still, however long.
  ASSERT_TRUE(PollWhile(*reader, out, [&] { return Gauges(*reader)["partitionsMissing"] == 2; }))
      << "partitionsMissing " << Gauges(*reader)["partitionsMissing"];
  ctx.time.AdvanceBy(1999);
  for (int i = 0; i < 200; ++i) {
    ASSERT_NO_THROW((void)reader->PollNext(out));
  }
  // The grace has passed: the next metadata answer that still does not list it fails the reader.
  ctx.time.AdvanceBy(1);
  std::string failure;
  for (int i = 0; i < 30000 && failure.empty(); ++i) {
    try {
      (void)reader->PollNext(out);
      std::this_thread::sleep_for(1ms);
    } catch (const IoError& e) {
      failure = e.what();
    }
  }
  EXPECT_TRUE(std::regex_match(
      failure,
      std::regex(
          "Kafka topic 'r' partition [01] no longer exists at 127\\.0\\.0\\.1:[0-9]+ "
          "\\(deleted\\?\\): librdkafka reported \"r \\[[01]\\]: .*\" and the brokers' "
          "metadata has not listed it for 2000 ms \\(topic\\.metadata\\.propagation\\.max\\.ms\\); "
          "5 records of it were read, up to offset 4")))
      << failure;
  EXPECT_EQ(out.rows.size(), 10u);
  // The consumer closes: without draining the partition queues rd_kafka_destroy waits for ever
  // for the broker thread that the deleted partitions (kept alive by the error ops left in their
  // queues) still reference, and the source's destructor leaves it behind after the timeout.
  reader->Close();
  reader.reset();
  source.reset();
  EXPECT_EQ(KafkaSource::LeakedConsumers(), leaked);
}

TEST_F(KafkaSourceReaderTest, ATopicMissingForAMomentIsReadOnWithNothingLostOrRepeated) {
  Topic("r", 1, {{0, 0, 5, 1000, 10}});
  KafkaSource source(ReaderSpec(servers(),
                                "      bounded: specific\n"
                                "      bounded-specific-offsets: {r-0: 10}\n" +
                                    std::string(kMissingProps)));
  FakeContext ctx;
  auto reader = source.CreateReader(0);
  reader->Start(ctx);
  FakeOutput out;
  PollUntil(*reader, out, 5);
  ASSERT_EQ(out.rows.size(), 5u);
  rd_kafka_mock_topic_set_error(mock_.raw(), "r", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  ASSERT_TRUE(PollWhile(*reader, out, [&] { return Gauges(*reader)["partitionsMissing"] == 1; }));
  rd_kafka_mock_topic_set_error(mock_.raw(), "r", RD_KAFKA_RESP_ERR_NO_ERROR);
  ProduceSeries(servers(), "r", 0, 5, 5, 2000, 10);
  PollUntil(*reader, out, 10);
  ASSERT_EQ(out.rows.size(), 10u);
  // Settled (listed again, or records again), so time passing later fails nothing.
  ASSERT_TRUE(PollWhile(*reader, out, [&] { return Gauges(*reader)["partitionsMissing"] == 0; }));
  ctx.time.AdvanceBy(10000);
  EXPECT_EQ(PollToEnd(*reader, out), InputStatus::kEndOfInput);
  std::vector<int64_t> ns;
  for (const auto& [row, ts] : out.rows) {
    ns.push_back(std::get<int64_t>(row.Get(0)));
  }
  EXPECT_EQ(ns, Range(0, 10));
  reader->Close();
}

// The safety net: a consumer whose close does not end (here a hook that blocks) holds the
// source's destructor for the close timeout only; it is left to its thread and counted.
TEST_F(KafkaSourceReaderTest, AConsumerWhoseCloseDoesNotEndIsLeftBehindAfterTheTimeout) {
  Topic("r", 1);
  auto source = std::make_unique<KafkaSource>(ReaderSpec(servers(), ""));
  source->SetCloseTimeoutForTesting(100ms);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  KafkaHandle consumer = MakeKafkaHandle(
      RD_KAFKA_CONSUMER, MakeKafkaConf({{"bootstrap.servers", servers()}, {"group.id", "g"}}));
  const int64_t leaked = KafkaSource::LeakedConsumers();
  std::shared_future<void> closed =
      source->CloseInBackground(std::move(consumer), nullptr, {}, [released] { released.wait(); });
  source.reset();  // returns although the close has not ended
  EXPECT_EQ(KafkaSource::LeakedConsumers(), leaked + 1);
  EXPECT_NE(closed.wait_for(0s), std::future_status::ready);
  release.set_value();
  closed.wait();  // the detached thread finishes the close (before the mock cluster stops)
}

TEST(KafkaSourceTest, OwnerIsFlinksEnumeratorAssignment) {
  // ((hash("t") * 31) & 0x7fffffff) % n, then + partition: "t".hashCode() = 116.
  EXPECT_EQ(KafkaSource::OwnerOf("t", 0, 4), (116 * 31) % 4);
  EXPECT_EQ(KafkaSource::OwnerOf("t", 1, 4), ((116 * 31) % 4 + 1) % 4);
  // "orders".hashCode() = -1008770331 (Java); * 31 wraps.
  const int32_t h = -1008770331;
  const int64_t start = (static_cast<int64_t>(static_cast<uint32_t>(h) * 31u) & 0x7fffffff) % 3;
  EXPECT_EQ(KafkaSource::OwnerOf("orders", 2, 3), (start + 2) % 3);
}

}  // namespace
}  // namespace tidemark
