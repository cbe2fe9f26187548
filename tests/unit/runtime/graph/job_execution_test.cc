#include "runtime/graph/job_execution.h"

#include <algorithm>
#include <chrono>
#include <new>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "runtime/core/thread_entry.h"
#include "runtime/graph/job_resources.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

/// Throws on the record whose timestamp is `boom_at`.
class ExplodingOperator : public StreamOperator {
 public:
  explicit ExplodingOperator(Timestamp boom_at, bool out_of_memory = false)
      : boom_at_(boom_at), out_of_memory_(out_of_memory) {}
  void ProcessElement(StreamRecord& record, int) override {
    if (record.timestamp == boom_at_) {
      if (out_of_memory_) {
        throw std::bad_alloc();
      }
      throw Error("boom at " + std::to_string(record.timestamp));
    }
    output().Collect(record);
  }

 private:
  Timestamp boom_at_;
  bool out_of_memory_;
};

OperatorRegistry RegistryWithExplode(bool out_of_memory = false) {
  OperatorRegistry r = BuiltinRegistry();
  r.Register("explode", [out_of_memory](const CompileContext& ctx) {
    CompiledOperator out;
    out.output_schema = ctx.input_schemas.front();
    out.factory = [out_of_memory](int, int) {
      return std::make_unique<ExplodingOperator>(1200, out_of_memory);
    };
    return out;
  });
  return r;
}

std::string SequenceJob(int source_parallelism, int window_parallelism,
                        const std::string& extra_pipeline = "", const std::string& middle = "") {
  return R"(
name: t
pipeline:
  clock: virtual
  auto-watermark-interval: 100ms
)" + extra_pipeline +
         R"(
operators:
  - id: source
    type: source
    parallelism: )" +
         std::to_string(source_parallelism) + R"(
    source:
      type: sequence
      pacing: 10ms
      splits:
        - {id: a, start: 0s, step: 100ms, count: 50, fields: {k: a}}
        - {id: b, start: 1s, step: 100ms, count: 50, fields: {k: b}}
        - {id: c, start: 2s, step: 100ms, count: 50, fields: {k: c}}
        - {id: d, start: 3s, step: 100ms, count: 50, fields: {k: d}}
    watermarks: {strategy: bounded-out-of-orderness, max-out-of-orderness: 10s, timestamp-field: ts}
)" + middle +
         R"(
  - id: windows
    type: window
    input: )" +
         (middle.empty() ? "source" : "mid") + R"(
    parallelism: )" +
         std::to_string(window_parallelism) + R"(
    key-by: [k]
    window: {assigner: tumbling, size: 1s, aggregate: [count]}
  - id: out
    type: sink
    input: windows
    sink: {type: collect}
)";
}

std::vector<std::string> RunAndCollect(const std::string& yaml, const OperatorRegistry& registry,
                                       JobState* state, std::string* cause = nullptr) {
  JobResources resources;
  resources.SetLineWriter([](const std::string&) {});
  JobSpec spec = LoadJobSpecString(yaml, "t.yaml");
  for (auto& op : spec.operators) {
    if (op.id == "mid") {
      op.type = "explode";  // a test-only operator type, registered in RegistryWithExplode()
    }
  }
  JobGraph graph = CompileJobGraph(spec, registry, resources);
  JobExecution exec(std::move(graph));
  exec.Start();
  *state = exec.Wait();
  if (cause != nullptr) {
    *cause = exec.failure_cause();
  }
  std::vector<std::string> rows;
  if (auto sink = resources.FindSinkResult("out")) {
    for (const auto& r : sink->Records()) {
      rows.push_back(sink->schema().RowToJson(r.row));
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

TEST(JobExecutionTest, ResultsDoNotChangeWithParallelism) {
  JobState s1;
  JobState s2;
  auto p1 = RunAndCollect(SequenceJob(1, 1), BuiltinRegistry(), &s1);
  auto p2 = RunAndCollect(SequenceJob(2, 2), BuiltinRegistry(), &s2);
  ASSERT_EQ(s1, JobState::kFinished);
  ASSERT_EQ(s2, JobState::kFinished);
  // 4 splits x 5 s of data, 10 records per 1 s window.
  ASSERT_EQ(p1.size(), 20u);
  EXPECT_EQ(p1, p2);
  EXPECT_NE(std::find(p1.begin(), p1.end(),
                      R"({"k":"c","window_start":4000,"window_end":5000,"count":10})"),
            p1.end());
}

TEST(JobExecutionTest, TinyChannelsApplyBackpressureWithoutLosingRecords) {
  JobState s;
  auto rows = RunAndCollect(SequenceJob(2, 1, "  channel-capacity: 4\n"), BuiltinRegistry(), &s);
  ASSERT_EQ(s, JobState::kFinished);
  EXPECT_EQ(rows.size(), 20u);
}

// An operator `mid` after the source, made an "explode" one by RunAndCollect.
constexpr const char* kExplodingMiddle = R"(
  - id: mid
    type: assign-timestamps-and-watermarks
    input: source
    watermarks: {strategy: none}
)";

TEST(JobExecutionTest, OperatorExceptionFailsTheJobWithItsName) {
  JobState s;
  std::string cause;
  RunAndCollect(SequenceJob(1, 1, "", kExplodingMiddle), RegistryWithExplode(), &s, &cause);
  EXPECT_EQ(s, JobState::kFailed);
  EXPECT_NE(cause.find("operator 'mid' failed: boom at 1200"), std::string::npos) << cause;
}

TEST(JobExecutionTest, AllocationFailureInAnOperatorFailsTheJobNamingTheMemoryLimit) {
  JobState s;
  std::string cause;
  RunAndCollect(SequenceJob(1, 1, "", kExplodingMiddle),
                RegistryWithExplode(/*out_of_memory=*/true), &s, &cause);
  EXPECT_EQ(s, JobState::kFailed);
  EXPECT_EQ(cause, "task source -> mid#0: operator 'mid' failed: " +
                       OutOfMemoryCause(AddressSpaceLimitBytes()));
}

TEST(JobExecutionTest, CancelEndsALongJobQuickly) {
  const std::string yaml = R"(
name: long
pipeline: {clock: system}
operators:
  - id: source
    type: source
    source:
      type: sequence
      pacing: 5ms
      splits: [{id: a, start: 0s, step: 1ms, count: 1000000}]
  - id: out
    type: sink
    input: source
    sink: {type: collect}
)";
  JobResources resources;
  JobExecution exec(
      CompileJobGraph(LoadJobSpecString(yaml, "long.yaml"), BuiltinRegistry(), resources));
  exec.Start();
  EXPECT_FALSE(exec.WaitFor(std::chrono::milliseconds(50)));
  const auto t0 = std::chrono::steady_clock::now();
  exec.Cancel();
  EXPECT_EQ(exec.Wait(), JobState::kCanceled);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
}

TEST(JobGraphTest, AllRecordsWindowIsNotChainedAndRunsWithParallelismOne) {
  JobResources resources;
  JobGraph g =
      CompileJobGraph(LoadJobSpecFile("jobs/two_splits_split.yaml"), BuiltinRegistry(), resources);
  ASSERT_EQ(g.vertices.size(), 4u);
  const JobVertex* windows = nullptr;
  for (const auto& v : g.vertices) {
    if (v.spec.id == "windows") {
      windows = &v;
    }
  }
  ASSERT_NE(windows, nullptr);
  EXPECT_EQ(windows->parallelism, 1);
  auto inputs = g.InputsOf(windows->id);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0]->partitioning, Partitioning::kHash);
  EXPECT_FALSE(g.IsChained(*inputs[0]));
}

