package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;

/**
 * timer_service cases with {@code operator: keyed_process}: Flink's KeyedProcessOperator under
 * KeyedOneInputStreamOperatorTestHarness, keyed by the value, with the functions the case
 * vocabulary describes (query the time or watermark; emit and set a timer at +5; keep state and
 * delete the timer at +4 on the second element).
 */
public final class KeyedProcessArea extends Area {
  enum Kind {
    QUERY_TIME,
    QUERY_WATERMARK,
    EVENT_TIMER,
    PROCESSING_TIMER,
    EVENT_TIMER_WITH_STATE,
    PROCESSING_TIMER_WITH_STATE
  }

  private KeyedOneInputStreamOperatorTestHarness<String, String, String> harness;
  private long processingTime;

  static Kind kind(String f) {
    if (f.contains("TIME:")) {
      return Kind.QUERY_TIME;
    }
    if (f.contains("WM:")) {
      return Kind.QUERY_WATERMARK;
    }
    if (f.contains("1777")) {
      return f.contains("processing") ? Kind.PROCESSING_TIMER : Kind.EVENT_TIMER;
    }
    if (f.contains("event timer")) {
      return Kind.EVENT_TIMER_WITH_STATE;
    }
    if (f.contains("processing timer")) {
      return Kind.PROCESSING_TIMER_WITH_STATE;
    }
    throw new Unsupported("keyed_process function " + f);
  }

  /** The vocabulary's process functions; values and results are JSON text. */
  public static final class Fn extends KeyedProcessFunction<String, String, String> {
    private static final long serialVersionUID = 1L;
    private final Kind kind;
    private transient ValueState<String> stored;

    Fn(Kind kind) {
      this.kind = kind;
    }

    @Override
    public void open(org.apache.flink.api.common.functions.OpenContext ctx) {
      stored = getRuntimeContext().getState(new ValueStateDescriptor<>("stored", Types.STRING));
    }

    private static String text(String json) {
      JsonNode v = Js.parse(json);
      return v.isTextual() ? v.asText() : v.toString();
    }

    @Override
    public void processElement(String value, Context ctx, Collector<String> out) throws Exception {
      String ts = ctx.timestamp() == null ? "null" : Long.toString(ctx.timestamp());
      switch (kind) {
        case QUERY_TIME:
          out.collect(Js.F.textNode(text(value) + "TIME:" + ctx.timerService().currentProcessingTime() + " TS:" + ts).toString());
          break;
        case QUERY_WATERMARK:
          out.collect(Js.F.textNode(text(value) + "WM:" + ctx.timerService().currentWatermark() + " TS:" + ts).toString());
          break;
        case EVENT_TIMER:
          out.collect(value);
          ctx.timerService().registerEventTimeTimer(ctx.timerService().currentWatermark() + 5);
          break;
        case PROCESSING_TIMER:
          out.collect(value);
          ctx.timerService().registerProcessingTimeTimer(ctx.timerService().currentProcessingTime() + 5);
          break;
        default:
          {
            boolean event = kind == Kind.EVENT_TIMER_WITH_STATE;
            long base = event ? ctx.timerService().currentWatermark() : ctx.timerService().currentProcessingTime();
            if (stored.value() == null) {
              out.collect(Js.F.textNode("INPUT:" + text(value)).toString());
              stored.update(text(value));
              if (event) {
                ctx.timerService().registerEventTimeTimer(base + 5);
              } else {
                ctx.timerService().registerProcessingTimeTimer(base + 5);
              }
            } else {
              stored.clear();
              if (event) {
                ctx.timerService().deleteEventTimeTimer(base + 4);
              } else {
                ctx.timerService().deleteProcessingTimeTimer(base + 4);
              }
            }
          }
      }
    }

    @Override
    public void onTimer(long timestamp, OnTimerContext ctx, Collector<String> out) throws Exception {
      if (kind == Kind.EVENT_TIMER || kind == Kind.PROCESSING_TIMER) {
        out.collect("1777");
      } else {
        out.collect(Js.F.textNode("STATE:" + stored.value()).toString());
      }
    }
  }

  @Override
  protected void setUp(JsonNode c) throws Exception {
    Kind kind = kind(Js.str(c.path("config"), "function", ""));
    harness =
        new KeyedOneInputStreamOperatorTestHarness<>(
            new KeyedProcessOperator<>(new Fn(kind)), v -> text(v), Types.STRING);
    harness.open();
  }

  private static String text(String json) {
    JsonNode v = Js.parse(json);
    return v.isTextual() ? v.asText() : v.toString();
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    String op = Js.str(s, "op", "");
    switch (op) {
      case "record":
        {
          String v = s.path("value").toString();
          harness.processElement(s.has("ts") ? new StreamRecord<>(v, Js.ts(s.get("ts"))) : new StreamRecord<>(v));
          break;
        }
      case "watermark":
        harness.processWatermark(new Watermark(Js.ts(s.get("ts"))));
        break;
      case "advance_processing_time":
        processingTime = s.has("to") ? Js.ts(s.get("to")) : processingTime + Js.ts(s.get("by"));
        harness.setProcessingTime(processingTime);
        break;
      default:
        throw unsupported("keyed_process op " + op);
    }
    Object e;
    while ((e = harness.getOutput().poll()) != null) {
      o.outputs.add(Outputs.element(e));
    }
  }

  @Override
  protected void tearDown() throws Exception {
    harness.close();
  }
}
