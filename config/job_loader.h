#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/diagnostic.h"
#include "config/job_spec.h"

namespace tidemark {

class BlockRegistry;

/// Loading a job description: YAML → validated `JobSpec` (config/job_spec.h). The schema is
/// documented key by key in docs/job-reference.md. These are the only entry points that parse YAML;
/// no yaml-cpp type appears in their signatures.
///
/// Every problem is collected first — syntax errors, unknown keys, missing keys, wrong types, bad
/// durations, then graph errors (duplicate ids, edges to unknown operators, cycles, sources with
/// inputs, operators without inputs, sinks feeding other operators, report referring to unknown
/// sinks) — and then thrown together as one `ConfigError` whose lines look like
/// `jobs/wc.yaml:14:7: error: operators[2].window.size: expected a duration like "5s", got 5`.
///
/// Thread-safe (no shared state). Every `SourceLocation` of the result is filled in with `file`
/// as given and the 1-based line and column of the YAML node it came from.

/// Largest job file `ReadJobFile` reads (the daemon's default body limit is 1 MiB).
inline constexpr int64_t kMaxJobFileBytes = int64_t{16} << 20;

/// Deepest nesting of YAML collections in a job (the deepest built-in key is about 6 levels):
/// deeper is an error (`job.yaml:2:40: error: YAML nests deeper than 32 levels`) at the first
/// collection too many, before any node is built.
inline constexpr int kMaxYamlDepth = 32;
/// Most YAML nodes a job may have, counting each use of an alias as a copy of its anchor (so
/// "billion laughs" aliases are an error, not 10^9 nodes to walk).
inline constexpr int64_t kMaxYamlNodes = 1'000'000;

/// Reads the job file at `path` whole. Throws `ConfigError` (`path: error: cannot read the job
/// file: ...`) if it is a directory, cannot be opened or read, or is larger than
/// `kMaxJobFileBytes` (so `/dev/zero` is an error, not an endless read).
std::string ReadJobFile(const std::string& path);

/// Reads (`ReadJobFile`) and loads the file at `path`; `path` is also the file name in diagnostics
/// and in `JobSpec::file`. Throws `ConfigError` if the file cannot be read or the job is invalid.
/// `blocks` reads each `type:`-keyed block (config/block_registry.h); the engine's
/// `BuiltinBlockRegistry()` has every built-in type, and tools/engine/engine.h has overloads of
/// these two functions that use it.
JobSpec LoadJobSpecFile(const std::string& path, const BlockRegistry& blocks);

/// Loads a job from YAML text; `file_name` is used in diagnostics and as `JobSpec::file`.
/// Throws `ConfigError` if the job is invalid, larger than kMaxJobFileBytes, nests deeper than
/// kMaxYamlDepth or has more than kMaxYamlNodes nodes. Time and memory linear in the text.
JobSpec LoadJobSpecString(const std::string& yaml, const std::string& file_name,
                          const BlockRegistry& blocks);

/// Parses a duration with a unit into milliseconds: an integer, optionally preceded by '-', then
/// one of `ms`, `s`, `m` or `min`, `h`, `d`, `us`, `ns` (spaces allowed between number and unit).
/// Sub-millisecond amounts are rejected (`1500us` is fine, `500us` is not). A bare number has no
/// unit and is rejected. Returns nullopt and sets `*error` (if non-null) to a short reason on
/// failure. Exposed for tools that take durations on the command line.
std::optional<int64_t> ParseDurationMs(const std::string& text, std::string* error = nullptr);

/// Parses a memory size as Flink's `MemorySize.parse` does, into bytes: optional whitespace, a
/// whole number (digits only), optional whitespace, then an optional unit, case-insensitive:
/// `b`/`bytes`, `k`/`kb`/`kibibytes`, `m`/`mb`/`mebibytes`, `g`/`gb`/`gibibytes`,
/// `t`/`tb`/`tebibytes`, each 1024 times the one before; no unit means bytes ("134217728").
/// Nothing else (`mib`, `1.5mb`, `-1mb`), and a result above INT64_MAX bytes, returns nullopt and
/// sets `*error` (if non-null) to the reason, ending `got "<text>"`, for a message after the key
/// ("part-size: expected a memory size like \"128mb\" (...), got \"1 mib\"").
std::optional<int64_t> ParseMemorySize(const std::string& text, std::string* error = nullptr);

/// The machine's physical memory in bytes (sysconf); nullopt when unknown.
std::optional<int64_t> PhysicalMemoryBytes();

/// Why `bytes` is no sane memory budget, or "" when it is: a budget key (`memory.fixed-per-slot`,
/// `memory.managed-size`) may not exceed the machine's physical memory, since a budget larger
/// than the machine can hold bounds nothing. The reason reads "must not exceed the machine's
/// physical memory of N MiB (...)" for a diagnostic at the key's value.
std::string MemoryBudgetProblem(int64_t bytes);

}  // namespace tidemark
