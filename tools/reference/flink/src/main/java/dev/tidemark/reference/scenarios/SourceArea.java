package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.source.event.AddSplitEvent;
import org.apache.flink.streaming.api.operators.SourceOperator;
import org.apache.flink.streaming.api.operators.SourceOperatorFactory;
import org.apache.flink.streaming.util.SourceOperatorTestHarness;

/**
 * source_event_time cases on Flink's SourceOperator (SourceOperatorFactory under
 * SourceOperatorTestHarness, processing time from its TestProcessingTimeService): a scripted
 * reader performs one case step per poll (collect through a split's output or the main output,
 * create or release split outputs, end of input); add_splits goes to the operator as an
 * AddSplitEvent. {@code restored_splits}: a reader restored from a checkpoint (see setUpRestored).
 * The {@code watermark_to_data_output} component is Flink's WatermarkToDataOutput.
 */
public final class SourceArea extends Area {
  private SourceOperatorTestHarness<String> harness;
  private ScriptedSource source;
  private WatermarkToDataOutputArea adapter;
  private org.apache.flink.streaming.api.operators.SourceOperatorTestContext restored;
  private long processingTime;
  private final java.util.List<JsonNode> emitted = new ArrayList<>();

  /** Where the operator writes (records, watermarks, statuses), as the task's output would. */
  private final org.apache.flink.streaming.runtime.io.PushingAsyncDataInput.DataOutput<String> output = recording();

  /** An output that records what the operator emits into {@link #emitted}. */
  private <T> org.apache.flink.streaming.runtime.io.PushingAsyncDataInput.DataOutput<T> recording() {
    return new org.apache.flink.streaming.runtime.io.PushingAsyncDataInput.DataOutput<T>() {
      @Override
      public void emitRecord(org.apache.flink.streaming.runtime.streamrecord.StreamRecord<T> r) {
        emitted.add(Outputs.element(r));
      }

      @Override
      public void emitWatermark(org.apache.flink.streaming.api.watermark.Watermark w) {
        emitted.add(Js.watermark(w.getTimestamp()));
      }

      @Override
      public void emitWatermarkStatus(org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus st) {
        emitted.add(Js.status(st.isIdle()));
      }

      @Override
      public void emitLatencyMarker(org.apache.flink.streaming.runtime.streamrecord.LatencyMarker m) {}

      @Override
      public void emitRecordAttributes(org.apache.flink.streaming.runtime.streamrecord.RecordAttributes a) {}

      @Override
      public void emitWatermark(org.apache.flink.runtime.event.WatermarkEvent e) {}
    };
  }

  @SuppressWarnings("unchecked")
  private org.apache.flink.streaming.runtime.io.DataInputStatus poll() throws Exception {
    return ((SourceOperator<String, ?>) harness.getOperator()).emitNext(output);
  }

  /** A split known by its id only; records come from the script. */
  public static final class ScriptSplit implements SourceSplit, Serializable {
    private static final long serialVersionUID = 1L;
    final String id;

    ScriptSplit(String id) {
      this.id = id;
    }

    @Override
    public String splitId() {
      return id;
    }
  }

  static final class SplitSerializer implements SimpleVersionedSerializer<ScriptSplit> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(ScriptSplit s) {
      return s.id.getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public ScriptSplit deserialize(int version, byte[] b) {
      return new ScriptSplit(new String(b, StandardCharsets.UTF_8));
    }
  }

  /** The source whose reader executes the queued reader actions, one poll at a time. */
  public static final class ScriptedSource implements Source<String, ScriptSplit, Integer> {
    private static final long serialVersionUID = 1L;
    final transient Deque<List<JsonNode>> polls = new ArrayDeque<>();

    @Override
    public Boundedness getBoundedness() {
      return Boundedness.CONTINUOUS_UNBOUNDED;
    }

    @Override
    public SplitEnumerator<ScriptSplit, Integer> createEnumerator(SplitEnumeratorContext<ScriptSplit> ctx) {
      throw new UnsupportedOperationException("no enumerator in an operator test");
    }

    @Override
    public SplitEnumerator<ScriptSplit, Integer> restoreEnumerator(
        SplitEnumeratorContext<ScriptSplit> ctx, Integer checkpoint) {
      throw new UnsupportedOperationException("no enumerator in an operator test");
    }

