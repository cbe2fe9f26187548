package dev.tidemark.reference.experiment;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * The seed's two-split experiment on a Flink MiniCluster (parallelism 1): one source whose reader
 * alternates two splits of 200 records (fast from 10 s, slow from 5 s, +50 ms each), 1 s tumbling
 * event-time windows, late records to a side output. Mode {@code split} gives
 * {@code forBoundedOutOfOrderness(1s)} to {@code fromSource}; mode {@code operator} gives the source
 * {@code noWatermarks()} and assigns the strategy with {@code assignTimestampsAndWatermarks}.
 * Prints tidemark's summary line (and with {@code fire} each firing as tidemark's print sink does).
 */
public final class TwoSplitExperiment {
  private static final long PACING_MS = 30;
  private static final long INTERVAL_MS = 200;

  private TwoSplitExperiment() {}

  /** The lines of one run: the FIRE lines (if asked) and the summary line last. */
  public static List<String> run(String mode, boolean fire) throws Exception {
    if (!mode.equals("split") && !mode.equals("operator")) {
      throw new IllegalArgumentException("mode must be split or operator, not '" + mode + "'");
    }
    PeriodicTicks.reset();
    Configuration conf = new Configuration();
    conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.STREAMING);
    conf.set(PipelineOptions.AUTO_WATERMARK_INTERVAL, Duration.ofMillis(INTERVAL_MS));
    conf.set(RestOptions.BIND_ADDRESS, "127.0.0.1");
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(1);

    TwoSplitSource source =
        new TwoSplitSource(
            List.of(
                TwoSplitSource.split("fast", 10_000, 50, 200),
                TwoSplitSource.split("slow", 5_000, 50, 200)),
            PACING_MS,
            INTERVAL_MS);
    WatermarkStrategy<Rec> strategy =
        PeriodicTicks.observed(WatermarkStrategy.forBoundedOutOfOrderness(Duration.ofSeconds(1)));
    DataStream<Rec> records;
    if (mode.equals("split")) {
      records = env.fromSource(source, strategy, "two-splits", TypeInformation.of(Rec.class));
    } else {
      records =
          env.fromSource(
                  source,
                  WatermarkStrategy.<Rec>noWatermarks(),
                  "two-splits",
                  TypeInformation.of(Rec.class))
              .assignTimestampsAndWatermarks(strategy);
    }
    final OutputTag<Rec> late = new OutputTag<Rec>("late", TypeInformation.of(Rec.class));
    SingleOutputStreamOperator<String> fired =
        records
            .keyBy(r -> 0)
            .window(TumblingEventTimeWindows.of(Duration.ofSeconds(1)))
            .sideOutputLateData(late)
            .process(new Fire());
    DataStream<String> lateLines = fired.getSideOutput(late).map(r -> "LATE " + r.split);

    int windows = 0;
    long inWindows = 0;
    int lateRecords = 0;
    int lateSlow = 0;
    List<String> lines = new ArrayList<>();
    try (CloseableIterator<String> it = fired.union(lateLines).executeAndCollect("two-splits-" + mode)) {
      while (it.hasNext()) {
        String line = it.next();
        if (line.startsWith("LATE ")) {
          lateRecords++;
          if (line.equals("LATE slow")) {
            lateSlow++;
          }
          continue;
        }
        windows++;
        inWindows += Long.parseLong(line.replaceAll(".* count=(\\d+) .*", "$1"));
        if (fire) {
          lines.add(line);
        }
      }
    }
    lines.add(
        String.format(
            ">>> mode=%s: windows fired=%d, records in windows=%d, late records=%d (from slow split: %d), total=%d",
            mode, windows, inWindows, lateRecords, lateSlow, inWindows + lateRecords));
    return lines;
  }

  /** One line per firing, as tidemark's {@code format: fire} print sink writes it. */
  static final class Fire extends ProcessWindowFunction<Rec, String, Integer, TimeWindow> {
    private static final long serialVersionUID = 1L;

    @Override
    public void process(Integer key, Context ctx, Iterable<Rec> elements, Collector<String> out) {
      long count = 0;
      for (Rec ignored : elements) {
        count++;
      }
      out.collect(
          ">>> FIRE window=["
              + seconds(ctx.window().getStart())
              + ","
              + seconds(ctx.window().getEnd())
              + ") count="
              + count
              + " watermark="
              + seconds(ctx.currentWatermark()));
    }
  }

  /** tidemark's FormatSeconds: MIN/MAX, else seconds with the millisecond fraction trimmed. */
  static String seconds(long ts) {
    if (ts == Long.MIN_VALUE) {
      return "MIN";
    }
    if (ts == Long.MAX_VALUE) {
      return "MAX";
    }
    String sign = ts < 0 ? "-" : "";
    long mag = Math.abs(ts);
    String out = sign + (mag / 1000);
    long ms = mag % 1000;
    if (ms != 0) {
      String frac = String.format("%03d", ms).replaceAll("0+$", "");
      out += "." + frac;
    }
    return out + "s";
  }
}
