// The three renderings of `tidemark analyze`'s results: text for a terminal, JSON, SVG.

#include <algorithm>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/core/time_format.h"
#include "tools/analyze/lateness_analysis.h"

namespace tidemark::analyze {
namespace {

std::string Dur(int64_t ms) {
  return FormatDuration(ms);
}

// A duration as YAML takes it: whole seconds as "5s", anything else in ms.
std::string YamlDur(int64_t ms) {
  return ms % 1000 == 0 && ms != 0 ? fmt::format("{}s", ms / 1000) : fmt::format("{}ms", ms);
}

std::string Percent(double f) {
  return fmt::format("{:.2f}%", f * 100.0);
}

std::string Bytes(int64_t b) {
  if (b >= int64_t{10} * 1024 * 1024) {
    return fmt::format("{:.1f} MiB", static_cast<double>(b) / (1024.0 * 1024.0));
  }
  if (b >= int64_t{10} * 1024) {
    return fmt::format("{:.1f} KiB", static_cast<double>(b) / 1024.0);
  }
  return fmt::format("{} B", b);
}

std::string BinLabel(const LatenessDistribution& d, size_t i) {
  if (i == 0) {
    return "0";
  }
  return fmt::format("({}, {}]", Dur(d.edges[i - 1]), Dur(d.edges[i]));
}

void AppendHistogram(std::string& out, const LatenessDistribution& d, const std::string& indent) {
  const int64_t top = d.bins.empty() ? 0 : *std::max_element(d.bins.begin(), d.bins.end());
  size_t label_width = 0;
  for (size_t i = 0; i < d.bins.size(); ++i) {
    label_width = std::max(label_width, BinLabel(d, i).size());
  }
  for (size_t i = 0; i < d.bins.size(); ++i) {
    const int width = top == 0 ? 0 : static_cast<int>((d.bins[i] * 40 + top - 1) / top);
    std::string bar;
    for (int k = 0; k < width; ++k) {
      bar += "\u2588";
    }
    out +=
        fmt::format("{}{:<{}}  {:<40}  {}\n", indent, BinLabel(d, i), label_width, bar, d.bins[i]);
  }
}

std::string Row(const std::string& name, size_t width, const LatenessDistribution& d) {
  return fmt::format("    {:<{}} {:>8}  {:>20}  {:>7} {:>7} {:>7} {:>7} {:>7}\n", name, width,
                     d.count,
                     d.count == 0 ? std::string("-")
                                  : FormatEventTime(d.min_ts) + " .. " + FormatEventTime(d.max_ts),
                     Dur(d.p50), Dur(d.p90), Dur(d.p99), Dur(d.p999), Dur(d.max));
}

nlohmann::json DistJson(const LatenessDistribution& d) {
  nlohmann::json j;
  j["records"] = d.count;
  j["event_time_min_ms"] = d.min_ts;
  j["event_time_max_ms"] = d.max_ts;
  j["p50_ms"] = d.p50;
  j["p90_ms"] = d.p90;
  j["p99_ms"] = d.p99;
  j["p999_ms"] = d.p999;
  j["max_ms"] = d.max;
  nlohmann::json h = nlohmann::json::array();
  for (size_t i = 0; i < d.bins.size(); ++i) {
    h.push_back({{"above_ms", i == 0 ? -1 : d.edges[i - 1]},
                 {"up_to_ms", d.edges[i]},
                 {"records", d.bins[i]}});
  }
  j["histogram"] = h;
  return j;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

std::string FormatText(const JobSpec& job, const std::vector<SourceAnalysis>& analyses) {
  std::string out;
  for (const SourceAnalysis& a : analyses) {
    out += fmt::format("job {}: source '{}' ({}), parallelism {}, periodic watermarks every {}\n",
                       job.name, a.source_op, a.source_type, a.parallelism, Dur(a.interval_ms));
    out += "lateness = largest timestamp seen so far - the record's own (>= 0)\n";
    for (const SubtaskReport& r : a.subtasks) {
      out += fmt::format("\n{}#{}: {} records{}{}, read until {} of processing time{}\n",
                         a.source_op, r.subtask, r.records,
                         r.records_without_timestamp > 0
                             ? fmt::format(", {} without a timestamp", r.records_without_timestamp)
                             : "",
                         r.input_errors > 0 ? fmt::format(", {} input errors", r.input_errors) : "",
                         Dur(r.end_ms), r.truncated ? " (stopped at --max-records)" : "");
      size_t width = 8;
      for (const SplitReport& s : r.splits) {
        width = std::max(width, s.id.size());
      }
      out += fmt::format("    {:<{}} {:>8}  {:>20}  {:>7} {:>7} {:>7} {:>7} {:>7}\n", "SPLIT",
                         width, "RECORDS", "EVENT TIME", "P50", "P90", "P99", "P99.9", "MAX");
      for (const SplitReport& s : r.splits) {
        out += Row(s.id, width, s.lateness);
      }
      out += Row("merged", width, r.merged);
      out += "  merged lateness (records):\n";
      AppendHistogram(out, r.merged, "    ");
      out += "  gaps in arrival (processing time, the source's pacing):\n";
      for (const SplitReport& s : r.splits) {
        if (s.gap.longest_ms == 0) {
          out += fmt::format("    {:<{}} no gap\n", s.id, width);
          continue;
        }
        out += fmt::format("    {:<{}} longest {} ({} .. {}), P99 {}; ", s.id, width,
                           Dur(s.gap.longest_ms), Dur(s.gap.from_ms), Dur(s.gap.to_ms),
                           Dur(s.gap.p99_gap_ms));
        if (s.gap.idleness_below_ms > 0) {
          out += fmt::format("idleness < {} releases the watermark in it\n",
                             Dur(s.gap.idleness_below_ms));
        } else {
          out += "too short for any idleness timeout\n";
        }
      }
      out += fmt::format(
          "  bound for <= {} late records (a record is late when its timestamp <= the "
          "watermark at its arrival):\n",
          Percent(a.target_late));
      out += fmt::format("    at the source (a generator per split):        {}  ({} late){}\n",
                         Dur(r.bound.at_source_ms), Percent(r.bound.at_source_late),
                         r.bound.at_source_late > a.target_late ? "  (no bound reaches the target)"
                         : r.bound.at_source_ms == 0            ? "  -> strategy: monotonous"
                                                                : "");
      out += fmt::format(
          "    after the source (one generator per subtask): {}  ({} late); with a 10% "
          "margin: max-out-of-orderness: {}\n",
          Dur(r.bound.after_source_ms), Percent(r.bound.after_source_late),
          YamlDur(r.bound.after_source_with_margin_ms));
    }
    if (!a.late.empty()) {
      out += "\nlate records with the job's strategies:\n";
      for (const LateFigure& f : a.late) {
        const std::string where = f.at.empty() ? "by the watermark" : "at window '" + f.at + "'";
        if (!f.simulated) {
          out += fmt::format(
              "  {} ({}): not simulated (punctuated, or fields made after the source)\n",
              f.strategy_op, f.description);
          continue;
        }
        out += fmt::format(
            "  {} ({}): {} of {} {} ({}){}\n", f.strategy_op, f.description, f.late, f.records,
            where,
            Percent(f.records == 0 ? 0.0
                                   : static_cast<double>(f.late) / static_cast<double>(f.records)),
            f.measured_late ? fmt::format("; measured in a run: {}", *f.measured_late) : "");
      }
    }
    if (!a.state.empty()) {
      out +=
          "\nwindow state (seed 002 §4.3: rate x record size x (window + bound + allowed "
          "lateness)):\n";
      for (const StateEstimate& e : a.state) {
        out += fmt::format(
            "  {} ({}): {:.0f} records/s of event time, {} key{}, {:.0f} B/record, span {} "
            "(bound {}, watermark delay {})\n",
            e.window_op, e.description, e.records_per_s, e.keys, e.keys == 1 ? "" : "s",
            e.record_bytes, Dur(e.span_ms), Dur(e.bound_ms), Dur(e.delay_ms));
        out += fmt::format(
            "    buffering all records: {}; incremental aggregates (what it keeps): {}{}\n",
            Bytes(e.buffered_bytes), Bytes(e.estimate_bytes),
            e.measured_peak_bytes
                ? fmt::format("; measured peak (stateBytesPeak): {}", Bytes(*e.measured_peak_bytes))
                : "");
      }
    }
  }
  return out;
}

std::string FormatJson(const JobSpec& job, const std::vector<SourceAnalysis>& analyses) {
  nlohmann::json j;
  j["job"] = job.name;
  j["sources"] = nlohmann::json::array();
  for (const SourceAnalysis& a : analyses) {
    nlohmann::json s;
    s["id"] = a.source_op;
    s["type"] = a.source_type;
    s["parallelism"] = a.parallelism;
    s["auto_watermark_interval_ms"] = a.interval_ms;
    s["target_late_fraction"] = a.target_late;
    s["subtasks"] = nlohmann::json::array();
    for (const SubtaskReport& r : a.subtasks) {
      nlohmann::json t;
      t["subtask"] = r.subtask;
      t["records"] = r.records;
      t["records_without_timestamp"] = r.records_without_timestamp;
      t["input_errors"] = r.input_errors;
      t["end_processing_time_ms"] = r.end_ms;
      t["truncated"] = r.truncated;
      t["splits"] = nlohmann::json::array();
      for (const SplitReport& sp : r.splits) {
        nlohmann::json x;
        x["id"] = sp.id;
        x["lateness"] = DistJson(sp.lateness);
        x["gap"] = {{"longest_ms", sp.gap.longest_ms},
                    {"from_ms", sp.gap.from_ms},
                    {"to_ms", sp.gap.to_ms},
                    {"p99_gap_ms", sp.gap.p99_gap_ms},
                    {"idleness_below_ms", sp.gap.idleness_below_ms}};
        t["splits"].push_back(x);
      }
      t["merged"] = DistJson(r.merged);
      t["bound"] = {{"at_source_ms", r.bound.at_source_ms},
                    {"at_source_late_fraction", r.bound.at_source_late},
                    {"after_source_ms", r.bound.after_source_ms},
                    {"after_source_late_fraction", r.bound.after_source_late},
                    {"after_source_with_margin_ms", r.bound.after_source_with_margin_ms}};
      s["subtasks"].push_back(t);
    }
    s["late"] = nlohmann::json::array();
    for (const LateFigure& f : a.late) {
      nlohmann::json x = {{"strategy_operator", f.strategy_op},
                          {"strategy", f.description},
                          {"at", f.at},
                          {"records", f.records},
                          {"late", f.late},
                          {"simulated", f.simulated}};
      if (f.measured_late) {
        x["measured_late"] = *f.measured_late;
      }
      s["late"].push_back(x);
    }
    s["state"] = nlohmann::json::array();
    for (const StateEstimate& e : a.state) {
      nlohmann::json x = {{"window", e.window_op},
                          {"description", e.description},
                          {"keys", e.keys},
                          {"records_per_s", e.records_per_s},
                          {"record_bytes", e.record_bytes},
                          {"span_ms", e.span_ms},
                          {"bound_ms", e.bound_ms},
                          {"delay_ms", e.delay_ms},
                          {"buffered_bytes", e.buffered_bytes},
                          {"estimate_bytes", e.estimate_bytes}};
      if (e.measured_peak_bytes) {
        x["measured_peak_bytes"] = *e.measured_peak_bytes;
      }
      s["state"].push_back(x);
    }
    j["sources"].push_back(s);
  }
  return j.dump(2) + "\n";
}

std::string FormatSvg(const JobSpec& job, const std::vector<SourceAnalysis>& analyses) {
  // One panel per source: the merged lateness histogram of its first subtask, bars on a linear
  // count axis, the P99 bin marked.
  constexpr int kWidth = 640;
  constexpr int kPanel = 270;
  constexpr int kLeft = 60;
  constexpr int kRight = 20;
  constexpr int kTop = 50;
  constexpr int kPlot = 170;
  const int height = static_cast<int>(analyses.size()) * kPanel + 10;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"white\"/>\n",
      kWidth, height, kWidth, height);
  for (size_t p = 0; p < analyses.size(); ++p) {
    const SourceAnalysis& a = analyses[p];
    const LatenessDistribution& d = a.subtasks.front().merged;
    const int y0 = static_cast<int>(p) * kPanel;
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" font-size=\"13\" font-weight=\"bold\">{}: lateness at "
        "source '{}', subtask 0, splits merged</text>\n",
        kLeft, y0 + 18, Escape(job.name), Escape(a.source_op));
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\">{} records; P50 {}, P90 {}, P99 {}, P99.9 {}, max {}</text>\n",
        kLeft, y0 + 34, d.count, Dur(d.p50), Dur(d.p90), Dur(d.p99), Dur(d.p999), Dur(d.max));
    const int64_t top = d.bins.empty() ? 0 : *std::max_element(d.bins.begin(), d.bins.end());
    const int n = static_cast<int>(d.bins.size());
    const int plot_w = kWidth - kLeft - kRight;
    const int bar_w = n == 0 ? 0 : plot_w / n;
    const int base = y0 + kTop + kPlot;
    svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", kLeft,
                       base, kLeft + plot_w, base);
    svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n", kLeft,
                       y0 + kTop, kLeft, base);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", kLeft - 4,
                       y0 + kTop + 4, top);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">0</text>\n", kLeft - 4, base);
    svg += fmt::format(
        "<text x=\"12\" y=\"{}\" transform=\"rotate(-90 12 {})\" text-anchor=\"middle\">"
        "records</text>\n",
        y0 + kTop + kPlot / 2, y0 + kTop + kPlot / 2);
    for (int i = 0; i < n; ++i) {
      const int h = top == 0 ? 0 : static_cast<int>(d.bins[static_cast<size_t>(i)] * kPlot / top);
      const bool p99_bin =
          (i == 0 && d.p99 == 0) || (i > 0 && d.p99 > d.edges[static_cast<size_t>(i) - 1] &&
                                     d.p99 <= d.edges[static_cast<size_t>(i)]);
      svg += fmt::format(
          "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"><title>{}: {}"
          "</title></rect>\n",
          kLeft + i * bar_w + 1, base - h, std::max(bar_w - 2, 1), h,
          p99_bin ? "#d62728" : "#1f77b4",
          Escape(i == 0 ? "0" : Dur(d.edges[static_cast<size_t>(i)])),
          d.bins[static_cast<size_t>(i)]);
      const std::string label = i == 0 ? "0" : "\u2264" + Dur(d.edges[static_cast<size_t>(i)]);
      svg +=
          fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"9\">{}</text>\n",
                      kLeft + i * bar_w + bar_w / 2, base + 12, Escape(label));
    }
    svg += fmt::format(
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">lateness (the bin holding P99 in "
        "red); bound after the source for {} late: {}</text>\n",
        kLeft + plot_w / 2, base + 30, Percent(a.target_late),
        Dur(a.subtasks.front().bound.after_source_ms));
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace tidemark::analyze