    @Override
    public SimpleVersionedSerializer<ScriptSplit> getSplitSerializer() {
      return new SplitSerializer();
    }

    @Override
    public SimpleVersionedSerializer<Integer> getEnumeratorCheckpointSerializer() {
      return new TwoSplitIntSerializer();
    }

    @Override
    public SourceReader<String, ScriptSplit> createReader(SourceReaderContext ctx) {
      return new Reader(polls);
    }
  }

  static final class TwoSplitIntSerializer implements SimpleVersionedSerializer<Integer> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(Integer v) {
      return new byte[] {v.byteValue()};
    }

    @Override
    public Integer deserialize(int version, byte[] b) {
      return (int) b[0];
    }
  }

  static final class Reader implements SourceReader<String, ScriptSplit> {
    private final Deque<List<JsonNode>> polls;
    private final List<String> newSplits = new ArrayList<>();
    private final Map<String, SourceOutput<String>> outputs = new LinkedHashMap<>();

    Reader(Deque<List<JsonNode>> polls) {
      this.polls = polls;
    }

    @Override
    public void start() {}

    @Override
    public InputStatus pollNext(ReaderOutput<String> out) {
      for (String id : newSplits) {
        outputs.put(id, out.createOutputForSplit(id));
      }
      newSplits.clear();
      List<JsonNode> actions = polls.poll();
      if (actions == null) {
        return InputStatus.NOTHING_AVAILABLE;
      }
      for (JsonNode a : actions) {
        String op = Js.str(a, "op", "");
        String split = a.path("split").isTextual() ? a.get("split").asText() : null;
        switch (op) {
          case "collect":
          case "reader_emit":
            {
              long ts = Js.ts(a.get("ts"));
              String value = a.has("value") ? a.get("value").toString() : Long.toString(ts);
              if (split == null) {
                out.collect(value, ts);
              } else {
                outputs.computeIfAbsent(split, out::createOutputForSplit).collect(value, ts);
              }
              break;
            }
          case "create_split_output":
            outputs.put(split, out.createOutputForSplit(split));
            break;
          case "release_split_output":
            out.releaseOutputForSplit(split);
            outputs.remove(split);
            break;
          case "end_of_input":
            return InputStatus.END_OF_INPUT;
          default:
            throw new Unsupported("source reader action " + op);
        }
      }
      return polls.isEmpty() ? InputStatus.NOTHING_AVAILABLE : InputStatus.MORE_AVAILABLE;
    }

    @Override
    public List<ScriptSplit> snapshotState(long checkpointId) {
      return List.of();
    }

    @Override
    public CompletableFuture<Void> isAvailable() {
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public void addSplits(List<ScriptSplit> splits) {
      for (ScriptSplit s : splits) {
        newSplits.add(s.id);
      }
    }

    @Override
    public void notifyNoMoreSplits() {}

    @Override
    public void close() {}
  }

  @Override
  protected void setUp(JsonNode c) throws Exception {
    JsonNode config = c.path("config");
    if ("watermark_to_data_output".equals(Js.str(config, "component", ""))) {
      adapter = new WatermarkToDataOutputArea();
      return;
    }
    if (config.has("restored_splits")) {
      setUpRestored(config);
      return;
    }
    String generator = Js.str(config, "generator", "");
    String assigner = Js.str(config, "timestamp_assigner", "record_timestamp");
    WatermarkStrategy<String> strategy =
        WatermarkStrategy.<String>forGenerator(ctx -> Generators.of(generator, config, ctx.getInputActivityClock()))
            .withTimestampAssigner(ctx -> TimestampsArea.assigner(assigner));
    source = new ScriptedSource();
    harness =
        new SourceOperatorTestHarness<>(
            new SourceOperatorFactory<>(source, strategy, config.path("emit_progressive_watermarks").asBoolean(true)),
            new MockEnvironmentBuilder().build());
    harness.getExecutionConfig().setAutoWatermarkInterval(config.path("auto_watermark_interval").asLong(200));
    harness.setup();
    harness.open();
  }

  /**
   * A reader restored from a checkpoint, as Flink's SourceOperatorWatermarksTest restores one:
   * SourceOperatorTestContext with per-split outputs (MockSourceReader, Integer records), the
   * operator's initializeState given a state snapshot holding the case's splits with their records,
   * then open. Only polls and processing time are mapped.
   */
  private void setUpRestored(JsonNode config) throws Exception {
    if (!Js.str(config, "timestamp_assigner", "record_timestamp").equals("record_value")) {
      throw unsupported("restored_splits with timestamp_assigner " + Js.str(config, "timestamp_assigner", ""));
    }
    if (!config.path("emit_progressive_watermarks").asBoolean(true)) {
      throw unsupported("restored_splits without emit_progressive_watermarks");
    }
    String generator = Js.str(config, "generator", "");
    List<org.apache.flink.api.connector.source.mocks.MockSourceSplit> splits = new ArrayList<>();
    for (JsonNode spec : config.get("restored_splits")) {
      org.apache.flink.api.connector.source.mocks.MockSourceSplit split =
          new org.apache.flink.api.connector.source.mocks.MockSourceSplit(Integer.parseInt(Js.str(spec, "split", "")));
      for (JsonNode r : spec.path("records")) {
        split.addRecord(r.asInt());
      }
      splits.add(split);
    }
    restored =
        org.apache.flink.streaming.api.operators.SourceOperatorTestContext.builder()
            .setUsePerSplitOutputs(true)
            .setWatermarkStrategy(
                WatermarkStrategy.<Integer>forGenerator(
                        ctx ->
                            AlignmentArea.intGenerator(
                                Generators.of(generator, config, ctx.getInputActivityClock())))
                    .withTimestampAssigner((v, previous) -> v))
            .setOutput(new org.apache.flink.streaming.util.MockOutput<>(new ArrayList<>()))
            .build();
    restored.getOperator().initializeState(restored.createStateContext(splits));
    restored.getOperator().open();
  }

  /** The restored operator's (Integer) output. */
  private final org.apache.flink.streaming.runtime.io.PushingAsyncDataInput.DataOutput<Integer> intOutput =
      recording();

  private void stepRestored(JsonNode s, Obs o) throws Exception {
    String op = Js.str(s, "op", "");
    switch (op) {
      case "poll":
        o.values.put("returns", Js.F.textNode(restored.getOperator().emitNext(intOutput).name()));
        break;
      case "advance_processing_time":
        if (s.has("to")) {
          restored.getTimeService().setCurrentTime(Js.ts(s.get("to")));
        } else {
          restored.getTimeService().advance(Js.ts(s.get("by")));
        }
        break;
      default:
        throw unsupported("source_event_time op " + op + " with restored_splits");
    }
    o.outputs.addAll(emitted);
    emitted.clear();
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    if (adapter != null) {
      adapter.step(s, o);
      return;
    }
    if (restored != null) {
      stepRestored(s, o);
      return;
    }
    String op = Js.str(s, "op", "");
    switch (op) {
      case "collect":
      case "create_split_output":
      case "release_split_output":
      case "end_of_input":
        source.polls.add(List.of(s));
        o.values.put("returns", Js.F.textNode(poll().name()));
        break;
      case "reader_action":
        {
          List<JsonNode> actions = new ArrayList<>();
          s.path("actions").forEach(actions::add);
          source.polls.add(actions);
          o.values.put("returns", Js.F.textNode(poll().name()));
          break;
        }
      case "add_splits":
        {
          List<ScriptSplit> splits = new ArrayList<>();
          for (JsonNode id : s.path("splits")) {
            splits.add(new ScriptSplit(id.isTextual() ? id.asText() : Js.str(id, "split", "")));
          }
          ((SourceOperator<?, ?>) harness.getOperator())
              .handleOperatorEvent(new AddSplitEvent<>(splits, new SplitSerializer()));
          break;
        }
      case "advance_processing_time":
        processingTime = s.has("to") ? Js.ts(s.get("to")) : processingTime + Js.ts(s.get("by"));
        harness.setProcessingTime(processingTime);
        break;
      default:
        throw unsupported("source_event_time op " + op);
    }
    Object e;
    while ((e = harness.getOutput().poll()) != null) {
      o.outputs.add(Outputs.element(e));
    }
    o.outputs.addAll(emitted);
    emitted.clear();
  }

  @Override
  protected void tearDown() throws Exception {
    if (harness != null) {
      harness.close();
    }
    if (restored != null) {
      restored.close();
    }
  }
}
