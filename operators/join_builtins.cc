// `interval-join` and `window-join`: two-input operator types (inputs[0] = left,
// inputs[1] = right); `lookup-join`: one input joined with a table read from a file. Their YAML
// parameters are documented in docs/job-reference.md.

#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "operators/builtins.h"
#include "operators/interval_join_operator.h"
#include "operators/lookup_join_operator.h"
#include "operators/operator_params.h"
#include "operators/window/window_operator.h"
#include "operators/window_join_operator.h"

namespace tidemark {
namespace {

struct JoinKeys {
  std::vector<int> left;
  std::vector<int> right;
};

void RequireTwoInputs(const CompileContext& ctx) {
  if (ctx.input_schemas.size() != 2) {
    throw CompileError("inputs", fmt::format("a {} takes exactly two inputs (left, right), got {}",
                                             ctx.spec.type, ctx.input_schemas.size()));
  }
}

/// `key-by: [f]` (the same field names on both sides) or `left-key` / `right-key`.
JoinKeys ResolveJoinKeys(const CompileContext& ctx, const OperatorParams& params) {
  JoinKeys keys;
  const Schema& left = ctx.input_schemas[0];
  const Schema& right = ctx.input_schemas[1];
  if (params.Has("left-key") || params.Has("right-key")) {
    if (!ctx.spec.key_by.empty()) {
      params.Fail(params.Get(params.Has("left-key") ? "left-key" : "right-key")->location,
                  "left-key", "give either key-by or left-key / right-key, not both");
    }
    keys.left = params.FieldList("left-key", left);
    keys.right = params.FieldList("right-key", right);
  } else {
    keys.left = ResolveKeyBy(ctx.spec, left);
    keys.right = ResolveKeyBy(ctx.spec, right);
  }
  if (keys.left.size() != keys.right.size()) {
    params.Fail(params.Get("right-key") ? params.Get("right-key")->location : ctx.spec.location,
                "right-key",
                fmt::format("left-key has {} fields but right-key has {}", keys.left.size(),
                            keys.right.size()));
  }
  for (size_t i = 0; i < keys.left.size(); ++i) {
    const FieldType lt = left.field(static_cast<size_t>(keys.left[i])).type;
    const FieldType rt = right.field(static_cast<size_t>(keys.right[i])).type;
    const bool both_int = (lt == FieldType::kInt64 || lt == FieldType::kTimestamp) &&
                          (rt == FieldType::kInt64 || rt == FieldType::kTimestamp);
    if (lt != rt && !both_int) {
      throw CompileError("right-key",
                         fmt::format("key field {} is {} on the left but {} on the right", i,
                                     ToString(lt), ToString(rt)));
    }
  }
  return keys;
}

/// Left fields, then right fields; a right field whose name is taken gets the prefix `right_`.
Schema JoinedSchema(const Schema& left, const Schema& right) {
  Schema out = left;
  for (const Field& f : right.fields()) {
    std::string name = f.name;
    while (out.IndexOf(name) >= 0) {
      name.insert(0, "right_");
    }
    out.Add(name, f.type);
  }
  return out;
}

void SetTwoInputKeying(CompiledOperator& out, const JoinKeys& keys) {
  out.num_inputs = 2;
  out.hash_input = true;
  out.input_key_slots = keys.left;
  out.input_key_slots_per_input = {keys.left, keys.right};
  if (keys.left.empty()) {
    out.forced_parallelism = 1;
  }
}

CompiledOperator CompileIntervalJoin(const CompileContext& ctx) {
  RequireTwoInputs(ctx);
  OperatorParams params(ctx.spec);
  params.CheckKeys({"lower", "upper", "lower-inclusive", "upper-inclusive", "left-key", "right-key",
                    "left-late-output", "right-late-output"});
  IntervalJoinOperator::Options options;
  options.lower_bound_ms = params.DurationMs("lower", std::nullopt, /*allow_negative=*/true);
  options.upper_bound_ms = params.DurationMs("upper", std::nullopt, /*allow_negative=*/true);
  options.lower_inclusive = params.Bool("lower-inclusive", true);
  options.upper_inclusive = params.Bool("upper-inclusive", true);
  const int64_t lo = options.lower_bound_ms + (options.lower_inclusive ? 0 : 1);
  const int64_t hi = options.upper_bound_ms - (options.upper_inclusive ? 0 : 1);
  if (lo > hi) {
    params.Fail(params.Get("upper")->location, "upper",
                fmt::format("the interval is empty: lower {}ms{} is above upper {}ms{}",
                            options.lower_bound_ms, options.lower_inclusive ? "" : " (exclusive)",
                            options.upper_bound_ms, options.upper_inclusive ? "" : " (exclusive)"));
  }
  const JoinKeys keys = ResolveJoinKeys(ctx, params);
  options.left_key_slots = keys.left;
  options.right_key_slots = keys.right;
  options.left_late_output_tag = params.String("left-late-output", "");
  options.right_late_output_tag = params.String("right-late-output", "");
  options.left_layout = ctx.input_schemas[0].layout();
  options.right_layout = ctx.input_schemas[1].layout();
  CompiledOperator out;
  out.output_schema = JoinedSchema(ctx.input_schemas[0], ctx.input_schemas[1]);
  if (!options.left_late_output_tag.empty()) {
    out.side_output_schemas[options.left_late_output_tag] = ctx.input_schemas[0];
  }
  if (!options.right_late_output_tag.empty()) {
    out.side_output_schemas[options.right_late_output_tag] = ctx.input_schemas[1];
  }
  SetTwoInputKeying(out, keys);
  out.factory = [options](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<IntervalJoinOperator>(options, nullptr);
  };
  return out;
}

CompiledOperator CompileWindowJoin(const CompileContext& ctx) {
  RequireTwoInputs(ctx);
  OperatorParams params(ctx.spec);
  params.CheckKeys({"assigner", "time", "size", "slide", "gap", "offset", "left-key", "right-key"});
  WindowSpec window;
  window.assigner = params.Enum("assigner", {"tumbling", "sliding", "session"}, std::nullopt);
  window.time = params.Enum("time", {"event", "processing"}, "event");
  const auto positive = [&](const std::string& key) {
    const int64_t ms = params.DurationMs(key, std::nullopt);
    if (ms <= 0) {
      params.Fail(params.Get(key)->location, key, "must be greater than 0");
    }
    return ms;
  };
  const auto forbid = [&](const std::string& key) {
    if (const ParamNode* n = params.Get(key)) {
      params.Fail(n->location, key, fmt::format("does not apply to a {} window", window.assigner));
    }
  };
  if (window.assigner == "session") {
    window.gap_ms = positive("gap");
    forbid("size");
    forbid("slide");
    forbid("offset");
  } else {
    window.size_ms = positive("size");
    forbid("gap");
    if (window.assigner == "sliding") {
      window.slide_ms = positive("slide");
      if (window.slide_ms > window.size_ms) {
        params.Fail(params.Get("slide")->location, "slide",
                    fmt::format("the slide ({}ms) must not be larger than the size ({}ms)",
                                window.slide_ms, window.size_ms));
      }
    } else {
      forbid("slide");
    }
    window.offset_ms = params.DurationMs("offset", 0, /*allow_negative=*/true);
  }
  try {
    (void)MakeWindowAssigner(window);
  } catch (const InvalidArgument& e) {
    params.Fail(ctx.spec.params ? ctx.spec.params->location : ctx.spec.location, "", e.what());
  }
  const JoinKeys keys = ResolveJoinKeys(ctx, params);
  CompiledOperator out;
  out.output_schema = JoinedSchema(ctx.input_schemas[0], ctx.input_schemas[1]);
  for (const char* name : {"window_start", "window_end"}) {
    if (out.output_schema.IndexOf(name) >= 0) {
      throw CompileError("inputs", fmt::format("the joined row already has a field '{}'", name));
    }
    out.output_schema.Add(name, FieldType::kTimestamp);
  }
  SetTwoInputKeying(out, keys);
  WindowJoinOperator::Options options;
  options.left_key_slots = keys.left;
  options.right_key_slots = keys.right;
  options.left_layout = ctx.input_schemas[0].layout();
  options.right_layout = ctx.input_schemas[1].layout();
  out.factory = [window, options](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<WindowJoinOperator>(MakeWindowAssigner(window), options);
  };
  return out;
}

/// The `schema:` mapping of a lookup table (`{name: type, ...}`), as a file source's.
Schema LookupTableSchema(const OperatorParams& params) {
  const ParamNode* node = params.Get("schema");
  if (node == nullptr) {
    params.Fail(SourceLocation{}, "schema",
                "missing required key (the table's fields: {name: type, ...})");
  }
  if (!node->IsMap() || node->size() == 0) {
    params.Fail(node->location, "schema",
                "expected a mapping of field names to types, like {code: string, name: string}");
  }
  Schema schema;
  for (size_t i = 0; i < node->size(); ++i) {
    const ParamNode& type = node->items[i];
    const std::optional<FieldType> t =
        type.IsScalar() ? ParseFieldType(type.scalar) : std::optional<FieldType>();
    if (!t) {
      params.Fail(
          type.location, "schema." + node->keys[i],
          fmt::format("unknown type '{}' (int64, double, bool, string, timestamp)", type.scalar));
    }
    if (schema.IndexOf(node->keys[i]) >= 0) {
      params.Fail(node->key_locations[i], "schema." + node->keys[i], "field declared twice");
    }
    schema.Add(node->keys[i], *t);
  }
  return schema;
}

/// The slot of key column `name` in the lookup table; a column the table's schema lacks is an
/// error at `at` naming the key, the table and its fields.
int TableKeySlot(const LookupJoinOperator::Options& options, const std::string& name,
                 const SourceLocation& at, const std::string& key) {
  const int slot = options.table_schema.IndexOf(name);
  if (slot < 0) {
    throw CompileError(key,
                       fmt::format("the lookup table '{}' has no key column '{}' (its schema "
                                   "declares: {})",
                                   options.file.path, name, FieldNames(options.table_schema)),
                       at.line > 0 ? at : SourceLocation{});
  }
  return slot;
}

CompiledOperator CompileLookupJoin(const CompileContext& ctx, const LookupTableReader& reader) {
  if (ctx.input_schemas.size() != 1) {
    throw CompileError("input", fmt::format("a lookup-join takes one input (the table is its "
                                            "`path`), got {}",
                                            ctx.input_schemas.size()));
  }
  OperatorParams params(ctx.spec);
  params.CheckKeys({"path", "format", "schema", "csv-header", "csv-delimiter", "join-type",
                    "left-key", "right-key", "lookup.cache",
                    "lookup.full-cache.periodic-reload.interval"});
  const Schema& left = ctx.input_schemas[0];
  LookupJoinOperator::Options options;
  options.table_schema = LookupTableSchema(params);
  options.file.path = params.String("path", std::nullopt);
  const std::filesystem::path path(options.file.path);
  if (!path.is_absolute() && !ctx.job.file.empty() && ctx.job.file != "<string>") {
    options.file.path =
        (std::filesystem::path(ctx.job.file).parent_path() / path).lexically_normal().string();
  }
  // As a file source's path, checked when the job is compiled (read when it opens).
  std::error_code error;
  const auto status = std::filesystem::status(options.file.path, error);
  if (status.type() != std::filesystem::file_type::regular) {
    params.Fail(params.Get("path")->location, "path",
                status.type() == std::filesystem::file_type::not_found
                    ? fmt::format("the lookup table '{}' does not exist", options.file.path)
                    : fmt::format("the lookup table '{}' is not a regular file{}",
                                  options.file.path, error ? " (" + error.message() + ")" : ""));
  }
  options.file.format = params.Enum("format", {"csv", "jsonl"}, std::nullopt);
  for (const char* csv_key : {"csv-header", "csv-delimiter"}) {
    if (options.file.format != "csv" && params.Has(csv_key)) {
      params.Fail(params.Get(csv_key)->location, csv_key, "applies only to format csv");
    }
  }
  options.file.csv_header = params.Bool("csv-header", false);
  options.file.csv_delimiter = params.String("csv-delimiter", ",");
  if (options.file.csv_delimiter.size() != 1 || options.file.csv_delimiter == "\"" ||
      options.file.csv_delimiter == "\n") {
    params.Fail(params.Get("csv-delimiter")->location, "csv-delimiter",
                "expected one character other than a quote or a newline");
  }
  options.inner = params.Enum("join-type", {"inner", "left"}, "inner") == "inner";
  // Flink's lookup options: the whole table is held (FULL), re-read when the file changes.
  (void)params.Enum("lookup.cache", {"FULL"}, "FULL");
  options.reload_interval_ms =
      params.DurationMs("lookup.full-cache.periodic-reload.interval", int64_t{0});
  if (params.Has("lookup.full-cache.periodic-reload.interval") && options.reload_interval_ms <= 0) {
    params.Fail(params.Get("lookup.full-cache.periodic-reload.interval")->location,
                "lookup.full-cache.periodic-reload.interval", "must be greater than 0");
  }
  // Keys: key-by (the same names in the record and the table) or left-key / right-key.
  if (params.Has("left-key") || params.Has("right-key")) {
    if (!ctx.spec.key_by.empty()) {
      params.Fail(params.Get(params.Has("left-key") ? "left-key" : "right-key")->location,
                  "left-key", "give either key-by or left-key / right-key, not both");
    }
    options.left_key_slots = params.FieldList("left-key", left);
    const ParamNode* node = params.Get("right-key");
    if (node == nullptr) {
      params.Fail(ctx.spec.params->location, "right-key", "missing required key");
    }
    std::vector<const ParamNode*> names;
    if (node->IsScalar()) {
      names.push_back(node);
    } else if (node->IsSequence()) {
      for (const ParamNode& n : node->items) {
        names.push_back(&n);
      }
    }
    for (const ParamNode* n : names) {
      if (!n->IsScalar()) {
        params.Fail(n->location, "right-key", "expected a field name or a list of field names");
      }
      options.table_key_slots.push_back(
          TableKeySlot(options, n->scalar, n->location, params.prefix() + ".right-key"));
    }
  } else if (!ctx.spec.key_by.empty()) {
    options.left_key_slots = ResolveKeyBy(ctx.spec, left);
    for (size_t i = 0; i < ctx.spec.key_by.size(); ++i) {
      const SourceLocation at =
          i < ctx.spec.key_by_locations.size() ? ctx.spec.key_by_locations[i] : ctx.spec.location;
      options.table_key_slots.push_back(
          TableKeySlot(options, ctx.spec.key_by[i], at, fmt::format("key-by[{}]", i)));
    }
  } else {
    params.Fail(ctx.spec.params ? ctx.spec.params->location : SourceLocation{}, "left-key",
                "a lookup join needs its key: key-by, or left-key and right-key");
  }
  if (options.left_key_slots.size() != options.table_key_slots.size()) {
    params.Fail(params.Get("right-key")->location, "right-key",
                fmt::format("left-key has {} fields but right-key has {}",
                            options.left_key_slots.size(), options.table_key_slots.size()));
  }
  for (size_t i = 0; i < options.left_key_slots.size(); ++i) {
    const Field& lf = left.field(static_cast<size_t>(options.left_key_slots[i]));
    const Field& tf = options.table_schema.field(static_cast<size_t>(options.table_key_slots[i]));
    const auto is_int = [](FieldType t) {
      return t == FieldType::kInt64 || t == FieldType::kTimestamp;
    };
    if (lf.type != tf.type && !(is_int(lf.type) && is_int(tf.type))) {
      const ParamNode* at = params.Get("right-key");
      params.Fail(at != nullptr ? at->location : ctx.spec.location, "right-key",
                  fmt::format("key field {} is {} in the record ({}) but {} in the table ({})", i,
                              ToString(lf.type), lf.name, ToString(tf.type), tf.name));
    }
  }
  CompiledOperator out;
  out.output_schema = JoinedSchema(left, options.table_schema);
  options.output_layout = out.output_schema.layout();
  options.reader = reader;
  out.factory = [options](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<LookupJoinOperator>(options);
  };
  return out;
}

}  // namespace

void RegisterLookupJoin(OperatorRegistry& registry, LookupTableReader reader) {
  registry.Register("lookup-join", [reader = std::move(reader)](const CompileContext& ctx) {
    return CompileLookupJoin(ctx, reader);
  });
}

void RegisterJoinBuiltins(OperatorRegistry& registry) {
  registry.Register("interval-join", CompileIntervalJoin);
  registry.Register("window-join", CompileWindowJoin);
}

}  // namespace tidemark
