#include "tools/bench/file_bench.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/graph/job_graph.h"
#include "tools/bench/bench_run.h"
#include "tools/bench/events_data.h"
#include "tools/bench/file_baseline.h"

namespace tidemark::bench {

double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto sec = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

std::string BenchDataDir(const BenchOptions& o) {
  if (!o.data_dir.empty()) {
    return o.data_dir;
  }
  if (const char* env = std::getenv("TIDEMARK_BENCH_DATA"); env != nullptr && *env != '\0') {
    return env;
  }
  return (std::filesystem::temp_directory_path() / "tidemark-bench-data").string();
}

nlohmann::ordered_json DataBenchJson(const std::string& name, const BenchOptions& o,
                                     const std::string& data_file, int64_t bytes, int64_t records,
                                     int parallelism, const std::vector<double>& walls) {
  const double wall = Median(walls);
  nlohmann::ordered_json j;
  j["name"] = name;
  j["file"] = o.path;
  j["data_file"] = data_file;
  j["bytes"] = bytes;
  j["records"] = records;
  j["parallelism"] = parallelism;
  j["runs"] = o.runs;
  j["warmup"] = o.warmup;
  j["wall_s"] = wall;
  j["wall_s_min"] = *std::min_element(walls.begin(), walls.end());
  j["wall_s_max"] = *std::max_element(walls.begin(), walls.end());
  j["records_per_s"] = wall > 0 ? static_cast<double>(records) / wall : 0;
  j["mb_per_s"] = wall > 0 ? static_cast<double>(bytes) / 1e6 / wall : 0;
  return j;
}

int64_t BenchSplitBytes(int64_t file_bytes, int parallelism) {
  constexpr int64_t kRangesPerReader = 8;
  const int64_t ranges = kRangesPerReader * std::max(parallelism, 1);
  return std::max<int64_t>(1, (file_bytes + ranges - 1) / ranges);
}

int RunFileBench(const BenchOptions& o, JobSpec spec) {
  OperatorSpec* source = nullptr;
  for (OperatorSpec& op : spec.operators) {
    if (op.type == "source" && op.source && op.source->type == "file") {
      source = &op;
    }
  }
  const std::string sink_id = SinkId(spec);
  std::optional<EventsFileSpec> recipe =
      source != nullptr ? ParseEventsFileName(source->source->file.path) : std::nullopt;
  if (source == nullptr || sink_id.empty() || !recipe) {
    std::cerr
        << o.path
        << ": error: a file benchmark job needs a `file` source reading a generated events file "
           "(events-n<count>-u<users>-j<jitter ms>-s<seed>.jsonl) and a `checksum` sink\n";
    return 2;
  }
  if (o.count >= 0) {
    recipe->count = std::max<int64_t>(1, o.count);
  }
  std::string data;
  try {
    data = EnsureEventsFile(BenchDataDir(o), *recipe);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  FileSourceSpec& file = source->source->file;
  data =
      std::filesystem::absolute(data).string();  // the job resolves relative paths against its file
  file.path = data;
  const int parallelism = source->parallelism > 0 ? source->parallelism : spec.pipeline.parallelism;
  std::error_code ec;
  const auto bytes = static_cast<int64_t>(std::filesystem::file_size(data, ec));
  if (parallelism > 1 && file.split_bytes > 0) {
    // Ranges sized for whatever size `--count` made the file (see BenchSplitBytes).
    file.split_bytes = BenchSplitBytes(bytes, parallelism);
  }
  const int64_t records = recipe->count;
  const FileBenchPlan plan = MakeFileBenchPlan(spec);
  const bool want_baseline = o.baselines && plan.unsupported.empty();
  const bool progress = o.progress && !o.json && isatty(STDERR_FILENO) != 0;

  std::vector<double> walls;
  std::vector<double> base_walls;
  std::vector<double> cpus;
  std::vector<double> base_cpus;
  std::vector<RunFigures> measured;
  FileBaselineResult base;
  try {
    for (int r = 0; r < o.warmup + o.runs; ++r) {
      const bool warm = r < o.warmup;
      const double cpu0 = ProcessCpuSeconds();
      std::optional<RunFigures> run = RunBenchJob(o, spec, sink_id, records, r, progress);
      if (!run) {
        return 1;
      }
      RunFigures& f = *run;
      const double cpu1 = ProcessCpuSeconds();
      if (want_baseline) {
        base = RunFileBaseline(plan, data);
        if (!warm) {
          base_walls.push_back(base.seconds);
          base_cpus.push_back(ProcessCpuSeconds() - cpu1);
        }
      }
      if (!warm) {
        cpus.push_back(cpu1 - cpu0);
        walls.push_back(f.seconds);
        measured.push_back(std::move(f));
      }
    }
  } catch (const JobCompileError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  } catch (const std::runtime_error& e) {
    std::cerr << spec.name << ": baseline: " << e.what() << "\n";
    return 1;
  }
  if (progress) {
    std::fprintf(stderr, "\r%-70s\r", "");
  }
  const RunFigures& last = measured.back();
  const double wall = Median(walls);
  const double base_wall = Median(base_walls);
  const double cpu = Median(cpus);
  const double base_cpu = Median(base_cpus);
  const double mb = static_cast<double>(bytes) / 1e6;
  bool checksum_ok = true;
  if (want_baseline) {
    for (const auto& m : measured) {
      checksum_ok =
          checksum_ok && m.checksum == base.checksum && m.sink_records == base.sink_records;
    }
  }
  auto rate = [](double n, double s) {
    return s > 0 ? n / s : 0.0;
  };

  nlohmann::ordered_json j = DataBenchJson(spec.name, o, data, bytes, records, parallelism, walls);
  j["chained"] = last.chained;
  j["cpu_s"] = cpu;
  j["mb_per_cpu_s"] = rate(mb, cpu);
  j["peak_rss_bytes"] = PeakRssBytes();
  // Window jobs: the window operators' peak keyed state, summed over subtasks (0 without windows).
  j["state_memory_bytes"] = last.state_memory_bytes;
  j["sink_records"] = last.sink_records;
  j["checksum"] = fmt::format("{:016x}", last.checksum);
  if (want_baseline) {
    j["baseline"] = "simdjson_loop";
    j["baseline_wall_s"] = base_wall;
    j["baseline_records_per_s"] = rate(static_cast<double>(records), base_wall);
    j["baseline_mb_per_s"] = rate(mb, base_wall);
    j["ratio_to_baseline"] = MedianPairedRatio(base_walls, walls);  // run by run
    j["baseline_cpu_s"] = base_cpu;
    j["baseline_mb_per_cpu_s"] = rate(mb, base_cpu);
    j["cpu_ratio_to_baseline"] = MedianPairedRatio(base_cpus, cpus);
    j["baseline_errors"] = base.errors;
    j["baseline_late"] = base.late;
    j["checksum_ok"] = checksum_ok;
  } else {
    j["baseline"] = nullptr;
    j["baseline_unsupported"] = plan.unsupported.empty() ? "--no-baselines" : plan.unsupported;
    j["checksum_ok"] = nullptr;
  }

  if (o.json) {
    std::cout << j.dump() << "\n";
  } else {
    std::cout << fmt::format(
        "bench {} ({}): {} lines, {:.1f} MB ({}), parallelism {}, median of {} runs after {} "
        "warm-up\n",
        spec.name, o.path, records, mb, data, parallelism, o.runs, o.warmup);
    std::cout << fmt::format(
        "  tidemark               {:7.1f} MB/s  {:6.2f} M records/s  wall {:.3f} s (min {:.3f}, "
        "max {:.3f})"
        "  CPU {:.3f} s = {:.1f} MB/CPU-s\n",
        rate(mb, wall), rate(static_cast<double>(records), wall) / 1e6, wall,
        j["wall_s_min"].get<double>(), j["wall_s_max"].get<double>(), cpu, rate(mb, cpu));
    if (want_baseline) {
      std::cout << fmt::format(
          "  baseline simdjson loop {:7.1f} MB/s  {:6.2f} M records/s  wall {:.3f} s  CPU {:.3f} s "
          "= {:.1f} MB/CPU-s\n",
          rate(mb, base_wall), rate(static_cast<double>(records), base_wall) / 1e6, base_wall,
          base_cpu, rate(mb, base_cpu));
      std::cout << fmt::format("  ratio to baseline      {:.3f} (wall), {:.3f} (CPU), run by run\n",
                               j["ratio_to_baseline"].get<double>(),
                               j["cpu_ratio_to_baseline"].get<double>());
    } else {
      std::cout << "  baseline               none: " << j["baseline_unsupported"].get<std::string>()
                << "\n";
    }
    std::cout << fmt::format(
        "  memory                 peak RSS {:.1f} MiB, window state peak {:.1f} MiB "
        "(sum over subtasks)\n",
        static_cast<double>(PeakRssBytes()) / (1 << 20),
        static_cast<double>(last.state_memory_bytes) / (1 << 20));
    std::cout << fmt::format(
        "  sink                   {} records, checksum {:016x}{}\n", last.sink_records,
        last.checksum,
        want_baseline ? (checksum_ok ? " = baseline (ok)" : " != baseline (MISMATCH)") : "");
  }
  if (want_baseline && !checksum_ok) {
    std::cerr << spec.name
              << ": sink checksum differs from the baseline's (baseline: " << base.sink_records
              << " records, " << fmt::format("{:016x}", base.checksum) << ")\n";
    return 3;
  }
  return 0;
}

}  // namespace tidemark::bench
