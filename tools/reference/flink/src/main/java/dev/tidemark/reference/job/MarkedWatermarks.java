package dev.tidemark.reference.job;

import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.flink.api.common.eventtime.TimestampAssigner;
import org.apache.flink.api.common.eventtime.TimestampAssignerSupplier;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkGeneratorSupplier;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkOutputMultiplexer;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;

/**
 * Flink's own watermark generators ({@code inner}: {@code forBoundedOutOfOrderness},
 * {@code forMonotonousTimestamps}) driven at fixed points instead of by the wall clock: the
 * job runs with {@code pipeline.auto-watermark-interval} 0, and the {@link Ev#TICK} markers the
 * source puts into its stream, at the instants of tidemark's virtual clock where a periodic emission
 * happens, call {@code onPeriodicEmit}. So the run does not depend on timing.
 *
 * <p>Split mode (watermarks given to a source, Flink's {@code fromSource(source, strategy)}): one
 * generator per split, combined by Flink's {@link WatermarkOutputMultiplexer} exactly as
 * {@code ProgressiveTimestampsAndWatermarks.SplitLocalOutputs} does it (records through the split's
 * immediate output, periodic emissions through its deferred output, then the multiplexer's
 * {@code onPeriodicEmit}; a split's output registered when the reader creates it and unregistered
 * when it is released; idle and active through the immediate output). Operator mode: one generator,
 * as {@code assignTimestampsAndWatermarks} has.
 */
public final class MarkedWatermarks implements WatermarkStrategy<Ev> {
  private static final long serialVersionUID = 1L;

  private final WatermarkStrategy<Ev> inner;
  private final boolean splitMode;
  /** The row field holding the event time; null: the source's own timestamp. */
  private final String timestampField;

  public MarkedWatermarks(WatermarkStrategy<Ev> inner, boolean splitMode, String timestampField) {
    this.inner = inner;
    this.splitMode = splitMode;
    this.timestampField = timestampField;
  }

  @Override
  public TimestampAssigner<Ev> createTimestampAssigner(TimestampAssignerSupplier.Context context) {
    final String field = timestampField;
    return (ev, previous) -> {
      if (!ev.isRecord()) {
        return Long.MIN_VALUE;
      }
      if (field == null) {
        return ev.ts;
      }
      Object v = ev.row.get(field);
      return v == null ? Long.MIN_VALUE : ((Number) v).longValue();
    };
  }

  @Override
  public WatermarkGenerator<Ev> createWatermarkGenerator(WatermarkGeneratorSupplier.Context context) {
    if (inner == null) {
      return new WatermarkGenerator<Ev>() {
        @Override
        public void onEvent(Ev event, long eventTimestamp, WatermarkOutput output) {}

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {}
      };
    }
    if (!splitMode) {
      final WatermarkGenerator<Ev> g = inner.createWatermarkGenerator(context);
      return new WatermarkGenerator<Ev>() {
        @Override
        public void onEvent(Ev ev, long ts, WatermarkOutput output) {
          if (ev.kind == Ev.REC) {
            g.onEvent(ev, ts, output);
          } else if (ev.kind == Ev.TICK) {
            g.onPeriodicEmit(output);
          }
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {
          g.onPeriodicEmit(output);
        }
      };
    }
    return new SplitGenerator(inner, context);
  }

  private static final class SplitGenerator implements WatermarkGenerator<Ev> {
    private final WatermarkStrategy<Ev> inner;
    private final WatermarkGeneratorSupplier.Context context;
    private WatermarkOutputMultiplexer mux;
    private final Map<String, WatermarkGenerator<Ev>> generators = new LinkedHashMap<>();

    SplitGenerator(WatermarkStrategy<Ev> inner, WatermarkGeneratorSupplier.Context context) {
      this.inner = inner;
      this.context = context;
    }

    @Override
    public void onEvent(Ev ev, long ts, WatermarkOutput output) {
      if (mux == null) {
        mux = new WatermarkOutputMultiplexer(output);
      }
      switch (ev.kind) {
        case Ev.REGISTER:
          mux.registerNewOutput(ev.split);
          generators.put(ev.split, inner.createWatermarkGenerator(context));
          break;
        case Ev.END:
          generators.remove(ev.split);
          mux.unregisterOutput(ev.split);
          break;
        case Ev.REC:
          generators.get(ev.split).onEvent(ev, ts, mux.getImmediateOutput(ev.split));
          break;
        case Ev.IDLE:
          mux.getImmediateOutput(ev.split).markIdle();
          break;
        case Ev.ACTIVE:
          mux.getImmediateOutput(ev.split).markActive();
          break;
        case Ev.TICK:
          onPeriodicEmit(output);
          break;
        default:
          throw new IllegalStateException("marker " + ev.kind);
      }
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {
      if (mux == null) {
        return;
      }
      for (Map.Entry<String, WatermarkGenerator<Ev>> e : generators.entrySet()) {
        e.getValue().onPeriodicEmit(mux.getDeferredOutput(e.getKey()));
      }
      mux.onPeriodicEmit();
    }
  }
}
