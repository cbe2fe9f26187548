#include "tools/bench/checkpoint_size_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <stdexcept>
#include <system_error>
#include <unistd.h>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/checkpoint/checkpoint_storage.h"
#include "runtime/core/durable_file.h"
#include "runtime/graph/job_graph.h"
#include "tools/bench/bench_run.h"
#include "tools/engine/engine.h"

namespace tidemark::bench {

namespace fs = std::filesystem;

std::string CheckpointRecordingName(const CheckpointRecordingSpec& spec) {
  return fmt::format("checkpoint-phases-k{}-c{}-i{}.jsonl", spec.keys, spec.changed,
                     spec.interval_ms);
}

std::optional<CheckpointRecordingSpec> ParseCheckpointRecordingName(const std::string& path) {
  static const std::regex kName(
      R"(checkpoint-phases-k([0-9]{1,12})-c([0-9]{1,12})-i([0-9]{1,12})\.jsonl)");
  const std::string name = fs::path(path).filename().string();
  std::smatch m;
  if (!std::regex_match(name, m, kName)) {
    return std::nullopt;
  }
  CheckpointRecordingSpec spec;
  spec.keys = std::stoll(m[1].str());
  spec.changed = std::stoll(m[2].str());
  spec.interval_ms = std::stoll(m[3].str());
  if (spec.keys < 1 || spec.changed < 1 || spec.changed > spec.keys || spec.interval_ms < 10 ||
      spec.interval_ms % 2 != 0) {
    return std::nullopt;
  }
  return spec;
}

namespace {

std::string CheckpointRecording(const CheckpointRecordingSpec& spec) {
  fmt::memory_buffer buf;
  // Every record in event time 1000 ms: one window of the bench job holds them all until the
  // input ends.
  for (int64_t k = 0; k < spec.keys; ++k) {
    fmt::format_to(std::back_inserter(buf),
                   "{{\"split\":\"s\",\"at\":0,\"record\":{{\"key\":{},\"ts\":1000}}}}\n", k);
  }
  const int64_t stride = spec.keys / spec.changed;
  const int64_t changed_at = spec.interval_ms + spec.interval_ms / 2;
  for (int64_t i = 0; i < spec.changed; ++i) {
    fmt::format_to(std::back_inserter(buf),
                   "{{\"split\":\"s\",\"at\":{},\"record\":{{\"key\":{},\"ts\":1000}}}}\n",
                   changed_at, i * stride);
  }
  fmt::format_to(std::back_inserter(buf), "{{\"at\":{}}}\n",
                 2 * spec.interval_ms + spec.interval_ms / 2);
  return fmt::to_string(buf);
}

/// Every regular file under `root` (relative path) with its size.
std::map<std::string, uint64_t> FilesUnder(const fs::path& root) {
  std::map<std::string, uint64_t> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      const uint64_t size = it->file_size(size_ec);
      if (!size_ec) {
        files[fs::relative(it->path(), root).string()] = size;
      }
    }
  }
  return files;
}

}  // namespace

std::string EnsureCheckpointRecording(const std::string& dir, const CheckpointRecordingSpec& spec) {
  std::string path = (fs::path(dir) / CheckpointRecordingName(spec)).string();
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) {
    return path;
  }
  fs::create_directories(dir, ec);
  if (ec) {
    throw std::runtime_error(
        fmt::format("{}: cannot create the bench data directory: {}", dir, ec.message()));
  }
  WriteFileAtomically(path, CheckpointRecording(spec));
  return path;
}

