#include "tools/bench/events_data.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <system_error>
#include <unistd.h>
#include <vector>

#include <fmt/format.h>

#include "runtime/core/checksum.h"

namespace tidemark::bench {

std::string EventsFileName(const EventsFileSpec& spec) {
  return fmt::format("events-n{}-u{}-j{}-s{}.jsonl", spec.count, spec.users, spec.jitter_ms,
                     spec.seed);
}

std::optional<EventsFileSpec> ParseEventsFileName(const std::string& path) {
  static const std::regex kName(
      R"(events-n([0-9]{1,12})-u([0-9]{1,12})-j([0-9]{1,12})-s([0-9]{1,12})\.jsonl)");
  const std::string name = std::filesystem::path(path).filename().string();
  std::smatch m;
  if (!std::regex_match(name, m, kName)) {
    return std::nullopt;
  }
  EventsFileSpec spec;
  spec.count = std::stoll(m[1].str());
  spec.users = std::stoll(m[2].str());
  spec.jitter_ms = std::stoll(m[3].str());
  spec.seed = std::stoull(m[4].str());
  if (spec.count < 1 || spec.users < 1) {
    return std::nullopt;
  }
  return spec;
}

void WriteEventsFile(const std::string& path, const EventsFileSpec& spec) {
  const std::string tmp = fmt::format("{}.{}.tmp", path, getpid());
  std::FILE* out = std::fopen(tmp.c_str(), "wb");
  if (out == nullptr) {
    throw std::runtime_error(
        fmt::format("{}: cannot create: {}", tmp, std::generic_category().message(errno)));
  }
  fmt::memory_buffer buf;
  bool ok = true;
  const uint64_t base = Mix64(spec.seed * 0x9E3779B97F4A7C15ULL);
  for (int64_t i = 0; i < spec.count && ok; ++i) {
    const uint64_t r = Mix64(base ^ static_cast<uint64_t>(i));
    const uint64_t r2 = Mix64(r);
    const int64_t user = static_cast<int64_t>(r % static_cast<uint64_t>(spec.users));
    const int64_t jitter =
        static_cast<int64_t>((r >> 17) % static_cast<uint64_t>(spec.jitter_ms + 1));
    const int64_t amount = 1 + static_cast<int64_t>(r2 % 1000);
    const int64_t page = static_cast<int64_t>((r2 >> 32) % 64);
    fmt::format_to(std::back_inserter(buf),
                   "{{\"user\":\"user_{:06}\",\"ts\":{},\"amount\":{},\"page\":\"/page/{}\"}}\n",
                   user, EventsFileSpec::kStartMs + i + jitter, amount, page);
    if (buf.size() > (1 << 20)) {
      ok = std::fwrite(buf.data(), 1, buf.size(), out) == buf.size();
      buf.clear();
    }
  }
  ok = ok && std::fwrite(buf.data(), 1, buf.size(), out) == buf.size();
  ok = std::fclose(out) == 0 && ok;
  if (!ok) {
    const std::string reason = std::generic_category().message(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: write failed: {}", tmp, reason));
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw std::runtime_error(fmt::format("{}: cannot rename to {}: {}", tmp, path, ec.message()));
  }
}

std::string EnsureEventsFile(const std::string& dir, const EventsFileSpec& spec) {
  const std::string path = (std::filesystem::path(dir) / EventsFileName(spec)).string();
  std::error_code ec;
  if (std::filesystem::is_regular_file(path, ec)) {
    return path;
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw std::runtime_error(
        fmt::format("{}: cannot create the bench data directory: {}", dir, ec.message()));
  }
  WriteEventsFile(path, spec);
  return path;
}

}  // namespace tidemark::bench
