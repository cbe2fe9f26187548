#include "operators/window/window_top_n_operator.h"

#include <algorithm>
#include <charconv>
#include <set>

#include <fmt/format.h>

#include "operators/operator_params.h"
#include "runtime/core/errors.h"
#include "runtime/state/key_groups.h"
#include "runtime/state/state_codec.h"
#include "runtime/task/metrics_writer.h"

namespace tidemark {

namespace {

// -1 / 0 / 1 of two cells of type `t` at `slot`; NULL lowest.
int CompareCells(const Row& a, const Row& b, size_t slot) {
  const bool an = a.IsNull(slot);
  const bool bn = b.IsNull(slot);
  if (an || bn) {
    return an == bn ? 0 : (an ? -1 : 1);
  }
  switch (a.type(slot)) {
    case FieldType::kInt64:
    case FieldType::kTimestamp: {
      const int64_t x = a.GetInt64(slot);
      const int64_t y = b.GetInt64(slot);
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    case FieldType::kDouble: {
      const double x = a.GetDouble(slot);
      const double y = b.GetDouble(slot);
      return x < y ? -1 : (x > y ? 1 : 0);  // NaN compares equal to everything: arrival order
    }
    case FieldType::kBool:
      return static_cast<int>(a.GetBool(slot)) - static_cast<int>(b.GetBool(slot));
    case FieldType::kString: {
      const int c = a.GetString(slot).compare(b.GetString(slot));
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
  }
  return 0;
}

}  // namespace

bool WindowTopNOperator::Before(const Row& a, const Row& b) const {
  for (const OrderKey& k : options_.order_by) {
    const int c = CompareCells(a, b, static_cast<size_t>(k.slot));
    if (c != 0) {
      return k.descending ? c > 0 : c < 0;
    }
  }
  return false;
}

void WindowTopNOperator::Insert(std::vector<Entry>& buffer, Entry entry) const {
  // After every row that does not sort after it: equal keys stay in arrival order.
  auto at = std::upper_bound(buffer.begin(), buffer.end(), entry,
                             [&](const Entry& e, const Entry& x) { return Before(e.row, x.row); });
  if (at - buffer.begin() >= options_.n) {
    return;  // not among the N best
  }
  buffer.insert(at, std::move(entry));
  if (static_cast<int64_t>(buffer.size()) > options_.n) {
    buffer.pop_back();
  }
}

void WindowTopNOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  const Row& row = record.row;
  const auto start_slot = static_cast<size_t>(options_.window_start_slot);
  const auto end_slot = static_cast<size_t>(options_.window_end_slot);
  if (row.IsNull(start_slot) || row.IsNull(end_slot)) {
    ++num_late_records_dropped_;  // no window: nothing to rank it in
    return;
  }
  const Timestamp end = row.GetInt64(end_slot);
  if (end - 1 <= watermark_) {
    ++num_late_records_dropped_;
    return;
  }
  Key partition;
  for (int slot : options_.partition_slots) {
    partition.push_back(row.Get(static_cast<size_t>(slot)));
  }
  std::vector<Entry>& buffer =
      windows_[WindowKey{end, row.GetInt64(start_slot), std::move(partition)}];
  Insert(buffer, Entry{row, ++arrivals_});
}

void WindowTopNOperator::ProcessWatermark(Watermark watermark, int /*input*/) {
  watermark_ = std::max(watermark_, watermark.timestamp);
  while (!windows_.empty()) {
    auto it = windows_.begin();
    const Timestamp end = std::get<0>(it->first);
    if (end - 1 > watermark_) {
      break;
    }
    int64_t rownum = 0;
    for (Entry& e : it->second) {
      StreamRecord out;
      out.row.Reset(options_.output_layout);
      for (size_t i = 0; i < e.row.size(); ++i) {
        out.row.CopyCell(i, e.row, i);
      }
      out.row.SetInt64(e.row.size(), ++rownum);
      out.timestamp = end - 1;
      out.has_timestamp = true;
      output().Collect(out);
    }
    windows_.erase(it);
  }
  output().EmitWatermark(watermark);
}

size_t WindowTopNOperator::rows_held() const {
  size_t n = 0;
  for (const auto& [k, buffer] : windows_) {
    n += buffer.size();
  }
  return n;
}

void WindowTopNOperator::CollectMetrics(MetricsWriter& out) const {
  out.Gauge("numLateRecordsDropped", num_late_records_dropped_);
  out.Gauge("currentWatermark", watermark_);
}

void WindowTopNOperator::SnapshotState(StateSnapshotContext& context) {
  StateWriter& w = context.writer;
  w.BeginSection("window-top-n", 1);
  w.WriteI64(watermark_);
  w.WriteI64(static_cast<int64_t>(arrivals_));
  w.WriteI64(num_late_records_dropped_);
  std::map<Key, std::vector<const std::pair<const WindowKey, std::vector<Entry>>*>> by_key;
  std::vector<Key> keys;
  for (const auto& entry : windows_) {
    by_key[std::get<2>(entry.first)].push_back(&entry);
    keys.push_back(std::get<2>(entry.first));
  }
  WriteKeyGroups(w, StreamOperator::context().max_parallelism, keys, [&](const Key& key) {
    const auto& list = by_key.at(key);
    w.WriteU32(static_cast<uint32_t>(list.size()));
    for (const auto* entry : list) {
      w.WriteI64(std::get<0>(entry->first));
      w.WriteI64(std::get<1>(entry->first));
      w.WriteU32(static_cast<uint32_t>(entry->second.size()));
      for (const Entry& e : entry->second) {
        w.WriteI64(static_cast<int64_t>(e.seq));
        w.WriteRow(e.row);
      }
    }
  });
  w.EndSection();
}

void WindowTopNOperator::InitializeState(StateInitializationContext& context) {
  if (!context.is_restored()) {
    return;
  }
  StateReader& r = *context.reader;
  r.BeginSection("window-top-n", 1);
  if (const Timestamp watermark = r.ReadI64(); context.restore_watermarks) {
    watermark_ = watermark;
  }
  arrivals_ = static_cast<uint64_t>(r.ReadI64());
  num_late_records_dropped_ = r.ReadI64();
  windows_.clear();
  ReadKeyGroups(r, StreamOperator::context().max_parallelism,
                KeyGroupRangeForOperator(StreamOperator::context().max_parallelism,
                                         StreamOperator::context().parallelism,
                                         StreamOperator::context().subtask_index),
                [&](const Key& key) {
                  const uint32_t n_windows = r.ReadU32();
                  for (uint32_t i = 0; i < n_windows; ++i) {
                    const Timestamp end = r.ReadI64();
                    const Timestamp start = r.ReadI64();
                    const uint32_t n_rows = r.ReadU32();
                    if (n_rows > static_cast<uint64_t>(options_.n)) {
                      throw StateCorrupt("window-top-n snapshot: more rows than n in a window");
                    }
                    std::vector<Entry>& buffer = windows_[WindowKey{end, start, key}];
                    for (uint32_t j = 0; j < n_rows; ++j) {
                      Entry e;
                      e.seq = static_cast<uint64_t>(r.ReadI64());
                      e.row = r.ReadRow(options_.input_layout);
                      buffer.push_back(std::move(e));
                    }
                  }
                });
  r.EndSection();
}

// ---- Compile: `type: window-top-n` ----

namespace {

// "total DESC, trips" -> order keys; an unknown field or direction fails at the node.
std::vector<WindowTopNOperator::OrderKey> ParseOrderBy(const OperatorParams& params,
                                                       const ParamNode& node, const Schema& input) {
  std::vector<std::string> items;
  if (node.IsScalar()) {
    std::string_view text = node.scalar;
    size_t from = 0;
    while (from <= text.size()) {
      const size_t comma = text.find(',', from);
      items.emplace_back(
          text.substr(from, comma == std::string_view::npos ? text.npos : comma - from));
      if (comma == std::string_view::npos) {
        break;
      }
      from = comma + 1;
    }
  } else if (node.IsSequence()) {
    for (const ParamNode& item : node.items) {
      if (!item.IsScalar()) {
        params.Fail(item.location, "order-by", "expected \"<field> [ASC|DESC]\"");
      }
      items.push_back(item.scalar);
    }
  } else {
    params.Fail(node.location, "order-by", "expected a sort like \"total DESC\" or a list of them");
  }
  std::vector<WindowTopNOperator::OrderKey> keys;
  for (const std::string& item : items) {
    std::vector<std::string> words;
    size_t i = 0;
    while (i < item.size()) {
      while (i < item.size() && item[i] == ' ') {
        ++i;
      }
      size_t j = i;
      while (j < item.size() && item[j] != ' ') {
        ++j;
      }
      if (j > i) {
        words.push_back(item.substr(i, j - i));
      }
      i = j;
    }
    if (words.empty() || words.size() > 2) {
      params.Fail(node.location, "order-by",
                  fmt::format("expected \"<field> [ASC|DESC]\", got \"{}\"", item));
    }
    WindowTopNOperator::OrderKey key;
    key.slot = input.IndexOf(words[0]);
    if (key.slot < 0) {
      params.Fail(
          node.location, "order-by",
          fmt::format("unknown field '{}' (input fields: {})", words[0], FieldNames(input)));
    }
    if (words.size() == 2) {
      std::string dir = words[1];
      std::transform(dir.begin(), dir.end(), dir.begin(),
                     [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
      if (dir != "ASC" && dir != "DESC") {
        params.Fail(node.location, "order-by",
                    fmt::format("expected ASC or DESC after '{}', got \"{}\"", words[0], words[1]));
      }
      key.descending = dir == "DESC";
    }
    keys.push_back(key);
  }
  return keys;
}

CompiledOperator CompileWindowTopN(const CompileContext& ctx) {
  if (ctx.input_schemas.size() != 1) {
    throw CompileError("inputs", "a window-top-n operator takes exactly one input");
  }
  const Schema& input = ctx.input_schemas.front();
  OperatorParams params(ctx.spec);
  params.CheckKeys({"n", "order-by", "partition-by"});
  if (!ctx.spec.key_by.empty()) {
    params.Fail(ctx.spec.location, "key-by",
                "window-top-n partitions by window and `partition-by`; it takes no key-by");
  }
  WindowTopNOperator::Options options;
  const ParamNode* n = params.Get("n");
  if (n == nullptr) {
    params.Fail(ctx.spec.params ? ctx.spec.params->location : ctx.spec.location, "n",
                "missing required key (how many rows per window, e.g. n: 3)");
  }
  {
    const std::string& text = n->scalar;
    int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (!n->IsScalar() || ec != std::errc() || end != text.data() + text.size() || value < 1 ||
        value > 100000) {
      params.Fail(n->location, "n",
                  fmt::format("expected a whole number from 1 to 100000, got \"{}\"", text));
    }
    options.n = value;
  }
  const ParamNode* order = params.Get("order-by");
  if (order == nullptr) {
    params.Fail(ctx.spec.params ? ctx.spec.params->location : ctx.spec.location, "order-by",
                "missing required key (the ranking, e.g. order-by: total DESC)");
  }
  options.order_by = ParseOrderBy(params, *order, input);
  if (params.Has("partition-by")) {
    options.partition_slots = params.FieldList("partition-by", input);
  }
  for (const char* name : {"window_start", "window_end"}) {
    const int slot = input.IndexOf(name);
    if (slot < 0 || input.field(static_cast<size_t>(slot)).type != FieldType::kTimestamp) {
      params.Fail(ctx.spec.location, "inputs",
                  fmt::format("window-top-n ranks the rows of a window aggregate: its input needs "
                              "a timestamp column '{}' (input fields: {})",
                              name, FieldNames(input)));
    }
    (std::string_view(name) == "window_start" ? options.window_start_slot
                                              : options.window_end_slot) = slot;
  }
  if (input.IndexOf("rownum") >= 0) {
    params.Fail(ctx.spec.location, "inputs",
                "the input already has a column 'rownum', which window-top-n adds");
  }
  CompiledOperator out;
  out.output_schema = input;
  out.output_schema.Add("rownum", FieldType::kInt64);
  options.input_layout = input.layout();
  options.output_layout = out.output_schema.layout();
  out.input_key_slots = options.partition_slots;
  out.hash_input = true;
  if (options.partition_slots.empty()) {
    out.forced_parallelism = 1;  // every row of a window meets in one ranking
  }
  out.factory = [options](int, int) -> std::unique_ptr<StreamOperator> {
    return std::make_unique<WindowTopNOperator>(options);
  };
  return out;
}

}  // namespace

void RegisterWindowTopN(OperatorRegistry& registry) {
  registry.Register("window-top-n", CompileWindowTopN);
}

}  // namespace tidemark
