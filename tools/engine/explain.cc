#include "tools/engine/explain.h"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "runtime/core/time_format.h"

namespace tidemark {
namespace {

std::string Time(Timestamp t) {
  if (t == kMinTimestamp) {
    return "MIN (none yet)";
  }
  return FormatEventTime(t);
}

std::string Behind(Timestamp ahead, Timestamp behind) {
  if (behind == kMinTimestamp || ahead == kMaxTimestamp || ahead == kMinTimestamp ||
      ahead == behind) {
    return "";
  }
  return fmt::format(", {} behind", FormatDuration(ahead - behind));
}

std::optional<int64_t> Gauge(const MetricsWriter::Gauges& gauges, const std::string& name) {
  for (const auto& [n, v] : gauges) {
    if (n == name) {
      return v;
    }
  }
  return std::nullopt;
}

struct Split {
  std::string id;
  Timestamp watermark = kMinTimestamp;
  bool idle = false;
  bool paused = false;
  int64_t records = 0;
  Timestamp last_active_check = kMinTimestamp;
};

std::vector<Split> SplitsOf(const MetricsWriter::Gauges& gauges) {
  std::map<std::string, Split> by_id;
  std::vector<std::string> order;
  const std::string suffix = ".watermark";
  for (const auto& [name, value] : gauges) {
    if (name.rfind("split.", 0) == 0 && name.size() > 6 + suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string id = name.substr(6, name.size() - 6 - suffix.size());
      Split s;
      s.id = id;
      s.watermark = value;
      s.idle = Gauge(gauges, "split." + id + ".idle").value_or(0) != 0;
      s.paused = Gauge(gauges, "split." + id + ".paused").value_or(0) != 0;
      s.records = Gauge(gauges, "split." + id + ".numRecordsOut").value_or(0);
      s.last_active_check =
          Gauge(gauges, "split." + id + ".lastActiveCheck").value_or(kMinTimestamp);
      by_id[id] = s;
      order.push_back(id);
    }
  }
  std::vector<Split> out;
  for (const auto& id : order) {
    out.push_back(by_id[id]);
  }
  return out;
}

class Explainer {
 public:
  Explainer(const JobSpec& spec, const std::vector<TaskWatermarkSnapshot>& snapshots,
            const ExplainContext& context)
      : spec_(spec), snapshots_(snapshots), context_(context) {}

  void ExplainOperator(const std::string& op_id) {
    bool found = false;
    for (const auto& s : snapshots_) {
      if (!s.taken) {
        continue;
      }
      for (size_t i = 0; i < s.operators.size(); ++i) {
        if (s.operators[i].name != op_id) {
          continue;
        }
        found = true;
        const Timestamp in = InputWatermark(s, i);
        Line(0, fmt::format("{}#{}: input watermark {} at processing time {} ({})", op_id,
                            s.subtask, Time(in), FormatEventTime(s.time),
                            s.live ? "now, while the job runs"
                                   : "where it stood until end of input reached it"));
        mistakes_.clear();
        ExplainInput(s, i, 1);
        for (const auto& m : mistakes_) {
          Line(1, "likely mistake: " + m);
        }
      }
    }
    if (!found) {
      Line(0, NotFound(op_id));
    }
  }

  std::string Take() { return std::move(out_); }

 private:
  void Line(int indent, const std::string& text) {
    out_ += std::string(static_cast<size_t>(indent) * 2, ' ') + text + "\n";
  }

  // Why operator `op_id` has no snapshot, in words that fit the job's state.
  std::string NotFound(const std::string& op_id) const {
    if (SpecOf(op_id) == nullptr) {
      return fmt::format("{}: no such operator in the job", op_id);
    }
    if (context_.live) {
      return fmt::format(
          "{}: its task did not answer in time (busy with a long step, or restarting); ask again",
          op_id);
    }
    if (context_.state == "CANCELED" || context_.state == "FAILED") {
      return fmt::format(
          "{}: the job was {} before end of input reached this operator, so there is no final "
          "state to explain; `tidemark explain` of a running job shows where its watermarks stand",
          op_id, context_.state);
    }
    return fmt::format("{}: end of input never reached this operator", op_id);
  }

  const OperatorSpec* SpecOf(const std::string& id) const {
    for (const auto& op : spec_.operators) {
      if (op.id == id) {
        return &op;
      }
    }
    return nullptr;
  }

  /// The watermark operator i of task s sees on its input.
  static Timestamp InputWatermark(const TaskWatermarkSnapshot& s, size_t i) {
    if (i > 0) {
      return s.operators[i - 1].output_watermark;
    }
    if (s.inputs.empty()) {
      return s.operators[0].output_watermark;  // a source: its own output
    }
    Timestamp w = kMaxTimestamp;
    for (const auto& in : s.inputs) {
      w = std::min(w, in.watermark);
    }
    return w;
  }

