package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.mocks.MockSourceSplit;
import org.apache.flink.api.connector.source.mocks.MockSourceSplitSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.event.WatermarkEvent;
import org.apache.flink.runtime.io.network.api.StopMode;
import org.apache.flink.runtime.operators.coordination.MockOperatorEventGateway;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.runtime.operators.testutils.MockInputSplitProvider;
import org.apache.flink.runtime.source.coordinator.ReferenceCoordinators;
import org.apache.flink.runtime.source.coordinator.SourceCoordinator;
import org.apache.flink.runtime.source.event.AddSplitEvent;
import org.apache.flink.runtime.source.event.ReportedWatermarkEvent;
import org.apache.flink.runtime.source.event.WatermarkAlignmentEvent;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.streaming.api.operators.SourceOperator;
import org.apache.flink.streaming.api.operators.SourceOperatorTestContext;
import org.apache.flink.streaming.api.operators.StreamOperatorParameters;
import org.apache.flink.streaming.api.operators.StreamTaskStateInitializerImpl;
import org.apache.flink.streaming.api.operators.source.TestingSourceOperator;
import org.apache.flink.streaming.runtime.io.PushingAsyncDataInput;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.tasks.SourceOperatorStreamTask;
import org.apache.flink.streaming.runtime.tasks.StreamMockEnvironment;
import org.apache.flink.streaming.runtime.tasks.TestProcessingTimeService;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.util.MockOutput;
import org.apache.flink.streaming.util.MockStreamConfig;

/**
 * alignment cases. Subtask side: Flink's SourceOperator with watermark alignment, under Flink's
 * default configuration (so pipeline.watermark-alignment.buffer-size is 3). Cases that only add
 * splits and poll run as Flink's SourceOperatorAlignmentTest: SourceOperatorTestContext
 * (MockSourceReader, one restored empty split, MockOperatorEventGateway recording the watermark
 * reports), polled with emitNext. Cases whose reader emits a chosen record ({@code reader_emit})
 * run as Flink's SourceOperatorSplitWatermarkAlignmentTest: a TestingSourceOperator over
 * {@link ChosenSplitReader}. Coordinator side: {@code source_coordinator} is Flink's
 * SourceCoordinator driven as SourceCoordinatorAlignmentTest drives it
 * ({@link ReferenceCoordinators}); {@code watermark_aggregator} is SourceCoordinator's
 * WatermarkAggregator.
 */
public final class AlignmentArea extends Area {
  private SourceOperatorTestContext context;
  private SourceOperator<Integer, MockSourceSplit> operator;
  private MockOperatorEventGateway gateway;
  private TestProcessingTimeService timeService;
  private ChosenSplitReader chosenReader;
  private ReferenceCoordinators coordinators;
  private final Map<String, SourceCoordinator<?, ?>> coordinatorByName = new HashMap<>();
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
    if (component.equals("source_coordinator")) {
      setUpCoordinators(c, config);
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
    boolean chooses = false;
    for (JsonNode s : c.path("steps")) {
      chooses |= Js.str(s, "op", "").equals("reader_emit");
    }
    if (chooses) {
      if (config.path("reader_marks_idle_when_empty").asBoolean(false)) {
        throw unsupported("reader_emit with reader_marks_idle_when_empty");
      }
      // As SourceOperatorSplitWatermarkAlignmentTest builds its operator (subtask 1 of 5,
      // progressive watermarks), with the case's reader in place of MockSourceReader.
      chosenReader = new ChosenSplitReader();
      timeService = new TestProcessingTimeService();
      gateway = new MockOperatorEventGateway();
      StreamMockEnvironment env =
          new StreamMockEnvironment(
              new Configuration(),
              new Configuration(),
              new ExecutionConfig(),
              1L,
              new MockInputSplitProvider(),
              1,
              new TestTaskStateManager());
      TestProcessingTimeService time = timeService;
      operator =
          new TestingSourceOperator<>(
              new StreamOperatorParameters<>(
                  new SourceOperatorStreamTask<Integer>(env),
                  new MockStreamConfig(new Configuration(), 1),
                  new MockOutput<>(new ArrayList<>()),
                  () -> time,
                  null,
                  null),
              chosenReader,
              strategy,
              timeService,
              new Configuration(),
              gateway,
              1,
              5,
              true,
              false,
              false);
      operator.initializeState(new StreamTaskStateInitializerImpl(env, new HashMapStateBackend()));
      operator.open();
      return;
    }
    context =
        SourceOperatorTestContext.builder()
            .setIdle(config.path("reader_marks_idle_when_empty").asBoolean(false))
            .setWatermarkStrategy(strategy)
            .build();
    operator = context.getOperator();
    gateway = context.getGateway();
    timeService = context.getTimeService();
    // As Flink's alignment tests do: restore the context's one (empty) mock split, then open.
    operator.initializeState(context.createStateContext());
    operator.open();
  }

