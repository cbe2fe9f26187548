package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.api.common.eventtime.TimestampAssigner;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.operators.TimestampsAndWatermarksOperatorFactory;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;

/**
 * timestamps_operator cases on Flink's TimestampsAndWatermarksOperator (through its factory, as
 * assignTimestampsAndWatermarks builds it) under OneInputStreamOperatorTestHarness; the periodic
 * emission runs on the harness' manual processing time. Records are JSON text.
 */
public final class TimestampsArea extends Area {
  private OneInputStreamOperatorTestHarness<String, String> harness;
  private long processingTime;

  @Override
  protected void setUp(JsonNode c) throws Exception {
    JsonNode config = c.path("config");
    String generator = Js.str(config, "generator", "");
    String assigner = Js.str(config, "timestamp_assigner", "record_timestamp");
    WatermarkStrategy<String> strategy =
        WatermarkStrategy.<String>forGenerator(ctx -> Generators.of(generator, config, ctx.getInputActivityClock()))
            .withTimestampAssigner(ctx -> assigner(assigner));
    boolean progressive = !"batch".equals(Js.str(config, "mode", "streaming"));
    harness =
        new OneInputStreamOperatorTestHarness<>(
            new TimestampsAndWatermarksOperatorFactory<>(strategy, progressive), StringSerializer.INSTANCE);
    harness.getExecutionConfig().setAutoWatermarkInterval(config.path("auto_watermark_interval").asLong(200));
    harness.open();
  }

  static TimestampAssigner<String> assigner(String name) {
    switch (name) {
      case "value":
      case "record_value":
        return (v, previous) -> Js.ts(Js.parse(v));
      case "tuple_field1":
        return (v, previous) -> Js.ts(Js.parse(v).get(1));
      case "record_timestamp":
        return (v, previous) -> previous;
      default:
        throw new Unsupported("timestamp_assigner " + name);
    }
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
      case "status":
        harness.processWatermarkStatus(
            "idle".equals(Js.str(s, "status", "")) ? WatermarkStatus.IDLE : WatermarkStatus.ACTIVE);
        break;
      case "advance_processing_time":
        processingTime = s.has("to") ? Js.ts(s.get("to")) : processingTime + Js.ts(s.get("by"));
        harness.setProcessingTime(processingTime);
        break;
      default:
        throw unsupported("timestamps_operator op " + op);
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
