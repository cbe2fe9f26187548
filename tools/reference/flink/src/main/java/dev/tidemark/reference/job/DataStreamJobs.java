package dev.tidemark.reference.job;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.PathMatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.ContinuousEventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.CountTrigger;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.PurgingTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * {@code flink-reference.sh job JOB.yaml...}: a tidemark job built with Flink 2.3's DataStream API
 * and run on a MiniCluster; its print sinks' rows, written as tidemark's print sink writes them, are
 * compared with {@code tidemark run JOB} as multisets of lines (PASS / FAIL / SKIP per job, closing
 * line {@code N passed, M failed}).
 *
 * <p>The subset whose result does not depend on timing, on a virtual clock (`clock: virtual`):
 * sources whose records and arrival times are fixed (replay: the recording's {@code at}; sequence
 * and file: the k-th record of the reader at k × pacing, files and splits round-robin), read here
 * and handed to Flink in that order with markers at the instants of tidemark's periodic watermark
 * emissions ({@link MarkedWatermarks}: Flink's generators and multiplexer, called at those points);
 * map, filter, project, union, assign-timestamps-and-watermarks, event-time windows (tumbling,
 * sliding, session; Flink's event-time, count, continuous-event-time and purging triggers; allowed
 * lateness with the firing column; the late side output with its provenance columns) and print
 * sinks. Anything else is skipped with the reason.
 */
public final class DataStreamJobs {
  private DataStreamJobs() {}

  /** A job outside the subset. */
  static final class Skip extends Exception {
    private static final long serialVersionUID = 1L;

    Skip(String why) {
      super(why);
    }
  }

  /** The window aggregates the harness computes (the rest are compared through `sql`). */
  static final java.util.Set<String> MAPPED_AGGREGATES =
      java.util.Set.of("count", "sum", "min", "max", "avg", "first", "last");

  /** An expression of the job, or Skip when it uses what this harness's Expr does not read (the
   *  Flink SQL functions: those jobs are compared through `sql`). */
  static Expr mappedExpr(String text) throws Skip {
    try {
      return Expr.parse(text);
    } catch (IllegalArgumentException e) {
      throw new Skip("expression is not mapped: " + e.getMessage());
    }
  }

  public static int run(List<String> jobs, String tidemark, int expectPassed, PrintStream out)
      throws Exception {
    int passed = 0;
    int failed = 0;
    int skipped = 0;
    for (String job : jobs) {
      long t0 = System.nanoTime();
      String verdict;
      try {
        List<String> flink = runOnFlink(Path.of(job));
        StringBuilder why = new StringBuilder();
        List<String> expected = TidemarkRows.runTidemark(tidemark, job, why);
        String diff = expected == null ? why.toString() : TidemarkRows.compare(flink, expected);
        if (diff == null) {
          passed++;
          verdict = "PASS " + job + ": " + flink.size() + " rows equal";
        } else {
          failed++;
          verdict = "FAIL " + job + ": rows differ\n" + diff.stripTrailing();
        }
      } catch (Skip s) {
        skipped++;
        verdict = "SKIP " + job + ": " + s.getMessage();
      } catch (Exception e) {
        failed++;
        Throwable root = e;
        while (root.getCause() != null) {
          root = root.getCause();
        }
        verdict = "FAIL " + job + ": " + e + (root != e ? "\n    caused by: " + root : "");
      }
      out.println(verdict + String.format(" (%.1f s)", (System.nanoTime() - t0) / 1e9));
      out.flush();
    }
    out.println(passed + " passed, " + failed + " failed" + (skipped > 0 ? " (" + skipped + " skipped)" : ""));
    if (passed < expectPassed) {
      out.println("expected at least " + expectPassed + " passed");
      return 1;
    }
    return failed == 0 ? 0 : 1;
  }

  // ---- the job file -------------------------------------------------------------------------

  @SuppressWarnings("unchecked")
  static Map<String, Object> map(Object o, String what) throws Skip {
    if (!(o instanceof Map)) {
      throw new Skip(what + " is not a mapping");
    }
    return (Map<String, Object>) o;
  }

  /** A tidemark duration (`250ms`, `2s`, `1.5min`, ...) in milliseconds. */
  public static long duration(Object o) {
    String s = String.valueOf(o).trim();
    int i = 0;
    if (s.startsWith("-")) {
      i = 1;
    }
    while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) {
      i++;
    }
    double v = Double.parseDouble(s.substring(0, i));
    String unit = s.substring(i).trim();
    long f;
    switch (unit) {
      case "ms":
        f = 1;
        break;
      case "s":
        f = 1000;
        break;
      case "m":
      case "min":
        f = 60_000;
        break;
      case "h":
        f = 3_600_000;
        break;
      case "d":
        f = 86_400_000;
        break;
      default:
        throw new IllegalArgumentException("duration '" + s + "'");
    }
    return Math.round(v * f);
  }

  static final List<String> SUPPORTED_OPS =
      List.of("source", "filter", "map", "project", "union", "assign-timestamps-and-watermarks", "window", "sink");

  /** The job's print sinks' rows on Flink. */
  @SuppressWarnings("unchecked")
  static List<String> runOnFlink(Path jobPath) throws Exception {
    String text = Files.readString(jobPath);
    Map<String, Object> job = map(new Load(LoadSettings.builder().build()).loadFromString(text), "the job");
    Map<String, Object> pipeline = job.containsKey("pipeline") ? map(job.get("pipeline"), "pipeline") : Map.of();
    if (!"virtual".equals(String.valueOf(pipeline.get("clock")))) {
      throw new Skip("pipeline.clock is not virtual: arrival times and periodic watermarks follow the machine's clock");
    }
    for (String k : List.of("checkpointing", "faults")) {
      if (job.containsKey(k)) {
        throw new Skip("'" + k + "' is not mapped");
      }
    }
    if ("max".equals(String.valueOf(pipeline.get("finished-input")))) {
      // Flink's rule; tidemark's default 'exclude' only differs with several inputs.
    }
    long interval = pipeline.containsKey("auto-watermark-interval") ? duration(pipeline.get("auto-watermark-interval")) : 200;
    int parallelism = pipeline.containsKey("parallelism") ? ((Number) pipeline.get("parallelism")).intValue() : 1;
    List<Map<String, Object>> ops = new ArrayList<>();
    for (Object o : (List<Object>) job.get("operators")) {
      ops.add(map(o, "an operator"));
    }
    Map<String, Map<String, Object>> byId = new LinkedHashMap<>();
    for (Map<String, Object> op : ops) {
      String type = String.valueOf(op.get("type"));
      if (!SUPPORTED_OPS.contains(type)) {
        throw new Skip("operator '" + op.get("id") + "' of type " + type + " is not mapped");
      }
      byId.put(String.valueOf(op.get("id")), op);
    }

    Configuration conf = new Configuration();
    conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.STREAMING);
    conf.set(PipelineOptions.AUTO_WATERMARK_INTERVAL, Duration.ZERO);
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);

    Builder b = new Builder(env, byId, jobPath.toAbsolutePath().getParent(), interval, parallelism);
    List<DataStream<String>> sinks = new ArrayList<>();
    for (Map<String, Object> op : ops) {
      if (op.get("type").equals("sink")) {
        sinks.add(b.sink(op));
      }
    }
    if (sinks.isEmpty()) {
      throw new Skip("no print or collect sink");
    }
    DataStream<String> all = sinks.get(0);
    for (int i = 1; i < sinks.size(); i++) {
      all = all.union(sinks.get(i));
    }
    List<String> tagged = new ArrayList<>();
    try (CloseableIterator<String> it = all.executeAndCollect("tidemark job " + job.get("name"))) {
      it.forEachRemaining(tagged::add);
    }
    List<String> rows = new ArrayList<>();
    for (String t : tagged) {
      String line = t.split("\u0001", -1)[1];
      if (!line.isEmpty()) {
        rows.add(line);
      }
    }
    if (job.containsKey("report")) {
      rows.add(report(map(job.get("report"), "report"), tagged));
    }
    return rows;
  }

  /** Builds the Flink graph from the operators, memoizing each operator's output stream. */
  static final class Builder {
    final StreamExecutionEnvironment env;
    final Map<String, Map<String, Object>> ops;
    final Path dir;
    final long interval;
    final int parallelism;
    final Map<String, DataStream<Ev>> built = new HashMap<>();
    final Map<String, Map<String, OutputTag<Ev>>> sideTags = new HashMap<>();
    /** Whether the stream is still single (p = 1, from a source) and may carry markers. */
    final Map<String, Boolean> hasMarkers = new HashMap<>();

    Builder(StreamExecutionEnvironment env, Map<String, Map<String, Object>> ops, Path dir, long interval, int parallelism) {
      this.env = env;
      this.ops = ops;
      this.dir = dir;
      this.interval = interval;
      this.parallelism = parallelism;
    }

    int parallelismOf(Map<String, Object> op) {
      return op.containsKey("parallelism") ? ((Number) op.get("parallelism")).intValue() : parallelism;
    }

    /** The single input of an operator: `input: id` or `inputs: [id | {from, side-output}]`. */
    @SuppressWarnings("unchecked")
    List<DataStream<Ev>> inputs(Map<String, Object> op) throws Exception {
      List<Object> specs = new ArrayList<>();
      if (op.containsKey("input")) {
        specs.add(op.get("input"));
      }
      if (op.containsKey("inputs")) {
        specs.addAll((List<Object>) op.get("inputs"));
      }
      List<DataStream<Ev>> out = new ArrayList<>();
      for (Object s : specs) {
        if (s instanceof Map) {
          Map<String, Object> m = (Map<String, Object>) s;
          if (m.containsKey("partition")) {
            throw new Skip("input partition '" + m.get("partition") + "' is not mapped");
          }
          String from = String.valueOf(m.get("from"));
          if (m.containsKey("side-output")) {
            String tag = String.valueOf(m.get("side-output"));
            stream(from);
            Map<String, OutputTag<Ev>> tags = sideTags.getOrDefault(from, Map.of());
            if (!tags.containsKey(tag)) {
              throw new Skip("side output '" + tag + "' of '" + from + "' is not mapped");
            }
            out.add(lateOutput(from, tags.get(tag)));
          } else {
            out.add(stream(from));
          }
        } else {
          out.add(stream(String.valueOf(s)));
        }
      }
      return out;
    }

    final Map<String, DataStream<Ev>> lateStreams = new HashMap<>();

    DataStream<Ev> lateOutput(String windowId, OutputTag<Ev> tag) {
      return lateStreams.get(windowId);
    }

    DataStream<Ev> single(Map<String, Object> op) throws Exception {
      List<DataStream<Ev>> in = inputs(op);
      if (in.size() != 1) {
        throw new Skip("operator '" + op.get("id") + "' needs one input");
      }
      return in.get(0);
    }

    DataStream<Ev> stream(String id) throws Exception {
      if (built.containsKey(id)) {
        return built.get(id);
      }
      Map<String, Object> op = ops.get(id);
      if (op == null) {
        throw new Skip("unknown input '" + id + "'");
      }
      DataStream<Ev> s;
      switch (String.valueOf(op.get("type"))) {
        case "source":
          s = source(op);
          break;
        case "filter":
          s = filter(op);
          break;
        case "map":
          s = mapOp(op);
          break;
        case "project":
          s = project(op);
          break;
        case "union":
          {
            List<DataStream<Ev>> in = inputs(op);
            DataStream<Ev> u = in.get(0);
            for (int i = 1; i < in.size(); i++) {
              u = u.union(in.get(i));
            }
            s = u;
          }
          break;
        case "assign-timestamps-and-watermarks":
          {
            DataStream<Ev> in = single(op);
            Map<String, Object> wm = map(op.getOrDefault("watermarks", op.get("assign-timestamps-and-watermarks")), "watermarks");
            s = in.assignTimestampsAndWatermarks(strategy(wm, false)).name(id);
          }
          break;
        case "window":
          s = window(op);
          break;
        default:
          throw new Skip("operator '" + id + "' (" + op.get("type") + ") is not mapped");
      }
      built.put(id, s);
      return s;
    }

    // ---- sources ----------------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    DataStream<Ev> source(Map<String, Object> op) throws Exception {
      if (parallelismOf(op) != 1) {
        throw new Skip("source '" + op.get("id") + "' runs with parallelism " + parallelismOf(op) + " (only 1 is mapped)");
      }
      Map<String, Object> src = map(op.get("source"), "source");
      String type = String.valueOf(src.get("type"));
      List<Ev> events;
      switch (type) {
        case "replay":
          events = replay(src);
          break;
        case "file":
          events = file(src);
          break;
        case "sequence":
          events = sequence(src);
          break;
        default:
          throw new Skip("source type " + type + " is not mapped");
      }
      DataStream<Ev> s = env.fromData(events, TypeInformation.of(Ev.class)).name(String.valueOf(op.get("id")));
      Map<String, Object> wm = op.containsKey("watermarks") ? map(op.get("watermarks"), "watermarks") : null;
      if (wm != null) {
        return s.assignTimestampsAndWatermarks(strategy(wm, true)).name(op.get("id") + ".watermarks");
      }
      // No watermarks: records keep the source's timestamp, event time stays at Long.MIN until MAX.
      return s.assignTimestampsAndWatermarks(new MarkedWatermarks(null, false, null)).name(op.get("id") + ".timestamps");
    }

    WatermarkStrategy<Ev> strategy(Map<String, Object> wm, boolean splitMode) throws Skip {
      String strategy = String.valueOf(wm.getOrDefault("strategy", "bounded-out-of-orderness"));
      for (String k : List.of("idleness", "alignment")) {
        if (wm.containsKey(k)) {
          throw new Skip("watermarks." + k + " is not mapped");
        }
      }
      if (wm.containsKey("idle-advance")) {
        throw new Skip("watermarks.idle-advance has no Flink equivalent (beyond Flink)");
      }
      if (wm.containsKey("timestamp-format")) {
        // The sql mode compares it: Flink SQL's TO_TIMESTAMP(field, pattern) is its Flink form.
        throw new Skip("watermarks.timestamp-format is not mapped here (compared through sql)");
      }
      if (wm.containsKey("timestamp-unit") && !"ms".equals(wm.get("timestamp-unit"))) {
        throw new Skip("timestamp-unit " + wm.get("timestamp-unit") + " is not mapped");
      }
      String field = wm.containsKey("timestamp-field") ? String.valueOf(wm.get("timestamp-field")) : null;
      WatermarkStrategy<Ev> inner;
      switch (strategy) {
        case "bounded-out-of-orderness":
          inner = WatermarkStrategy.forBoundedOutOfOrderness(Duration.ofMillis(duration(wm.get("max-out-of-orderness"))));
          break;
        case "monotonous":
          inner = WatermarkStrategy.forMonotonousTimestamps();
          break;
        case "none":
          inner = null;
          break;
        default:
          throw new Skip("watermark strategy " + strategy + " is not mapped");
      }
      return new MarkedWatermarks(inner, splitMode, field);
    }

    /** Ticks of the periodic emission (at k × interval, k ≥ 1) before the events due at or after them. */
    List<Ev> withTicks(List<Ev> events, List<Long> due) {
      List<Ev> out = new ArrayList<>();
      long prev = 0;
      for (int i = 0; i < events.size(); i++) {
        long t = due.get(i);
        if (interval > 0 && t / interval > prev / interval) {
          out.add(Ev.marker(Ev.TICK, null));
        }
        prev = Math.max(prev, t);
        out.add(events.get(i));
      }
      return out;
    }

    @SuppressWarnings("unchecked")
    Map<String, String> schema(Map<String, Object> src) throws Skip {
      Map<String, String> schema = new LinkedHashMap<>();
      for (Map.Entry<String, Object> e : map(src.get("schema"), "schema").entrySet()) {
        schema.put(e.getKey(), String.valueOf(e.getValue()));
      }
      return schema;
    }

    static String firstTimestamp(Map<String, String> schema) {
      for (Map.Entry<String, String> e : schema.entrySet()) {
        if (e.getValue().equals("timestamp")) {
          return e.getKey();
        }
      }
      return null;
    }

    static Object cell(String type, JsonNode v) throws Skip {
      if (v == null || v.isNull()) {
        return null;
      }
      switch (type) {
        case "timestamp":
        case "int64":
          if (!v.canConvertToExactIntegral() && !v.isIntegralNumber()) {
            throw new Skip("a non-integer " + type + " value " + v + " (tidemark sends it to 'errors')");
          }
          return v.asLong();
        case "double":
          return v.asDouble();
        case "bool":
          return v.asBoolean();
        case "string":
          if (!v.isTextual()) {
            throw new Skip("a non-string value " + v + " for a string field");
          }
          return v.asText();
        default:
          throw new Skip("field type " + type + " is not mapped");
      }
    }

    static Object csvCell(String type, String s) throws Skip {
      if (s.isEmpty()) {
        return null;
      }
      try {
        switch (type) {
          case "timestamp":
          case "int64":
            return Long.parseLong(s.trim());
          case "double":
            return Double.parseDouble(s.trim());
          case "bool":
            return Boolean.parseBoolean(s.trim());
          case "string":
            return s;
          default:
            throw new Skip("field type " + type + " is not mapped");
        }
      } catch (NumberFormatException e) {
        throw new Skip("a bad CSV value '" + s + "' (tidemark sends it to 'errors')");
      }
    }

    static long tsOf(LinkedHashMap<String, Object> row, String field) {
      Object v = field == null ? null : row.get(field);
      return v == null ? Long.MIN_VALUE : ((Number) v).longValue();
    }

    List<Ev> replay(Map<String, Object> src) throws Exception {
      if (src.containsKey("until")) {
        // Keeps the input open: only processing-time matters then.
      }
      Map<String, String> schema = schema(src);
      String tsField = firstTimestamp(schema);
      ObjectMapper json = new ObjectMapper();
      List<Ev> events = new ArrayList<>();
      List<Long> due = new ArrayList<>();
      List<String> splits = new ArrayList<>();
      for (String line : Files.readAllLines(dir.resolve(String.valueOf(src.get("path"))), StandardCharsets.UTF_8)) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode n = json.readTree(line);
        long at = n.get("at").asLong();
        if (!n.has("split")) {
          continue; // {"at": T}: nothing arrives
        }
        String split = n.get("split").asText();
        if (!splits.contains(split)) {
          splits.add(split);
        }
        Ev ev;
        if (n.has("record")) {
          LinkedHashMap<String, Object> row = new LinkedHashMap<>();
          for (Map.Entry<String, String> f : schema.entrySet()) {
            row.put(f.getKey(), cell(f.getValue(), n.get("record").get(f.getKey())));
          }
          ev = Ev.record(split, tsOf(row, tsField), row);
        } else if (n.has("idle")) {
          ev = Ev.marker(Ev.IDLE, split);
        } else if (n.has("active")) {
          ev = Ev.marker(Ev.ACTIVE, split);
        } else {
          ev = Ev.marker(Ev.END, split);
        }
        events.add(ev);
        due.add(at);
      }
      // The reader registers every split's output on its first poll, at time 0.
      List<Ev> all = new ArrayList<>();
      List<Long> allDue = new ArrayList<>();
      for (String s : splits) {
        all.add(Ev.marker(Ev.REGISTER, s));
        allDue.add(0L);
      }
      all.addAll(events);
      allDue.addAll(due);
      return withTicks(all, allDue);
    }

    @SuppressWarnings("unchecked")
    List<Ev> sequence(Map<String, Object> src) throws Exception {
      long pacing = src.containsKey("pacing") ? duration(src.get("pacing")) : 0;
      String tsField = String.valueOf(src.getOrDefault("timestamp-field", "ts"));
      List<Map<String, Object>> splits = new ArrayList<>();
      for (Object o : (List<Object>) src.get("splits")) {
        splits.add(map(o, "split"));
      }
      int n = splits.size();
      long[] emitted = new long[n];
      long[] count = new long[n];
      for (int i = 0; i < n; i++) {
        count[i] = ((Number) splits.get(i).get("count")).longValue();
      }
      List<Ev> events = new ArrayList<>();
      List<Long> due = new ArrayList<>();
      long total = 0;
      int next = 0;
      while (true) {
        int picked = -1;
        for (int k = 0; k < n; k++) {
          int c = (next + k) % n;
          if (emitted[c] < count[c]) {
            picked = c;
            break;
          }
        }
        if (picked < 0) {
          break;
        }
        Map<String, Object> s = splits.get(picked);
        String id = String.valueOf(s.get("id"));
        long t = pacing * total;
        if (emitted[picked] == 0) {
          events.add(Ev.marker(Ev.REGISTER, id));
          due.add(t);
        }
        long ts = duration(s.get("start")) + emitted[picked] * duration(s.get("step"));
        LinkedHashMap<String, Object> row = new LinkedHashMap<>();
        row.put(tsField, ts);
        if (s.containsKey("fields")) {
          for (Map.Entry<String, Object> f : map(s.get("fields"), "fields").entrySet()) {
            Object v = f.getValue();
            if (v instanceof Integer) {
              v = ((Integer) v).longValue();
            } else if (v instanceof Float) {
              v = ((Float) v).doubleValue();
            } else if (v instanceof java.math.BigInteger) {
              v = ((java.math.BigInteger) v).longValue();
            }
            row.put(f.getKey(), v);
          }
        }
        events.add(Ev.record(id, ts, row));
        due.add(t);
        emitted[picked]++;
        total++;
        next = (picked + 1) % n;
        if (emitted[picked] == count[picked]) {
          events.add(Ev.marker(Ev.END, id));
          due.add(t);
        }
      }
      return withTicks(events, due);
    }

    List<Ev> file(Map<String, Object> src) throws Exception {
      for (String k : List.of("split-bytes", "csv-delimiter")) {
        if (src.containsKey(k)) {
          throw new Skip("file source '" + k + "' is not mapped");
        }
      }
      long pacing = src.containsKey("pacing") ? duration(src.get("pacing")) : 0;
      Map<String, String> schema = schema(src);
      String tsField = firstTimestamp(schema);
      String format = String.valueOf(src.get("format"));
      boolean header = Boolean.TRUE.equals(src.get("csv-header"));
      Path p = dir.resolve(String.valueOf(src.get("path")));
      List<Path> files;
      if (Files.isDirectory(p)) {
        try (Stream<Path> st = Files.list(p)) {
          files = st.filter(f -> !f.getFileName().toString().startsWith(".") && Files.isRegularFile(f)).sorted().collect(Collectors.toList());
        }
      } else if (p.getFileName().toString().matches(".*[*?\\[].*")) {
        PathMatcher m = FileSystems.getDefault().getPathMatcher("glob:" + p.getFileName());
        try (Stream<Path> st = Files.list(p.getParent())) {
          files = st.filter(f -> m.matches(f.getFileName()) && Files.isRegularFile(f)).sorted().collect(Collectors.toList());
        }
      } else {
        files = List.of(p);
      }
      ObjectMapper json = new ObjectMapper();
      List<List<Ev>> perFile = new ArrayList<>();
      List<String> ids = new ArrayList<>();
      for (Path f : files) {
        String id = f.toString();
        ids.add(id);
        List<Ev> recs = new ArrayList<>();
        List<String> lines = Files.readAllLines(f, StandardCharsets.UTF_8);
        for (int i = 0; i < lines.size(); i++) {
          String line = lines.get(i);
          if (line.isEmpty() || (i == 0 && header && format.equals("csv"))) {
            continue;
          }
          LinkedHashMap<String, Object> row = new LinkedHashMap<>();
          if (format.equals("jsonl")) {
            if (line.isBlank()) {
              continue;
            }
            JsonNode n = json.readTree(line);
            for (Map.Entry<String, String> e : schema.entrySet()) {
              row.put(e.getKey(), cell(e.getValue(), n.get(e.getKey())));
            }
          } else if (format.equals("csv")) {
            List<String> cells = csvSplit(line);
            if (cells.size() != schema.size()) {
              throw new Skip(f + ":" + (i + 1) + " has " + cells.size() + " fields (tidemark sends it to 'errors')");
            }
            int k = 0;
            for (Map.Entry<String, String> e : schema.entrySet()) {
              row.put(e.getKey(), csvCell(e.getValue(), cells.get(k++)));
            }
          } else {
            throw new Skip("file format " + format + " is not mapped");
          }
          recs.add(Ev.record(id, tsOf(row, tsField), row));
        }
        perFile.add(recs);
      }
      List<Ev> events = new ArrayList<>();
      List<Long> due = new ArrayList<>();
      for (String id : ids) {
        events.add(Ev.marker(Ev.REGISTER, id));
        due.add(0L);
      }
      // Round-robin, one line per poll, a file leaving the rotation (and its output released) at its end.
      int[] pos = new int[perFile.size()];
      boolean[] released = new boolean[perFile.size()];
      long k = 0;
      boolean any = true;
      while (any) {
        any = false;
        for (int f = 0; f < perFile.size(); f++) {
          if (pos[f] < perFile.get(f).size()) {
            events.add(perFile.get(f).get(pos[f]++));
            due.add(pacing * k++);
            any = true;
          }
          if (pos[f] == perFile.get(f).size() && !released[f]) {
            released[f] = true;
            events.add(Ev.marker(Ev.END, ids.get(f)));
            due.add(pacing * Math.max(0, k - 1));
          }
        }
      }
      return withTicks(events, due);
    }

    static List<String> csvSplit(String line) {
      List<String> out = new ArrayList<>();
      StringBuilder cur = new StringBuilder();
      boolean quoted = false;
      for (int i = 0; i < line.length(); i++) {
        char c = line.charAt(i);
        if (quoted) {
          if (c == '"') {
            if (i + 1 < line.length() && line.charAt(i + 1) == '"') {
              cur.append('"');
              i++;
            } else {
              quoted = false;
            }
          } else {
            cur.append(c);
          }
        } else if (c == '"') {
          quoted = true;
        } else if (c == ',') {
          out.add(cur.toString());
          cur.setLength(0);
        } else {
          cur.append(c);
        }
      }
      out.add(cur.toString());
      return out;
    }

    // ---- row operators ----------------------------------------------------------------------

    DataStream<Ev> filter(Map<String, Object> op) throws Exception {
      DataStream<Ev> in = single(op);
      Object f = op.get("filter");
      if (!(f instanceof String)) {
        throw new Skip("filter {field, op, value} is not mapped");
      }
      final Expr e = mappedExpr((String) f);
      return in.filter(ev -> !ev.isRecord() || Boolean.TRUE.equals(e.eval(ev.row)))
          .name(String.valueOf(op.get("id"))).setParallelism(parallelismOf(op));
    }

    DataStream<Ev> mapOp(Map<String, Object> op) throws Exception {
      DataStream<Ev> in = single(op);
      Map<String, Object> m = map(op.get("map"), "map");
      if (!m.containsKey("set")) {
        throw new Skip("map {field, multiply, add} is not mapped");
      }
      final LinkedHashMap<String, Expr> set = new LinkedHashMap<>();
      for (Map.Entry<String, Object> e : map(m.get("set"), "map.set").entrySet()) {
        set.put(e.getKey(), mappedExpr(String.valueOf(e.getValue())));
      }
      return in.map(ev -> {
            if (!ev.isRecord()) {
              return ev;
            }
            LinkedHashMap<String, Object> row = new LinkedHashMap<>(ev.row);
            for (Map.Entry<String, Expr> e : set.entrySet()) {
              row.put(e.getKey(), e.getValue().eval(ev.row));
            }
            return Ev.record(ev.split, ev.ts, row);
          }).returns(Ev.class)
          .name(String.valueOf(op.get("id"))).setParallelism(parallelismOf(op));
    }

    @SuppressWarnings("unchecked")
    DataStream<Ev> project(Map<String, Object> op) throws Exception {
      DataStream<Ev> in = single(op);
      Object spec = op.containsKey("project") ? op.get("project") : op.get("params");
      final LinkedHashMap<String, Expr> cols = new LinkedHashMap<>();
      if (spec instanceof List) {
        for (Object o : (List<Object>) spec) {
          if (o instanceof Map) {
            for (Map.Entry<String, Object> e : ((Map<String, Object>) o).entrySet()) {
              cols.put(e.getKey(), mappedExpr(String.valueOf(e.getValue())));
            }
          } else {
            cols.put(String.valueOf(o), mappedExpr("`" + o + "`"));
          }
        }
      } else if (spec instanceof Map) {
        for (Map.Entry<String, Object> e : ((Map<String, Object>) spec).entrySet()) {
          cols.put(e.getKey(), mappedExpr(String.valueOf(e.getValue())));
        }
      } else {
        throw new Skip("project parameters are not mapped");
      }
      return in.map(ev -> {
            if (!ev.isRecord()) {
              return ev;
            }
            LinkedHashMap<String, Object> row = new LinkedHashMap<>();
            for (Map.Entry<String, Expr> e : cols.entrySet()) {
              row.put(e.getKey(), e.getValue().eval(ev.row));
            }
            return Ev.record(ev.split, ev.ts, row);
          }).returns(Ev.class)
          .name(String.valueOf(op.get("id"))).setParallelism(parallelismOf(op));
    }

    // ---- windows ----------------------------------------------------------------------------

    @SuppressWarnings("unchecked")
    DataStream<Ev> window(Map<String, Object> op) throws Exception {
      final String id = String.valueOf(op.get("id"));
      DataStream<Ev> in = single(op);
      Map<String, Object> w = map(op.get("window"), "window");
      if (!"event".equals(String.valueOf(w.getOrDefault("time", "event")))) {
        throw new Skip("processing-time windows are not mapped");
      }
      final boolean emitWatermark = Boolean.TRUE.equals(w.get("emit-watermark"));
      String assigner = String.valueOf(w.get("assigner"));
      long size = w.containsKey("size") ? duration(w.get("size")) : 0;
      long slide = w.containsKey("slide") ? duration(w.get("slide")) : 0;
      long offset = w.containsKey("offset") ? duration(w.get("offset")) : 0;
      long gap = w.containsKey("gap") ? duration(w.get("gap")) : 0;
      WindowAssigner<Object, TimeWindow> wa;
      switch (assigner) {
        case "tumbling":
          wa = TumblingEventTimeWindows.of(Duration.ofMillis(size), Duration.ofMillis(offset));
          break;
        case "sliding":
          wa = SlidingEventTimeWindows.of(Duration.ofMillis(size), Duration.ofMillis(slide), Duration.ofMillis(offset));
          break;
        case "session":
          wa = (WindowAssigner<Object, TimeWindow>) (WindowAssigner<?, ?>) EventTimeSessionWindows.withGap(Duration.ofMillis(gap));
          break;
        default:
          throw new Skip("window assigner " + assigner + " is not mapped");
      }
      long lateness = w.containsKey("allowed-lateness") ? duration(w.get("allowed-lateness")) : 0;
      boolean firing = Boolean.TRUE.equals(w.get("emit-firing")) || lateness > 0;
      if (firing && assigner.equals("session")) {
        throw new Skip("the firing column of session windows is not mapped (Flink has no per-window state for merging windows)");
      }
      // Keys: field names, or expressions computed into `key`, `key1`, ... as tidemark's inserted map does.
      final List<String> keyFields = new ArrayList<>();
      final LinkedHashMap<String, Expr> computed = new LinkedHashMap<>();
      List<Object> keyBy = op.containsKey("key-by") ? (List<Object>) op.get("key-by") : List.of();
      long exprs = keyBy.stream().filter(k -> !String.valueOf(k).matches("[A-Za-z0-9_]+")).count();
      int nth = 0;
      for (Object k : keyBy) {
        String s = String.valueOf(k);
        if (s.matches("[A-Za-z0-9_]+")) {
          keyFields.add(s);
        } else {
          String name = exprs == 1 ? "key" : "key" + (++nth);
          computed.put(name, mappedExpr(s));
          keyFields.add(name);
        }
      }
      DataStream<Ev> records = in.filter(Ev::isRecord).name(id + ".records");
      if (!computed.isEmpty()) {
        records = records.map(ev -> {
              LinkedHashMap<String, Object> row = new LinkedHashMap<>(ev.row);
              for (Map.Entry<String, Expr> e : computed.entrySet()) {
                row.put(e.getKey(), e.getValue().eval(ev.row));
              }
              return Ev.record(ev.split, ev.ts, row);
            }).returns(Ev.class).name(id + ".key-by");
      }
      final List<Object[]> aggs = new ArrayList<>(); // {fn, field, as}
      List<Object> aggSpecs = w.containsKey("aggregate") ? (List<Object>) w.get("aggregate") : List.of("count");
      for (Object a : aggSpecs) {
        if (a instanceof Map) {
          Map<String, Object> m = (Map<String, Object>) a;
          String fn = String.valueOf(m.get("fn"));
          if (!MAPPED_AGGREGATES.contains(fn)) {
            throw new Skip("aggregate " + fn + " is not mapped");
          }
          String field = m.containsKey("field") ? String.valueOf(m.get("field")) : null;
          String as = m.containsKey("as") ? String.valueOf(m.get("as")) : (fn.equals("count") ? "count" : fn + "_" + field);
          aggs.add(new Object[] {fn, field, as});
        } else {
          if (!MAPPED_AGGREGATES.contains(String.valueOf(a))) {
            throw new Skip("aggregate " + a + " is not mapped");
          }
          aggs.add(new Object[] {String.valueOf(a), null, String.valueOf(a)});
        }
      }
      WindowedStream<Ev, String, TimeWindow> ws =
          records.keyBy(ev -> keyOf(ev.row, keyFields), Types.STRING).window(wa);
      if (w.containsKey("trigger")) {
        ws = ws.trigger(trigger(String.valueOf(w.get("trigger"))));
      }
      if (lateness > 0) {
        ws = ws.allowedLateness(Duration.ofMillis(lateness));
      }
      OutputTag<Ev> lateTag = null;
      if (w.containsKey("late-output")) {
        lateTag = new OutputTag<Ev>(String.valueOf(w.get("late-output")), TypeInformation.of(Ev.class));
        ws = ws.sideOutputLateData(lateTag);
      }
      SingleOutputStreamOperator<Ev> out =
          ws.aggregate(new Agg(aggs, keyFields), new Emit(aggs, keyFields, emitWatermark, firing),
                  TypeInformation.of(Object[].class), TypeInformation.of(Object[].class), TypeInformation.of(Ev.class))
              .name(id).setParallelism(parallelismOf(op));
      if (lateTag != null) {
        sideTags.computeIfAbsent(id, k -> new HashMap<>()).put(lateTag.getId(), lateTag);
        final long sz = size;
        final long sl = assigner.equals("sliding") ? slide : size;
        final long off = offset;
        final long gp = gap;
        final boolean session = assigner.equals("session");
        lateStreams.put(id, out.getSideOutput(lateTag).process(new ProcessFunction<Ev, Ev>() {
          @Override
          public void processElement(Ev ev, Context ctx, Collector<Ev> o) {
            long ts = ctx.timestamp();
            long start;
            long end;
            if (session) {
              start = ts;
              end = ts + gp;
            } else {
              start = TimeWindow.getWindowStartWithOffset(ts, off, sl);
              end = start + sz;
            }
            LinkedHashMap<String, Object> row = new LinkedHashMap<>(ev.row);
            row.put("late_window_start", start);
            row.put("late_window_end", end);
            row.put("late_by_ms", ctx.timerService().currentWatermark() - ts);
            o.collect(Ev.record(ev.split, ts, row));
          }
        }).returns(Ev.class).name(id + ".late").setParallelism(parallelismOf(op)));
      }
      return out;
    }

    Trigger<Object, TimeWindow> trigger(String t) throws Skip {
      String s = t.replace('_', '-').trim();
      if (s.equals("event-time")) {
        return EventTimeTrigger.create();
      }
      if (s.startsWith("count(") && s.endsWith(")")) {
        return CountTrigger.of(Long.parseLong(s.substring(6, s.length() - 1).trim()));
      }
      if (s.startsWith("continuous-event-time(") && s.endsWith(")")) {
        return ContinuousEventTimeTrigger.of(Duration.ofMillis(duration(s.substring(22, s.length() - 1))));
      }
      if (s.startsWith("purging(") && s.endsWith(")")) {
        return PurgingTrigger.of(trigger(s.substring(8, s.length() - 1)));
      }
      throw new Skip("trigger " + t + " is not mapped");
    }

    // ---- sinks ------------------------------------------------------------------------------

    DataStream<String> sink(Map<String, Object> op) throws Exception {
      Map<String, Object> s = map(op.get("sink"), "sink");
      // print writes its rows to stdout; collect keeps them in memory, for the report line only.
      String type = String.valueOf(s.get("type"));
      if (!type.equals("print") && !type.equals("collect")) {
        throw new Skip("sink '" + op.get("id") + "' of type " + type + " is not compared (only print sinks write rows to stdout)");
      }
      final boolean printed = type.equals("print");
      final boolean fire = "fire".equals(String.valueOf(s.getOrDefault("format", "json")));
      final String id = String.valueOf(op.get("id"));
      DataStream<Ev> in = single(op);
      // id, the printed line and the row as JSON (for the report line), \u0001-separated.
      return in.filter(Ev::isRecord)
          .map(ev -> id + "\u0001" + (!printed ? "" : fire ? fireLine(ev.row) : TidemarkRows.format(ev.row)) + "\u0001" + TidemarkRows.format(ev.row))
          .returns(Types.STRING).name(id).setParallelism(parallelismOf(op));
    }
  }

  /** tidemark's print format fire (operators/sink_operator.cc). */
  static String fireLine(Map<String, Object> row) {
    if (!row.containsKey("window_start") || !row.containsKey("window_end")) {
      return TidemarkRows.format(row);
    }
    StringBuilder line = new StringBuilder(">>> FIRE window=[")
        .append(seconds(row.get("window_start"), 0)).append(',').append(seconds(row.get("window_end"), 0)).append(')');
    if (row.containsKey("count")) {
      Object c = row.get("count");
      line.append(" count=").append(c == null ? 0 : ((Number) c).longValue());
    }
    if (row.containsKey("watermark")) {
      line.append(" watermark=").append(seconds(row.get("watermark"), Long.MIN_VALUE));
    }
    return line.toString();
  }

  /** runtime/core/timestamp.cc FormatSeconds: 1.5s, -1.5s, 3s, MIN, MAX. */
  static String seconds(Object v, long ifNull) {
    long ts = v == null ? ifNull : ((Number) v).longValue();
    if (ts == Long.MIN_VALUE) {
      return "MIN";
    }
    if (ts == Long.MAX_VALUE) {
      return "MAX";
    }
    java.math.BigInteger mag = java.math.BigInteger.valueOf(ts).abs();
    java.math.BigInteger[] qr = mag.divideAndRemainder(java.math.BigInteger.valueOf(1000));
    String out = (ts < 0 ? "-" : "") + qr[0];
    int ms = qr[1].intValue();
    if (ms != 0) {
      String frac = String.format("%03d", ms).replaceAll("0+$", "");
      out += "." + frac;
    }
    return out + "s";
  }

  /** The `report` summary line (tools/engine/engine.cc). */
  @SuppressWarnings("unchecked")
  static String report(Map<String, Object> r, List<String> tagged) throws Exception {
    ObjectMapper json = new ObjectMapper();
    String windowsSink = String.valueOf(r.get("windows-sink"));
    String lateSink = r.containsKey("late-sink") ? String.valueOf(r.get("late-sink")) : null;
    Map<String, Object> breakdown = r.containsKey("breakdown") ? (Map<String, Object>) r.get("breakdown") : null;
    long windows = 0;
    long inWindows = 0;
    long late = 0;
    long lateBreakdown = 0;
    for (String t : tagged) {
      String[] p = t.split("\u0001", -1);
      JsonNode row = json.readTree(p[2]);
      if (p[0].equals(windowsSink)) {
        windows++;
        if (row.has("count") && row.get("count").isIntegralNumber()) {
          inWindows += row.get("count").asLong();
        }
      }
      if (p[0].equals(lateSink)) {
        late++;
        if (breakdown != null && row.has(String.valueOf(breakdown.get("field")))) {
          JsonNode v = row.get(String.valueOf(breakdown.get("field")));
          String want = String.valueOf(breakdown.get("value"));
          if ((v.isTextual() && v.asText().equals(want)) || (!v.isTextual() && v.toString().equals(want))) {
            lateBreakdown++;
          }
        }
      }
    }
    String label = r.get("label") == null ? "" : String.valueOf(r.get("label"));
    String line = ">>> " + label + ": windows fired=" + windows + ", records in windows=" + inWindows + ", late records=" + late;
    if (breakdown != null) {
      line += " (from " + breakdown.get("value") + " " + breakdown.get("field") + ": " + lateBreakdown + ")";
    }
    return line + ", total=" + (inWindows + late);
  }

  static String keyOf(Map<String, Object> row, List<String> fields) {
    List<String> names = new ArrayList<>(fields);
    List<Object> values = new ArrayList<>();
    for (String f : fields) {
      values.add(row.get(f));
    }
    return TidemarkRows.format(names, values);
  }

  /** Accumulator: [0] = the key's values, then one slot per aggregate. */
  static final class Agg implements AggregateFunction<Ev, Object[], Object[]> {
    private static final long serialVersionUID = 1L;
    final List<Object[]> aggs;
    final List<String> keyFields;

    Agg(List<Object[]> aggs, List<String> keyFields) {
      this.aggs = aggs;
      this.keyFields = keyFields;
    }

    @Override
    public Object[] createAccumulator() {
      Object[] acc = new Object[aggs.size() + 1];
      for (int i = 0; i < aggs.size(); i++) {
        String fn = (String) aggs.get(i)[0];
        if (fn.equals("count")) {
          acc[i + 1] = 0L;
        } else if (fn.equals("avg")) {
          acc[i + 1] = new double[] {0, 0};
        } else if (fn.equals("first") || fn.equals("last")) {
          acc[i + 1] = new Object[] {false, null};
        }
      }
      return acc;
    }

    @Override
    public Object[] add(Ev ev, Object[] acc) {
      if (acc[0] == null) {
        Object[] key = new Object[keyFields.size()];
        for (int i = 0; i < key.length; i++) {
          key[i] = ev.row.get(keyFields.get(i));
        }
        acc[0] = key;
      }
      for (int i = 0; i < aggs.size(); i++) {
        String fn = (String) aggs.get(i)[0];
        String field = (String) aggs.get(i)[1];
        Object v = field == null ? null : ev.row.get(field);
        int s = i + 1;
        switch (fn) {
          case "count":
            if (field == null || v != null) {
              acc[s] = (Long) acc[s] + 1;
            }
            break;
          case "sum":
            if (v != null) {
              acc[s] = acc[s] == null ? v : plus(acc[s], v);
            }
            break;
          case "min":
            if (v != null && (acc[s] == null || compare(v, acc[s]) < 0)) {
              acc[s] = v;
            }
            break;
          case "max":
            if (v != null && (acc[s] == null || compare(v, acc[s]) > 0)) {
              acc[s] = v;
            }
            break;
          case "avg":
            if (v != null) {
              double[] a = (double[]) acc[s];
              a[0] += ((Number) v).doubleValue();
              a[1] += 1;
            }
            break;
          case "first":
            if (!(Boolean) ((Object[]) acc[s])[0]) {
              acc[s] = new Object[] {true, v};
            }
            break;
          case "last":
            acc[s] = new Object[] {true, v};
            break;
          default:
            throw new IllegalStateException("aggregate " + fn);
        }
      }
      return acc;
    }

    static Object plus(Object a, Object b) {
      if (a instanceof Long && b instanceof Long) {
        return (Long) a + (Long) b;
      }
      return ((Number) a).doubleValue() + ((Number) b).doubleValue();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static int compare(Object a, Object b) {
      if (a instanceof String) {
        return Expr.compareBytes((String) a, (String) b);
      }
      if (a instanceof Long && b instanceof Long) {
        return Long.compare((Long) a, (Long) b);
      }
      if (a instanceof Number) {
        return Double.compare(((Number) a).doubleValue(), ((Number) b).doubleValue());
      }
      return ((Comparable) a).compareTo(b);
    }

    @Override
    public Object[] getResult(Object[] acc) {
      return acc;
    }

    @Override
    public Object[] merge(Object[] a, Object[] b) {
      Object[] m = createAccumulator();
      m[0] = a[0] != null ? a[0] : b[0];
      for (int i = 0; i < aggs.size(); i++) {
        String fn = (String) aggs.get(i)[0];
        int s = i + 1;
        switch (fn) {
          case "count":
            m[s] = (Long) a[s] + (Long) b[s];
            break;
          case "sum":
            m[s] = a[s] == null ? b[s] : b[s] == null ? a[s] : plus(a[s], b[s]);
            break;
          case "min":
            m[s] = a[s] == null ? b[s] : b[s] == null ? a[s] : compare(a[s], b[s]) <= 0 ? a[s] : b[s];
            break;
          case "max":
            m[s] = a[s] == null ? b[s] : b[s] == null ? a[s] : compare(a[s], b[s]) >= 0 ? a[s] : b[s];
            break;
          case "avg":
            m[s] = new double[] {((double[]) a[s])[0] + ((double[]) b[s])[0], ((double[]) a[s])[1] + ((double[]) b[s])[1]};
            break;
          case "first":
            m[s] = (Boolean) ((Object[]) a[s])[0] ? a[s] : b[s];
            break;
          default:
            m[s] = (Boolean) ((Object[]) b[s])[0] ? b[s] : a[s];
        }
      }
      return m;
    }
  }

  /** key fields..., window_start, window_end, aggregates...[, firing], stamped window end - 1 by Flink. */
  static final class Emit extends ProcessWindowFunction<Object[], Ev, String, TimeWindow> {
    private static final long serialVersionUID = 1L;
    final List<Object[]> aggs;
    final List<String> keyFields;
    final boolean emitWatermark;
    final boolean firing;

    Emit(List<Object[]> aggs, List<String> keyFields, boolean emitWatermark, boolean firing) {
      this.aggs = aggs;
      this.keyFields = keyFields;
      this.emitWatermark = emitWatermark;
      this.firing = firing;
    }

    @Override
    public void process(String key, Context ctx, Iterable<Object[]> results, Collector<Ev> out) throws Exception {
      Object[] acc = results.iterator().next();
      LinkedHashMap<String, Object> row = new LinkedHashMap<>();
      Object[] keys = (Object[]) acc[0];
      for (int i = 0; i < keyFields.size(); i++) {
        row.put(keyFields.get(i), keys == null ? null : keys[i]);
      }
      row.put("window_start", ctx.window().getStart());
      row.put("window_end", ctx.window().getEnd());
      for (int i = 0; i < aggs.size(); i++) {
        String fn = (String) aggs.get(i)[0];
        Object v = acc[i + 1];
        if (fn.equals("avg")) {
          double[] a = (double[]) v;
          v = a[1] == 0 ? null : a[0] / a[1];
        } else if (fn.equals("first") || fn.equals("last")) {
          v = ((Object[]) v)[1];
        }
        row.put((String) aggs.get(i)[2], v);
      }
      if (emitWatermark) {
        row.put("watermark", ctx.currentWatermark()); // the watermark that fires the window
      }
      if (firing) {
        ValueState<Long> n = ctx.windowState().getState(new ValueStateDescriptor<>("firing", Types.LONG));
        long f = n.value() == null ? 0 : n.value();
        n.update(f + 1);
        row.put("firing", f);
      }
      out.collect(Ev.record(null, ctx.window().maxTimestamp(), row));
    }
  }
}
