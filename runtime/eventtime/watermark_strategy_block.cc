#include "runtime/eventtime/watermark_strategy_block.h"

#include <fmt/format.h>

#include "config/block_registry.h"
#include "runtime/core/sql_functions.h"

// The `watermarks:` block (Flink's WatermarkStrategy; runtime/eventtime/make_watermark_strategy.h
// builds it): its keys and how they are read. Keyed by `strategy:`.

namespace tidemark {
namespace {

constexpr auto kWatermarkKeys = std::to_array<std::string_view>(
    {"strategy", "max-out-of-orderness", "timestamp-field", "timestamp-unit", "timestamp-format",
     "watermark-field", "idleness", "idle-advance", "alignment", "percentile", "window", "min",
     "max", "initial"});
constexpr auto kAdaptiveKeys =
    std::to_array<std::string_view>({"percentile", "window", "min", "max", "initial"});
constexpr auto kStrategies =
    std::to_array<std::string_view>({"bounded-out-of-orderness", "adaptive-out-of-orderness",
                                     "sql-interval", "monotonous", "punctuated", "none"});
constexpr auto kTimestampUnits =
    std::to_array<std::string_view>({"ms", "s", "us", "ns", "iso8601"});
constexpr auto kAlignmentKeys =
    std::to_array<std::string_view>({"group", "max-drift", "update-interval"});

void ParseAdaptive(BlockReader& r, const BlockMap& map, WatermarkStrategySpec& spec) {
  WatermarkStrategySpec::Adaptive a;
  if (std::optional<BlockField> f = map.Get("percentile")) {
    if (std::optional<double> p = r.ReadNumber(*f)) {
      if (!(*p > 0.0 && *p <= 100.0)) {
        r.ValueError(*f, fmt::format("must be in (0, 100], got {}", f->value->scalar));
      } else {
        a.percentile = *p;
      }
    }
  }
  r.Optional(map, "window", a.window_ms,
             [&](const BlockField& f) { return r.ReadDuration(f, Sign::kPositive); });
  r.Optional(map, "min", a.min_ms,
             [&](const BlockField& f) { return r.ReadDuration(f, Sign::kNonNegative); });
  std::optional<BlockField> max_field = r.Require(map, "max");
  if (max_field) {
    a.max_ms = r.ReadDuration(*max_field, Sign::kNonNegative).value_or(a.min_ms);
    if (a.max_ms < a.min_ms) {
      r.ValueError(*max_field,
                   fmt::format("must not be less than min ({} ms), got {} ms", a.min_ms, a.max_ms));
    }
  }
  a.initial_ms = a.max_ms;
  if (std::optional<BlockField> f = map.Get("initial")) {
    if (std::optional<int64_t> ms = r.ReadDuration(*f, Sign::kNonNegative)) {
      if (*ms < a.min_ms || *ms > a.max_ms) {
        r.ValueError(*f, fmt::format("must lie within [min, max] = [{} ms, {} ms], got {} ms",
                                     a.min_ms, a.max_ms, *ms));
      } else {
        a.initial_ms = *ms;
      }
    }
  }
  spec.adaptive = a;
}

WatermarkStrategySpec ParseWatermarksBlock(BlockReader& r, const BlockField& field,
                                           bool on_source) {
  WatermarkStrategySpec spec;
  spec.location = r.ValueLoc(field);
  std::optional<BlockMap> map = r.OpenMap(field, kWatermarkKeys);
  if (!map) {
    return spec;
  }
  r.RecordKeys(*map, spec.key_locations);
  bool strategy_ok = true;
  if (std::optional<BlockField> f = map->Get("strategy")) {
    std::optional<std::string> strategy = r.ReadEnum(*f, kStrategies);
    strategy_ok = strategy.has_value();
    spec.strategy = strategy.value_or(spec.strategy);
  }
  if (strategy_ok) {
    if (spec.strategy == "bounded-out-of-orderness" || spec.strategy == "sql-interval") {
      if (std::optional<BlockField> f = r.Require(*map, "max-out-of-orderness")) {
        spec.max_out_of_orderness_ms = r.ReadDuration(*f, Sign::kNonNegative).value_or(0);
      }
    } else {
      r.Forbid(*map, "max-out-of-orderness",
               "applies only to strategies bounded-out-of-orderness and sql-interval, not " +
                   spec.strategy);
    }
    if (spec.strategy == "adaptive-out-of-orderness") {
      ParseAdaptive(r, *map, spec);
    } else {
      for (std::string_view key : kAdaptiveKeys) {
        r.Forbid(*map, std::string(key),
                 "applies only to strategy adaptive-out-of-orderness, not " + spec.strategy);
      }
    }
    if (spec.strategy == "punctuated") {
      if (std::optional<BlockField> f = r.Require(*map, "watermark-field")) {
        spec.watermark_field = r.ReadString(*f).value_or("");
      }
    } else {
      r.Forbid(*map, "watermark-field",
               "applies only to strategy punctuated, not " + spec.strategy);
    }
  }
  r.Optional(*map, "timestamp-field", spec.timestamp_field,
             [&](const BlockField& f) { return r.ReadString(f); });
  if (std::optional<BlockField> f = map->Get("timestamp-unit")) {
    if (!map->Get("timestamp-field")) {
      r.Error(f->key_location, f->path,
              "needs timestamp-field (the field whose unit it describes)");
    } else {
      spec.timestamp_unit = r.ReadEnum(*f, kTimestampUnits).value_or(spec.timestamp_unit);
    }
  }
  if (std::optional<BlockField> f = map->Get("timestamp-format")) {
    if (!map->Get("timestamp-field")) {
      r.Error(f->key_location, f->path,
              "needs timestamp-field (the string field the pattern parses)");
    } else if (map->Get("timestamp-unit")) {
      r.Error(f->key_location, f->path,
              "replaces timestamp-unit for a string field: give one of the two");
    } else if (std::optional<std::string> pattern = r.ReadString(*f)) {
      // Compiled here too, so that a bad pattern is reported at its own line and column.
      std::string error;
      const std::optional<DateTimePattern> compiled = DateTimePattern::Compile(*pattern, &error);
      if (!compiled) {
        r.ValueError(*f, fmt::format("in pattern \"{}\": {}", *pattern, error));
      } else if (compiled->ReadsOffset()) {
        // Flink's TO_TIMESTAMP (what the pattern exports to) keeps the text's local fields and
        // drops the offset: event times would be off by it, in tidemark and in Flink alike.
        r.ValueError(*f, fmt::format("in pattern \"{}\": a zone offset (X, Z) would be ignored, "
                                     "as Flink's TO_TIMESTAMP ignores it, and event times would "
                                     "be off by the offset; for times with an offset use "
                                     "timestamp-unit: iso8601 (it applies the offset)",
                                     *pattern));
      } else {
        spec.timestamp_format = *pattern;
      }
    }
  }
  if (std::optional<BlockField> f = map->Get("idleness")) {
    if (std::optional<int64_t> ms = r.ReadDuration(*f, Sign::kPositive)) {
      spec.idleness_ms = *ms;
    }
  }
  if (std::optional<BlockField> f = map->Get("idle-advance")) {
    if (!on_source) {
      r.Error(f->key_location, f->path,
              "idle-advance applies only to a source's watermarks (type: source)");
    } else if (spec.strategy == "punctuated" || spec.strategy == "none") {
      r.Error(
          f->key_location, f->path,
          fmt::format("needs a strategy with a bound to advance from (bounded-out-of-orderness, "
                      "adaptive-out-of-orderness, sql-interval, monotonous), got {}",
                      spec.strategy));
    } else if (std::optional<int64_t> ms = r.ReadDuration(*f, Sign::kPositive)) {
      spec.idle_advance_ms = *ms;
    }
  }
  if (std::optional<BlockField> f = map->Get("alignment")) {
    if (!on_source) {
      r.Error(f->key_location, f->path,
              "watermark alignment applies only to a source's watermarks (type: source)");
    } else if (std::optional<BlockMap> align = r.OpenMap(*f, kAlignmentKeys)) {
      WatermarkStrategySpec::Alignment alignment;
      if (std::optional<BlockField> g = r.Require(*align, "group")) {
        alignment.group = r.ReadString(*g).value_or("");
      }
      if (std::optional<BlockField> d = r.Require(*align, "max-drift")) {
        alignment.max_drift_ms = r.ReadDuration(*d, Sign::kNonNegative).value_or(0);
      }
      r.Optional(*align, "update-interval", alignment.update_interval_ms,
                 [&](const BlockField& u) { return r.ReadDuration(u, Sign::kPositive); });
      spec.alignment = alignment;
    }
  }
  return spec;
}

}  // namespace

void RegisterWatermarkStrategyBlock(BlockRegistry& registry) {
  registry.SetWatermarksBlock(ParseWatermarksBlock);
}

}  // namespace tidemark
