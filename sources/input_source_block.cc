#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "config/block_registry.h"
#include "sources/source_blocks.h"

// The `source:` blocks of types file, stdin, datagen and replay (sources/file_source.h,
// sources/datagen_source.h, sources/replay_source.h): their keys and how they are read.

namespace tidemark {
namespace {

constexpr auto kFileSourceKeys = std::to_array<std::string_view>(
    {"type", "path", "format", "schema", "csv-header", "csv-delimiter", "columns", "max-line-bytes",
     "split-bytes", "pacing", "errors"});
constexpr auto kStdinSourceKeys =
    std::to_array<std::string_view>({"type", "format", "schema", "csv-header", "csv-delimiter",
                                     "columns", "max-line-bytes", "errors"});
constexpr auto kDatagenSourceKeys =
    std::to_array<std::string_view>({"type", "splits", "count", "rate", "keys", "start", "disorder",
                                     "max-out-of-orderness", "skew", "idle-periods", "seed"});
constexpr auto kReplaySourceKeys = std::to_array<std::string_view>(
    {"type", "path", "schema", "max-line-bytes", "until", "errors"});
constexpr auto kFileFormats = std::to_array<std::string_view>({"jsonl", "csv"});
constexpr auto kCsvColumns = std::to_array<std::string_view>({"by-position", "by-name"});
constexpr auto kDisorders = std::to_array<std::string_view>({"none", "uniform", "exponential"});
constexpr auto kIdlePeriodKeys = std::to_array<std::string_view>({"split", "start", "end"});

std::vector<IdlePeriodSpec> ParseIdlePeriods(BlockReader& r, const BlockField& field,
                                             int64_t split_count) {
  std::vector<IdlePeriodSpec> periods;
  if (!field.value->IsSequence()) {
    r.ValueError(field, fmt::format("expected a list of {{split, start, end}}, got {}",
                                    Describe(*field.value)));
    return periods;
  }
  for (size_t i = 0; i < field.value->size(); ++i) {
    const ParamNode& node = field.value->items[i];
    const std::string path = IndexPath(field.path, i);
    std::optional<BlockMap> map = r.OpenMap(node, node.location, path, kIdlePeriodKeys);
    if (!map) {
      continue;
    }
    IdlePeriodSpec p;
    p.location = node.location;
    bool ok = true;
    if (std::optional<BlockField> f = r.Require(*map, "split")) {
      std::optional<int64_t> v = r.ReadInt(*f, 0);
      if (v && *v >= split_count) {
        r.ValueError(*f, fmt::format("no split {} (splits: {}, numbered from 0)", *v, split_count));
        v.reset();
      }
      ok = ok && v.has_value();
      p.split = v.value_or(0);
    } else {
      ok = false;
    }
    std::optional<BlockField> start = r.Require(*map, "start");
    std::optional<BlockField> end = r.Require(*map, "end");
    // Plain ifs, not `cond ? r.ReadDuration(..) : std::nullopt`: g++ 12 -O2 warns
    // maybe-uninitialized on the ternary's optional.
    std::optional<int64_t> a;
    std::optional<int64_t> b;
    if (start) {
      a = r.ReadDuration(*start, Sign::kNonNegative);
    }
    if (end) {
      b = r.ReadDuration(*end, Sign::kNonNegative);
    }
    if (a && b && *b <= *a) {
      r.ValueError(*end, "must be after start");
      b.reset();
    }
    if (ok && a && b) {
      p.start_ms = *a;
      p.end_ms = *b;
      periods.push_back(p);
    }
  }
  return periods;
}

void ParseInputSource(const BlockRegistry&, BlockReader& r, const BlockMap& map,
                      SourceSpec& source) {
  const KeyList allowed = source.type == "file"      ? KeyList(kFileSourceKeys)
                          : source.type == "stdin"   ? KeyList(kStdinSourceKeys)
                          : source.type == "datagen" ? KeyList(kDatagenSourceKeys)
                                                     : KeyList(kReplaySourceKeys);
  for (const BlockField& f : map.fields) {
    if (!Contains(allowed, f.name)) {
      r.Error(f.key_location, f.path,
              fmt::format("does not apply to a source of type {}; allowed keys: {}", source.type,
                          JoinWords(allowed)));
    }
  }
  auto max_line = [&](int64_t& out) {
    r.Optional(map, "max-line-bytes", out, [&](const BlockField& f) { return r.ReadInt(f, 1); });
  };
  if (source.type == "file" || source.type == "stdin") {
    FileSourceSpec& file = source.file;
    if (source.type == "file") {
      if (std::optional<BlockField> f = r.Require(map, "path")) {
        file.path = r.ReadString(*f).value_or("");
      }
    }
    if (std::optional<BlockField> f = r.Require(map, "format")) {
      file.format = r.ReadEnum(*f, kFileFormats).value_or(file.format);
    }
    if (std::optional<BlockField> f = r.Require(map, "schema")) {
      file.schema = r.ReadSchema(*f);
    }
    if (std::optional<BlockField> f = map.Get("csv-header")) {
      if (file.format != "csv") {
        r.Error(f->key_location, f->path, "applies only to format csv");
      } else {
        file.csv_header = r.ReadBool(*f).value_or(false);
      }
    }
    if (std::optional<BlockField> f = map.Get("csv-delimiter")) {
      if (file.format != "csv") {
        r.Error(f->key_location, f->path, "applies only to format csv");
      } else if (std::optional<std::string> d = r.ReadString(*f)) {
        if (d->size() != 1 || *d == "\"" || *d == "\n") {
          r.ValueError(*f, fmt::format("expected one character other than a quote or a newline, "
                                       "got \"{}\"",
                                       *d));
        } else {
          file.csv_delimiter = *d;
        }
      }
    }
    if (std::optional<BlockField> f = map.Get("columns")) {
      if (file.format != "csv") {
        r.Error(f->key_location, f->path, "applies only to format csv");
      } else if (std::optional<std::string> c = r.ReadEnum(*f, kCsvColumns)) {
        file.columns = *c;
        if (*c == "by-name" && !file.csv_header) {
          r.ValueError(*f, "by-name needs csv-header: true (the header names the columns)");
        }
      }
    }
    max_line(file.max_line_bytes);
    r.Optional(map, "split-bytes", file.split_bytes,
               [&](const BlockField& f) { return r.ReadInt(f, 1); });
  } else if (source.type == "replay") {
    if (std::optional<BlockField> f = r.Require(map, "path")) {
      source.replay.path = r.ReadString(*f).value_or("");
    }
    if (std::optional<BlockField> f = r.Require(map, "schema")) {
      source.replay.schema = r.ReadSchema(*f);
    }
    max_line(source.replay.max_line_bytes);
    if (std::optional<BlockField> f = map.Get("until")) {
      source.replay.until_ms = r.ReadDuration(*f, Sign::kNonNegative);
      source.replay.until_location = r.ValueLoc(*f);
    }
  } else {
    DatagenSourceSpec& gen = source.datagen;
    if (std::optional<BlockField> f = r.Require(map, "splits")) {
      gen.split_count = r.ReadInt(*f, 1).value_or(1);
    }
    if (std::optional<BlockField> f = r.Require(map, "count")) {
      gen.count = r.ReadInt(*f, 0).value_or(0);
    }
    if (std::optional<BlockField> f = r.Require(map, "rate")) {
      gen.rate = r.ReadInt(*f, 1).value_or(gen.rate);
    }
    r.Optional(map, "keys", gen.key_count, [&](const BlockField& f) { return r.ReadInt(f, 1); });
    r.Optional(map, "start", gen.first_timestamp_ms,
               [&](const BlockField& f) { return r.ReadDuration(f, Sign::kAny); });
    r.Optional(map, "disorder", gen.disorder,
               [&](const BlockField& f) { return r.ReadEnum(f, kDisorders); });
    if (std::optional<BlockField> f = map.Get("max-out-of-orderness")) {
      gen.max_out_of_orderness_ms = r.ReadDuration(*f, Sign::kNonNegative).value_or(0);
      if (gen.disorder == "none") {
        r.Error(f->key_location, f->path, "needs disorder: uniform or exponential");
      }
    } else if (gen.disorder != "none") {
      r.Error(map.node->location, JoinPath(map.path, "max-out-of-orderness"),
              fmt::format("missing required key (disorder {} needs a bound)", gen.disorder));
    }
    r.Optional(map, "skew", gen.skew_ms,
               [&](const BlockField& f) { return r.ReadDuration(f, Sign::kAny); });
    if (std::optional<BlockField> f = map.Get("idle-periods")) {
      gen.idle_periods = ParseIdlePeriods(r, *f, gen.split_count);
    }
    r.Optional(map, "seed", gen.seed, [&](const BlockField& f) { return r.ReadInt(f, 0); });
    // Event time = start + due + split × skew − delay (sources/datagen_source.cc) must stay an
    // int64 that is not Long.MIN_VALUE; past it, records wrapped to event times of the other sign.
    if (gen.count > 0) {
      bool overflow = false;
      auto add = [&overflow](int64_t x, int64_t y) {
        int64_t result = 0;
        overflow = __builtin_add_overflow(x, y, &result) || overflow;
        return result;
      };
      auto sub = [&overflow](int64_t x, int64_t y) {
        int64_t result = 0;
        overflow = __builtin_sub_overflow(x, y, &result) || overflow;
        return result;
      };
      auto mul = [&overflow](int64_t x, int64_t y) {
        int64_t result = 0;
        overflow = __builtin_mul_overflow(x, y, &result) || overflow;
        return result;
      };
      int64_t due = mul(gen.count - 1, 1000) / std::max<int64_t>(gen.rate, 1);
      for (const IdlePeriodSpec& p : gen.idle_periods) {
        due = add(due, sub(p.end_ms, p.start_ms));
      }
      const int64_t skew = mul(gen.split_count - 1, gen.skew_ms);
      const int64_t latest = add(add(gen.first_timestamp_ms, due), std::max<int64_t>(skew, 0));
      const int64_t earliest =
          sub(add(gen.first_timestamp_ms, std::min<int64_t>(skew, 0)), gen.max_out_of_orderness_ms);
      if (overflow || latest == std::numeric_limits<int64_t>::min() ||
          earliest == std::numeric_limits<int64_t>::min()) {
        r.Error(map.node->location, map.path,
                "event times (start + due + split × skew − delay) would leave the range of int64 "
                "milliseconds; use a smaller start, skew or max-out-of-orderness");
      }
    }
  }
}

}  // namespace

void RegisterInputSourceBlocks(BlockRegistry& registry) {
  registry.RegisterSource("file", {kFileSourceKeys.begin(), kFileSourceKeys.end()},
                          ParseInputSource);
  registry.RegisterSource("stdin", {kStdinSourceKeys.begin(), kStdinSourceKeys.end()},
                          ParseInputSource);
  registry.RegisterSource("datagen", {kDatagenSourceKeys.begin(), kDatagenSourceKeys.end()},
                          ParseInputSource);
  registry.RegisterSource("replay", {kReplaySourceKeys.begin(), kReplaySourceKeys.end()},
                          ParseInputSource);
}

}  // namespace tidemark
