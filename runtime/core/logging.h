#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

#include "config/diagnostic.h"

namespace tidemark {

/// Named loggers per subsystem (`daemon`, `config`, `graph`, `task`, `source`), never the default
/// logger. Thread-safe. The level comes from `TM_LOG_LEVEL` (default `warn`; `info` for tools that
/// call `SetDefaultLogLevel`).
std::shared_ptr<spdlog::logger> GetLogger(const std::string& name);

/// Sets the level of every tidemark logger made from now on and of the existing ones.
void SetLogLevel(spdlog::level::level_enum level);

// EscapeControlCharacters (names from outside in log lines): config/diagnostic.h.

}  // namespace tidemark
