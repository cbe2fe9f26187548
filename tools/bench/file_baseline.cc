// The hand-written file baseline (see file_baseline.h). Like sources/text_input_simdjson.cc, the
// simdjson On-Demand code is compiled for AVX2 (simdjson's haswell kernel) inside a GCC target
// region, with every other header included before it, and is used only on a CPU that has AVX2.

#include "tools/bench/file_baseline.h"

#include <absl/container/flat_hash_map.h>
#include <absl/strings/string_view.h>
#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "runtime/core/checksum.h"
#include "tools/bench/bench_run.h"

namespace tidemark::bench {

FileBenchPlan MakeFileBenchPlan(const JobSpec& job) {
  FileBenchPlan plan;
  const BenchJobEnds ends = FindBenchJobEnds(job);
  if (!ends.unsupported.empty()) {
    plan.unsupported = ends.unsupported;
    return plan;
  }
  const auto& by_id = ends.by_id;
  const OperatorSpec* source = ends.source;
  const OperatorSpec* sink = ends.sink;
  if (source == nullptr || !source->source || source->source->type != "file" ||
      source->source->file.format != "jsonl") {
    plan.unsupported = "the source is not a JSON Lines file source";
    return plan;
  }
  if (sink == nullptr || !sink->sink || sink->sink->type != "checksum") {
    plan.unsupported = "the sink is not a checksum sink";
    return plan;
  }
  plan.schema = source->source->file.schema;
  plan.parallelism = source->parallelism > 0 ? source->parallelism : job.pipeline.parallelism;
  if (source->watermarks) {
    const WatermarkStrategySpec& wm = *source->watermarks;
    if (wm.strategy != "bounded-out-of-orderness" || wm.timestamp_unit != "ms") {
      plan.unsupported = "the watermark strategy is not bounded-out-of-orderness in ms";
      return plan;
    }
    plan.timestamp_field = wm.timestamp_field;
    plan.max_out_of_orderness_ms = wm.max_out_of_orderness_ms;
  }
  auto field_type = [&plan](const std::string& name) -> std::string {
    for (const SchemaFieldSpec& f : plan.schema) {
      if (f.name == name) {
        return f.type;
      }
    }
    return "";
  };
  if (sink->inputs.size() != 1 || !sink->inputs[0].side_output.empty()) {
    plan.unsupported = "the sink does not read one main output";
    return plan;
  }
  const OperatorSpec* up = by_id.at(sink->inputs[0].from);
  if (up == source) {
    return plan;
  }
  if (up->type != "window" || up->inputs.size() != 1 || up->inputs[0].from != source->id ||
      !up->inputs[0].side_output.empty()) {
    plan.unsupported = "not source -> [window] -> sink";
    return plan;
  }
  const WindowSpec& w = *up->window;
  const auto ts_type = field_type(plan.timestamp_field);
  if (w.assigner != "tumbling" || w.time != "event" || w.offset_ms != 0 ||
      w.allowed_lateness_ms != 0 || !w.trigger.empty() || w.emit_watermark || w.emit_firing ||
      up->key_by.size() != 1 || field_type(up->key_by[0]) != "string" ||
      (ts_type != "int64" && ts_type != "timestamp")) {
    plan.unsupported = fmt::format(
        "window '{}' is not a tumbling event-time window keyed by one string field", up->id);
    return plan;
  }
  if (w.aggregates.size() > kMaxBaselineAggregates) {
    plan.unsupported = fmt::format("more than {} aggregates", kMaxBaselineAggregates);
    return plan;
  }
  for (const AggregateSpec& a : w.aggregates) {
    const std::string t = field_type(a.field);
    if (a.function != "count" && !(a.function == "sum" && (t == "int64" || t == "timestamp"))) {
      plan.unsupported = fmt::format("aggregate {} of '{}'", a.function, a.field);
      return plan;
    }
  }
  plan.window = w;
  plan.key_field = up->key_by[0];
  return plan;
}

}  // namespace tidemark::bench

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TM_BASELINE_HASWELL 1
#pragma GCC push_options
#pragma GCC target("avx2,bmi,pclmul,lzcnt")
#define SIMDJSON_BUILTIN_IMPLEMENTATION haswell
#define simdjson_inline inline
#include <immintrin.h>
#include <simdjson.h>
#endif

