#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <spdlog/spdlog.h>

namespace tidemark {

/// Named loggers per subsystem (`daemon`, `config`, `graph`, `task`, `source`), never the default
/// logger. Thread-safe. The level comes from `TM_LOG_LEVEL` (default `warn`; `info` for tools that
/// call `SetDefaultLogLevel`).
std::shared_ptr<spdlog::logger> GetLogger(const std::string& name);

/// Sets the level of every tidemark logger made from now on and of the existing ones.
void SetLogLevel(spdlog::level::level_enum level);

/// `text` with every control character (below 0x20, and 0x7f) and every backslash escaped as
/// `\n`, `\r`, `\t`, `\\` or `\xNN`: a name from outside (a job file name, `?file=`) written
/// into a log line or a SQL comment stays on that one line and cannot forge another. Pure.
std::string EscapeControlCharacters(std::string_view text);

}  // namespace tidemark
