// Rescaling through the `tidemark` binary (issue 45): `tidemark run --from-checkpoint` of a
// retained checkpoint taken at parallelism 2, at parallelism 1 and 3. The plain file sink (at
// parallelism 1) cuts its file back to the checkpoint's length and appends, so the file after the
// restored run holds exactly the uninterrupted run's rows.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "tests/testing/daemon_harness.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;

std::string Job(const fs::path& dir, int parallelism, const std::string& name) {
  std::string yaml = R"yaml(name: cli-rescale
pipeline: {parallelism: @P@, clock: virtual, auto-watermark-interval: 50ms}
checkpointing: {interval: 100ms, num-retained: 100, dir: @DIR@/@NAME@}
operators:
  - id: source
    type: source
    source:
      type: sequence
      pacing: 10ms
      splits:
        - {id: s0, start: 0ms, step: 100ms, count: 120, fields: {n: 0}}
        - {id: s1, start: 30ms, step: 70ms, count: 170, fields: {n: 1}}
        - {id: s2, start: 60ms, step: 130ms, count: 90, fields: {n: 2}}
        - {id: s3, start: 10ms, step: 50ms, count: 240, fields: {n: 3}}
    watermarks: {max-out-of-orderness: 0ms, timestamp-field: ts}
  - id: keyed
    type: map
    input: source
    map: {set: {user: "MOD(ts / 100 * 7 + n, 13)"}}
  - id: windows
    type: window
    input: keyed
    key-by: [user]
    window: {assigner: tumbling, size: 1s, aggregate: [count, {fn: sum, field: n, as: ns}]}
  - id: out
    type: sink
    input: windows
    parallelism: 1
    sink: {type: file, path: @DIR@/out.jsonl}
)yaml";
  for (const auto& [token, value] :
       {std::pair<std::string, std::string>{"@P@", std::to_string(parallelism)},
        {"@DIR@", dir.string()},
        {"@NAME@", name}}) {
    for (size_t at = yaml.find(token); at != std::string::npos; at = yaml.find(token)) {
      yaml.replace(at, token.size(), value);
    }
  }
  return yaml;
}

std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    lines.push_back(l);
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

int RunTidemark(const std::string& args, const fs::path& dir) {
  const std::string cmd =
      fmt::format("'{}' run {} >'{}/run.out' 2>'{}/run.err'",
                  (testing::ToolsDir() / "tidemark").string(), args, dir.string(), dir.string());
  const int status = std::system(cmd.c_str());  // NOLINT(concurrency-mt-unsafe)
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(CliRescaleTest, ARetainedCheckpointRestoresAtOneAndThree) {
  testing::TempDir tmp;
  const fs::path dir(tmp.path());
  for (int p : {1, 2, 3}) {
    std::ofstream(dir / fmt::format("p{}.yaml", p)) << Job(dir, p, fmt::format("chk{}", p));
  }
  ASSERT_EQ(RunTidemark((dir / "p2.yaml").string(), dir), 0)
      << ReadFile((dir / "run.err").string());
  const std::vector<std::string> uninterrupted =
      SortedLines(ReadFile((dir / "out.jsonl").string()));
  ASSERT_EQ(uninterrupted.size(), 156u);
  ASSERT_TRUE(fs::exists(dir / "chk2" / "chk-6" / "_metadata"));

  for (int p : {1, 3}) {
    SCOPED_TRACE(fmt::format("parallelism {}", p));
    ASSERT_EQ(RunTidemark(fmt::format("'{}' --from-checkpoint '{}'",
                                      (dir / fmt::format("p{}.yaml", p)).string(),
                                      (dir / "chk2" / "chk-6").string()),
                          dir),
              0)
        << ReadFile((dir / "run.err").string());
    EXPECT_EQ(SortedLines(ReadFile((dir / "out.jsonl").string())), uninterrupted);
  }

  // Another max-parallelism: refused, exit 2, nothing written.
  std::string wider = Job(dir, 3, "chk4");
  wider.replace(wider.find("parallelism: 3,"), 15, "parallelism: 3, max-parallelism: 64,");
  std::ofstream(dir / "p4.yaml") << wider;
  EXPECT_EQ(RunTidemark(fmt::format("'{}' --from-checkpoint '{}'", (dir / "p4.yaml").string(),
                                    (dir / "chk2" / "chk-6").string()),
                        dir),
            2);
  EXPECT_NE(ReadFile((dir / "run.err").string())
                .find("was checkpointed with max-parallelism 128 and has max-parallelism 64 here"),
            std::string::npos)
      << ReadFile((dir / "run.err").string());
  EXPECT_EQ(SortedLines(ReadFile((dir / "out.jsonl").string())), uninterrupted);
}

}  // namespace
}  // namespace tidemark