namespace tidemark::bench {

#if TM_BASELINE_HASWELL
namespace {

namespace od = simdjson::haswell::ondemand;

enum class Kind { kInt, kDouble, kBool, kString };

/// One parsed field of the current line.
struct Field {
  Kind kind = Kind::kInt;
  bool set = false;
  int64_t i = 0;
  double d = 0;
  std::string_view s;
};

uint64_t FieldHashOf(size_t position, const Field& f) {
  if (!f.set) {
    return FieldHash(position, static_cast<uint64_t>(0x6E756C6CULL));  // NULL
  }
  switch (f.kind) {
    case Kind::kInt:
      return FieldHash(position, f.i);
    case Kind::kDouble:
      return FieldHash(position, f.d);
    case Kind::kBool:
      return FieldHash(position, f.i);
    case Kind::kString:
      return FieldHash(position, static_cast<uint64_t>(std::hash<std::string_view>{}(f.s)));
  }
  return 0;
}

/// One unset Field per schema field, of its kind.
std::vector<Field> FieldsOf(const std::vector<SchemaFieldSpec>& schema) {
  std::vector<Field> fields(schema.size());
  for (size_t k = 0; k < schema.size(); ++k) {
    const std::string& t = schema[k].type;
    fields[k].kind = t == "string"   ? Kind::kString
                     : t == "double" ? Kind::kDouble
                     : t == "bool"   ? Kind::kBool
                                     : Kind::kInt;
  }
  return fields;
}

/// The scan's checksum term of one record: the sum of its field hashes, mixed.
uint64_t ScanHash(const std::vector<Field>& fields) {
  uint64_t h = 0;
  for (size_t p = 0; p < fields.size(); ++p) {
    h += FieldHashOf(p, fields[p]);
  }
  return RecordHash(h);
}

/// Reads the fields of `object` named in `schema` into `fields` (the others are left unset,
/// i.e. NULL); false when a member cannot be read or a schema field has another type.
bool ReadFields(od::object& object, const std::vector<SchemaFieldSpec>& schema,
                std::vector<Field>& fields) {
  for (Field& f : fields) {
    f.set = false;
  }
  for (auto member : object) {
    od::field field;
    std::string_view key;
    if (std::move(member).get(field) != simdjson::SUCCESS ||
        field.unescaped_key().get(key) != simdjson::SUCCESS) {
      return false;
    }
    size_t k = 0;
    while (k < schema.size() && schema[k].name != key) {
      ++k;
    }
    if (k == schema.size()) {
      continue;
    }
    Field& f = fields[k];
    simdjson::error_code e = simdjson::SUCCESS;
    switch (f.kind) {
      case Kind::kInt:
        e = field.value().get_int64().get(f.i);
        break;
      case Kind::kDouble:
        e = field.value().get_double().get(f.d);
        break;
      case Kind::kBool: {
        bool b = false;
        e = field.value().get_bool().get(b);
        f.i = b ? 1 : 0;
        break;
      }
      case Kind::kString:
        e = field.value().get_string().get(f.s);
        break;
    }
    if (e != simdjson::SUCCESS) {
      return false;
    }
    f.set = true;
  }
  return true;
}

/// Calls `on_record(fields)` for every line of `json` that is an object whose schema fields have
/// their types (others are left unset, i.e. NULL); counts the rest in `out.errors`.
template <class F>
void ForEachRecord(const simdjson::padded_string& json, const std::vector<SchemaFieldSpec>& schema,
                   FileBaselineResult& out, F&& on_record) {
  std::vector<Field> fields = FieldsOf(schema);
  od::parser parser;
  od::document_stream stream;
  if (parser.iterate_many(json, 1 << 20).get(stream) != simdjson::SUCCESS) {
    throw std::runtime_error("simdjson iterate_many failed");
  }
  for (auto it = stream.begin(); it != stream.end(); ++it) {
    od::document_reference doc = *it;
    od::object object;
    if (doc.get_object().get(object) != simdjson::SUCCESS) {
      ++out.errors;
      continue;
    }
    if (!ReadFields(object, schema, fields)) {
      ++out.errors;
      continue;
    }
    ++out.records;
    on_record(fields);
  }
}

/// A window's accumulators for one key, inline in the map slot (no allocation per window).
struct Agg {
  int64_t count = 0;
  std::array<int64_t, kMaxBaselineAggregates> sums{};
};

}  // namespace

FileBaselineResult RunFileBaselineHaswell(const FileBenchPlan& plan, const std::string& path) {
  FileBaselineResult out;
  const auto start = std::chrono::steady_clock::now();
  simdjson::padded_string json;
  if (simdjson::padded_string::load(path).get(json) != simdjson::SUCCESS) {
    throw std::runtime_error(fmt::format("{}: cannot read", path));
  }
  if (!plan.window) {
    uint64_t sum = 0;
    ForEachRecord(json, plan.schema, out,
                  [&sum](const std::vector<Field>& fields) { sum += ScanHash(fields); });
    out.sink_records = out.records;
    out.checksum = sum;
  } else {
    const WindowSpec& w = *plan.window;
    auto index_of = [&plan](const std::string& name) {
      size_t k = 0;
      while (k < plan.schema.size() && plan.schema[k].name != name) {
        ++k;
      }
      return k;
    };
    const size_t key_slot = index_of(plan.key_field);
    const size_t ts_slot = index_of(plan.timestamp_field);
    std::vector<size_t> sum_slots;  // per aggregate: schema slot of a sum, npos for count
    for (const AggregateSpec& a : w.aggregates) {
      sum_slots.push_back(a.function == "sum" ? index_of(a.field) : std::string::npos);
    }
    const int64_t size = w.size_ms;
    // The open windows by start; at most a few are open at once (the out-of-orderness bound
    // over the window size). Each maps the key to its accumulators, inline in the slot.
    std::map<int64_t, absl::flat_hash_map<std::string, Agg>> open;
    int64_t max_ts = INT64_MIN;
    int64_t watermark = INT64_MIN;
    int64_t n = 0;
    uint64_t sum = 0;
    auto fire = [&](int64_t window_start, const absl::flat_hash_map<std::string, Agg>& aggs) {
      for (const auto& [key, agg] : aggs) {
        uint64_t h = FieldHash(0, static_cast<uint64_t>(std::hash<std::string_view>{}(key))) +
                     FieldHash(1, window_start) + FieldHash(2, window_start + size);
        for (size_t a = 0; a < sum_slots.size(); ++a) {
          h += FieldHash(3 + a, sum_slots[a] == std::string::npos ? agg.count : agg.sums[a]);
        }
        sum += RecordHash(h);
        ++n;
      }
    };
    ForEachRecord(json, plan.schema, out, [&](const std::vector<Field>& fields) {
      const Field& tsf = fields[ts_slot];
      if (!tsf.set || !fields[key_slot].set) {
        return;  // no event time or no key: the job fails or drops such a record; none here
      }
      const int64_t ts = tsf.i;
      const int64_t window_start = ts - (((ts % size) + size) % size);
      if (window_start + size - 1 <= watermark) {
        ++out.late;
        return;
      }
      auto& aggs = open[window_start];
      const std::string_view key = fields[key_slot].s;
      auto it = aggs.find(absl::string_view(key.data(), key.size()));
      if (it == aggs.end()) {
        it = aggs.emplace(std::string(key), Agg{}).first;
      }
      Agg& agg = it->second;
      ++agg.count;
      for (size_t a = 0; a < sum_slots.size(); ++a) {
        if (sum_slots[a] != std::string::npos && fields[sum_slots[a]].set) {
          agg.sums[a] += fields[sum_slots[a]].i;
        }
      }
      if (ts > max_ts) {
        max_ts = ts;
        watermark = max_ts - plan.max_out_of_orderness_ms - 1;
        while (!open.empty() && open.begin()->first + size - 1 <= watermark) {
          fire(open.begin()->first, open.begin()->second);
          open.erase(open.begin());
        }
      }
    });
    for (const auto& [window_start, aggs] : open) {
      fire(window_start, aggs);
    }
    out.sink_records = n;
    out.checksum = sum;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

struct JsonValueScan::Impl {
  std::vector<SchemaFieldSpec> schema;
  std::vector<Field> fields;
  od::parser parser;
  std::vector<char> buffer;  // the value, then SIMDJSON_PADDING bytes
  int64_t records = 0;
  int64_t errors = 0;
  uint64_t checksum = 0;
};

JsonValueScan::Impl* NewJsonValueScanHaswell(const std::vector<SchemaFieldSpec>& schema) {
  auto* impl = new JsonValueScan::Impl();
  impl->schema = schema;
  impl->fields = FieldsOf(schema);
  return impl;
}

void DeleteJsonValueScanHaswell(JsonValueScan::Impl* impl) {
  delete impl;
}

void AddJsonValueHaswell(JsonValueScan::Impl& s, std::string_view value) {
  if (s.buffer.size() < value.size() + simdjson::SIMDJSON_PADDING) {
    s.buffer.resize(value.size() + simdjson::SIMDJSON_PADDING);
  }
  std::memcpy(s.buffer.data(), value.data(), value.size());
  od::document doc;
  od::object object;
  if (s.parser.iterate(s.buffer.data(), value.size(), s.buffer.size()).get(doc) !=
          simdjson::SUCCESS ||
      doc.get_object().get(object) != simdjson::SUCCESS ||
      !ReadFields(object, s.schema, s.fields)) {
    ++s.errors;
    return;
  }
  ++s.records;
  s.checksum += ScanHash(s.fields);
}

}  // namespace tidemark::bench
#pragma GCC pop_options
#endif

namespace tidemark::bench {

FileBaselineResult RunFileBaseline(const FileBenchPlan& plan, const std::string& path) {
#if TM_BASELINE_HASWELL
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
      __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("lzcnt")) {
    return RunFileBaselineHaswell(plan, path);
  }
#endif
  (void)plan;
  throw std::runtime_error(fmt::format(
      "{}: the file baseline needs x86-64 with AVX2 (simdjson's haswell kernel)", path));
}

}  // namespace tidemark::bench

namespace tidemark::bench {

JsonValueScan::JsonValueScan(const std::vector<SchemaFieldSpec>& schema) {
#if TM_BASELINE_HASWELL
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
      __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("lzcnt")) {
    impl_ = NewJsonValueScanHaswell(schema);
    return;
  }
#endif
  (void)schema;
  throw std::runtime_error(
      "the JSON value baseline needs x86-64 with AVX2 (simdjson's haswell kernel)");
}

JsonValueScan::~JsonValueScan() {
#if TM_BASELINE_HASWELL
  DeleteJsonValueScanHaswell(impl_);
#endif
}

void JsonValueScan::Add(std::string_view value) {
#if TM_BASELINE_HASWELL
  AddJsonValueHaswell(*impl_, value);
#else
  (void)value;
#endif
}

#if TM_BASELINE_HASWELL
int64_t JsonValueScan::records() const {
  return impl_->records;
}
int64_t JsonValueScan::errors() const {
  return impl_->errors;
}
uint64_t JsonValueScan::checksum() const {
  return impl_->checksum;
}
#else
int64_t JsonValueScan::records() const {
  return 0;
}  // never constructed without AVX2
int64_t JsonValueScan::errors() const {
  return 0;
}
uint64_t JsonValueScan::checksum() const {
  return 0;
}
#endif

}  // namespace tidemark::bench
