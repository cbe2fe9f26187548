package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.api.windowing.assigners.DynamicEventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.DynamicProcessingTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SessionWindowTimeGapExtractor;
import org.apache.flink.streaming.api.windowing.assigners.GlobalWindows;
import org.apache.flink.streaming.api.windowing.assigners.ProcessingTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.ContinuousEventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.CountTrigger;
import org.apache.flink.streaming.api.windowing.triggers.EventTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.ProcessingTimeTrigger;
import org.apache.flink.streaming.api.windowing.triggers.PurgingTrigger;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.streaming.runtime.operators.windowing.WindowOperatorBuilder;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * window_operator cases on Flink's WindowOperator, built with WindowOperatorBuilder as
 * WindowedStream builds it, driven through KeyedOneInputStreamOperatorTestHarness. Elements are
 * (key, value as JSON text); the window function writes its result as JSON text.
 */
public final class WindowOperatorArea extends Area {
  private static final TypeInformation<Tuple2<String, String>> ELEMENT =
      TypeInformation.of(new TypeHint<Tuple2<String, String>>() {});
  private static final OutputTag<Tuple2<String, String>> LATE = new OutputTag<>("late", ELEMENT);

  private JsonNode config;
  private KeyedOneInputStreamOperatorTestHarness<String, Tuple2<String, String>, String> harness;
  private long processingTime;

  @Override
  protected void setUp(JsonNode c) throws Exception {
    config = c.path("config");
    harness = newHarness();
    harness.open();
  }

  private KeyedOneInputStreamOperatorTestHarness<String, Tuple2<String, String>, String> newHarness()
      throws Exception {
    KeySelector<Tuple2<String, String>, String> key = new KeyOf();
    OneInputStreamOperator<Tuple2<String, String>, String> op = build(config, key);
    return new KeyedOneInputStreamOperatorTestHarness<>(op, key, Types.STRING);
  }

  /** Public so that keyed harnesses can serialize it. */
  public static final class KeyOf implements KeySelector<Tuple2<String, String>, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public String getKey(Tuple2<String, String> t) {
      return t.f0;
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static OneInputStreamOperator<Tuple2<String, String>, String> build(
      JsonNode config, KeySelector<Tuple2<String, String>, String> key) {
    WindowAssigner assigner = assigner(config.path("assigner"));
    Trigger trigger = trigger(Js.str(config, "trigger", "default"), assigner);
    WindowOperatorBuilder builder =
        new WindowOperatorBuilder(assigner, trigger, new ExecutionConfig(), ELEMENT, key, Types.STRING);
    long lateness = config.path("allowed_lateness").asLong(0);
    if (lateness != 0) {
      builder.allowedLateness(Duration.ofMillis(lateness));
    }
    if (config.path("late_output").asBoolean(false)) {
      builder.sideOutputLateData(LATE);
    }
    if (config.has("evictor")) {
      throw unsupported("evictor");
    }
    String fn = Js.str(config, "window_function", "sum");
    String state = Js.str(config, "window_state", "list");
    Results results = new Results(fn);
    if (state.equals("reduce") && (fn.equals("sum") || fn.equals("session_summary"))) {
      return builder.reduce(new SumReduce(), results);
    }
    return builder.process(results);
  }

  @SuppressWarnings("rawtypes")
  static WindowAssigner assigner(JsonNode a) {
    String type = Js.str(a, "type", "");
    long size = a.path("size").asLong(0);
    long offset = a.path("offset").asLong(0);
    switch (type) {
      case "tumbling_event_time":
        return TumblingEventTimeWindows.of(Duration.ofMillis(size), Duration.ofMillis(offset));
      case "sliding_event_time":
        return SlidingEventTimeWindows.of(
            Duration.ofMillis(size), Duration.ofMillis(a.path("slide").asLong()), Duration.ofMillis(offset));
      case "event_time_session":
        if (a.has("point_window_if_value")) {
          return new PointSessions(a.path("gap").asLong(), a.get("point_window_if_value").toString());
        }
        return EventTimeSessionWindows.withGap(Duration.ofMillis(a.path("gap").asLong()));
      case "dynamic_event_time_session":
        return DynamicEventTimeSessionWindows.withDynamicGap(new GapRules(a));
      case "dynamic_processing_time_session":
        return DynamicProcessingTimeSessionWindows.withDynamicGap(new GapRules(a));
      case "tumbling_processing_time":
        return TumblingProcessingTimeWindows.of(Duration.ofMillis(size), Duration.ofMillis(offset));
      case "sliding_processing_time":
        return SlidingProcessingTimeWindows.of(
            Duration.ofMillis(size), Duration.ofMillis(a.path("slide").asLong()), Duration.ofMillis(offset));
      case "processing_time_session":
        return ProcessingTimeSessionWindows.withGap(Duration.ofMillis(a.path("gap").asLong()));
      case "global":
        return a.path("end_of_stream_trigger").asBoolean(false)
            ? GlobalWindows.createWithEndOfStreamTrigger()
            : GlobalWindows.create();
      default:
        throw unsupported("assigner.type " + type);
    }
  }

