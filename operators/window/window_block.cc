#include "operators/window/window_block.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "config/block_registry.h"

// The `window:` block of a `type: window` operator (operators/window/window_operator.h): its keys
// and how they are read. Keyed by `assigner:` (Flink's window assigners).

namespace tidemark {
namespace {

constexpr auto kWindowKeys = std::to_array<std::string_view>(
    {"assigner", "time", "size", "slide", "gap", "offset", "allowed-lateness", "trigger",
     "late-output", "emit-watermark", "emit-firing", "aggregate"});
constexpr auto kAssigners =
    std::to_array<std::string_view>({"tumbling", "sliding", "session", "global"});
constexpr auto kWindowTimes = std::to_array<std::string_view>({"event", "processing"});
constexpr auto kAggregateKeys =
    std::to_array<std::string_view>({"fn", "field", "as", "percentage", "separator"});
constexpr auto kAggregateFunctions =
    std::to_array<std::string_view>({"count", "sum", "min", "max", "avg", "first", "last",
                                     "count-distinct", "approx-count-distinct", "percentile",
                                     "approx-percentile", "first-value", "last-value", "listagg"});

std::vector<AggregateSpec> ParseAggregates(BlockReader& r, const BlockField& field) {
  std::vector<AggregateSpec> aggregates;
  if (!field.value->IsSequence()) {
    r.ValueError(field, fmt::format("expected a list of aggregates like [count, {{fn: sum, field: "
                                    "amount}}], got {}",
                                    Describe(*field.value)));
    return aggregates;
  }
  if (field.value->size() == 0) {
    r.ValueError(field, "must list at least one aggregate");
    return aggregates;
  }
  std::map<std::string, std::string> outputs;  // column -> path of the aggregate producing it
  for (size_t i = 0; i < field.value->size(); ++i) {
    const ParamNode& item = field.value->items[i];
    const std::string path = IndexPath(field.path, i);
    AggregateSpec aggregate;
    aggregate.location = item.location;
    std::optional<BlockField> fn_field;
    std::optional<BlockField> percentage;
    std::optional<BlockField> separator;
    if (item.IsScalar()) {
      fn_field = r.Item(item, path);
    } else if (std::optional<BlockMap> map = r.OpenMap(item, item.location, path, kAggregateKeys)) {
      fn_field = r.Require(*map, "fn");
      if (std::optional<BlockField> f = map->Get("field")) {
        aggregate.field = r.ReadString(*f).value_or("");
        aggregate.field_location = r.ValueLoc(*f);
      }
      if (std::optional<BlockField> f = map->Get("as")) {
        aggregate.as = r.ReadString(*f).value_or("");
      }
      percentage = map->Get("percentage");
      separator = map->Get("separator");
    } else {
      continue;
    }
    if (!fn_field) {
      continue;
    }
    std::optional<std::string> fn = r.ReadEnum(*fn_field, kAggregateFunctions);
    if (!fn) {
      continue;
    }
    aggregate.function = *fn;
    // percentile's fraction (Flink's PERCENTILE(x, p)) and listagg's separator (LISTAGG(x, sep)).
    const bool takes_percentage = *fn == "percentile" || *fn == "approx-percentile";
    if (percentage && !takes_percentage) {
      r.Error(percentage->key_location, percentage->path,
              fmt::format("does not apply to {} (only to percentile and approx-percentile)", *fn));
      continue;
    }
    if (takes_percentage) {
      if (!percentage) {
        r.Error(item.location, path + ".percentage",
                fmt::format("missing required key ({} needs a percentage between 0 and 1, "
                            "like {{fn: {}, field: fare, percentage: 0.9}})",
                            *fn, *fn));
        continue;
      }
      std::optional<double> p = r.ReadNumber(*percentage);
      if (!p) {
        continue;
      }
      if (!(*p >= 0 && *p <= 1)) {
        r.ValueError(*percentage,
                     fmt::format("must be between 0 and 1 (0.9 is the 90th percentile), got {}",
                                 percentage->value->scalar));
        continue;
      }
      aggregate.percentage = *p;
    }
    if (separator) {
      if (*fn != "listagg") {
        r.Error(separator->key_location, separator->path,
                fmt::format("does not apply to {} (only to listagg)", *fn));
        continue;
      }
      std::optional<std::string> sep = r.ReadString(*separator, /*allow_empty=*/true);
      if (!sep) {
        continue;
      }
      aggregate.separator = *sep;
    }
    if (aggregate.function != "count" && aggregate.field.empty()) {
      if (item.IsMap() && item.Find("field") == nullptr) {
        r.Error(item.location, path + ".field",
                fmt::format("missing required key ({} needs a field)", aggregate.function));
      } else if (item.IsScalar()) {
        r.Error(item.location, path,
                fmt::format("{} needs a field: write {{fn: {}, field: <name>}}", aggregate.function,
                            aggregate.function));
      }
      continue;
    }
    if (aggregate.as.empty()) {
      std::string function = aggregate.function;
      std::replace(function.begin(), function.end(), '-', '_');  // a column name SQL can read
      aggregate.as = aggregate.field.empty() ? function : function + "_" + aggregate.field;
    }
    if (auto [it, inserted] = outputs.emplace(aggregate.as, path); !inserted) {
      r.Error(item.location, path,
              fmt::format("output column \"{}\" is also produced by {}; rename one with \"as\"",
                          aggregate.as, it->second));
      continue;
    }
    aggregates.push_back(std::move(aggregate));
  }
  return aggregates;
}

WindowSpec ParseWindowBlock(BlockReader& r, const BlockField& field) {
  WindowSpec window;
  window.location = r.ValueLoc(field);
  std::optional<BlockMap> map = r.OpenMap(field, kWindowKeys);
  if (!map) {
    return window;
  }
  r.RecordKeys(*map, window.key_locations);
  if (std::optional<BlockField> f = r.Require(*map, "assigner")) {
    window.assigner = r.ReadEnum(*f, kAssigners).value_or("");
  }
  r.Optional(*map, "time", window.time,
             [&](const BlockField& f) { return r.ReadEnum(f, kWindowTimes); });

  // Which of size / slide / gap / offset an assigner takes (Flink's window assigner factories).
  const std::string& assigner = window.assigner;
  const std::string not_for = "does not apply to a " + assigner + " window";
  std::optional<int64_t> size;
  std::optional<int64_t> slide;
  if (assigner == "tumbling" || assigner == "sliding") {
    if (std::optional<BlockField> f = r.Require(*map, "size")) {
      size = r.ReadDuration(*f, Sign::kPositive);
      window.size_ms = size.value_or(0);
    }
  } else if (!assigner.empty()) {
    r.Forbid(*map, "size", not_for);
  }
  if (assigner == "sliding") {
    if (std::optional<BlockField> f = r.Require(*map, "slide")) {
      slide = r.ReadDuration(*f, Sign::kPositive);
      window.slide_ms = slide.value_or(0);
      if (slide && size && *slide > *size) {
        r.ValueError(*f, fmt::format("the slide ({}) must not be larger than the window size ({})",
                                     FormatDurationMs(*slide), FormatDurationMs(*size)));
      } else if (slide && size && *size / *slide > kMaxWindowsPerRecord) {
        // Each record is in size / slide windows, each a timer that fires in one uninterruptible
        // watermark step: 365000d / 1ms ran for ever and could not be cancelled.
        r.ValueError(*f,
                     fmt::format("a record would belong to size / slide = {} windows; at most {} "
                                 "are allowed (use a larger slide)",
                                 *size / *slide, kMaxWindowsPerRecord));
      }
    }
  } else if (!assigner.empty()) {
    r.Forbid(*map, "slide", not_for);
  }
  if (assigner == "session") {
    if (std::optional<BlockField> f = r.Require(*map, "gap")) {
      window.gap_ms = r.ReadDuration(*f, Sign::kPositive).value_or(0);
    }
  } else if (!assigner.empty()) {
    r.Forbid(*map, "gap", not_for);
  }
  if (std::optional<BlockField> f = map->Get("offset")) {
    if (assigner == "tumbling" || assigner == "sliding") {
      if (std::optional<int64_t> offset = r.ReadDuration(*f, Sign::kAny)) {
        window.offset_ms = *offset;
        // Flink: |offset| < size (tumbling), |offset| < slide (sliding).
        const std::optional<int64_t> bound = assigner == "tumbling" ? size : slide;
        const int64_t magnitude = *offset < 0 ? -*offset : *offset;
        if (bound && magnitude >= *bound) {
          r.ValueError(*f, fmt::format("must be smaller in magnitude than the window {} ({}), got "
                                       "\"{}\"",
                                       assigner == "tumbling" ? "size" : "slide",
                                       FormatDurationMs(*bound), f->value->scalar));
        }
      }
    } else if (!assigner.empty()) {
      r.Error(f->key_location, f->path, not_for);
    }
  }
  r.Optional(*map, "allowed-lateness", window.allowed_lateness_ms,
             [&](const BlockField& f) { return r.ReadDuration(f, Sign::kNonNegative); });
  r.Optional(*map, "trigger", window.trigger, [&](const BlockField& f) {
    window.trigger_location = r.ValueLoc(f);
    return r.ReadString(f);
  });
  r.Optional(*map, "late-output", window.late_output,
             [&](const BlockField& f) { return r.ReadString(f); });
  r.Optional(*map, "emit-watermark", window.emit_watermark,
             [&](const BlockField& f) { return r.ReadBool(f); });
  r.Optional(*map, "emit-firing", window.emit_firing,
             [&](const BlockField& f) { return r.ReadBool(f); });
  if (std::optional<BlockField> f = map->Get("aggregate")) {
    window.aggregates = ParseAggregates(r, *f);
  } else {
    AggregateSpec count;
    count.function = "count";
    count.as = "count";
    count.location = window.location;
    window.aggregates.push_back(count);
  }
  return window;
}

}  // namespace

void RegisterWindowBlock(BlockRegistry& registry) {
  registry.SetWindowBlock(ParseWindowBlock);
}

}  // namespace tidemark
