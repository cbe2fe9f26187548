#include "tools/bench/bench_command.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sys/resource.h>
#include <unistd.h>
#include <utility>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "config/diagnostic.h"
#include "config/job_loader.h"
#include "runtime/graph/job_graph.h"
#include "tools/bench/baselines.h"
#include "tools/bench/bench_run.h"
#include "tools/bench/checkpoint_size_bench.h"
#include "tools/bench/file_bench.h"
#include "tools/bench/kafka_bench.h"
#include "tools/engine/engine.h"

namespace tidemark::bench {
int64_t CurrentRssBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  int64_t resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

int64_t PeakRssBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

double Median(std::vector<double> v) {
  if (v.empty()) {
    return 0;
  }
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double MedianPairedRatio(const std::vector<double>& numerators,
                         const std::vector<double>& denominators) {
  std::vector<double> ratios;
  for (size_t i = 0; i < numerators.size() && i < denominators.size(); ++i) {
    if (denominators[i] > 0) {
      ratios.push_back(numerators[i] / denominators[i]);
    }
  }
  return Median(std::move(ratios));
}

double Percentile(std::vector<int64_t>& sorted, double q) {
  if (sorted.empty()) {
    return 0;
  }
  const auto i = static_cast<size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5);
  return static_cast<double>(sorted[std::min(i, sorted.size() - 1)]);
}

std::string SinkId(const JobSpec& spec) {
  for (const OperatorSpec& op : spec.operators) {
    if (op.type == "sink" && op.sink && op.sink->type == "checksum") {
      return op.id;
    }
  }
  return "";
}

void DrawProgress(const std::string& label, double fraction) {
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(std::clamp(fraction, 0.0, 1.0) * kWidth);
  std::fprintf(stderr, "\r%-28s [%s%s] %3d%%", label.c_str(),
               std::string(static_cast<size_t>(filled), '#').c_str(),
               std::string(static_cast<size_t>(kWidth - filled), '.').c_str(),
               static_cast<int>(fraction * 100));
  std::fflush(stderr);
}

RunFigures RunJobOnce(const JobSpec& spec, const std::string& sink_id, int64_t total_records,
                      const std::string& label, bool progress) {
  RunFigures f;
  auto job = LocalJob::Create(spec, [](const std::string&) {});
  for (const JobEdge& e : job->execution().graph().edges) {
    f.chained = f.chained && job->execution().graph().IsChained(e);
  }
  const int64_t rss_before = CurrentRssBytes();
  const auto start = std::chrono::steady_clock::now();
  job->execution().Start();
  if (progress) {
    while (!job->execution().WaitFor(std::chrono::milliseconds(100))) {
      int64_t in = 0;
      for (const auto& m : job->execution().Metrics()) {
        if (m.task.rfind(spec.operators.front().id, 0) == 0 ||
            m.task.find(" -> ") == std::string::npos) {
          in = std::max(in, m.records_in);
        }
      }
      DrawProgress(label, total_records > 0
                              ? static_cast<double>(in) / static_cast<double>(total_records)
                              : 0);
    }
  }
  const JobState state = job->execution().Wait();
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  f.state_bytes = std::max<int64_t>(0, CurrentRssBytes() - rss_before);
  if (state != JobState::kFinished) {
    f.failure = fmt::format("job {}: {}", ToString(state), job->execution().failure_cause());
    return f;
  }
  if (auto sink = job->resources().FindSinkResult(sink_id)) {
    f.sink_records = sink->count();
    f.checksum = sink->checksum();
    f.latency_ns = sink->LatencySamplesNs();
  }
  for (const SubtaskMetrics& m : job->execution().Metrics()) {
    for (const OperatorMetrics& op : m.operators) {
      for (const auto& [name, value] : op.gauges) {
        if (name == "stateMemoryBytesPeak") {
          f.state_memory_bytes += value;
        } else if (name == "stateKeysPeak") {
          f.state_keys += value;
        }
      }
    }
  }
  f.checkpoints_completed = job->execution().checkpoint_stats().completed;
  f.alignment_ns = job->execution().checkpoint_alignment_history_ns();
  return f;
}

std::optional<RunFigures> RunBenchJob(const BenchOptions& o, const JobSpec& spec,
                                      const std::string& sink_id, int64_t total_records, int r,
                                      bool progress) {
  const std::string label = r < o.warmup
                                ? fmt::format("{} warm-up", spec.name)
                                : fmt::format("{} run {}/{}", spec.name, r - o.warmup + 1, o.runs);
  RunFigures f = RunJobOnce(spec, sink_id, total_records, label, progress);
  if (!f.failure.empty()) {
    if (progress) {
      std::fprintf(stderr, "\n");
    }
    std::cerr << spec.name << ": " << f.failure << "\n";
    return std::nullopt;
  }
  return f;
}

BenchJobEnds FindBenchJobEnds(const JobSpec& job) {
  BenchJobEnds ends;
  for (const OperatorSpec& op : job.operators) {
    ends.by_id[op.id] = &op;
    if (op.type == "source") {
      if (ends.source != nullptr) {
        ends.unsupported = "more than one source";
      }
      ends.source = &op;
    } else if (op.type == "sink") {
      if (ends.sink != nullptr && ends.unsupported.empty()) {
        ends.unsupported = "more than one sink";
      }
      ends.sink = &op;
    }
  }
  return ends;
}

namespace {

struct Series {
  std::vector<double> rates;
  BaselineResult last;
  void Add(const BaselineResult& r, int64_t records) {
    rates.push_back(r.seconds > 0 ? static_cast<double>(records) / r.seconds : 0);
    last = r;
  }
};

nlohmann::json SeriesJson(const Series& s) {
  if (s.rates.empty()) {
    return nullptr;
  }
  return {{"records_per_s", Median(s.rates)},
          {"records_per_s_min", *std::min_element(s.rates.begin(), s.rates.end())},
          {"records_per_s_max", *std::max_element(s.rates.begin(), s.rates.end())},
          {"sink_records", s.last.sink_records},
          {"checksum", fmt::format("{:016x}", s.last.checksum)}};
}

}  // namespace

namespace {

/// `--checkpoints`: the job without checkpoints, then every 1 s and every 100 ms, interleaved
/// per measured run so machine noise hits all three alike.
int RunCheckpointBench(const BenchOptions& o, const JobSpec& base, const std::string& sink_id,
                       int64_t records, bool progress) {
  struct Variant {
    std::string name;
    int64_t interval_ms = 0;  // 0: no checkpointing
    std::vector<double> rates;
    std::vector<int64_t> alignment_ns;
    std::vector<double> checkpoints;
    RunFigures last;
  };
  std::vector<Variant> variants{
      {"none", 0, {}, {}, {}, {}}, {"1s", 1000, {}, {}, {}, {}}, {"100ms", 100, {}, {}, {}, {}}};
  try {
    for (int r = 0; r < o.warmup + o.runs; ++r) {
      for (Variant& v : variants) {
        JobSpec spec = base;
        spec.name = fmt::format("{} (checkpoints {})", base.name, v.name);
        if (v.interval_ms > 0) {
          CheckpointingSpec c;
          c.interval_ms = v.interval_ms;  // no dir: a temporary one, removed with the run
          spec.checkpointing = c;
        } else {
          spec.checkpointing.reset();
        }
        std::optional<RunFigures> run = RunBenchJob(o, spec, sink_id, records, r, progress);
        if (!run) {
          return 1;
        }
        if (r >= o.warmup) {
          v.rates.push_back(run->seconds > 0 ? static_cast<double>(records) / run->seconds : 0);
          v.alignment_ns.insert(v.alignment_ns.end(), run->alignment_ns.begin(),
                                run->alignment_ns.end());
          v.checkpoints.push_back(static_cast<double>(run->checkpoints_completed));
          v.last = std::move(*run);
        }
      }
    }
  } catch (const JobCompileError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (progress) {
    std::fprintf(stderr, "\r%-70s\r", "");
  }
  const double none_rate = Median(variants[0].rates);
  bool checksum_ok = true;
  nlohmann::ordered_json j;
  j["name"] = base.name;
  j["file"] = o.path;
  j["records"] = records;
  j["runs"] = o.runs;
  j["warmup"] = o.warmup;
  j["mode"] = "checkpoints";
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  for (Variant& v : variants) {
    checksum_ok = checksum_ok && v.last.checksum == variants[0].last.checksum &&
                  v.last.sink_records == variants[0].last.sink_records;
    std::sort(v.alignment_ns.begin(), v.alignment_ns.end());
    const double rate = Median(v.rates);
    nlohmann::ordered_json c;
    c["checkpoint_interval_ms"] =
        v.interval_ms > 0 ? nlohmann::ordered_json(v.interval_ms) : nlohmann::ordered_json(nullptr);
    c["records_per_s"] = rate;
    c["records_per_s_min"] = *std::min_element(v.rates.begin(), v.rates.end());
    c["records_per_s_max"] = *std::max_element(v.rates.begin(), v.rates.end());
    c["ratio_to_no_checkpoints"] = none_rate > 0 ? rate / none_rate : 0;
    c["checkpoints_per_run"] = Median(v.checkpoints);
    c["alignment_samples"] = v.alignment_ns.size();
    c["p50_alignment_us"] = v.alignment_ns.empty()
                                ? nlohmann::ordered_json(nullptr)
                                : nlohmann::ordered_json(Percentile(v.alignment_ns, 0.50) / 1e3);
    c["p99_alignment_us"] = v.alignment_ns.empty()
                                ? nlohmann::ordered_json(nullptr)
                                : nlohmann::ordered_json(Percentile(v.alignment_ns, 0.99) / 1e3);
    c["max_alignment_us"] =
        v.alignment_ns.empty()
            ? nlohmann::ordered_json(nullptr)
            : nlohmann::ordered_json(static_cast<double>(v.alignment_ns.back()) / 1e3);
    c["sink_records"] = v.last.sink_records;
    c["checksum"] = fmt::format("{:016x}", v.last.checksum);
    cases.push_back(std::move(c));
  }
  j["cases"] = cases;
  j["checksum_ok"] = checksum_ok;
  if (o.json) {
    std::cout << j.dump() << "\n";
  } else {
    std::cout << fmt::format(
        "bench {} ({}): {} records, checkpoint cost, median of {} runs after {} warm-up\n",
        base.name, o.path, records, o.runs, o.warmup);
    for (size_t i = 0; i < variants.size(); ++i) {
      const nlohmann::ordered_json& c = cases[i];
      std::string alignment = "-";
      if (!c["p99_alignment_us"].is_null()) {
        alignment = fmt::format(
            "p50 {:.1f} us, p99 {:.1f} us, max {:.1f} us", c["p50_alignment_us"].get<double>(),
            c["p99_alignment_us"].get<double>(), c["max_alignment_us"].get<double>());
      }
      std::cout << fmt::format(
          "  checkpoints {:<6} {:.2f} M records/s  ratio {:.3f}  {} checkpoints/run  alignment "
          "{}\n",
          variants[i].name, c["records_per_s"].get<double>() / 1e6,
          c["ratio_to_no_checkpoints"].get<double>(), c["checkpoints_per_run"].get<double>(),
          alignment);
    }
    std::cout << fmt::format("  sink               {} records, checksum {:016x}{}\n",
                             variants[0].last.sink_records, variants[0].last.checksum,
                             checksum_ok ? " in every case (ok)" : " differs (MISMATCH)");
  }
  if (!checksum_ok) {
    std::cerr << base.name << ": the sink checksum differs between the checkpoint cases\n";
    return 3;
  }
  return 0;
}

}  // namespace

CLI::App* AddBenchSubcommand(CLI::App& app, BenchOptions& o) {
  auto* cmd = app.add_subcommand("bench",
                                 "Benchmark a generator (or generated file) -> ... -> checksum job "
                                 "against hand-written baselines");
  cmd->add_option("bench", o.path, "benchmark job YAML (e.g. jobs/bench/chain2.yaml)")->required();
  cmd->add_option("--runs", o.runs, "measured runs; the figures are their medians")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", o.warmup, "unmeasured warm-up runs")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", o.json, "print one JSON object instead of the text report");
  cmd->add_option("--count", o.count, "override the generator's record count");
  cmd->add_option("--rate", o.rate,
                  "override the generator's rate (records/s per subtask; 0 = unpaced)");
  cmd->add_flag("!--no-baselines", o.baselines, "skip the hand-written baselines");
  cmd->add_flag("!--no-progress", o.progress, "no progress bar");
  cmd->add_flag(
      "--checkpoints", o.checkpoints,
      "checkpoint cost: the job without checkpoints and with checkpoints every 1 s and 100 ms, "
      "with their throughput ratios and alignment times (no baselines)");
  cmd->add_flag("--checkpoint-size", o.checkpoint_size,
                "checkpoint size: the job (replaying a generated recording: many keys, then few "
                "changed) with full and with incremental checkpoints, per checkpoint the bytes "
                "written, the full size and the duration (no baselines; --count sets the keys)");
  cmd->add_option(
      "--data-dir", o.data_dir,
      "file benchmarks: directory of the generated input files (default $TIDEMARK_BENCH_DATA, "
      "else <tmp>/tidemark-bench-data)");
  return cmd;
}

int RunBench(const BenchOptions& o) {
  JobSpec spec;
  try {
    spec = LoadJobSpecFile(o.path);
  } catch (const ConfigError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (o.checkpoint_size) {
    return RunCheckpointSizeBench(o, std::move(spec));
  }
  OperatorSpec* source = nullptr;
  for (OperatorSpec& op : spec.operators) {
    if (op.type == "source" && op.source && op.source->type == "file") {
      return RunFileBench(o, spec);
    }
    if (op.type == "source" && op.source && op.source->type == "kafka") {
      return RunKafkaBench(o, spec);
    }
    if (op.type == "source" && op.source && op.source->type == "generator") {
      source = &op;
    }
  }
  const std::string sink_id = SinkId(spec);
  if (source == nullptr || sink_id.empty()) {
    std::cerr << o.path
              << ": error: a benchmark job needs a `generator` source and a `checksum` sink\n";
    return 2;
  }
  if (o.count >= 0) {
    source->source->count = o.count;
  }
  if (o.rate >= 0) {
    source->source->rate = o.rate;
  }
  const int64_t records = source->source->count;
  const bool progress = o.progress && !o.json && isatty(STDERR_FILENO) != 0;
  if (o.checkpoints) {
    return RunCheckpointBench(o, spec, sink_id, records, progress);
  }
  const BenchPlan plan = MakeBenchPlan(spec);

  std::vector<double> rates;
  std::vector<double> walls;
  std::vector<int64_t> latency;
  std::vector<RunFigures> measured;
  Series fused;
  Series channel;
  Series hashagg;
  const bool want_baselines = o.baselines && plan.unsupported.empty();
  try {
    for (int r = 0; r < o.warmup + o.runs; ++r) {
      const bool warm = r < o.warmup;
      std::optional<RunFigures> run = RunBenchJob(o, spec, sink_id, records, r, progress);
      if (!run) {
        return 1;
      }
      RunFigures& f = *run;
      if (want_baselines) {
        if (plan.window) {
          BaselineResult b = RunHashAggregation(plan);
          if (!warm) {
            hashagg.Add(b, records);
          }
        } else {
          BaselineResult a = RunFusedLoop(plan);
          BaselineResult b = RunRawChannel(plan);
          if (!warm) {
            fused.Add(a, records);
            channel.Add(b, records);
          }
        }
      }
      if (!warm) {
        rates.push_back(f.seconds > 0 ? static_cast<double>(records) / f.seconds : 0);
        walls.push_back(f.seconds);
        latency.insert(latency.end(), f.latency_ns.begin(), f.latency_ns.end());
        measured.push_back(std::move(f));
      }
    }
  } catch (const JobCompileError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (progress) {
    std::fprintf(stderr, "\r%-70s\r", "");
  }

  const RunFigures& last = measured.back();
  const bool chained = last.chained;
  std::sort(latency.begin(), latency.end());
  std::vector<double> states;
  for (const auto& m : measured) {
    states.push_back(static_cast<double>(m.state_bytes));
  }
  const Series* primary = nullptr;
  std::string primary_name;
  if (want_baselines) {
    if (plan.window) {
      primary = &hashagg;
      primary_name = "hash_aggregation";
    } else if (chained) {
      primary = &fused;
      primary_name = "fused_loop";
    } else {
      primary = &channel;
      primary_name = "raw_channel";
    }
  }
  const double rate = Median(rates);
  const double base_rate = primary != nullptr ? Median(primary->rates) : 0;
  // Run by run: each round's job run against the baseline run right after it.
  const double ratio = primary != nullptr ? MedianPairedRatio(rates, primary->rates) : 0;
  bool checksum_ok = true;
  for (const Series* s : {&fused, &channel, &hashagg}) {
    if (!s->rates.empty()) {
      for (const auto& m : measured) {
        checksum_ok =
            checksum_ok && m.checksum == s->last.checksum && m.sink_records == s->last.sink_records;
      }
    }
  }

  nlohmann::ordered_json j;
  j["name"] = spec.name;
  j["file"] = o.path;
  j["records"] = records;
  j["runs"] = o.runs;
  j["warmup"] = o.warmup;
  j["chained"] = chained;
  j["records_per_s"] = rate;
  j["records_per_s_min"] = *std::min_element(rates.begin(), rates.end());
  j["records_per_s_max"] = *std::max_element(rates.begin(), rates.end());
  j["ns_per_record"] = rate > 0 ? 1e9 / rate : 0;
  j["wall_s"] = Median(walls);
  j["latency_samples"] = latency.size();
  if (latency.empty()) {
    j["p50_latency_us"] = nullptr;
    j["p99_latency_us"] = nullptr;
    j["p999_latency_us"] = nullptr;
  } else {
    j["p50_latency_us"] = Percentile(latency, 0.50) / 1e3;
    j["p99_latency_us"] = Percentile(latency, 0.99) / 1e3;
    j["p999_latency_us"] = Percentile(latency, 0.999) / 1e3;
  }
  j["peak_rss_bytes"] = PeakRssBytes();
  j["state_bytes"] = static_cast<int64_t>(Median(states));
  // Peak keyed state per key (the most bytes held allocated over the most keys held), the job's
  // and the hash-aggregation baseline's, in the same byte model (FlatTableBytes).
  auto per_key = [](int64_t bytes, int64_t keys) {
    return keys > 0 ? nlohmann::ordered_json(static_cast<double>(bytes) / static_cast<double>(keys))
                    : nlohmann::ordered_json(nullptr);
  };
  j["state_memory_bytes"] = last.state_memory_bytes;
  j["state_keys"] = last.state_keys;
  j["state_bytes_per_key"] = per_key(last.state_memory_bytes, last.state_keys);
  j["baseline_state_bytes_per_key"] =
      hashagg.rates.empty() ? nlohmann::ordered_json(nullptr)
                            : per_key(hashagg.last.state_memory_bytes, hashagg.last.state_keys);
  j["sink_records"] = last.sink_records;
  j["checksum"] = fmt::format("{:016x}", last.checksum);
  j["baseline"] =
      primary_name.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(primary_name);
  j["baseline_records_per_s"] =
      primary != nullptr ? nlohmann::ordered_json(base_rate) : nlohmann::ordered_json(nullptr);
  j["ratio_to_baseline"] = primary != nullptr && ratio > 0 ? nlohmann::ordered_json(ratio)
                                                           : nlohmann::ordered_json(nullptr);
  // The ratio between the two medians, which a drift of the machine's speed between runs moves.
  j["ratio_of_medians"] = primary != nullptr && base_rate > 0
                              ? nlohmann::ordered_json(rate / base_rate)
                              : nlohmann::ordered_json(nullptr);
  j["baselines"] = {{"fused_loop", SeriesJson(fused)},
                    {"raw_channel", SeriesJson(channel)},
                    {"hash_aggregation", SeriesJson(hashagg)}};
  j["baseline_unsupported"] = plan.unsupported.empty() ? nlohmann::ordered_json(nullptr)
                                                       : nlohmann::ordered_json(plan.unsupported);
  j["checksum_ok"] =
      want_baselines ? nlohmann::ordered_json(checksum_ok) : nlohmann::ordered_json(nullptr);

  if (o.json) {
    std::cout << j.dump() << "\n";
  } else {
    auto mrec = [](double r) {
      return fmt::format("{:.2f} M records/s", r / 1e6);
    };
    std::cout << fmt::format("bench {} ({}): {} records, {}, median of {} runs after {} warm-up\n",
                             spec.name, o.path, records, chained ? "chained" : "unchained", o.runs,
                             o.warmup);
    std::cout << fmt::format(
        "  tidemark           {}  (min {:.2f}, max {:.2f})  {:.2f} ns/record  wall {:.3f} s\n",
        mrec(rate), j["records_per_s_min"].get<double>() / 1e6,
        j["records_per_s_max"].get<double>() / 1e6, j["ns_per_record"].get<double>(),
        j["wall_s"].get<double>());
    if (!latency.empty()) {
      std::cout << fmt::format(
          "  latency            p50 {:.1f} us, p99 {:.1f} us, p99.9 {:.1f} us ({} samples)\n",
          j["p50_latency_us"].get<double>(), j["p99_latency_us"].get<double>(),
          j["p999_latency_us"].get<double>(), latency.size());
    }
    std::cout << fmt::format(
        "  memory             peak RSS {:.1f} MiB, state ~{:.1f} MiB (RSS growth during a run)\n",
        static_cast<double>(PeakRssBytes()) / (1 << 20), Median(states) / (1 << 20));
    if (!j["state_bytes_per_key"].is_null()) {
      const double mine = j["state_bytes_per_key"].get<double>();
      std::string base;
      if (!j["baseline_state_bytes_per_key"].is_null()) {
        const double b = j["baseline_state_bytes_per_key"].get<double>();
        base = fmt::format(", baseline (c) {:.1f} B/key, ratio {:.2f}", b, b > 0 ? mine / b : 0);
      }
      std::cout << fmt::format(
          "  keyed state        {:.1f} B/key at peak ({} keys, {:.1f} MiB){}\n", mine,
          last.state_keys, static_cast<double>(last.state_memory_bytes) / (1 << 20), base);
    }
    auto line = [&](const char* name, const Series& s, const char* key) {
      if (s.rates.empty()) {
        return;
      }
      const double b = Median(s.rates);
      std::cout << fmt::format(
          "  baseline {:<18} {}  ratio {:.3f} (run by run; of the medians {:.3f}){}\n", name,
          mrec(b), MedianPairedRatio(rates, s.rates), b > 0 ? rate / b : 0,
          primary_name == key ? "  <- primary" : "");
    };
    line("(a) fused loop", fused, "fused_loop");
    line("(b) raw channel", channel, "raw_channel");
    line("(c) hash agg", hashagg, "hash_aggregation");
    if (!plan.unsupported.empty()) {
      std::cout << "  baselines          none: " << plan.unsupported << "\n";
    }
    std::cout << fmt::format(
        "  sink               {} records, checksum {:016x}{}\n", last.sink_records, last.checksum,
        want_baselines ? (checksum_ok ? " = baseline (ok)" : " != baseline (MISMATCH)") : "");
  }
  if (want_baselines && !checksum_ok) {
    std::cerr << spec.name << ": sink checksum differs from the baseline's\n";
    return 3;
  }
  return 0;
}

}  // namespace tidemark::bench