  const TaskWatermarkSnapshot* SnapshotOf(const std::string& label) const {
    for (const auto& s : snapshots_) {
      if (s.taken && fmt::format("{}#{}", s.task, s.subtask) == label) {
        return &s;
      }
    }
    return nullptr;
  }

  /// Explains where operator i of task s gets its input watermark from.
  void ExplainInput(const TaskWatermarkSnapshot& s, size_t i, int indent) {
    if (i > 0) {
      const auto& prev = s.operators[i - 1];
      Line(indent, fmt::format("input: chained after '{}', whose output watermark is {}", prev.name,
                               Time(prev.output_watermark)));
      ExplainOutput(s, i - 1, indent + 1);
      return;
    }
    if (s.inputs.empty()) {
      ExplainOutput(s, 0, indent);
      return;
    }
    for (const auto& in : s.inputs) {
      Line(indent,
           fmt::format("input {}: {} (the minimum over its active, unfinished channels{})",
                       in.input_index, Time(in.watermark), in.idle ? "; the input is IDLE" : ""));
      Timestamp highest = kMinTimestamp;
      const TaskWatermarkSnapshot::Channel* holder = nullptr;
      for (const auto& c : in.channels) {
        highest = std::max(highest, c.watermark);
        if (!c.idle && !c.finished && (holder == nullptr || c.watermark < holder->watermark)) {
          holder = &c;
        }
      }
      for (const auto& c : in.channels) {
        const std::string state = c.finished ? "finished" : c.idle ? "idle" : "active";
        Line(indent + 1, fmt::format("from {}: {}, {}{}{}", c.upstream, Time(c.watermark), state,
                                     &c == holder ? " <- holds the minimum" : "",
                                     &c == holder ? Behind(highest, c.watermark) : ""));
      }
      if (holder != nullptr) {
        if (const TaskWatermarkSnapshot* up = SnapshotOf(holder->upstream)) {
          ExplainOutput(*up, up->operators.size() - 1, indent + 1);
        }
        Line(indent + 1, fmt::format("would move it: a higher watermark from {}, its idleness, or "
                                     "its end of input",
                                     holder->upstream));
      }
    }
  }

  /// Explains operator i's output watermark.
  void ExplainOutput(const TaskWatermarkSnapshot& s, size_t i, int indent) {
    const auto& op = s.operators[i];
    const OperatorSpec* spec = SpecOf(op.name);
    const std::string type = spec != nullptr ? spec->type : "";
    if (type == "assign-timestamps-and-watermarks") {
      Line(indent, fmt::format("'{}' (assign-timestamps-and-watermarks) generates this watermark: "
                               "one generator for subtask {} over all the records it gets, {}",
                               op.name, s.subtask, Time(op.output_watermark)));
      std::string source;
      for (const auto& in : spec->inputs) {
        const OperatorSpec* up = SpecOf(in.from);
        if (up != nullptr && up->type == "source") {
          source = up->id;
        }
      }
      if (!source.empty()) {
        mistakes_.push_back(fmt::format(
            "the watermark strategy is set after the source: '{}' follows source '{}' and drops "
            "its "
            "watermarks, so the splits' records are interleaved under one generator and a split "
            "behind the others has its records late. Set `watermarks:` on source '{}' for "
            "per-split watermarks (the split mode of the two-split experiment)",
            op.name, source, source));
      }
      return;
    }
    if (type == "source") {
      ExplainSource(s, op, spec, indent);
      return;
    }
    if (i > 0) {
      Line(indent, fmt::format("'{}' forwards its input's watermark", op.name));
      ExplainInput(s, i, indent);
      return;
    }
    ExplainInput(s, 0, indent);
  }

