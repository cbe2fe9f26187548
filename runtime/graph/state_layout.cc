#include "runtime/graph/state_layout.h"

#include <fmt/format.h>

namespace tidemark {
namespace {

const char* AspectName(const std::string& aspect) {
  if (aspect == "type") {
    return "operator type";
  }
  if (aspect == "key") {
    return "key-by (key fields and types)";
  }
  if (aspect == "window") {
    return "window assigner";
  }
  return "aggregate layout";
}

}  // namespace

std::map<std::string, OperatorStateLayout> StateLayoutsOf(const JobGraph& graph) {
  std::map<std::string, OperatorStateLayout> layouts;
  for (const JobVertex& v : graph.vertices) {
    OperatorStateLayout layout;
    // Another operator type's state under the same id (a `window` block's state restored into a
    // `dedup` block) cannot be read whatever its key; refused by the restore, not found by the
    // task on every restart.
    layout["type"] = v.spec.type;
    if (!v.spec.key_by.empty()) {
      // The key's types come from the schema of the operator's first input.
      const Schema* input = nullptr;
      for (const JobEdge* e : graph.InputsOf(v.id)) {
        if (e->input_index == 0) {
          const JobVertex& from = graph.vertices[static_cast<size_t>(e->from)];
          auto side = from.compiled.side_output_schemas.find(e->side_output);
          input = e->side_output.empty() || side == from.compiled.side_output_schemas.end()
                      ? &from.compiled.output_schema
                      : &side->second;
          break;
        }
      }
      std::string key;
      for (const std::string& field : v.spec.key_by) {
        const int slot = input != nullptr ? input->IndexOf(field) : -1;
        key +=
            fmt::format("{}{} {}", key.empty() ? "" : ", ", field,
                        slot >= 0 ? ToString(input->field(static_cast<size_t>(slot)).type) : "?");
      }
      layout["key"] = "[" + key + "]";
    }
    if (v.spec.window) {
      const WindowSpec& w = *v.spec.window;
      std::string assigner = fmt::format("{} {}-time", w.assigner, w.time);
      if (w.assigner == "tumbling" || w.assigner == "sliding") {
        assigner += fmt::format(" size {}ms", w.size_ms);
      }
      if (w.assigner == "sliding") {
        assigner += fmt::format(" slide {}ms", w.slide_ms);
      }
      if (w.assigner == "session") {
        assigner += fmt::format(" gap {}ms", w.gap_ms);
      }
      if (w.offset_ms != 0) {
        assigner += fmt::format(" offset {}ms", w.offset_ms);
      }
      layout["window"] = assigner;
      std::string aggregate;
      for (const AggregateSpec& a : w.aggregates) {
        aggregate +=
            fmt::format("{}{}({}) as {}", aggregate.empty() ? "" : ", ", a.function, a.field, a.as);
      }
      layout["aggregate"] = "[" + aggregate + "]";
    }
    layouts[v.spec.id] = std::move(layout);
  }
  return layouts;
}

std::string StateLayoutChange(const std::string& id, const OperatorStateLayout& checkpointed,
                              const OperatorStateLayout& now) {
  for (const char* aspect : {"type", "key", "window", "aggregate"}) {
    auto before = checkpointed.find(aspect);
    auto after = now.find(aspect);
    if (before != checkpointed.end() && after != now.end() && before->second != after->second) {
      return fmt::format("operator \"{}\" changed its {} from {} to {}", id, AspectName(aspect),
                         before->second, after->second);
    }
    if ((before == checkpointed.end()) != (after == now.end()) && std::string(aspect) == "key" &&
        (checkpointed.size() > checkpointed.count("type"))) {
      return fmt::format("operator \"{}\" changed its {} from {} to {}", id, AspectName(aspect),
                         before == checkpointed.end() ? "none" : before->second,
                         after == now.end() ? "none" : after->second);
    }
  }
  return "";
}

}  // namespace tidemark
