#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tidemark::bench {

/// The recipe of a generated events file (issue 17's realistic bench input): `count` JSON lines
/// `{"user":"user_000042","ts":<epoch ms>,"amount":<1..1000>,"page":"/page/<0..63>"}`, users
/// uniform over `users` ids, line i at event time `kStartMs + i` ms plus a jitter uniform in
/// [0, jitter_ms] (so the file is out of order by at most `jitter_ms`, and a bounded-out-of-
/// orderness watermark of `jitter_ms` leaves nothing late). Every value is a pure function of
/// (seed, i): the same recipe gives the same bytes on every machine.
struct EventsFileSpec {
  static constexpr int64_t kStartMs = 1767225600000;  ///< 2026-01-01T00:00:00Z
  int64_t count = 2000000;
  int64_t users = 100000;
  int64_t jitter_ms = 2000;
  uint64_t seed = 1;

  bool operator==(const EventsFileSpec&) const = default;
};

/// The file name that names a recipe: `events-n<count>-u<users>-j<jitter_ms>-s<seed>.jsonl`.
/// A bench job reads such a name; `tidemark bench` writes the file into its data directory when
/// it is missing (the file is large, so it is generated, never committed).
std::string EventsFileName(const EventsFileSpec& spec);

/// The recipe a file name (the last path component of `path`) spells, or nullopt when it is not
/// one (any other name, a count or users < 1, a negative jitter).
std::optional<EventsFileSpec> ParseEventsFileName(const std::string& path);

/// Writes the file to `path` (through a temporary file beside it and a rename, so an interrupted
/// run never leaves a short file behind). Throws std::runtime_error naming the path and the OS
/// reason. About 72 bytes a line; 2,000,000 lines take well under a second.
void WriteEventsFile(const std::string& path, const EventsFileSpec& spec);

/// `dir`/EventsFileName(spec), written first (creating `dir`) when it does not exist yet.
/// Returns the path. Throws like WriteEventsFile.
std::string EnsureEventsFile(const std::string& dir, const EventsFileSpec& spec);

}  // namespace tidemark::bench
