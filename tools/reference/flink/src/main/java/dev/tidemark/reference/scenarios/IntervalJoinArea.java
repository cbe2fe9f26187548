package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.functions.co.ProcessJoinFunction;
import org.apache.flink.streaming.api.operators.co.IntervalJoinOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * interval_join cases on Flink's IntervalJoinOperator under KeyedTwoInputStreamOperatorTestHarness.
 * Elements are (key, value as JSON text); a result is [left value, right value].
 */
public final class IntervalJoinArea extends Area {
  private static final TypeInformation<Tuple2<String, String>> ELEMENT =
      TypeInformation.of(new TypeHint<Tuple2<String, String>>() {});
  private static final OutputTag<Tuple2<String, String>> LEFT_LATE = new OutputTag<>("left_late", ELEMENT);
  private static final OutputTag<Tuple2<String, String>> RIGHT_LATE = new OutputTag<>("right_late", ELEMENT);

  private JsonNode config;
  private KeyedTwoInputStreamOperatorTestHarness<String, Tuple2<String, String>, Tuple2<String, String>, String> harness;
  private IntervalJoinOperator<String, Tuple2<String, String>, Tuple2<String, String>, String> operator;
  private final Set<String> keys = new LinkedHashSet<>();

  @Override
  protected void setUp(JsonNode c) throws Exception {
    config = c.path("config");
    harness = newHarness();
    harness.open();
  }

  private KeyedTwoInputStreamOperatorTestHarness<String, Tuple2<String, String>, Tuple2<String, String>, String>
      newHarness() throws Exception {
    long lower = config.path("lower_bound").asLong();
    long upper = config.path("upper_bound").asLong();
    TypeSerializer<Tuple2<String, String>> ser = ELEMENT.createSerializer(new SerializerConfigImpl());
    operator =
        new IntervalJoinOperator<>(
            lower,
            upper,
            config.path("lower_inclusive").asBoolean(true),
            config.path("upper_inclusive").asBoolean(true),
            config.path("left_late_output").asBoolean(false) ? LEFT_LATE : null,
            config.path("right_late_output").asBoolean(false) ? RIGHT_LATE : null,
            ser,
            ser,
            new Pairs());
    WindowOperatorArea.KeyOf key = new WindowOperatorArea.KeyOf();
    return new KeyedTwoInputStreamOperatorTestHarness<>(operator, key, key, Types.STRING);
  }

  /** Emits [left value, right value]. */
  public static final class Pairs
      extends ProcessJoinFunction<Tuple2<String, String>, Tuple2<String, String>, String> {
    private static final long serialVersionUID = 1L;

    @Override
    public void processElement(
        Tuple2<String, String> left, Tuple2<String, String> right, Context ctx, Collector<String> out) {
      ArrayNode a = Js.F.arrayNode();
      a.add(Js.parse(left.f1));
      a.add(Js.parse(right.f1));
      out.collect(a.toString());
    }
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    String op = Js.str(s, "op", "");
    int input = s.path("input").asInt(1);
    switch (op) {
      case "record":
        {
          String key = Js.str(s, "key", "key");
          keys.add(key);
          Tuple2<String, String> t = Tuple2.of(key, s.path("value").toString());
          StreamRecord<Tuple2<String, String>> r =
              s.has("ts") ? new StreamRecord<>(t, Js.ts(s.get("ts"))) : new StreamRecord<>(t);
          try {
            if (input == 2) {
              harness.processElement2(r);
            } else {
              harness.processElement1(r);
            }
          } catch (Exception e) {
            if (!s.has("ts")) {
              throw new NoTimestamp(String.valueOf(e.getMessage()));
            }
            throw e;
          }
          break;
        }
      case "watermark":
        if (input == 2) {
          harness.processWatermark2(new Watermark(Js.ts(s.get("ts"))));
        } else {
          harness.processWatermark1(new Watermark(Js.ts(s.get("ts"))));
        }
        break;
      case "snapshot_restore":
        {
          drain(o);
          OperatorSubtaskState snapshot = harness.snapshot(0L, 0L);
          harness.close();
          harness = newHarness();
          harness.setup();
          harness.initializeState(snapshot);
          harness.open();
          o.reset = true;
          buffers(o);
          return;
        }
      default:
        throw unsupported("interval_join op " + op);
    }
    drain(o);
    buffers(o);
  }

  private void drain(Obs o) {
    Object e;
    while ((e = harness.getOutput().poll()) != null) {
      o.outputs.add(Outputs.element(e));
    }
    side(o, "left_late", LEFT_LATE);
    side(o, "right_late", RIGHT_LATE);
  }

  private void side(Obs o, String name, OutputTag<Tuple2<String, String>> tag) {
    var q = harness.getSideOutput(tag);
    List<JsonNode> out = new ArrayList<>();
    StreamRecord<Tuple2<String, String>> r;
    while (q != null && (r = q.poll()) != null) {
      out.add(Js.valueTs(Js.parse(r.getValue().f1), r.hasTimestamp() ? r.getTimestamp() : null));
    }
    o.side.put(name, out);
  }

  /** state.left_buffer / right_buffer: the buffered timestamps over all keys seen. */
  @SuppressWarnings("unchecked")
  private void buffers(Obs o) throws Exception {
    TreeSet<Long> left = new TreeSet<>();
    TreeSet<Long> right = new TreeSet<>();
    Method getLeft = IntervalJoinOperator.class.getDeclaredMethod("getLeftBuffer");
    Method getRight = IntervalJoinOperator.class.getDeclaredMethod("getRightBuffer");
    getLeft.setAccessible(true);
    getRight.setAccessible(true);
    for (String key : keys) {
      operator.setCurrentKey(key);
      for (Long ts : ((MapState<Long, ?>) getLeft.invoke(operator)).keys()) {
        left.add(ts);
      }
      for (Long ts : ((MapState<Long, ?>) getRight.invoke(operator)).keys()) {
        right.add(ts);
      }
    }
    ArrayNode l = Js.F.arrayNode();
    left.forEach(l::add);
    ArrayNode r = Js.F.arrayNode();
    right.forEach(r::add);
    o.values.put("state.left_buffer", l);
    o.values.put("state.right_buffer", r);
  }

  @Override
  protected void tearDown() throws Exception {
    if (harness != null) {
      harness.close();
    }
  }
}