  void ExplainSource(const TaskWatermarkSnapshot& s, const TaskWatermarkSnapshot::Operator& op,
                     const OperatorSpec* spec, int indent) {
    const bool has_strategy = spec != nullptr && spec->watermarks.has_value();
    const std::vector<Split> splits = SplitsOf(op.gauges);
    if (!has_strategy) {
      Line(indent, fmt::format("source '{}'#{} has no watermark strategy: it emits no watermark "
                               "before its end",
                               op.name, s.subtask));
      return;
    }
    const std::optional<int64_t> idleness = spec->watermarks->idleness_ms;
    if (splits.empty()) {
      Line(indent, fmt::format("source '{}'#{}: {}; it has no split", op.name, s.subtask,
                               Time(op.output_watermark)));
      return;
    }
    Line(indent, fmt::format("source '{}'#{} emits the minimum over its active splits: {}", op.name,
                             s.subtask, Time(op.output_watermark)));
    Timestamp highest = kMinTimestamp;
    const Split* holder = nullptr;
    for (const Split& sp : splits) {
      highest = std::max(highest, sp.watermark);
      if (!sp.idle && (holder == nullptr || sp.watermark < holder->watermark)) {
        holder = &sp;
      }
    }
    if (const std::optional<int64_t> advance = spec->watermarks->idle_advance_ms) {
      // Otherwise the output is a minimum over the splits: above all of them only idle-advance.
      Line(indent + 1,
           op.output_watermark > highest
               ? fmt::format("{} came from idle-advance ({} ms): no split has had a record for "
                             "that long, so event time goes on with processing time; records "
                             "arriving now behind it are late",
                             Time(op.output_watermark), *advance)
               : fmt::format("idle-advance is {} ms: once no split has had a record for that "
                             "long, the watermark goes on with processing time",
                             *advance));
    }
    for (const Split& sp : splits) {
      std::string state = sp.idle ? "idle" : sp.paused ? "paused for alignment" : "active";
      std::string last = sp.records == 0 ? "no record"
                         : sp.last_active_check == kMinTimestamp
                             ? fmt::format("{} records", sp.records)
                             : fmt::format("{} records, the last before {}", sp.records,
                                           FormatEventTime(sp.last_active_check));
      Line(indent + 1, fmt::format("split {}: {}, {}, {}{}{}", sp.id, Time(sp.watermark), state,
                                   last, &sp == holder ? " <- holds the minimum" : "",
                                   &sp == holder ? Behind(highest, sp.watermark) : ""));
    }
    if (holder == nullptr) {
      return;
    }
    const std::string idleness_text =
        idleness ? fmt::format("idleness is {} ms", *idleness) : "no idleness is set";
    if (holder->records == 0) {
      mistakes_.push_back(
          fmt::format("split {} never got a record: it holds source '{}' at MIN; {}{}", holder->id,
                      op.name, idleness_text,
                      idleness ? "" : " (watermarks.idleness would leave it out after a timeout)"));
    } else if (holder->paused) {
      Line(indent + 1, fmt::format("split {} is paused by watermark alignment; the group's next "
                                   "announcement resumes it",
                                   holder->id));
    } else if (holder->last_active_check != kMinTimestamp &&
               s.time - holder->last_active_check > 1000 && holder->watermark < highest) {
      if (!idleness && !spec->watermarks->idle_advance_ms) {
        mistakes_.push_back(fmt::format(
            "split {} stopped (no record after {}, {} before this) but is still open, and no "
            "idleness is set on source '{}' (watermarks.idleness): nothing lets event time go on "
            "without it until end of input",
            holder->id, FormatEventTime(holder->last_active_check),
            FormatDuration(s.time - holder->last_active_check), op.name));
      } else if (idleness) {
        Line(indent + 1,
             fmt::format("split {} has had no record since {}; {}: it becomes idle "
                         "after that long without records",
                         holder->id, FormatEventTime(holder->last_active_check), idleness_text));
      }
    }
    Line(indent + 1,
         fmt::format("would move it: a later record on split {}, its end{}{}, or end of "
                     "input",
                     holder->id, idleness ? ", its idleness" : ", an idleness timeout",
                     spec->watermarks->idle_advance_ms ? ", idle-advance" : ""));
  }

  const JobSpec& spec_;
  const std::vector<TaskWatermarkSnapshot>& snapshots_;
  const ExplainContext& context_;
  std::vector<std::string> mistakes_;
  std::string out_;
};

}  // namespace

std::string ExplainWatermarks(const JobSpec& spec,
                              const std::vector<TaskWatermarkSnapshot>& snapshots,
                              const std::string& operator_id, const ExplainContext& context) {
  Explainer e(spec, snapshots, context);
  std::vector<std::string> targets;
  if (!operator_id.empty()) {
    targets.push_back(operator_id);
  } else {
    for (const auto& op : spec.operators) {
      if (op.type == "window" || op.type.find("join") != std::string::npos) {
        targets.push_back(op.id);
      }
    }
    if (targets.empty()) {
      for (const auto& op : spec.operators) {
        if (op.type != "source" && op.type != "sink") {
          targets.push_back(op.id);
        }
      }
    }
  }
  for (const auto& t : targets) {
    e.ExplainOperator(t);
  }
  return e.Take();
}

}  // namespace tidemark
