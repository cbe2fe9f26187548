package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.mocks.MockSourceSplit;
import org.apache.flink.api.connector.source.mocks.MockSourceSplitSerializer;
import org.apache.flink.runtime.event.WatermarkEvent;
import org.apache.flink.runtime.io.network.api.StopMode;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.runtime.source.event.AddSplitEvent;
import org.apache.flink.runtime.source.event.ReportedWatermarkEvent;
import org.apache.flink.runtime.source.event.WatermarkAlignmentEvent;
import org.apache.flink.streaming.api.operators.SourceOperator;
import org.apache.flink.streaming.api.operators.SourceOperatorTestContext;
import org.apache.flink.streaming.runtime.io.PushingAsyncDataInput;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/**
 * alignment cases. Subtask side: Flink's SourceOperator with watermark alignment, built by Flink's
 * SourceOperatorTestContext (MockSourceReader, one restored empty split, MockOperatorEventGateway
 * recording the watermark reports), polled with emitNext. Coordinator side: only the
 * {@code watermark_aggregator} component (SourceCoordinator's WatermarkAggregator) is mapped.
 */
public final class AlignmentArea extends Area {
  private SourceOperatorTestContext context;
  private SourceOperator<Integer, MockSourceSplit> operator;
  private Object aggregator;
  private Method aggregate;
  private Method aggregated;
  private final List<Long> records = new ArrayList<>();
  private java.util.concurrent.CompletableFuture<Void> stopped;

  private final PushingAsyncDataInput.DataOutput<Integer> output =
      new PushingAsyncDataInput.DataOutput<Integer>() {
        @Override
        public void emitRecord(StreamRecord<Integer> r) {
          records.add((long) r.getValue());
        }

        @Override
        public void emitWatermark(org.apache.flink.streaming.api.watermark.Watermark w) {}

        @Override
        public void emitWatermarkStatus(WatermarkStatus s) {}

        @Override
        public void emitLatencyMarker(LatencyMarker m) {}

        @Override
        public void emitRecordAttributes(RecordAttributes a) {}

        @Override
        public void emitWatermark(WatermarkEvent e) {}
      };

  /** The vocabulary's generator over the reader's Integer records. */
  static WatermarkGenerator<Integer> intGenerator(WatermarkGenerator<String> g) {
    return new WatermarkGenerator<Integer>() {
      @Override
      public void onEvent(Integer event, long ts, WatermarkOutput out) {
        g.onEvent(String.valueOf(event), ts, out);
      }

      @Override
      public void onPeriodicEmit(WatermarkOutput out) {
        g.onPeriodicEmit(out);
      }
    };
  }

  @Override
  protected void setUp(JsonNode c) throws Exception {
    JsonNode config = c.path("config");
    String component = Js.str(config, "component", "");
    if (component.equals("watermark_aggregator")) {
      Class<?> k = Class.forName("org.apache.flink.runtime.source.coordinator.SourceCoordinator$WatermarkAggregator");
      Constructor<?> ctor = k.getDeclaredConstructor();
      ctor.setAccessible(true);
      aggregator = ctor.newInstance();
      aggregate = k.getMethod("aggregate", Object.class, Watermark.class);
      aggregated = k.getMethod("getAggregatedWatermark");
      aggregate.setAccessible(true);
      aggregated.setAccessible(true);
      return;
    }
    if (!component.isEmpty()) {
      throw unsupported("alignment component " + component);
    }
    if (Js.str(config, "timestamp_assigner", "record_value").equals("record_timestamp")) {
      throw unsupported("alignment timestamp_assigner record_timestamp");
    }
    String generator = Js.str(config, "generator", "");
    JsonNode alignment = config.path("alignment");
    WatermarkStrategy<Integer> strategy =
        WatermarkStrategy.<Integer>forGenerator(
                ctx -> intGenerator(Generators.of(generator, config, ctx.getInputActivityClock())))
            .withTimestampAssigner((v, previous) -> v)
            .withWatermarkAlignment(
                Js.str(alignment, "group", "group"),
                Duration.ofMillis(alignment.path("max_allowed_drift").asLong()),
                Duration.ofMillis(alignment.path("update_interval").asLong(1000)));
    context =
        SourceOperatorTestContext.builder()
            .setIdle(config.path("reader_marks_idle_when_empty").asBoolean(false))
            .setWatermarkStrategy(strategy)
            .build();
    operator = context.getOperator();
    // As Flink's alignment tests do: restore the context's one (empty) mock split, then open.
    operator.initializeState(context.createStateContext());
    operator.open();
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    String op = Js.str(s, "op", "");
    if (aggregator != null) {
      if (!op.equals("aggregate")) {
        throw unsupported("watermark_aggregator op " + op);
      }
      aggregate.invoke(aggregator, s.get("key").asInt(), new Watermark(Js.ts(s.get("ts"))));
      o.values.put("returns", Js.tsNode(((Watermark) aggregated.invoke(aggregator)).getTimestamp()));
      return;
    }
    switch (op) {
      case "add_split":
        {
          MockSourceSplit split = new MockSourceSplit(Integer.parseInt(Js.str(s, "split", "0")));
          for (JsonNode r : s.path("records")) {
            split.addRecord(r.asInt());
          }
          operator.handleOperatorEvent(new AddSplitEvent<>(List.of(split), new MockSourceSplitSerializer()));
          break;
        }
      case "poll":
        o.values.put("returns", Js.F.textNode(operator.emitNext(output).name()));
        break;
      case "advance_processing_time":
        if (s.has("to")) {
          context.getTimeService().setCurrentTime(Js.ts(s.get("to")));
        } else {
          context.getTimeService().advance(Js.ts(s.get("by")));
        }
        break;
      case "alignment_event":
        operator.handleOperatorEvent(new WatermarkAlignmentEvent(Js.ts(s.get("max_watermark"))));
        break;
      case "stop":
        if (!"no_drain".equals(Js.str(s, "mode", "no_drain"))) {
          throw unsupported("stop mode " + Js.str(s, "mode", ""));
        }
        stopped = operator.stop(StopMode.NO_DRAIN);
        break;
      default:
        throw unsupported("alignment op " + op);
    }
    o.values.put("available", Js.F.booleanNode(operator.isAvailable()));
    ArrayNode emitted = Js.F.arrayNode();
    records.forEach(emitted::add);
    o.values.put("emitted_records", emitted);
    Long reported = null;
    for (OperatorEvent e : context.getGateway().getEventsSent()) {
      if (e instanceof ReportedWatermarkEvent) {
        reported = ((ReportedWatermarkEvent) e).getWatermark();
      }
    }
    o.values.put("last_reported_watermark", reported == null ? Js.F.nullNode() : Js.tsNode(reported));
    o.values.put("no_reported_watermark", Js.F.booleanNode(reported == null));
    ArrayNode paused = Js.F.arrayNode();
    context.getSourceReader().getPausedSplits().forEach(paused::add);
    o.values.put("paused_splits", paused);
    if (stopped != null) {
      o.values.put("wait_released", Js.F.booleanNode(operator.isAvailable()));
    }
  }

  @Override
  protected void tearDown() throws Exception {
    if (context != null) {
      context.close();
    }
  }
}
