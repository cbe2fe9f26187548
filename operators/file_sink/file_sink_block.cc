#include "operators/file_sink/file_sink_block.h"

#include <fmt/format.h>

namespace tidemark {
namespace {

constexpr auto kRollingPolicyKeys =
    std::to_array<std::string_view>({"part-size", "rollover-interval", "inactivity-interval",
                                     "check-interval", "roll-on-checkpoint"});

}  // namespace

void ReadExactlyOnceFileSinkKeys(BlockReader& r, const BlockMap& map, SinkSpec& sink) {
  // A part-file name part: no '/', no NUL, no leading '.' (a hidden name is an in-progress file).
  auto name_part = [&](const BlockField& f, bool allow_empty) -> std::optional<std::string> {
    std::optional<std::string> text = r.ReadString(f, allow_empty);
    if (!text) {
      return std::nullopt;
    }
    if (text->find('/') != std::string::npos || text->find('\0') != std::string::npos) {
      r.ValueError(f, fmt::format("must not contain '/', got \"{}\"", *text));
      return std::nullopt;
    }
    if (!text->empty() && text->front() == '.' && f.path.ends_with("part-prefix")) {
      r.ValueError(
          f, fmt::format("must not start with '.' (hidden names are in-progress files), got \"{}\"",
                         *text));
      return std::nullopt;
    }
    if (text->find(".inprogress.") != std::string::npos) {
      r.ValueError(f, fmt::format("must not contain \".inprogress.\", got \"{}\"", *text));
      return std::nullopt;
    }
    return text;
  };
  r.Optional(map, "part-prefix", sink.part_prefix,
             [&](const BlockField& f) { return name_part(f, false); });
  r.Optional(map, "part-suffix", sink.part_suffix,
             [&](const BlockField& f) { return name_part(f, true); });
  std::optional<BlockField> block = map.Get("rolling-policy");
  if (!block) {
    return;
  }
  std::optional<BlockMap> policy = r.OpenMap(*block, kRollingPolicyKeys);
  if (!policy) {
    return;
  }
  SinkSpec::RollingPolicySpec& p = sink.rolling_policy;
  auto positive_duration = [&](const BlockField& f) {
    return r.ReadDuration(f, Sign::kPositive);
  };
  r.Optional(*policy, "part-size", p.part_size_bytes,
             [&](const BlockField& f) { return r.ReadMemorySize(f); });
  r.Optional(*policy, "rollover-interval", p.rollover_interval_ms, positive_duration);
  r.Optional(*policy, "inactivity-interval", p.inactivity_interval_ms, positive_duration);
  r.Optional(*policy, "check-interval", p.check_interval_ms, positive_duration);
  r.Optional(*policy, "roll-on-checkpoint", p.roll_on_checkpoint,
             [&](const BlockField& f) { return r.ReadBool(f); });
}

}  // namespace tidemark
