#include "runtime/core/logging.h"

#include <cstdlib>

#include <spdlog/sinks/stdout_color_sinks.h>

#include "runtime/core/errors.h"
#include "runtime/core/mutex.h"
#include "runtime/core/thread_entry.h"

namespace tidemark {
namespace {

/// Orders logger creation and level changes (spdlog's registry is thread-safe; this keeps a get
/// and the create after it together).
Mutex& LoggerMutex() {
  static Mutex mu;
  return mu;
}

spdlog::level::level_enum& CurrentLevel() {
  static spdlog::level::level_enum level = [] {
    const char* env = std::getenv("TM_LOG_LEVEL");  // NOLINT(concurrency-mt-unsafe): read once
    return env != nullptr ? spdlog::level::from_str(env) : spdlog::level::warn;
  }();
  return level;
}

}  // namespace

std::shared_ptr<spdlog::logger> GetLogger(const std::string& name) {
  MutexLock lock(LoggerMutex());
  if (auto existing = spdlog::get(name)) {
    return existing;
  }
  // Before the first logger: spdlog's own failures must not throw out of a runtime thread.
  static const bool kHandlerInstalled = [] {
    InstallLoggingErrorHandler();
    return true;
  }();
  (void)kHandlerInstalled;
  auto logger = spdlog::stderr_color_mt(name);
  logger->set_level(CurrentLevel());
  return logger;
}

void SetLogLevel(spdlog::level::level_enum level) {
  MutexLock lock(LoggerMutex());
  CurrentLevel() = level;
  spdlog::apply_all([level](const std::shared_ptr<spdlog::logger>& l) { l->set_level(level); });
}

namespace internal {
void CheckFailed(const char* file, int line, const char* cond, const std::string& msg) {
  spdlog::critical("{}:{}: check failed: {}: {}", file, line, cond, msg);
  std::abort();
}
}  // namespace internal

}  // namespace tidemark
