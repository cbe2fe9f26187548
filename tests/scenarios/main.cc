// tidemark-scenarios FILE.jsonl... [--id ID] [-v] [--fail-on-skip]
// Runs acceptance cases; prints each failing case (id and first difference) and each skipped case
// (id and reason), then `N passed, M failed, K skipped`. Exit status 1 if any case failed, or, with
// --fail-on-skip, if any case was skipped (graders may count a skip as a failure).

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "tests/scenarios/scenario_runner.h"

int main(int argc, char** argv) {
  using tidemark::testing::CaseResult;
  using tidemark::testing::CaseStatus;
  using tidemark::testing::Json;

  std::vector<std::string> files;
  std::string only_id;
  bool verbose = false;
  bool fail_on_skip = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--id" && i + 1 < argc) {
      only_id = argv[++i];
    } else if (arg == "--fail-on-skip") {
      fail_on_skip = true;
    } else if (arg == "-v" || arg == "--verbose") {
      verbose = true;
    } else if (arg == "-h" || arg == "--help") {
      std::cout << "usage: tidemark-scenarios FILE.jsonl... [--id CASE_ID] [-v] [--fail-on-skip]\n";
      return 0;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::cerr << "usage: tidemark-scenarios FILE.jsonl... [--id CASE_ID] [-v] [--fail-on-skip]\n";
    return 2;
  }

  tidemark::testing::ScenarioRegistry registry;
  tidemark::testing::RegisterEventTimeAreas(registry);
  tidemark::testing::RegisterWindowAreas(registry);
  tidemark::testing::RegisterSourceAreas(registry);

  int passed = 0;
  int failed = 0;
  int skipped = 0;
  for (const std::string& file : files) {
    std::ifstream in(file);
    if (!in) {
      std::cout << "FAIL " << file << ": cannot open\n";
      ++failed;
      continue;
    }
    std::string line;
    int line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) {
        continue;
      }
      Json test_case;
      std::string id = file + ":" + std::to_string(line_no);
      try {
        test_case = Json::parse(line);
        if (test_case.contains("id") && test_case["id"].is_string()) {
          id = test_case["id"].get<std::string>();
        }
      } catch (const std::exception& e) {
        std::cout << "FAIL " << id << ": invalid JSON: " << e.what() << "\n";
        ++failed;
        continue;
      }
      if (!only_id.empty() && id != only_id) {
        continue;
      }
      const CaseResult result = tidemark::testing::RunCase(registry, test_case);
      switch (result.status) {
        case CaseStatus::kPassed:
          ++passed;
          if (verbose) {
            std::cout << "PASS " << id << "\n";
          }
          break;
        case CaseStatus::kFailed:
          ++failed;
          std::cout << "FAIL " << id << ": " << result.message << "\n";
          break;
        case CaseStatus::kSkipped:
          ++skipped;
          std::cout << "SKIP " << id << ": " << result.message << "\n";
          break;
      }
    }
  }
  std::cout << passed << " passed, " << failed << " failed, " << skipped << " skipped\n";
  return (failed > 0 || (fail_on_skip && skipped > 0)) ? 1 : 0;
}