  /**
   * A session assigner whose elements with one given value get a point window [ts, ts) (a custom
   * merging assigner: the point merges into any session that touches it).
   */
  static final class PointSessions extends EventTimeSessionWindows {
    private static final long serialVersionUID = 1L;
    private final String pointValue;

    PointSessions(long gap, String pointValue) {
      super(gap);
      this.pointValue = pointValue;
    }

    @Override
    @SuppressWarnings("unchecked")
    public Collection<TimeWindow> assignWindows(Object element, long ts, WindowAssignerContext ctx) {
      if (pointValue.equals(((Tuple2<String, String>) element).f1)) {
        return Collections.singletonList(new TimeWindow(ts, ts));
      }
      return super.assignWindows(element, ts, ctx);
    }
  }

  /** gap_rules: the first rule whose key (and value, if given) match; else default_gap. */
  static final class GapRules implements SessionWindowTimeGapExtractor<Tuple2<String, String>> {
    private static final long serialVersionUID = 1L;
    private final List<String[]> rules = new ArrayList<>();
    private final long defaultGap;

    GapRules(JsonNode a) {
      for (JsonNode r : a.path("gap_rules")) {
        rules.add(new String[] {Js.str(r, "key", null), r.has("value") ? r.get("value").toString() : null,
          Long.toString(r.path("gap").asLong())});
      }
      defaultGap = a.path("default_gap").asLong(0);
    }

    @Override
    public long extract(Tuple2<String, String> e) {
      for (String[] r : rules) {
        if ((r[0] == null || r[0].equals(e.f0)) && (r[1] == null || r[1].equals(e.f1))) {
          return Long.parseLong(r[2]);
        }
      }
      return defaultGap;
    }
  }

  private static final Pattern CALL = Pattern.compile("([a-z_:]+)\\((.*)\\)");

  @SuppressWarnings({"rawtypes", "unchecked"})
  static Trigger trigger(String spec, WindowAssigner assigner) {
    Matcher m = CALL.matcher(spec);
    String name = m.matches() ? m.group(1) : spec;
    String arg = m.matches() ? m.group(2) : null;
    switch (name) {
      case "default":
        return assigner.getDefaultTrigger();
      case "event_time":
        return EventTimeTrigger.create();
      case "processing_time":
        return ProcessingTimeTrigger.create();
      case "end_of_stream":
        return assigner.getDefaultTrigger();
      case "count":
        return CountTrigger.of(Long.parseLong(arg));
      case "purging":
        return PurgingTrigger.of(trigger(arg, assigner));
      case "continuous_event_time":
        return ContinuousEventTimeTrigger.of(Duration.ofMillis(Long.parseLong(arg)));
      case "custom:fire_every_time":
        return new FireEveryTime();
      case "custom:accum_gc":
        return new AccumGc(Long.parseLong(arg));
      default:
        throw unsupported("trigger " + spec);
    }
  }

  /** custom:fire_every_time: FIRE on every call, no timers. */
  static final class FireEveryTime extends Trigger<Object, Window> {
    private static final long serialVersionUID = 1L;

    @Override
    public TriggerResult onElement(Object e, long ts, Window w, TriggerContext ctx) {
      return TriggerResult.FIRE;
    }

    @Override
    public TriggerResult onProcessingTime(long time, Window w, TriggerContext ctx) {
      return TriggerResult.FIRE;
    }

    @Override
    public TriggerResult onEventTime(long time, Window w, TriggerContext ctx) {
      return TriggerResult.FIRE;
    }

    @Override
    public void clear(Window w, TriggerContext ctx) {}
  }

  /**
   * custom:accum_gc(L): on-element as the event-time trigger; on-event-time FIRE_AND_PURGE at the
   * window's max timestamp and at max timestamp + L; clear deletes the timer at max timestamp;
   * merging registers a timer at the merged max timestamp.
   */
  static final class AccumGc extends Trigger<Object, TimeWindow> {
    private static final long serialVersionUID = 1L;
    private final long lateness;

    AccumGc(long lateness) {
      this.lateness = lateness;
    }

    @Override
    public TriggerResult onElement(Object e, long ts, TimeWindow w, TriggerContext ctx) throws Exception {
      if (w.maxTimestamp() <= ctx.getCurrentWatermark()) {
        return TriggerResult.FIRE;
      }
      ctx.registerEventTimeTimer(w.maxTimestamp());
      return TriggerResult.CONTINUE;
    }

    @Override
    public TriggerResult onProcessingTime(long time, TimeWindow w, TriggerContext ctx) {
      return TriggerResult.CONTINUE;
    }

