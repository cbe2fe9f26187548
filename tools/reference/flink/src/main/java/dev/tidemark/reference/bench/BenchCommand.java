package dev.tidemark.reference.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * {@code flink-reference.sh bench [--runs N] [--warmup N] [--warmup-count N] [--count N] [--data-dir D] [--no-heap]
 * JOB.yaml...}:
 * each bench job, one after the other, the same job on tidemark ({@code tidemark bench JOB --json --no-baselines}, its own warm-up and
 * medians) and then, in this JVM, on a Flink 2.3 MiniCluster (BenchJobs): the warm-up runs
 * (unmeasured; a generator job's capped at --warmup-count records, default 10,000,000), then the measured ones. Prints one
 * JSON object per job (a line): both rates, their ratio, both sides' source records, sink records and checksums,
 * and the state backend Flink ran ({@code state_backend}; for rocksdb its options under {@code flink.rocksdb}).
 * A job on {@code state-backend: rocksdb} also runs on Flink's heap backend, each run right after
 * the RocksDB run of the same number, unless {@code --no-heap}: {@code flink_heap_records_per_s} and
 * {@code flink_rocksdb_to_heap} (Flink's RocksDB rate over its heap rate on the same job).
 * Exit 0 when both sides made the same records and the same results (counts and checksum) for every
 * job, 1 when not (or when a rocksdb job's run left no RocksDB instance in Flink's local directory), 2 for usage or a job outside the mapping (the reason on stderr and in its JSON
 * line, {@code unsupported}).
 */
public final class BenchCommand {
  private BenchCommand() {}

  static final long WARMUP_CAP = 10_000_000L;

  static double median(List<Double> v) {
    List<Double> s = new ArrayList<>(v);
    Collections.sort(s);
    int n = s.size();
    return n == 0 ? Double.NaN : n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  public static int run(List<String> args, String tidemark, PrintStream out) throws Exception {
    int runs = 3;
    int warmup = 1;
    Long count = null;
    String dataDir = null;
    boolean withHeap = true;
    long warmupCount = WARMUP_CAP;
    List<String> jobs = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      if (a.equals("--runs") && i + 1 < args.size()) {
        runs = Integer.parseInt(args.get(++i));
      } else if (a.equals("--warmup") && i + 1 < args.size()) {
        warmup = Integer.parseInt(args.get(++i));
      } else if (a.equals("--count") && i + 1 < args.size()) {
        count = Long.parseLong(args.get(++i));
      } else if (a.equals("--data-dir") && i + 1 < args.size()) {
        dataDir = args.get(++i);
      } else if (a.equals("--warmup-count") && i + 1 < args.size()) {
        warmupCount = Long.parseLong(args.get(++i));
      } else if (a.equals("--no-heap")) {
        withHeap = false;
      } else if (!a.startsWith("--")) {
        jobs.add(a);
      } else {
        System.err.println("flink-reference bench: unknown argument '" + a + "'");
        return 2;
      }
    }
    if (jobs.isEmpty() || runs < 1 || warmup < 0 || warmupCount < 1) {
      System.err.println("flink-reference bench: needs JOB.yaml (and --runs >= 1, --warmup >= 0, --warmup-count >= 1)");
      return 2;
    }
    int status = 0;
    for (String job : jobs) {
      status = Math.max(status, runJob(job, runs, warmup, warmupCount, count, dataDir, withHeap, tidemark, out));
      out.flush();
    }
    return status;
  }

  /** One job on both sides: its JSON line on `out`; 0 same work, 1 they differ, 2 not mapped. */
  static int runJob(String job, int runs, int warmup, long warmupCount, Long count, String dataDir, boolean withHeap,
      String tidemark, PrintStream out)
      throws Exception {
    ObjectMapper json = new ObjectMapper();
    ObjectNode o = json.createObjectNode();
    o.put("job", job);
    BenchJobs.Spec spec;
    try {
      spec = BenchJobs.parse(Path.of(job));
    } catch (BenchJobs.Unsupported u) {
      System.err.println("flink-reference bench: " + job + ": not mapped to Flink: " + u.getMessage());
      o.put("unsupported", u.getMessage());
      out.println(json.writeValueAsString(o));
      return 2;
    }
    o.put("name", spec.name);
    o.put("parallelism", spec.parallelism);

    // tidemark first: for a file job it also writes the generated input and names it.
    List<String> cmd = new ArrayList<>(List.of(tidemark, "bench", job, "--json", "--no-baselines", "--no-progress",
        "--runs", String.valueOf(runs), "--warmup", String.valueOf(warmup)));
    if (count != null) {
      cmd.addAll(List.of("--count", String.valueOf(count)));
    }
    if (dataDir != null) {
      cmd.addAll(List.of("--data-dir", dataDir));
    }
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    int rc = p.waitFor();
    if (rc != 0 || text.isEmpty()) {
      System.err.println("flink-reference bench: " + String.join(" ", cmd) + " exited " + rc);
      return 1;
    }
    String[] lines = text.split("\n");
    JsonNode tm = json.readTree(lines[lines.length - 1]);
    long records = tm.get("records").asLong();
    String dataFile = tm.has("data_file") ? tm.get("data_file").asText() : null;
    if (!spec.events) {
      spec.count = records; // --count, as tidemark applied it
    }

    // Flink: warm-up, then the measured runs.
    BenchJobs.removeLeftoverInstances(spec);
    List<Double> rates = new ArrayList<>();
    List<Double> netRates = new ArrayList<>();
    List<Double> walls = new ArrayList<>();
    BenchJobs.Run last = null;
    boolean sameEveryRun = true;
    boolean rocksdb = spec.stateBackend.equals("rocksdb");
    boolean rocksdbEveryRun = true; // rocksdb: every run (warm-up too) had the window's instance in its directory
    // rocksdb: the same job on Flink's heap backend too, each run right after its RocksDB run.
    boolean heapToo = rocksdb && withHeap;
    List<Double> heapRates = new ArrayList<>();
    BenchJobs.Run lastHeap = null;
    long warmupRecords = spec.events ? records : Math.min(records, warmupCount);
    for (int r = 0; r < warmup + runs; r++) {
      boolean warm = r < warmup;
      String which = warm ? "warm-up" : "run " + (r - warmup + 1);
      BenchJobs.Run run = BenchJobs.runOnce(spec, warm ? warmupRecords : records, dataFile, false);
      System.err.printf("flink-reference bench: %s %s: %d records in %.3f s (net runtime %.3f s, execute %.3f s)%n",
          spec.name, which, run.sourceRecords, run.seconds, run.netRuntimeSeconds, run.wallSeconds);
      if (rocksdb && run.rocksdbInstances == 0) {
        rocksdbEveryRun = false;
      }
      if (heapToo) {
        BenchJobs.Run heap = BenchJobs.runOnce(spec, warm ? warmupRecords : records, dataFile, true);
        System.err.printf("flink-reference bench: %s on the heap backend %s: %d records in %.3f s%n",
            spec.name, which, heap.sourceRecords, heap.seconds);
        if (!warm) {
          heapRates.add(heap.sourceRecords / heap.seconds);
          lastHeap = heap;
        }
      }
      if (warm) {
        continue;
      }
      if (last != null && (last.sinkRecords != run.sinkRecords || last.checksum != run.checksum)) {
        sameEveryRun = false;
      }
      last = run;
      rates.add(run.sourceRecords / run.seconds);
      netRates.add(run.sourceRecords / run.netRuntimeSeconds);
      walls.add(run.wallSeconds);
    }
    double tmRate = tm.get("records_per_s").asDouble();
    double flinkRate = median(rates);
    o.put("records", records);
    if (dataFile != null) {
      o.put("data_file", dataFile);
    }
    o.put("runs", runs);
    o.put("warmup", warmup);
    o.put("tidemark_records_per_s", tmRate);
    o.put("flink_records_per_s", flinkRate);
    o.put("ratio", tmRate / flinkRate);
    o.put("tidemark_timing", "tidemark bench: job wall time, start to the end of the last task, median of "
        + runs + " runs after " + warmup + " warm-up in one process");
    o.put("flink_timing", "first record made by a source subtask to the last sink subtask's end of input "
        + "(JVM and MiniCluster start-up and job deployment excluded), median of " + runs + " runs after "
        + warmup + " unmeasured warm-up run" + (warmup == 1 ? "" : "s") + " in the same JVM"
        + (warmupRecords < records ? " (of " + warmupRecords + " records)" : ""));
    o.put("flink_records_per_s_min", Collections.min(rates));
    o.put("flink_records_per_s_max", Collections.max(rates));
    o.put("flink_records_per_s_net_runtime", median(netRates));
    o.put("flink_execute_s", median(walls));
    o.put("tidemark_source_records", records);
    o.put("flink_source_records", last.sourceRecords);
    o.put("tidemark_sink_records", tm.get("sink_records").asLong());
    o.put("flink_sink_records", last.sinkRecords);
    o.put("tidemark_checksum", tm.get("checksum").asText());
    o.put("flink_checksum", String.format("%016x", last.checksum));
    boolean counts = last.sourceRecords == records && last.sinkRecords == tm.get("sink_records").asLong();
    boolean sum = String.format("%016x", last.checksum).equals(tm.get("checksum").asText());
    o.put("counts_equal", counts);
    o.put("checksum_equal", sum);
    o.put("flink_runs_agree", sameEveryRun);
    o.put("state_backend", spec.stateBackend);
    boolean heapSame = true;
    if (lastHeap != null) {
      // Flink's RocksDB backend against its own heap backend, the same job and records in this JVM.
      double heapRate = median(heapRates);
      heapSame = lastHeap.sourceRecords == last.sourceRecords && lastHeap.sinkRecords == last.sinkRecords
          && lastHeap.checksum == last.checksum;
      o.put("flink_heap_records_per_s", heapRate);
      o.put("flink_heap_records_per_s_min", Collections.min(heapRates));
      o.put("flink_heap_records_per_s_max", Collections.max(heapRates));
      o.put("flink_rocksdb_to_heap", flinkRate / heapRate);
      o.put("flink_heap_results_equal", heapSame);
      o.put("flink_heap_timing", "the same job on Flink's hashmap (heap) backend, timed the same way, each run "
          + "(warm-up too) right after the RocksDB run of the same number");
    }
    ObjectNode setup = o.putObject("flink");
    setup.put("version", org.apache.flink.runtime.util.EnvironmentInformation.getVersion());
    setup.put("cluster", "local MiniCluster, parallelism " + spec.parallelism + ", STREAMING");
    setup.put("state_backend", spec.stateBackend);
    if (rocksdb) {
      // Flink's options as the harness set them, and what the runs showed.
      ObjectNode r = setup.putObject("rocksdb");
      r.put("state.backend.rocksdb.memory.fixed-per-slot", spec.rocksdbFixedPerSlot);
      r.put("state.backend.rocksdb.memory.write-buffer-ratio",
          spec.rocksdbWriteBufferRatio != null ? spec.rocksdbWriteBufferRatio
              : org.apache.flink.state.rocksdb.RocksDBOptions.WRITE_BUFFER_RATIO.defaultValue());
      r.put("state.backend.rocksdb.timer-service.factory", spec.rocksdbTimers);
      r.put("state.backend.rocksdb.localdir", BenchJobs.rocksdbDir(spec).toString());
      r.put("instances_seen_every_run", rocksdbEveryRun);
    }
    setup.put("object_reuse", true);
    setup.put("checkpoints", "none");
    setup.put("java", System.getProperty("java.version") + ", max heap "
        + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB, "
        + java.lang.management.ManagementFactory.getGarbageCollectorMXBeans().get(0).getName());
    out.println(json.writeValueAsString(o));
    if (rocksdb && !rocksdbEveryRun) {
      System.err.println("flink-reference bench: " + spec.name + ": state.backend.type rocksdb, but a run found no "
          + "RocksDB instance directory in " + BenchJobs.rocksdbDir(spec) + " at its end of input");
      return 1;
    }
    if (!heapSame) {
      System.err.println("flink-reference bench: " + spec.name + ": Flink's RocksDB and heap backends differ (results "
          + last.sinkRecords + " / " + lastHeap.sinkRecords + ", checksum " + String.format("%016x", last.checksum)
          + " / " + String.format("%016x", lastHeap.checksum) + ")");
      return 1;
    }
    if (!counts || !sum || !sameEveryRun) {
      System.err.println("flink-reference bench: " + spec.name + ": tidemark and Flink differ (records "
          + records + " / " + last.sourceRecords + ", results " + tm.get("sink_records").asLong() + " / "
          + last.sinkRecords + ", checksum " + tm.get("checksum").asText() + " / "
          + String.format("%016x", last.checksum) + (sameEveryRun ? "" : ", Flink's runs differ") + ")");
      return 1;
    }
    return 0;
  }
}
