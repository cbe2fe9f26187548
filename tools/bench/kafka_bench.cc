#include "tools/bench/kafka_bench.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string_view>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/core/errors.h"
#include "runtime/graph/job_graph.h"
#include "runtime/io/kafka_client.h"
#include "tools/bench/bench_run.h"
#include "tools/bench/events_data.h"
#include "tools/bench/kafka_baseline.h"

namespace tidemark::bench {
namespace {

struct Timed {
  std::vector<double> walls;
  std::vector<double> cpus;
  int64_t sink_records = -1;
  uint64_t checksum = 0;
  bool same = true;  ///< every measured run gave the same count and checksum

  void Add(double wall, double cpu, int64_t records, uint64_t sum) {
    walls.push_back(wall);
    cpus.push_back(cpu);
    if (sink_records >= 0 && (records != sink_records || sum != checksum)) {
      same = false;
    }
    sink_records = records;
    checksum = sum;
  }
};

double Rate(double n, double s) {
  return s > 0 ? n / s : 0.0;
}

/// The event time of a generated events line (tools/bench/events_data.h writes `"ts":<ms>`).
int64_t EventsLineTs(std::string_view line) {
  const size_t at = line.find("\"ts\":");
  int64_t ts = 0;
  for (size_t i = at == std::string_view::npos ? line.size() : at + 5;
       i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i) {
    ts = ts * 10 + (line[i] - '0');
  }
  return ts;
}

/// Produces every line of the generated events file `path` into `topic` (line k to partition
/// k mod `partitions`, in file order, CreateTime its `ts`). The file is our own generated one,
/// so unlike LoadJsonLinesIntoTopic (sources/kafka/kafka_mock_load.h, for any user file) it
/// does not parse or check the lines, and it lets an idempotent producer batch freely: loading
/// 10^6 records takes seconds instead of tens. Throws std::runtime_error.
void ProduceEventsFile(const std::string& bootstrap_servers, const std::string& topic,
                       const std::string& path, int partitions) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(fmt::format("cannot read '{}'", path));
  }
  std::atomic<int64_t> failed{0};
  KafkaConf conf = MakeKafkaConf({{"bootstrap.servers", bootstrap_servers},
                                  {"enable.idempotence", "true"},
                                  {"linger.ms", "20"},
                                  {"queue.buffering.max.messages", "1000000"},
                                  {"log_level", "3"}});
  rd_kafka_conf_set_dr_msg_cb(conf.get(),
                              [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
                                if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
                                  static_cast<std::atomic<int64_t>*>(opaque)->fetch_add(1);
                                }
                              });
  rd_kafka_conf_set_opaque(conf.get(), &failed);
  KafkaHandle producer = MakeKafkaHandle(RD_KAFKA_PRODUCER, std::move(conf));
  std::string line;
  int64_t k = 0;
  while (std::getline(in, line)) {
    const auto partition = static_cast<int32_t>(k % partitions);
    while (true) {
      const rd_kafka_resp_err_t err = rd_kafka_producev(
          producer.get(), RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(line.data(), line.size()),
          RD_KAFKA_V_TIMESTAMP(EventsLineTs(line)), RD_KAFKA_V_END);
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(producer.get(), 10);
        continue;
      }
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        throw std::runtime_error(
            fmt::format("cannot produce to '{}': {}", topic, rd_kafka_err2str(err)));
      }
      break;
    }
    ++k;
    rd_kafka_poll(producer.get(), 0);
  }
  if (rd_kafka_flush(producer.get(), 60000) != RD_KAFKA_RESP_ERR_NO_ERROR || failed.load() > 0) {
    throw std::runtime_error(
        fmt::format("{} of {} records were not acknowledged", failed.load(), k));
  }
}

}  // namespace