CheckpointSizeRun RunCheckpointSizeJob(JobSpec spec, const std::string& sink_id, bool incremental) {
  static std::atomic<int> counter{0};
  const fs::path dir =
      fs::temp_directory_path() /
      fmt::format("tidemark-bench-checkpoint-size-{}-{}", getpid(), counter.fetch_add(1));
  fs::remove_all(dir);
  spec.checkpointing->dir = dir.string();
  spec.checkpointing->incremental = incremental;
  CheckpointSizeRun run;
  auto job = LocalJob::Create(spec, [](const std::string&) {});
  // The listener runs on the job's checkpoint thread right after a checkpoint completed, before
  // the next can be triggered (the same thread triggers): the files new since the previous call
  // are this checkpoint's.
  std::mutex mu;
  std::map<std::string, uint64_t> seen;
  const std::string job_name = job->execution().graph().name;
  job->execution().SetCheckpointCompleteListener([&](int64_t id) {
    const std::lock_guard<std::mutex> lock(mu);
    CheckpointSizeFigures c;
    c.id = id;
    const std::map<std::string, uint64_t> now = FilesUnder(dir);
    const std::string own = fmt::format("chk-{}/", id);
    for (const auto& [file, size] : now) {
      if (!seen.contains(file)) {
        c.written_bytes += size;
        ++c.files_written;
      }
      if (file.starts_with(own)) {
        c.state_bytes += size;
      }
    }
    try {
      const CompletedCheckpoint cp =
          CheckpointStorage::Load(dir / fmt::format("chk-{}", id), job_name);
      std::set<std::string> counted;  // a file two subtasks reference counts once
      for (const auto& [subtask, files] : cp.shared) {
        for (const SharedStateFile& f : files) {
          if (!counted.insert(f.path).second) {
            continue;
          }
          ++c.shared_files;
          c.state_bytes += f.size;
          if (seen.contains(f.path)) {
            c.shared_reused_bytes += f.size;
          }
        }
      }
    } catch (const std::exception& e) {
      if (run.failure.empty()) {
        run.failure = fmt::format("checkpoint {}: {}", id, e.what());
      }
    }
    seen = now;
    run.checkpoints.push_back(c);
  });
  const auto start = std::chrono::steady_clock::now();
  job->execution().Start();
  const JobState state = job->execution().Wait();
  {
    const std::lock_guard<std::mutex> lock(mu);
    run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (state != JobState::kFinished) {
      run.failure = fmt::format("job {}: {}", ToString(state), job->execution().failure_cause());
    } else if (auto sink = job->resources().FindSinkResult(sink_id)) {
      run.sink_records = sink->count();
      run.checksum = sink->checksum();
    }
    for (const CheckpointCoordinator::HistoryEntry& h :
         job->execution().checkpoint_stats().history) {
      for (CheckpointSizeFigures& c : run.checkpoints) {
        if (c.id == h.id && h.completed) {
          c.duration_ms = static_cast<double>(h.duration_ns) / 1e6;
        }
      }
    }
  }
  job.reset();
  std::error_code ec;
  fs::remove_all(dir, ec);
  return run;
}

namespace {

struct Variant {
  bool incremental = false;
  CheckpointSizeRun last;
  std::map<int64_t, std::vector<double>> durations_ms;  // checkpoint id -> per measured run
};

nlohmann::ordered_json VariantJson(const Variant& v) {
  nlohmann::ordered_json c;
  c["incremental"] = v.incremental;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CheckpointSizeFigures& f : v.last.checkpoints) {
    nlohmann::ordered_json x;
    x["id"] = f.id;
    x["written_bytes"] = f.written_bytes;
    x["files_written"] = f.files_written;
    x["state_bytes"] = f.state_bytes;
    x["shared_files"] = f.shared_files;
    x["shared_reused_bytes"] = f.shared_reused_bytes;
    const auto it = v.durations_ms.find(f.id);
    x["duration_ms"] = it != v.durations_ms.end() ? Median(it->second) : f.duration_ms;
    x["duration_ms_min"] = it != v.durations_ms.end()
                               ? *std::min_element(it->second.begin(), it->second.end())
                               : f.duration_ms;
    x["duration_ms_max"] = it != v.durations_ms.end()
                               ? *std::max_element(it->second.begin(), it->second.end())
                               : f.duration_ms;
    list.push_back(std::move(x));
  }
  c["checkpoints"] = std::move(list);
  c["sink_records"] = v.last.sink_records;
  c["checksum"] = fmt::format("{:016x}", v.last.checksum);
  return c;
}

}  // namespace

