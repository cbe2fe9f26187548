// Projection pushdown (issue 44): the fields an exchange carries into a consumer that bounds its
// field use (a window), and that results do not change when unread fields are left out.
#include <algorithm>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "runtime/graph/job_execution.h"
#include "runtime/graph/job_graph.h"
#include "runtime/graph/job_resources.h"
#include "runtime/io/wire_batch.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

// Source rows {user string, ts timestamp, amount int64, page string}, as in events_windowed.
std::string Source() {
  const std::string path = ::testing::TempDir() + "projection_pushdown_events.jsonl";
  std::ofstream(path) << R"({"user":"u","ts":1,"amount":2,"page":"/p"})"
                      << "\n";
  return R"(
name: t
pipeline: {parallelism: 1}
operators:
  - id: source
    type: source
    source:
      type: file
      path: )" +
         path + R"(
      format: jsonl
      schema: {user: string, ts: timestamp, amount: int64, page: string}
    watermarks: {strategy: bounded-out-of-orderness, max-out-of-orderness: 2s, timestamp-field: ts}
)";
}

JobGraph Compile(const std::string& operators) {
  JobResources resources;
  resources.SetLineWriter([](const std::string&) {});
  return CompileJobGraph(LoadJobSpecString(Source() + operators, "t.yaml"), BuiltinRegistry(),
                         resources);
}

// The `fields_read` of the edge from `from` to `to`.
std::optional<std::vector<int>> FieldsRead(const JobGraph& graph, const std::string& from,
                                           const std::string& to) {
  for (const JobEdge& e : graph.edges) {
    if (graph.vertices[static_cast<size_t>(e.from)].spec.id == from &&
        graph.vertices[static_cast<size_t>(e.to)].spec.id == to) {
      return e.fields_read;
    }
  }
  ADD_FAILURE() << "no edge " << from << " -> " << to;
  return std::nullopt;
}

TEST(ProjectionPushdownTest, WindowReadsItsKeysAndAggregateFieldsOnly) {
  const JobGraph graph = Compile(R"(
  - id: windows
    type: window
    input: source
    key-by: user
    window: {assigner: tumbling, size: 10s, aggregate: [count, {fn: sum, field: amount, as: amount}]}
  - id: sink
    type: sink
    input: windows
    sink: {type: checksum}
)");
  // user (key) and amount (sum); not ts (the window uses the record's timestamp), not page.
  EXPECT_EQ(FieldsRead(graph, "source", "windows"), std::optional<std::vector<int>>({0, 2}));
  // The sink reads whole rows.
  EXPECT_EQ(FieldsRead(graph, "windows", "sink"), std::nullopt);
}

TEST(ProjectionPushdownTest, WindowKeyedByAStringAggregatingAnother) {
  const JobGraph graph = Compile(R"(
  - id: windows
    type: window
    input: source
    key-by: page
    window: {assigner: sliding, size: 10s, slide: 5s, aggregate: [{fn: max, field: ts}]}
  - id: sink
    type: sink
    input: windows
    sink: {type: checksum}
)");
  EXPECT_EQ(FieldsRead(graph, "source", "windows"), std::optional<std::vector<int>>({1, 3}));
}

TEST(ProjectionPushdownTest, LateDataSideOutputNeedsEveryField) {
  const JobGraph graph = Compile(R"(
  - id: windows
    type: window
    input: source
    key-by: user
    window:
      assigner: tumbling
      size: 10s
      allowed-lateness: 1s
      late-output: late
      aggregate: [count]
  - id: sink
    type: sink
    input: windows
    sink: {type: checksum}
  - id: late-sink
    type: sink
    input: {from: windows, side-output: late}
    sink: {type: checksum}
)");
  EXPECT_EQ(FieldsRead(graph, "source", "windows"), std::nullopt);
}

TEST(ProjectionPushdownTest, ProcessConsumerGetsEveryField) {
  const JobGraph graph = Compile(R"(
  - id: totals
    type: process
    input: source
    key-by: [user]
    process:
      state: {total: 0}
      on-record:
        set: {total: "total + amount"}
        emit: [user, total]
  - id: sink
    type: sink
    input: totals
    sink: {type: checksum}
)");
  EXPECT_EQ(FieldsRead(graph, "source", "totals"), std::nullopt);
}