    @Override
    public TriggerResult onEventTime(long time, TimeWindow w, TriggerContext ctx) {
      return time == w.maxTimestamp() || time == w.maxTimestamp() + lateness
          ? TriggerResult.FIRE_AND_PURGE
          : TriggerResult.CONTINUE;
    }

    @Override
    public boolean canMerge() {
      return true;
    }

    @Override
    public void onMerge(TimeWindow w, OnMergeContext ctx) {
      ctx.registerEventTimeTimer(w.maxTimestamp());
    }

    @Override
    public void clear(TimeWindow w, TriggerContext ctx) {
      ctx.deleteEventTimeTimer(w.maxTimestamp());
    }
  }

  /** Adds values (the pre-aggregation of window_state reduce). */
  public static final class SumReduce implements ReduceFunction<Tuple2<String, String>> {
    private static final long serialVersionUID = 1L;

    @Override
    public Tuple2<String, String> reduce(Tuple2<String, String> a, Tuple2<String, String> b) {
      return Tuple2.of(a.f0, Long.toString(Long.parseLong(a.f1) + Long.parseLong(b.f1)));
    }
  }

  /** The case format's window functions, writing JSON text. */
  public static final class Results
      extends ProcessWindowFunction<Tuple2<String, String>, String, String, Window> {
    private static final long serialVersionUID = 1L;
    private final String fn;

    Results(String fn) {
      this.fn = fn;
    }

    @Override
    public void process(String key, Context ctx, Iterable<Tuple2<String, String>> in, Collector<String> out) {
      switch (fn) {
        case "sum":
          {
            ArrayNode a = Js.F.arrayNode();
            a.add(key);
            a.add(sum(in));
            out.collect(a.toString());
            break;
          }
        case "session_summary":
          {
            TimeWindow w = (TimeWindow) ctx.window();
            ArrayNode a = Js.F.arrayNode();
            a.add(key + "-" + sum(in));
            a.add(w.getStart());
            a.add(w.getEnd());
            out.collect(a.toString());
            break;
          }
        case "pass_through":
          for (Tuple2<String, String> t : in) {
            out.collect(pair(t).toString());
          }
          break;
        case "got_string":
          {
            StringBuilder sb = new StringBuilder("GOT: ");
            boolean first = true;
            for (Tuple2<String, String> t : in) {
              if (!first) {
                sb.append(',');
              }
              first = false;
              sb.append('(').append(t.f0).append(',').append(Js.parse(t.f1).asText()).append(')');
            }
            out.collect(Js.F.textNode(sb.toString()).toString());
            break;
          }
        case "empty":
          break;
        default:
          throw new Unsupported("window_function " + fn);
      }
    }

    private static long sum(Iterable<Tuple2<String, String>> in) {
      long s = 0;
      for (Tuple2<String, String> t : in) {
        s += Long.parseLong(t.f1);
      }
      return s;
    }
  }

  static ArrayNode pair(Tuple2<String, String> t) {
    ArrayNode a = Js.F.arrayNode();
    a.add(t.f0);
    a.add(Js.parse(t.f1));
    return a;
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    String op = Js.str(s, "op", "");
    switch (op) {
      case "record":
        {
          Tuple2<String, String> t = Tuple2.of(Js.str(s, "key", ""), s.path("value").toString());
          if (s.has("ts")) {
            harness.processElement(new StreamRecord<>(t, Js.ts(s.get("ts"))));
          } else {
            harness.processElement(new StreamRecord<>(t));
          }
          break;
        }
      case "watermark":
        harness.processWatermark(new Watermark(Js.ts(s.get("ts"))));
        break;
      case "advance_processing_time":
        processingTime = s.has("to") ? Js.ts(s.get("to")) : processingTime + Js.ts(s.get("by"));
        harness.setProcessingTime(processingTime);
        break;
      case "snapshot_restore":
        {
          drain(o);
          OperatorSubtaskState snapshot = harness.snapshot(0L, 0L);
          harness.close();
          harness = newHarness();
          harness.setup();
          harness.initializeState(snapshot);
          harness.setProcessingTime(processingTime);
          harness.open();
          o.reset = true;
          return;
        }
      default:
        throw unsupported("window_operator op " + op);
    }
    drain(o);
  }

  private void drain(Obs o) {
    Object e;
    while ((e = harness.getOutput().poll()) != null) {
      o.outputs.add(Outputs.element(e));
    }
    if (config.path("late_output").asBoolean(false)) {
      var q = harness.getSideOutput(LATE);
      StreamRecord<Tuple2<String, String>> r;
      List<JsonNode> late = new ArrayList<>();
      while (q != null && (r = q.poll()) != null) {
        late.add(Js.valueTs(pair(r.getValue()), r.hasTimestamp() ? r.getTimestamp() : null));
      }
      o.side.put("late", late);
    }
  }

  @Override
  protected void tearDown() throws Exception {
    if (harness != null) {
      harness.close();
    }
  }

}