int RunCheckpointSizeBench(const BenchOptions& o, JobSpec spec) {
  OperatorSpec* source = nullptr;
  for (OperatorSpec& op : spec.operators) {
    if (op.type == "source" && op.source && op.source->type == "replay") {
      source = &op;
    }
  }
  const std::string sink_id = SinkId(spec);
  std::optional<CheckpointRecordingSpec> recipe =
      source != nullptr ? ParseCheckpointRecordingName(source->source->replay.path) : std::nullopt;
  if (source == nullptr || sink_id.empty() || !recipe || !spec.checkpointing ||
      spec.pipeline.clock != "virtual" || spec.checkpointing->interval_ms != recipe->interval_ms) {
    std::cerr
        << o.path
        << ": error: a --checkpoint-size job needs `clock: virtual`, `checkpointing:` and a "
           "`replay` source reading a generated recording "
           "(checkpoint-phases-k<keys>-c<changed keys>-i<checkpointing.interval in ms>.jsonl) "
           "and a `checksum` sink\n";
    return 2;
  }
  if (o.count >= 0) {  // --count: the number of keys
    recipe->keys = std::max<int64_t>(recipe->changed, o.count);
  }
  std::string data;
  try {
    data = fs::absolute(EnsureCheckpointRecording(BenchDataDir(o), *recipe)).string();
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  source->source->replay.path = data;
  const bool progress = o.progress && !o.json && isatty(STDERR_FILENO) != 0;
  std::vector<Variant> variants(2);
  variants[1].incremental = true;
  try {
    for (int r = 0; r < o.warmup + o.runs; ++r) {
      for (Variant& v : variants) {
        if (progress) {
          std::fprintf(stderr, "\r%-70s",
                       fmt::format("{} {} run {}/{}", spec.name,
                                   v.incremental ? "incremental" : "full", r + 1, o.warmup + o.runs)
                           .c_str());
          std::fflush(stderr);
        }
        CheckpointSizeRun run = RunCheckpointSizeJob(spec, sink_id, v.incremental);
        if (!run.failure.empty()) {
          if (progress) {
            std::fprintf(stderr, "\n");
          }
          std::cerr << spec.name << (v.incremental ? " (incremental)" : " (full)") << ": "
                    << run.failure << "\n";
          return 1;
        }
        if (r >= o.warmup) {
          for (const CheckpointSizeFigures& f : run.checkpoints) {
            v.durations_ms[f.id].push_back(f.duration_ms);
          }
          v.last = std::move(run);
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
  const Variant& full = variants[0];
  const Variant& incr = variants[1];
  const bool checksum_ok = full.last.checksum == incr.last.checksum &&
                           full.last.sink_records == incr.last.sink_records &&
                           full.last.sink_records > 0;
  nlohmann::ordered_json j;
  j["name"] = spec.name;
  j["file"] = o.path;
  j["mode"] = "checkpoint-size";
  j["data_file"] = data;
  j["keys"] = recipe->keys;
  j["changed_keys"] = recipe->changed;
  j["records"] = recipe->keys + recipe->changed;
  j["checkpoint_interval_ms"] = recipe->interval_ms;
  j["runs"] = o.runs;
  j["warmup"] = o.warmup;
  j["cases"] = {VariantJson(full), VariantJson(incr)};
  // The second checkpoint (few changed keys since the first): what the incremental one wrote,
  // against its own full size and against what the canonical one wrote.
  const bool two = full.last.checkpoints.size() >= 2 && incr.last.checkpoints.size() >= 2;
  if (two) {
    const CheckpointSizeFigures& f2 = full.last.checkpoints[1];
    const CheckpointSizeFigures& i2 = incr.last.checkpoints[1];
    j["second_written_ratio"] = i2.state_bytes > 0 ? static_cast<double>(i2.written_bytes) /
                                                         static_cast<double>(i2.state_bytes)
                                                   : 0;
    j["second_written_ratio_to_full"] =
        f2.written_bytes > 0
            ? static_cast<double>(i2.written_bytes) / static_cast<double>(f2.written_bytes)
            : 0;
  } else {
    j["second_written_ratio"] = nullptr;
    j["second_written_ratio_to_full"] = nullptr;
  }
  j["checksum_ok"] = checksum_ok;
  if (o.json) {
    std::cout << j.dump() << "\n";
  } else {
    std::cout << fmt::format(
        "bench {} ({}): {} keys, {} changed between checkpoints 1 and 2, checkpoint size, "
        "durations the median of {} runs after {} warm-up\n",
        spec.name, o.path, recipe->keys, recipe->changed, o.runs, o.warmup);
    for (const nlohmann::ordered_json& c : j["cases"]) {
      for (const nlohmann::ordered_json& x : c["checkpoints"]) {
        std::cout << fmt::format(
            "  {:<11} checkpoint {}  wrote {:>11} B in {:>3} files  full size {:>11} B  "
            "{:.1f} ms\n",
            c["incremental"].get<bool>() ? "incremental" : "full", x["id"].get<int64_t>(),
            x["written_bytes"].get<uint64_t>(), x["files_written"].get<int64_t>(),
            x["state_bytes"].get<uint64_t>(), x["duration_ms"].get<double>());
      }
    }
    if (two) {
      std::cout << fmt::format(
          "  second incremental checkpoint wrote {:.1f}% of its full size, {:.1f}% of the full "
          "checkpoint's\n",
          100 * j["second_written_ratio"].get<double>(),
          100 * j["second_written_ratio_to_full"].get<double>());
    }
    std::cout << fmt::format("  sink               {} records, checksum {:016x}{}\n",
                             full.last.sink_records, full.last.checksum,
                             checksum_ok ? " in both cases (ok)" : " differs (MISMATCH)");
  }
  if (!checksum_ok) {
    std::cerr << spec.name << ": the sink checksum differs between full and incremental\n";
    return 3;
  }
  return 0;
}

}  // namespace tidemark::bench