// InputsOf/OutputsOf read an index of the edges once CompileJobGraph built it (a long chain
// compiled in quadratic time before); the index gives the edges a scan gives, in edge order, and
// an edge added after indexing is still seen (the lookups scan again until IndexEdges re-runs).
TEST(JobGraphTest, EdgeLookupsListEachVertexsEdgesInEdgeOrder) {
  const std::string yaml = R"(
name: fan
pipeline: {parallelism: 1}
operators:
  - id: s
    type: source
    source: {type: sequence, splits: [{id: a, start: 0s, step: 1ms, count: 1}]}
  - {id: low, type: filter, input: s, filter: "ts < 5"}
  - {id: high, type: filter, input: s, filter: "ts >= 5"}
  - {id: both, type: union, inputs: [high, low]}
  - {id: out, type: sink, input: both, sink: {type: collect}}
)";
  JobResources resources;
  JobGraph g = CompileJobGraph(LoadJobSpecString(yaml, "fan.yaml"), BuiltinRegistry(), resources);
  const auto ids = [&g](const std::vector<const JobEdge*>& edges, bool from) {
    std::vector<std::string> out;
    for (const JobEdge* e : edges) {
      out.push_back(g.vertices[static_cast<size_t>(from ? e->from : e->to)].spec.id);
    }
    return out;
  };
  const auto vertex = [&g](const std::string& id) {
    for (const JobVertex& v : g.vertices) {
      if (v.spec.id == id) {
        return v.id;
      }
    }
    return -1;
  };
  EXPECT_EQ(ids(g.OutputsOf(vertex("s")), false), (std::vector<std::string>{"low", "high"}));
  EXPECT_EQ(ids(g.InputsOf(vertex("both")), true), (std::vector<std::string>{"high", "low"}));
  EXPECT_EQ(ids(g.InputsOf(vertex("out")), true), (std::vector<std::string>{"both"}));
  EXPECT_TRUE(g.InputsOf(vertex("s")).empty());
  EXPECT_TRUE(g.OutputsOf(vertex("out")).empty());
  EXPECT_TRUE(g.IsChained(*g.InputsOf(vertex("out"))[0]));

  JobEdge extra;
  extra.from = vertex("low");
  extra.to = vertex("out");
  g.edges.push_back(extra);
  EXPECT_EQ(ids(g.InputsOf(vertex("out")), true), (std::vector<std::string>{"both", "low"}));
  EXPECT_FALSE(g.IsChained(*g.InputsOf(vertex("out"))[0]));  // two inputs now
  g.IndexEdges();
  EXPECT_EQ(ids(g.OutputsOf(vertex("low")), false), (std::vector<std::string>{"both", "out"}));
}

TEST(JobGraphTest, UnknownOperatorTypeIsAnErrorAtItsLine) {
  const std::string yaml =
      "name: x\noperators:\n"
      "  - id: s\n    type: source\n    source: {type: sequence, splits: [{id: a, start: 0s, step: "
      "1ms, count: 1}]}\n"
      "  - id: m\n    type: mapp\n    input: s\n";
  JobResources resources;
  try {
    CompileJobGraph(LoadJobSpecString(yaml, "x.yaml"), BuiltinRegistry(), resources);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_EQ(std::string(e.what()).rfind(
                  "x.yaml:7:11: error: operators[1].type: unknown operator type 'mapp'", 0),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace tidemark
