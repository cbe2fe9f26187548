package dev.tidemark.reference.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.reader.TextLineInputFormat;
import org.apache.flink.state.rocksdb.EmbeddedRocksDBStateBackend;
import org.apache.flink.state.rocksdb.RocksDBOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * A tidemark bench job (jobs/bench/*.yaml: a {@code generator} source, or a {@code file} source
 * over a generated events file, then maps, filters and at most one keyed event-time window, into a
 * {@code checksum} sink) built with Flink 2.3's DataStream API the way a Flink user would write it:
 * typed POJOs, Flink's {@link DataGeneratorSource} making tidemark's generator records
 * ({@link GenRec}), or {@link FileSource} with {@link TextLineInputFormat} and Jackson into
 * {@link EventRec}; {@code keyBy} / {@code window} / {@code aggregate} with a
 * {@link ProcessWindowFunction} for the window bounds; a Sink V2 that counts and sums tidemark's
 * checksum (Checksums). Run on a local MiniCluster in STREAMING mode at the job's parallelism, with
 * object reuse and no checkpoints, on the job's state backend: the hashmap (heap) one, or, for
 * {@code state-backend: rocksdb}, Flink's EmbeddedRocksDBStateBackend with the job's budget as
 * {@code state.backend.rocksdb.memory.fixed-per-slot}, heap timers as tidemark keeps them, and its
 * files under the build tree (parseStateBackend, rocksdbDir).
 *
 * <p>Timing: the first record made by any source subtask to the last sink subtask's end of input
 * (System.nanoTime in this JVM), so the JVM's and the MiniCluster's start-up and the job's
 * deployment are excluded; the job's net runtime (which includes deployment) is reported beside it.
 */
public final class BenchJobs {
  private BenchJobs() {}

  /** A job outside what this mapping covers. */
  public static final class Unsupported extends Exception {
    private static final long serialVersionUID = 1L;

    Unsupported(String why) {
      super(why);
    }
  }

  // ---- the job ------------------------------------------------------------------------------

  /** One map or filter of the chain: {@code value = value * multiply + add} or {@code field op value}. */
  static final class Step implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    boolean isMap;
    String partition; // null (forward), "rebalance"
    int field; // GenRec field: 0 key, 1 value, 2 ts
    double multiply = 1;
    double add = 0;
    String op;
    double value;
  }

  /** The parsed bench job. */
  public static final class Spec {
    public String name;
    public int parallelism = 1;
    public boolean events; // file source over a generated events file
    public long count;
    public long keys;
    public long stepMs = 1;
    public String file; // events: the file's name in the job
    public Long maxOutOfOrdernessMs; // null: no watermarks
    /** Flink's {@code state.backend.type}: "hashmap" (the job's heap backend) or "rocksdb". */
    public String stateBackend = "hashmap";
    /** rocksdb: the job's budget per subtask in bytes ({@code rocksdb.memory.fixed-per-slot},
     *  tidemark's 64 MiB default when not set, whatever {@code memory.managed} says). */
    public long rocksdbFixedPerSlot = DEFAULT_ROCKSDB_BUDGET;
    /** rocksdb: {@code memory.write-buffer-ratio}; null leaves Flink's default (0.5, tidemark's too). */
    public Double rocksdbWriteBufferRatio;
    /** rocksdb: Flink's {@code state.backend.rocksdb.timer-service.factory}, HEAP unless the job
     *  says otherwise: tidemark keeps every timer on the heap (it refuses ROCKSDB). */
    public String rocksdbTimers = "HEAP";
    /** rocksdb: the job's {@code rocksdb.localdir} made absolute (Flink refuses relative paths);
     *  null: the harness's directory under the build tree (see rocksdbDir). */
    public String rocksdbLocalDir;
    final List<Step> steps = new ArrayList<>();
    // window (null assigner: none)
    String assigner;
    String windowPartition;
    long size;
    long slide;
    long gap;
    long offset;
    String keyBy;
    final List<String> aggFns = new ArrayList<>();
    final List<String> aggFields = new ArrayList<>();
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o, String what) throws Unsupported {
    if (!(o instanceof Map)) {
      throw new Unsupported(what + " is not a mapping");
    }
    return (Map<String, Object>) o;
  }

  static long ms(Object o) {
    return dev.tidemark.reference.job.DataStreamJobs.duration(o);
  }

  /** Parses the bench job; Unsupported names what is not mapped. */
  @SuppressWarnings("unchecked")
  public static Spec parse(Path path) throws IOException, Unsupported {
    Map<String, Object> job =
        map(new Load(LoadSettings.builder().build()).loadFromString(Files.readString(path)), "the job");
    Spec s = new Spec();
    s.name = String.valueOf(job.get("name"));
    for (String k : List.of("checkpointing", "faults")) {
      if (job.containsKey(k)) {
        throw new Unsupported("'" + k + "' is not mapped");
      }
    }
    Map<String, Object> pipeline = job.containsKey("pipeline") ? map(job.get("pipeline"), "pipeline") : Map.of();
    if (pipeline.containsKey("parallelism")) {
      s.parallelism = ((Number) pipeline.get("parallelism")).intValue();
    }
    parseStateBackend(pipeline, s);
    String last = null;
    boolean sink = false;
    for (Object o : (List<Object>) job.get("operators")) {
      Map<String, Object> op = map(o, "an operator");
      String type = String.valueOf(op.get("type"));
      String id = String.valueOf(op.get("id"));
      if (op.containsKey("parallelism")) {
        throw new Unsupported("operator '" + id + "': its own parallelism is not mapped");
      }
      String partition = null;
      if (!type.equals("source")) {
        Object in = op.get("input");
        String from;
        if (in instanceof Map) {
          Map<String, Object> m = (Map<String, Object>) in;
          from = String.valueOf(m.get("from"));
          partition = m.containsKey("partition") ? String.valueOf(m.get("partition")) : null;
          if (partition != null && !partition.equals("rebalance") && !partition.equals("forward")) {
            throw new Unsupported("partition '" + partition + "' is not mapped");
          }
          if ("forward".equals(partition)) {
            partition = null;
          }
        } else {
          from = String.valueOf(in);
        }
        if (!from.equals(last)) {
          throw new Unsupported("operator '" + id + "' does not read the operator before it (only a straight chain is mapped)");
        }
      }
      switch (type) {
        case "source":
          {
            if (last != null) {
              throw new Unsupported("more than one source");
            }
            Map<String, Object> src = map(op.get("source"), "source");
            String st = String.valueOf(src.get("type"));
            if (st.equals("generator")) {
              for (String k : src.keySet()) {
                if (!List.of("type", "count", "keys", "step").contains(k)) {
                  throw new Unsupported("generator key '" + k + "' is not mapped");
                }
              }
              s.count = ((Number) src.get("count")).longValue();
              s.keys = src.containsKey("keys") ? ((Number) src.get("keys")).longValue() : 1000;
              if (src.containsKey("step")) {
                s.stepMs = ms(src.get("step"));
              }
            } else if (st.equals("file")) {
              s.events = true;
              s.file = String.valueOf(src.get("path"));
              if (!"jsonl".equals(String.valueOf(src.get("format")))) {
                throw new Unsupported("file format other than jsonl");
              }
            } else {
              throw new Unsupported("source type " + st + " is not mapped");
            }
            if (op.containsKey("watermarks")) {
              Map<String, Object> wm = map(op.get("watermarks"), "watermarks");
              String strategy = String.valueOf(wm.get("strategy"));
              if (strategy.equals("bounded-out-of-orderness")) {
                s.maxOutOfOrdernessMs = ms(wm.getOrDefault("max-out-of-orderness", "0ms"));
              } else if (strategy.equals("ascending")) {
                s.maxOutOfOrdernessMs = 0L;
              } else {
                throw new Unsupported("watermark strategy " + strategy + " is not mapped");
              }
              if (!"ts".equals(String.valueOf(wm.getOrDefault("timestamp-field", "ts")))) {
                throw new Unsupported("timestamp field other than ts");
              }
            }
          }
          break;
        case "map":
        case "filter":
          {
            if (s.events || s.assigner != null) {
              throw new Unsupported("map / filter is mapped on generator records before a window only");
            }
            Map<String, Object> m = map(op.get(type), type);
            Step st = new Step();
            st.isMap = type.equals("map");
            st.partition = partition;
            String field = String.valueOf(m.get("field"));
            st.field = field.equals("key") ? 0 : field.equals("value") ? 1 : field.equals("ts") ? 2 : -1;
            if (st.field != 1) {
              throw new Unsupported(type + " on field '" + field + "' is not mapped (only value)");
            }
            if (st.isMap) {
              st.multiply = ((Number) m.getOrDefault("multiply", 1)).doubleValue();
              st.add = ((Number) m.getOrDefault("add", 0)).doubleValue();
              if (m.containsKey("set")) {
                throw new Unsupported("map.set is not mapped");
              }
            } else {
              st.op = String.valueOf(m.get("op"));
              st.value = ((Number) m.get("value")).doubleValue();
              if (!List.of("gt", "ge", "lt", "le", "eq", "ne").contains(st.op)) {
                throw new Unsupported("filter op " + st.op + " is not mapped");
              }
            }
            s.steps.add(st);
          }
          break;
        case "window":
          {
            if (s.assigner != null) {
              throw new Unsupported("more than one window");
            }
            if (s.maxOutOfOrdernessMs == null) {
              throw new Unsupported("a window without source watermarks");
            }
            s.windowPartition = partition;
            Object kb = op.get("key-by");
            if (!(kb instanceof String)) {
              throw new Unsupported("key-by other than one field");
            }
            s.keyBy = (String) kb;
            if (!(s.events ? List.of("user", "page") : List.of("key")).contains(s.keyBy)) {
              throw new Unsupported("key-by '" + s.keyBy + "' is not mapped");
            }
            Map<String, Object> w = map(op.get("window"), "window");
            for (String k : w.keySet()) {
              if (!List.of("assigner", "size", "slide", "gap", "offset", "aggregate").contains(k)) {
                throw new Unsupported("window key '" + k + "' is not mapped");
              }
            }
            s.assigner = String.valueOf(w.get("assigner"));
            s.size = w.containsKey("size") ? ms(w.get("size")) : 0;
            s.slide = w.containsKey("slide") ? ms(w.get("slide")) : s.size;
            s.gap = w.containsKey("gap") ? ms(w.get("gap")) : 0;
            s.offset = w.containsKey("offset") ? ms(w.get("offset")) : 0;
            if (!List.of("tumbling", "sliding", "session").contains(s.assigner)) {
              throw new Unsupported("assigner " + s.assigner + " is not mapped");
            }
            for (Object a : (List<Object>) w.getOrDefault("aggregate", List.of("count"))) {
              if (a instanceof Map) {
                Map<String, Object> am = (Map<String, Object>) a;
                String fn = String.valueOf(am.get("fn"));
                String f = String.valueOf(am.get("field"));
                if (fn.equals("count") && !am.containsKey("field")) {
                  s.aggFns.add("count");
                  s.aggFields.add(null);
                  continue;
                }
                if (!fn.equals("sum")) {
                  throw new Unsupported("aggregate " + fn + " is not mapped (count, sum)");
                }
                if (!(s.events ? List.of("ts", "amount") : List.of("key", "value", "ts")).contains(f)) {
                  throw new Unsupported("sum of '" + f + "' is not mapped");
                }
                s.aggFns.add("sum");
                s.aggFields.add(f);
              } else if ("count".equals(String.valueOf(a))) {
                s.aggFns.add("count");
                s.aggFields.add(null);
              } else {
                throw new Unsupported("aggregate " + a + " is not mapped (count, sum)");
              }
            }
          }
          break;
        case "sink":
          {
            Map<String, Object> sk = map(op.get("sink"), "sink");
            if (!"checksum".equals(String.valueOf(sk.get("type")))) {
              throw new Unsupported("sink type " + sk.get("type") + " (a bench job ends in a checksum sink)");
            }
            if (partition != null) {
              throw new Unsupported("a partitioned sink input is not mapped");
            }
            sink = true;
          }
          break;
        default:
          throw new Unsupported("operator '" + id + "' of type " + type + " is not mapped");
      }
      last = id;
    }
    if (!sink) {
      throw new Unsupported("no checksum sink");
    }
    return s;
  }

  /** tidemark's budget per subtask when the job gives no {@code memory.fixed-per-slot}: 64 MiB. */
  static final long DEFAULT_ROCKSDB_BUDGET = 64L << 20;

  /**
   * {@code pipeline.state-backend} and {@code pipeline.rocksdb} (docs/job-reference.md) as Flink's
   * options: heap / hashmap → {@code hashmap}; rocksdb → {@code rocksdb} with tidemark's budget as
   * Flink's {@code state.backend.rocksdb.memory.fixed-per-slot} (Flink's documented fixed amount
   * per slot, which overrides managed memory; tidemark's {@code memory.managed} without a fixed
   * size means its 64 MiB default, so that is what Flink is given), {@code write-buffer-ratio} as
   * is, timers as the job says (HEAP when it does not: tidemark keeps them on the heap) and
   * {@code localdir} made absolute.
   */
  static void parseStateBackend(Map<String, Object> pipeline, Spec s) throws Unsupported {
    String backend = String.valueOf(pipeline.getOrDefault("state-backend", "heap"));
    if (backend.equals("heap") || backend.equals("hashmap")) {
      if (pipeline.containsKey("rocksdb")) {
        throw new Unsupported("pipeline.rocksdb without state-backend: rocksdb");
      }
      return;
    }
    if (!backend.equals("rocksdb")) {
      throw new Unsupported("state-backend '" + backend + "' is not mapped (heap, hashmap, rocksdb)");
    }
    s.stateBackend = "rocksdb";
    Map<String, Object> rocks = pipeline.containsKey("rocksdb") ? map(pipeline.get("rocksdb"), "pipeline.rocksdb") : Map.of();
    for (Map.Entry<String, Object> e : rocks.entrySet()) {
      String v = String.valueOf(e.getValue());
      switch (e.getKey()) {
        case "memory.fixed-per-slot":
          s.rocksdbFixedPerSlot = memorySize(v);
          break;
        case "memory.managed":
          break; // tidemark's budget is fixed-per-slot or its 64 MiB default either way
        case "memory.write-buffer-ratio":
          s.rocksdbWriteBufferRatio = ((Number) e.getValue()).doubleValue();
          break;
        case "timer-service.factory":
          s.rocksdbTimers = v.toUpperCase(java.util.Locale.ROOT);
          if (!List.of("HEAP", "ROCKSDB").contains(s.rocksdbTimers)) {
            throw new Unsupported("rocksdb.timer-service.factory '" + v + "' (HEAP, ROCKSDB)");
          }
          break;
        case "localdir":
          s.rocksdbLocalDir = Path.of(v).toAbsolutePath().normalize().toString();
          break;
        default:
          throw new Unsupported("rocksdb key '" + e.getKey() + "' is not mapped");
      }
    }
  }

  /** A memory size as tidemark reads it (config/block_reader.cc ParseMemorySize): digits, optional
   *  spaces, a binary unit (b, k/kb/kib, m/mb/mib, g/gb/gib, t/tb/tib; none: bytes). */
  static long memorySize(String text) throws Unsupported {
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+) *([a-zA-Z]*)").matcher(text.strip());
    if (!m.matches()) {
      throw new Unsupported("memory size '" + text + "'");
    }
    String unit = m.group(2).toLowerCase(java.util.Locale.ROOT);
    int shift;
    switch (unit) {
      case "": case "b": case "bytes": shift = 0; break;
      case "k": case "kb": case "kib": shift = 10; break;
      case "m": case "mb": case "mib": shift = 20; break;
      case "g": case "gb": case "gib": shift = 30; break;
      case "t": case "tb": case "tib": shift = 40; break;
      default: throw new Unsupported("memory size unit '" + m.group(2) + "'");
    }
    return Long.parseLong(m.group(1)) << shift;
  }

  // ---- the run's figures, shared by the subtasks of the MiniCluster in this JVM --------------

  /** What one run counted: source records, sink records and checksum, first and last instants. */
  static final class Stats {
    static final AtomicLong sourceRecords = new AtomicLong();
    static final AtomicLong sinkRecords = new AtomicLong();
    static final AtomicLong checksum = new AtomicLong();
    static final AtomicLong firstNanos = new AtomicLong(Long.MAX_VALUE);
    static final AtomicLong lastNanos = new AtomicLong(Long.MIN_VALUE);
    /** rocksdb: Flink's local directory, and the most RocksDB instance directories
     *  ({@code job_<id>_op_<operator>_uuid_<uuid>}) a sink subtask found in it at its end of
     *  input, while the window operator's instance is still open: proof that the window's state
     *  was in RocksDB there. */
    static volatile Path rocksdbDir;
    static volatile java.util.Set<Path> rocksdbBefore = java.util.Set.of(); // there before the run
    static final AtomicLong rocksdbInstances = new AtomicLong();

    static void reset(Path dir) throws IOException {
      sourceRecords.set(0);
      sinkRecords.set(0);
      checksum.set(0);
      firstNanos.set(Long.MAX_VALUE);
      lastNanos.set(Long.MIN_VALUE);
      rocksdbDir = dir;
      rocksdbBefore = dir == null ? java.util.Set.of() : instances(dir);
      rocksdbInstances.set(0);
    }

    static java.util.Set<Path> instances(Path dir) throws IOException {
      try (java.util.stream.Stream<Path> entries = Files.list(dir)) {
        return entries.filter(p -> p.getFileName().toString().startsWith("job_") && Files.isDirectory(p))
            .collect(java.util.stream.Collectors.toSet());
      }
    }

    static void countRocksDbInstances() {
      Path dir = rocksdbDir;
      if (dir == null) {
        return;
      }
      try {
        long n = instances(dir).stream().filter(p -> !rocksdbBefore.contains(p)).count();
        rocksdbInstances.accumulateAndGet(n, Math::max);
      } catch (IOException e) {
        // none counted: the run is reported as not having used RocksDB
      }
    }

    /** A source subtask's record count after one more record; the first one stamps firstNanos. */
    static long made(long before) {
      if (before == 0) {
        firstNanos.accumulateAndGet(System.nanoTime(), Math::min);
      }
      return before + 1;
    }

    static void last(long now) {
      lastNanos.accumulateAndGet(now, Math::max);
    }
  }

  /** tidemark's generator: record i of the sequence Flink's DataGeneratorSource hands out. */
  static final class Gen implements GeneratorFunction<Long, GenRec> {
    private static final long serialVersionUID = 1L;
    final long keys;
    final long stepMs;
    transient long made;

    Gen(long keys, long stepMs) {
      this.keys = keys;
      this.stepMs = stepMs;
    }

    @Override
    public GenRec map(Long i) {
      made = Stats.made(made);
      return GenRec.make(i, keys, stepMs);
    }

    @Override
    public void close() {
      Stats.sourceRecords.addAndGet(made);
    }
  }

  /** A JSON line into an EventRec with Jackson (as Flink's JsonDeserializationSchema does). */
  static final class Parse extends RichMapFunction<String, EventRec> {
    private static final long serialVersionUID = 1L;
    transient ObjectReader reader;
    transient long made;

    @Override
    public void open(OpenContext ctx) {
      reader = new ObjectMapper().readerFor(EventRec.class);
    }

    @Override
    public EventRec map(String line) throws Exception {
      made = Stats.made(made);
      return reader.readValue(line);
    }

    @Override
    public void close() {
      Stats.sourceRecords.addAndGet(made);
    }
  }

  static final class MapStep implements MapFunction<GenRec, GenRec> {
    private static final long serialVersionUID = 1L;
    final double multiply;
    final double add;

    MapStep(Step s) {
      multiply = s.multiply;
      add = s.add;
    }

    @Override
    public GenRec map(GenRec r) {
      r.value = r.value * multiply + add;
      return r;
    }
  }

  static final class FilterStep implements FilterFunction<GenRec> {
    private static final long serialVersionUID = 1L;
    final int op;
    final double value;

    FilterStep(Step s) {
      op = List.of("gt", "ge", "lt", "le", "eq", "ne").indexOf(s.op);
      value = s.value;
    }

    @Override
    public boolean filter(GenRec r) {
      double v = r.value;
      switch (op) {
        case 0:
          return v > value;
        case 1:
          return v >= value;
        case 2:
          return v < value;
        case 3:
          return v <= value;
        case 4:
          return v == value;
        default:
          return v != value;
      }
    }
  }

  /** Accumulator: one int64 per aggregate (a double sum as its raw bits). */
  static final class Agg implements AggregateFunction<BenchRecord, long[], long[]> {
    private static final long serialVersionUID = 1L;
    final int[] fields; // -1: count
    final boolean[] isDouble;

    Agg(int[] fields, boolean[] isDouble) {
      this.fields = fields;
      this.isDouble = isDouble;
    }

    @Override
    public long[] createAccumulator() {
      return new long[fields.length];
    }

    @Override
    public long[] add(BenchRecord r, long[] acc) {
      for (int i = 0; i < fields.length; i++) {
        if (fields[i] < 0) {
          acc[i]++;
        } else if (isDouble[i]) {
          acc[i] = Double.doubleToRawLongBits(Double.longBitsToDouble(acc[i]) + r.doubleAt(fields[i]));
        } else {
          acc[i] += r.longAt(fields[i]);
        }
      }
      return acc;
    }

    @Override
    public long[] getResult(long[] acc) {
      return acc;
    }

    @Override
    public long[] merge(long[] a, long[] b) {
      long[] m = new long[a.length];
      for (int i = 0; i < a.length; i++) {
        m[i] = isDouble[i]
            ? Double.doubleToRawLongBits(Double.longBitsToDouble(a[i]) + Double.longBitsToDouble(b[i]))
            : a[i] + b[i];
      }
      return m;
    }
  }

  /** The key, the window's bounds and the aggregates, as tidemark's window operator emits them. */
  static final class Emit<K> extends ProcessWindowFunction<long[], BenchRecord, K, TimeWindow> {
    private static final long serialVersionUID = 1L;
    final boolean[] isDouble;

    Emit(boolean[] isDouble) {
      this.isDouble = isDouble;
    }

    @Override
    public void process(K key, Context ctx, Iterable<long[]> results, Collector<BenchRecord> out) {
      WinOut w = new WinOut();
      if (key instanceof String) {
        w.stringKey = true;
        w.key = (String) key;
      } else {
        w.longKey = (Long) key;
      }
      w.start = ctx.window().getStart();
      w.end = ctx.window().getEnd();
      w.aggs = results.iterator().next().clone();
      w.isDouble = isDouble;
      out.collect(w);
    }
  }

  /** Counts its records and sums their checksum hashes; publishes both at end of input. */
  static final class ChecksumSink implements Sink<BenchRecord> {
    private static final long serialVersionUID = 1L;

    @Override
    public SinkWriter<BenchRecord> createWriter(WriterInitContext context) {
      return new SinkWriter<BenchRecord>() {
        long count;
        long sum;
        boolean published;

        @Override
        public void write(BenchRecord r, Context c) {
          count++;
          sum += r.hash();
        }

        @Override
        public void flush(boolean endOfInput) {
          if (endOfInput) {
            publish();
          }
        }

        void publish() {
          if (!published) {
            published = true;
            Stats.last(System.nanoTime());
            Stats.countRocksDbInstances();
            Stats.sinkRecords.addAndGet(count);
            Stats.checksum.addAndGet(sum);
          }
        }

        @Override
        public void close() {
          publish();
        }
      };
    }
  }

  /** One run's figures. */
  public static final class Run {
    public long sourceRecords;
    public long sinkRecords;
    public long checksum;
    public double seconds; // first record to the last sink's end of input
    public double netRuntimeSeconds;
    public double wallSeconds; // execute() call, MiniCluster start-up included
    public long rocksdbInstances; // rocksdb: instance directories seen at the sinks' end of input
  }

  /** rocksdb without a localdir in the job: this directory under the build tree, from
   *  flink-reference.sh (FLINK_BENCH_ROCKSDB_DIR), else build/flink-reference/bench-rocksdb. */
  static Path rocksdbDir(Spec s) {
    if (s.rocksdbLocalDir != null) {
      return Path.of(s.rocksdbLocalDir);
    }
    String dir = System.getenv().getOrDefault("FLINK_BENCH_ROCKSDB_DIR", "build/flink-reference/bench-rocksdb");
    return Path.of(dir).toAbsolutePath().normalize();
  }

  static int fieldCode(Spec s, String f) {
    if (s.events) {
      return f.equals("ts") ? 1 : 2;
    }
    return f.equals("key") ? 0 : f.equals("value") ? 1 : 2;
  }

  /** The stream as BenchRecords without an operator: its elements are GenRec or EventRec objects,
   *  which implement BenchRecord, and keep their own type's serializer. */
  @SuppressWarnings("unchecked")
  static DataStream<BenchRecord> asRecords(DataStream<? extends BenchRecord> s) {
    return (DataStream<BenchRecord>) s;
  }

  /** rocksdb in the harness's own directory (no localdir in the job): removes the RocksDB instance
   *  directories a killed JVM left there (Flink removes its own when the operator closes), naming
   *  each on stderr. A job's own localdir is left alone. */
  static void removeLeftoverInstances(Spec s) throws IOException {
    if (!s.stateBackend.equals("rocksdb") || s.rocksdbLocalDir != null) {
      return;
    }
    Path dir = rocksdbDir(s);
    if (!Files.isDirectory(dir)) {
      return;
    }
    for (Path instance : Stats.instances(dir)) {
      if (!instance.getFileName().toString().matches("job_[0-9a-f]{32}_op_.*_uuid_[0-9a-f-]{36}")) {
        continue;
      }
      System.err.println("flink-reference bench: removing " + instance + " (a RocksDB instance an earlier run left)");
      try (java.util.stream.Stream<Path> walk = Files.walk(instance)) {
        for (Path p : (Iterable<Path>) walk.sorted(java.util.Comparator.reverseOrder())::iterator) {
          Files.delete(p);
        }
      }
    }
  }

  /** Builds the job (with `count` records for a generator source) and runs it once, on the job's
   *  state backend, or on the heap one whatever the job says when `heap`. */
  public static Run runOnce(Spec s, long count, String dataFile, boolean heap) throws Exception {
    Configuration conf = new Configuration();
    conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.STREAMING);
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    conf.set(RestOptions.BIND_PORT, "0");
    String backend = heap ? "hashmap" : s.stateBackend;
    conf.set(StateBackendOptions.STATE_BACKEND, backend);
    Path rocksdbDir = null;
    if (backend.equals("rocksdb")) {
      rocksdbDir = rocksdbDir(s);
      Files.createDirectories(rocksdbDir);
      conf.set(RocksDBOptions.FIX_PER_SLOT_MEMORY_SIZE, new MemorySize(s.rocksdbFixedPerSlot));
      if (s.rocksdbWriteBufferRatio != null) {
        conf.set(RocksDBOptions.WRITE_BUFFER_RATIO, s.rocksdbWriteBufferRatio);
      }
      conf.set(RocksDBOptions.TIMER_SERVICE_FACTORY,
          EmbeddedRocksDBStateBackend.PriorityQueueStateType.valueOf(s.rocksdbTimers));
      conf.set(RocksDBOptions.LOCAL_DIRECTORIES, rocksdbDir.toString());
    }
    conf.set(PipelineOptions.OBJECT_REUSE, true);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(s.parallelism, conf);

    DataStream<BenchRecord> records;
    if (!s.events) {
      WatermarkStrategy<GenRec> wm = s.maxOutOfOrdernessMs == null
          ? WatermarkStrategy.<GenRec>noWatermarks()
          : WatermarkStrategy.<GenRec>forBoundedOutOfOrderness(Duration.ofMillis(s.maxOutOfOrdernessMs));
      wm = wm.withTimestampAssigner((r, t) -> r.ts);
      DataGeneratorSource<GenRec> source =
          new DataGeneratorSource<>(new Gen(s.keys, s.stepMs), count, TypeInformation.of(GenRec.class));
      DataStream<GenRec> gen = env.fromSource(source, wm, "source");
      for (Step st : s.steps) {
        if ("rebalance".equals(st.partition)) {
          gen = gen.rebalance();
        }
        gen = st.isMap
            ? gen.map(new MapStep(st)).returns(GenRec.class).name("map")
            : gen.filter(new FilterStep(st)).name("filter");
      }
      records = asRecords(gen);
    } else {
      FileSource<String> source =
          FileSource.forRecordStreamFormat(new TextLineInputFormat(), new org.apache.flink.core.fs.Path(dataFile)).build();
      DataStream<EventRec> events = env.fromSource(source, WatermarkStrategy.noWatermarks(), "source")
          .map(new Parse()).returns(EventRec.class).name("parse");
      if (s.maxOutOfOrdernessMs != null) {
        events = events.assignTimestampsAndWatermarks(
            WatermarkStrategy.<EventRec>forBoundedOutOfOrderness(Duration.ofMillis(s.maxOutOfOrdernessMs))
                .withTimestampAssigner((r, t) -> r.ts));
      }
      records = asRecords(events);
    }

    DataStream<BenchRecord> out = records;
    if (s.assigner != null) {
      WindowAssigner<Object, TimeWindow> wa;
      switch (s.assigner) {
        case "tumbling":
          wa = TumblingEventTimeWindows.of(Duration.ofMillis(s.size), Duration.ofMillis(s.offset));
          break;
        case "sliding":
          wa = SlidingEventTimeWindows.of(Duration.ofMillis(s.size), Duration.ofMillis(s.slide), Duration.ofMillis(s.offset));
          break;
        default:
          wa = EventTimeSessionWindows.withGap(Duration.ofMillis(s.gap));
      }
      int n = s.aggFns.size();
      int[] fields = new int[n];
      boolean[] isDouble = new boolean[n];
      for (int i = 0; i < n; i++) {
        String f = s.aggFields.get(i);
        fields[i] = f == null ? -1 : fieldCode(s, f);
        isDouble[i] = f != null && !s.events && f.equals("value");
      }
      TypeInformation<long[]> acc = PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO;
      if (s.events) {
        final int kf = s.keyBy.equals("user") ? 0 : 3;
        KeyedStream<BenchRecord, String> keyed = records.keyBy(r -> r.stringAt(kf), Types.STRING);
        out = keyed.window(wa).aggregate(new Agg(fields, isDouble), new Emit<String>(isDouble), acc, acc,
            TypeInformation.of(BenchRecord.class)).name("windows");
      } else {
        KeyedStream<BenchRecord, Long> keyed = records.keyBy(r -> r.longAt(0), Types.LONG);
        out = keyed.window(wa).aggregate(new Agg(fields, isDouble), new Emit<Long>(isDouble), acc, acc,
            TypeInformation.of(BenchRecord.class)).name("windows");
      }
    }
    out.sinkTo(new ChecksumSink()).name("sink");

    Stats.reset(rocksdbDir);
    long t0 = System.nanoTime();
    JobExecutionResult result = env.execute("tidemark bench " + s.name);
    long t1 = System.nanoTime();
    Run r = new Run();
    r.sourceRecords = Stats.sourceRecords.get();
    r.sinkRecords = Stats.sinkRecords.get();
    r.checksum = Stats.checksum.get();
    long first = Stats.firstNanos.get();
    long last = Stats.lastNanos.get();
    r.seconds = first == Long.MAX_VALUE || last == Long.MIN_VALUE ? Double.NaN : (last - first) / 1e9;
    r.netRuntimeSeconds = result.getNetRuntime(TimeUnit.MILLISECONDS) / 1e3;
    r.wallSeconds = (t1 - t0) / 1e9;
    r.rocksdbInstances = Stats.rocksdbInstances.get();
    return r;
  }
}
