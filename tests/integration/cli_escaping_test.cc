// Tester 28/10 h16 and 28/09: the CLI prints strings the daemon answers with that came from
// outside (a report label, a name, a failure cause, log lines) with their control characters
// escaped, so an escape sequence in a job cannot act on the terminal; a job's cause is printed
// after one space ("cause: ...").

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/testing/daemon_harness.h"

namespace tidemark {
namespace {

namespace fs = std::filesystem;

TEST(CliEscapingTest, ReportLabelsAndCausesAreShownWithTheirControlCharactersEscaped) {
  testing::TempDir tmp;
  const std::string socket = tmp.path() + "/d.sock";
  testing::DaemonProcess daemon(
      {"--socket", socket, "--state-dir", tmp.path() + "/state", "--no-self-check"});
  ASSERT_TRUE(daemon.ready()) << daemon.ready_line();
  // YAML's "\e" is ESC: "a<ESC>[2Jb" clears a terminal that prints it raw. The input file's name
  // holds one too, and the failure cause names the file.
  std::ofstream(fs::path(tmp.path()) / "in\x1b[2J.jsonl")
      << "{\"ts\": 1, \"k\": \"a\"}\nnot json\n";
  auto job = [&](const std::string& name, const std::string& errors, const std::string& report) {
    const fs::path path = fs::path(tmp.path()) / (name + ".yaml");
    std::ofstream(path) << "name: " + name +
                               "\n"
                               "operators:\n"
                               "  - id: src\n"
                               "    type: source\n"
                               "    source: {type: file, path: \"" +
                               tmp.path() + "/in\\e[2J.jsonl\", format: jsonl, errors: " + errors +
                               ", schema: {ts: int64, k: string}}\n"
                               "    watermarks: {timestamp-field: ts, max-out-of-orderness: 1s}\n"
                               "  - {id: out, type: sink, input: src, sink: {type: print}}\n" +
                               report;
    return path.string();
  };
  const testing::CliResult ok =
      testing::RunCli(socket,
                      "submit --wait " + job("labelled", "side-output",
                                             "report: {label: \"a\\e[2Jb\", windows-sink: out}\n"),
                      tmp.path());
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.out.find("\n>>> a\\x1b[2Jb: windows fired=1, records in windows=0, late "
                        "records=0, total=0\n"),
            std::string::npos)
      << ok.out;
  EXPECT_EQ(ok.out.find('\x1b'), std::string::npos);
  const std::string ok_id = ok.out.substr(0, ok.out.find('\n'));
  const testing::CliResult ok_status = testing::RunCli(socket, "status " + ok_id, tmp.path());
  EXPECT_EQ(ok_status.rc, 0);
  EXPECT_NE(ok_status.out.find("\nreport: >>> a\\x1b[2Jb: windows fired=1"), std::string::npos)
      << ok_status.out;
  EXPECT_EQ(ok_status.out.find('\x1b'), std::string::npos);

  const testing::CliResult failed =
      testing::RunCli(socket, "submit --wait " + job("failing", "fail", ""), tmp.path());
  EXPECT_EQ(failed.rc, 1) << failed.err;
  const std::string cause =
      "cause: task src -> out#0: operator 'src' failed: bad input (errors: fail): " + tmp.path() +
      "/in\\x1b[2J.jsonl:2 (byte 20): invalid JSON\n";
  EXPECT_NE(failed.err.find(cause), std::string::npos) << failed.err;
  EXPECT_EQ(failed.err.find('\x1b'), std::string::npos);
  const std::string failed_id = failed.out.substr(0, failed.out.find('\n'));
  const testing::CliResult status = testing::RunCli(socket, "status " + failed_id, tmp.path());
  EXPECT_EQ(status.rc, 1);
  EXPECT_NE(status.out.find("\n" + cause), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find('\x1b'), std::string::npos);
}

}  // namespace
}  // namespace tidemark