int RunKafkaBench(const BenchOptions& o, JobSpec spec) {
  OperatorSpec* source = nullptr;
  for (OperatorSpec& op : spec.operators) {
    if (op.type == "source" && op.source && op.source->type == "kafka") {
      source = &op;
    }
  }
  const std::string sink_id = SinkId(spec);
  const KafkaSourceSpec* k = source != nullptr ? &source->source->kafka : nullptr;
  std::optional<EventsFileSpec> recipe =
      k != nullptr && k->mock ? ParseEventsFileName(k->mock->load) : std::nullopt;
  if (k == nullptr || sink_id.empty() || !recipe || k->format != "json" || k->bounded != "latest" ||
      k->starting_offsets != "earliest") {
    std::cerr
        << o.path
        << ": error: a Kafka benchmark job needs a `kafka` source with `mock-cluster` loading "
           "a generated events file (events-n<count>-u<users>-j<jitter ms>-s<seed>.jsonl), "
           "format json, starting-offsets earliest and bounded: latest, and a `checksum` sink\n";
    return 2;
  }
  if (o.count >= 0) {
    recipe->count = std::max<int64_t>(1, o.count);
  }
  std::string data;
  try {
    data = std::filesystem::absolute(EnsureEventsFile(BenchDataDir(o), *recipe)).string();
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  std::error_code ec;
  const auto bytes = static_cast<int64_t>(std::filesystem::file_size(data, ec));
  const int64_t records = recipe->count;
  const std::string topic = k->topics.front();
  const int partitions = static_cast<int>(k->mock->partitions);
  const int parallelism = source->parallelism > 0 ? source->parallelism : spec.pipeline.parallelism;
  const bool progress = o.progress && !o.json && isatty(STDERR_FILENO) != 0;
  // The Kafka baseline reproduces a scan (source -> sink); a windowed job is compared with the
  // same job on the file source only (per-partition watermarks leave nothing late either way).
  const BenchJobEnds job_ends = FindBenchJobEnds(spec);
  const OperatorSpec* sink = job_ends.sink;
  const bool scan = job_ends.unsupported.empty() && sink != nullptr && sink->inputs.size() == 1 &&
                    sink->inputs[0].from == source->id && sink->inputs[0].side_output.empty();
  const bool want_baseline = o.baselines && scan;

  // The topic, loaded once, before any timing.
  std::unique_ptr<KafkaMockCluster> cluster;
  std::vector<int64_t> ends;
  double load_s = 0;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    cluster = std::make_unique<KafkaMockCluster>(1);
    cluster->CreateTopic(topic, partitions);
    if (progress) {
      std::fprintf(stderr, "%s: loading %lld records into %d partitions...", spec.name.c_str(),
                   static_cast<long long>(records), partitions);
    }
    ProduceEventsFile(cluster->bootstrap_servers(), topic, data, partitions);
    load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ends = KafkaEndOffsets(cluster->bootstrap_servers(), topic, partitions);
    int64_t kept = 0;
    for (int64_t e : ends) {
      kept += e;
    }
    if (kept != records) {
      throw std::runtime_error(
          fmt::format("{}: the topic holds {} records, not {}", topic, kept, records));
    }
  } catch (const std::exception& e) {
    std::cerr << (progress ? "\n" : "") << spec.name << ": loading the mock cluster: " << e.what()
              << "\n";
    return 1;
  }

  // The job as written, on the cluster; and the same job with a file source on the same events.
  const std::vector<SchemaFieldSpec> schema = k->schema;
  source->source->kafka.mock.reset();
  source->source->kafka.bootstrap_servers = cluster->bootstrap_servers();
  JobSpec file_spec = spec;
  file_spec.name = spec.name + " (file source)";
  for (OperatorSpec& op : file_spec.operators) {
    if (op.type == "source") {
      SourceSpec file = *op.source;
      file.type = "file";
      file.kafka = KafkaSourceSpec{};
      file.file = FileSourceSpec{};
      file.file.path = data;
      file.file.format = "jsonl";
      file.file.schema = schema;
      op.source = std::move(file);
    }
  }

  Timed kafka;
  Timed base;
  Timed file;
  try {
    for (int r = 0; r < o.warmup + o.runs; ++r) {
      const bool warm = r < o.warmup;
      double cpu0 = ProcessCpuSeconds();
      std::optional<RunFigures> run = RunBenchJob(o, spec, sink_id, records, r, progress);
      if (!run) {
        return 1;
      }
      double cpu1 = ProcessCpuSeconds();
      if (!warm) {
        kafka.Add(run->seconds, cpu1 - cpu0, run->sink_records, run->checksum);
      }
      if (want_baseline) {
        KafkaBaselineResult b = RunKafkaBaseline(schema, cluster->bootstrap_servers(), topic, ends);
        cpu0 = cpu1;
        cpu1 = ProcessCpuSeconds();
        if (!warm) {
          base.Add(b.seconds, cpu1 - cpu0, b.sink_records, b.checksum);
        }
      }
      cpu0 = ProcessCpuSeconds();
      std::optional<RunFigures> f = RunBenchJob(o, file_spec, sink_id, records, r, progress);
      if (!f) {
        return 1;
      }
      if (!warm) {
        file.Add(f->seconds, ProcessCpuSeconds() - cpu0, f->sink_records, f->checksum);
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
  const double mb = static_cast<double>(bytes) / 1e6;
  const double n = static_cast<double>(records);
  const double wall = Median(kafka.walls);
  const double cpu = Median(kafka.cpus);
  const double file_wall = Median(file.walls);
  const double file_cpu = Median(file.cpus);
  const double base_wall = Median(base.walls);
  const double base_cpu = Median(base.cpus);
  const bool file_ok = kafka.same && file.same && file.sink_records == kafka.sink_records &&
                       file.checksum == kafka.checksum;
  const bool checksum_ok =
      file_ok && (!want_baseline || (base.same && base.sink_records == kafka.sink_records &&
                                     base.checksum == kafka.checksum));

  nlohmann::ordered_json j =
      DataBenchJson(spec.name, o, data, bytes, records, parallelism, kafka.walls);
  j["partitions"] = partitions;
  j["load_s"] = load_s;
  j["cpu_s"] = cpu;
  j["mb_per_cpu_s"] = Rate(mb, cpu);
  j["file_wall_s"] = file_wall;
  j["file_records_per_s"] = Rate(n, file_wall);
  j["file_mb_per_s"] = Rate(mb, file_wall);
  j["file_cpu_s"] = file_cpu;
  j["ratio_to_file"] = MedianPairedRatio(file.walls, kafka.walls);  // run by run
  if (want_baseline) {
    j["baseline"] = "librdkafka_simdjson_loop";
    j["baseline_wall_s"] = base_wall;
    j["baseline_records_per_s"] = Rate(n, base_wall);
    j["baseline_mb_per_s"] = Rate(mb, base_wall);
    j["baseline_cpu_s"] = base_cpu;
    j["ratio_to_baseline"] = MedianPairedRatio(base.walls, kafka.walls);  // run by run
    j["cpu_ratio_to_baseline"] = MedianPairedRatio(base.cpus, kafka.cpus);
  } else {
    j["baseline"] = nullptr;
    j["baseline_unsupported"] = o.baselines
                                    ? "the Kafka baseline reproduces a scan (source -> sink) only"
                                    : "--no-baselines";
    j["ratio_to_baseline"] = nullptr;
  }
  j["peak_rss_bytes"] = PeakRssBytes();
  j["sink_records"] = kafka.sink_records;
  j["checksum"] = fmt::format("{:016x}", kafka.checksum);
  j["checksum_ok"] = checksum_ok;

  if (o.json) {
    std::cout << j.dump() << "\n";
  } else {
    std::cout << fmt::format(
        "bench {} ({}): {} records, {:.1f} MB of JSON values in {} partitions of a mock cluster "
        "(loaded in {:.1f} s, untimed), parallelism {}, median of {} runs after {} warm-up\n",
        spec.name, o.path, records, mb, partitions, load_s, parallelism, o.runs, o.warmup);
    auto line = [&](const char* what, double w, double c) {
      std::cout << fmt::format(
          "  {:<26} {:7.1f} MB/s  {:6.3f} M records/s  wall {:.3f} s  CPU {:.3f} s\n", what,
          Rate(mb, w), Rate(n, w) / 1e6, w, c);
    };
    line("tidemark, kafka source", wall, cpu);
    if (want_baseline) {
      line("baseline librdkafka loop", base_wall, base_cpu);
    }
    line("tidemark, file source", file_wall, file_cpu);
    std::cout << fmt::format("  ratio (run by run)         kafka/file {:.3f}",
                             j["ratio_to_file"].get<double>());
    if (want_baseline) {
      std::cout << fmt::format(", kafka/baseline {:.3f} (wall), {:.3f} (CPU)",
                               j["ratio_to_baseline"].get<double>(),
                               j["cpu_ratio_to_baseline"].get<double>());
    }
    std::cout << "\n";
    std::cout << fmt::format(
        "  memory                     peak RSS {:.1f} MiB (the mock cluster's log included)\n",
        static_cast<double>(PeakRssBytes()) / (1 << 20));
    std::cout << fmt::format(
        "  sink                       {} records, checksum {:016x}{}\n", kafka.sink_records,
        kafka.checksum,
        checksum_ok ? (want_baseline ? " = baseline = file job (ok)" : " = file job (ok)")
                    : " MISMATCH");
  }
  if (!checksum_ok) {
    std::cerr << fmt::format(
        "{}: sink checksums differ: kafka {} records {:016x}, file job {} records {:016x}, "
        "baseline {} "
        "records {:016x}\n",
        spec.name, kafka.sink_records, kafka.checksum, file.sink_records, file.checksum,
        base.sink_records, base.checksum);
    return 3;
  }
  return 0;
}

}  // namespace tidemark::bench
