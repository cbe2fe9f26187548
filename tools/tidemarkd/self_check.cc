#include "tools/tidemarkd/self_check.h"

#include <chrono>
#include <exception>

#include "self_check_job.h"

namespace tidemark {
namespace {

/// The last line of `text` (trailing line breaks ignored): `.expected` files end with the report.
std::string LastLine(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  return text.substr(text.rfind('\n') + 1);  // npos + 1 == 0: a single line
}

}  // namespace

SelfCheckResult RunSelfCheck(const JobFactory& factory) {
  SelfCheckResult result;
  const auto start = std::chrono::steady_clock::now();
  try {
    auto job = factory(
        kSelfCheckJobYaml, "self-check/two_splits_split.yaml", [](const std::string&) {},
        DaemonRunOptions{});  // the FIRE lines are not needed
    const JobState state = job->Run();
    if (state != JobState::kFinished) {
      result.detail = std::string("the job ended ") + ToString(state) + ": " + job->failure_cause();
    } else {
      const std::string expected = LastLine(kSelfCheckJobExpected);
      const std::string got = job->ReportLine().value_or("(no report line)");
      result.ok = got == expected;
      result.detail = result.ok ? got : "expected '" + expected + "', got '" + got + "'";
    }
  } catch (const std::exception& e) {
    result.detail = e.what();
  }
  result.elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  return result;
}

}  // namespace tidemark
