#pragma once

// A job running in this process (LocalJob) whose printed lines a test can wait for, and the `n`
// fields of printed JSON records. Test-only.

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/job_loader.h"
#include "tools/engine/engine.h"

namespace tidemark::testing {

/// Starts the job of `yaml` at construction; the destructor cancels it and waits. The print
/// sinks' lines are collected (thread-safe).
class LiveJob {
 public:
  explicit LiveJob(const std::string& yaml) {
    job_ = LocalJob::Create(LoadJobSpecString(yaml), [this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    });
    job_->execution().Start();
  }
  ~LiveJob() {
    job_->execution().Cancel();
    (void)job_->execution().Wait();
  }
  LiveJob(const LiveJob&) = delete;
  LiveJob& operator=(const LiveJob&) = delete;

  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mu_);
    return lines_;
  }
  /// Waits (at most 30 s) until `pred(lines)` holds.
  template <typename Pred>
  bool WaitFor(Pred pred) {
    for (int i = 0; i < 3000; ++i) {
      if (pred(Lines())) {
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  LocalJob& job() { return *job_; }

 private:
  std::unique_ptr<LocalJob> job_;
  std::mutex mu_;
  std::vector<std::string> lines_;
};

/// The `n` field of every printed JSON object that has one, in order.
inline std::vector<int64_t> Ns(const std::vector<std::string>& printed) {
  std::vector<int64_t> out;
  for (const std::string& line : printed) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("n")) {
      out.push_back(j["n"].get<int64_t>());
    }
  }
  return out;
}

}  // namespace tidemark::testing