  /**
   * One SourceCoordinator per entry of {@code config.coordinators} (name to {group,
   * max_allowed_drift}), or one named "" from {@code config.alignment}. Without an update_interval
   * the periodic announcement is off (Long.MAX_VALUE), as in Flink's test: each report announces.
   */
  private void setUpCoordinators(JsonNode c, JsonNode config) throws Exception {
    int subtasks = 3; // SourceCoordinatorTestBase.NUM_SUBTASKS
    for (JsonNode s : c.path("steps")) {
      subtasks = Math.max(subtasks, s.path("subtask").asInt() + 1);
    }
    coordinators = new ReferenceCoordinators(subtasks);
    Map<String, JsonNode> specs = new java.util.LinkedHashMap<>();
    if (config.has("coordinators")) {
      config.get("coordinators").fields().forEachRemaining(e -> specs.put(e.getKey(), e.getValue()));
    } else {
      specs.put("", config.path("alignment"));
    }
    for (Map.Entry<String, JsonNode> e : specs.entrySet()) {
      JsonNode a = e.getValue();
      coordinatorByName.put(
          e.getKey(),
          coordinators.start(
              Js.str(a, "group", "group"),
              a.path("max_allowed_drift").asLong(),
              a.has("update_interval") ? a.get("update_interval").asLong() : Long.MAX_VALUE));
    }
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    String op = Js.str(s, "op", "");
    if (coordinators != null) {
      if (!op.equals("report_watermark")) {
        throw unsupported("source_coordinator op " + op);
      }
      String name = Js.str(s, "coordinator", "");
      SourceCoordinator<?, ?> coordinator = coordinatorByName.get(name);
      if (coordinator == null) {
        throw new IllegalArgumentException("no coordinator '" + name + "' in config.coordinators");
      }
      ReferenceCoordinators.report(coordinator, s.get("subtask").asInt(), Js.ts(s.get("ts")));
      if (coordinators.jobFailed()) {
        throw new IllegalStateException("the coordinator failed the job");
      }
      com.fasterxml.jackson.databind.node.ObjectNode latest = Js.F.objectNode();
      coordinators
          .lastEvents()
          .forEach(
              (subtask, e) ->
                  latest.set(
                      String.valueOf(subtask),
                      e instanceof WatermarkAlignmentEvent
                          ? Js.tsNode(((WatermarkAlignmentEvent) e).getMaxWatermark())
                          : Js.F.textNode(e.toString())));
      o.values.put("latest_alignment_event", latest);
      return;
    }
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
      case "add_splits":
        {
          List<MockSourceSplit> splits = new ArrayList<>();
          for (JsonNode spec : op.equals("add_split") ? List.of(s) : list(s.path("splits"))) {
            String id = spec.isTextual() ? spec.asText() : Js.str(spec, "split", "0");
            MockSourceSplit split = new MockSourceSplit(Integer.parseInt(id));
            for (JsonNode r : spec.path("records")) {
              split.addRecord(r.asInt());
            }
            splits.add(split);
          }
          operator.handleOperatorEvent(new AddSplitEvent<>(splits, new MockSourceSplitSerializer()));
          break;
        }
      case "reader_emit":
        chosenReader.choose(Js.str(s, "split", ""), Js.ts(s.get("ts")));
        o.values.put("returns", Js.F.textNode(operator.emitNext(output).name()));
        if (chosenReader.pending()) {
          throw new IllegalStateException("reader_emit: the operator did not poll the reader (waiting for alignment)");
        }
        break;
      case "poll":
        o.values.put("returns", Js.F.textNode(operator.emitNext(output).name()));
        break;
      case "advance_processing_time":
        if (s.has("to")) {
          timeService.setCurrentTime(Js.ts(s.get("to")));
        } else {
          timeService.advance(Js.ts(s.get("by")));
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
    for (OperatorEvent e : gateway.getEventsSent()) {
      if (e instanceof ReportedWatermarkEvent) {
        reported = ((ReportedWatermarkEvent) e).getWatermark();
      }
    }
    o.values.put("last_reported_watermark", reported == null ? Js.F.nullNode() : Js.tsNode(reported));
    o.values.put("no_reported_watermark", Js.F.booleanNode(reported == null));
    ArrayNode paused = Js.F.arrayNode();
    (chosenReader != null ? chosenReader.pausedSplits() : context.getSourceReader().getPausedSplits())
        .forEach(paused::add);
    o.values.put("paused_splits", paused);
    if (stopped != null) {
      o.values.put("wait_released", Js.F.booleanNode(operator.isAvailable()));
    }
  }

  private static List<JsonNode> list(JsonNode array) {
    List<JsonNode> out = new ArrayList<>();
    array.forEach(out::add);
    return out;
  }

  @Override
  protected void tearDown() throws Exception {
    if (coordinators != null) {
      coordinators.close();
    }
    if (context != null) {
      context.close();
    } else if (operator != null) {
      operator.close();
    }
  }
}