TEST(ProjectionPushdownTest, WireBatchLeavesDroppedFieldsOutAsNull) {
  Schema schema;
  schema.Add("user", FieldType::kString);
  schema.Add("ts", FieldType::kTimestamp);
  schema.Add("amount", FieldType::kInt64);
  schema.Add("page", FieldType::kString);
  StreamRecord in;
  in.row.Reset(schema.layout());
  in.row.SetString(0, "alice");
  in.row.SetInt64(1, 1500);
  in.row.SetInt64(2, 42);
  in.row.SetString(3, "/a/long/page/path");
  in.timestamp = 1500;
  in.has_timestamp = true;

  WireBatch wire;
  wire.SetDroppedFields(0b1010, 4);  // ts and page
  wire.Append(in);
  EXPECT_EQ(wire.dropped_fields(), 0b1010u);
  StreamRecord out;
  wire.Decode(0, 1, &out);
  EXPECT_EQ(out.timestamp, 1500);
  EXPECT_TRUE(out.has_timestamp);
  EXPECT_EQ(out.row.GetString(0), "alice");
  EXPECT_TRUE(out.row.IsNull(1));
  EXPECT_EQ(out.row.GetInt64(2), 42);
  EXPECT_TRUE(out.row.IsNull(3));
  // Timestamp + 4 slots, the timestamp-bit word, and the 5 bytes of "alice": no page bytes.
  EXPECT_EQ(wire.WireBytes(), (5 + 1) * sizeof(uint64_t) + 5);

  // A row of another width crosses whole.
  Schema wider = schema;
  wider.Add("extra", FieldType::kInt64);
  StreamRecord w;
  w.row.Reset(wider.layout());
  w.row.SetString(0, "bob");
  w.row.SetInt64(1, 7);
  w.row.SetInt64(2, 8);
  w.row.SetString(3, "/p");
  w.row.SetInt64(4, 9);
  WireBatch other;
  other.SetDroppedFields(0b1010, 4);
  other.Append(w);
  EXPECT_EQ(other.dropped_fields(), 0u);
  StreamRecord back;
  other.Decode(0, 1, &back);
  EXPECT_EQ(back.row.GetString(3), "/p");
  EXPECT_EQ(back.row.GetInt64(1), 7);
}

// End to end: a window job's results with an unused string field equal those without it (and
// the exchange into the window leaves that field out).
std::vector<std::string> RunSequenceJob(bool with_page) {
  const std::string page = with_page ? ", page: /some/page/never/read" : "";
  const std::string yaml = R"(
name: t
pipeline: {clock: virtual, auto-watermark-interval: 100ms}
operators:
  - id: source
    type: source
    source:
      type: sequence
      pacing: 10ms
      splits:
        - {id: a, start: 0s, step: 100ms, count: 30, fields: {k: a, amount: 3)" +
                           page + R"(}}
        - {id: b, start: 1s, step: 100ms, count: 20, fields: {k: b, amount: 5)" +
                           page + R"(}}
    watermarks: {strategy: bounded-out-of-orderness, max-out-of-orderness: 1s, timestamp-field: ts}
  - id: windows
    type: window
    input: source
    key-by: [k]
    window: {assigner: tumbling, size: 1s, aggregate: [count, {fn: sum, field: amount}]}
  - id: out
    type: sink
    input: windows
    sink: {type: collect}
)";
  JobResources resources;
  resources.SetLineWriter([](const std::string&) {});
  JobGraph graph = CompileJobGraph(LoadJobSpecString(yaml, "t.yaml"), BuiltinRegistry(), resources);
  // Source rows {ts, k, amount[, page]}: the window reads k and amount.
  EXPECT_EQ(FieldsRead(graph, "source", "windows"), std::optional<std::vector<int>>({1, 2}));
  JobExecution exec(std::move(graph));
  exec.Start();
  EXPECT_EQ(exec.Wait(), JobState::kFinished);
  std::vector<std::string> rows;
  if (auto sink = resources.FindSinkResult("out")) {
    for (const auto& r : sink->Records()) {
      rows.push_back(sink->schema().RowToJson(r.row));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(ProjectionPushdownTest, WindowResultsUnchangedWithAnUnusedStringField) {
  const std::vector<std::string> with_page = RunSequenceJob(true);
  const std::vector<std::string> without = RunSequenceJob(false);
  EXPECT_EQ(with_page, without);
  // a: 30 records over [0, 3) s, 10 per window; b: 20 over [1, 3) s.
  const std::vector<std::string> expected = {
      R"({"k":"a","window_start":0,"window_end":1000,"count":10,"sum_amount":30})",
      R"({"k":"a","window_start":1000,"window_end":2000,"count":10,"sum_amount":30})",
      R"({"k":"a","window_start":2000,"window_end":3000,"count":10,"sum_amount":30})",
      R"({"k":"b","window_start":1000,"window_end":2000,"count":10,"sum_amount":50})",
      R"({"k":"b","window_start":2000,"window_end":3000,"count":10,"sum_amount":50})",
  };
  EXPECT_EQ(with_page, expected);
}

}  // namespace
}  // namespace tidemark
