package dev.tidemark.reference.experiment;

import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.common.eventtime.TimestampAssigner;
import org.apache.flink.api.common.eventtime.TimestampAssignerSupplier;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkGeneratorSupplier;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;

/**
 * Counts periodic watermark emissions so the experiment's reader can pace itself against them.
 * The strategy wraps Flink's own generator (here {@code forBoundedOutOfOrderness}) and only
 * observes {@code onPeriodicEmit}; every watermark value is the wrapped generator's. One job runs
 * at a time in this JVM (MiniCluster), so the counter is process-wide.
 */
public final class PeriodicTicks {
  private static long count;
  private static CompletableFuture<Void> next = new CompletableFuture<>();

  private PeriodicTicks() {}

  public static synchronized void reset() {
    count = 0;
    next = new CompletableFuture<>();
  }

  public static synchronized long count() {
    return count;
  }

  /** Completes at the next periodic emission. */
  public static synchronized CompletableFuture<Void> next() {
    return next;
  }

  static void tick() {
    CompletableFuture<Void> done;
    synchronized (PeriodicTicks.class) {
      count++;
      done = next;
      next = new CompletableFuture<>();
    }
    done.complete(null);
  }

  /** {@code inner} with its periodic emissions counted. */
  public static WatermarkStrategy<Rec> observed(WatermarkStrategy<Rec> inner) {
    return new WatermarkStrategy<Rec>() {
      private static final long serialVersionUID = 1L;

      @Override
      public WatermarkGenerator<Rec> createWatermarkGenerator(
          WatermarkGeneratorSupplier.Context context) {
        final WatermarkGenerator<Rec> generator = inner.createWatermarkGenerator(context);
        return new WatermarkGenerator<Rec>() {
          @Override
          public void onEvent(Rec event, long eventTimestamp, WatermarkOutput output) {
            generator.onEvent(event, eventTimestamp, output);
          }

          @Override
          public void onPeriodicEmit(WatermarkOutput output) {
            generator.onPeriodicEmit(output);
            tick();
          }
        };
      }

      @Override
      public TimestampAssigner<Rec> createTimestampAssigner(
          TimestampAssignerSupplier.Context context) {
        return (rec, previous) -> rec.ts;
      }
    };
  }
}
