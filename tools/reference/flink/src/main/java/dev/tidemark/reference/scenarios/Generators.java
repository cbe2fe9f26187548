package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.api.common.eventtime.AscendingTimestampsWatermarks;
import org.apache.flink.api.common.eventtime.BoundedOutOfOrdernessWatermarks;
import org.apache.flink.api.common.eventtime.NoWatermarksGenerator;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarksWithIdleness;
import org.apache.flink.util.clock.RelativeClock;

/**
 * The case format's watermark generators: Flink's own where Flink has one
 * (bounded_out_of_orderness, ascending_timestamps, no_watermarks, with_idleness), and the small
 * test generators of the vocabulary written from their one-line definitions. Events are JSON text.
 */
final class Generators {
  private Generators() {}

  private static final Pattern CALL = Pattern.compile("([a-z_]+)\\((.*)\\)");

  static WatermarkGenerator<String> of(String spec, JsonNode config, RelativeClock clock) {
    Matcher m = CALL.matcher(spec);
    if (m.matches() && m.group(1).equals("with_idleness")) {
      return new WatermarksWithIdleness<>(
          of(m.group(2), config, clock), Duration.ofMillis(config.path("idle_timeout").asLong()), clock);
    }
    switch (spec) {
      case "bounded_out_of_orderness":
        return new BoundedOutOfOrdernessWatermarks<>(Duration.ofMillis(config.path("max_out_of_orderness").asLong()));
      case "ascending_timestamps":
        return new AscendingTimestampsWatermarks<>();
      case "no_watermarks":
        return new NoWatermarksGenerator<>();
      case "never":
        return new Simple(false, false, false, false);
      case "periodic_last_minus_one":
        return new Simple(false, false, true, false) {
          @Override
          public void onPeriodicEmit(WatermarkOutput out) {
            out.emitWatermark(new Watermark(seen ? last - 1 : Long.MIN_VALUE));
          }
        };
      case "periodic_last_timestamp":
        return new Simple(false, false, true, false);
      case "on_event":
      case "punctuated_every_event":
        return new Simple(true, false, false, false);
      case "punctuated_odd_timestamps_only":
        return new Simple(true, true, false, false);
      case "emit_on_new_max_and_periodic_max":
        return new Simple(false, false, false, true);
      case "punctuated_on_flag":
        return new WatermarkGenerator<String>() {
          @Override
          public void onEvent(String event, long ts, WatermarkOutput out) {
            if (Js.parse(event).path(0).asBoolean(false)) {
              out.emitWatermark(new Watermark(ts));
            }
          }

          @Override
          public void onPeriodicEmit(WatermarkOutput out) {}
        };
      default:
        throw new Area.Unsupported("generator " + spec);
    }
  }

  /** Emits on events and/or periodically, as the vocabulary defines the test generators. */
  static class Simple implements WatermarkGenerator<String> {
    final boolean onEveryEvent;
    final boolean oddOnly;
    final boolean periodicLast;
    final boolean newMax;
    boolean seen;
    long last;
    long max = Long.MIN_VALUE;

    Simple(boolean onEveryEvent, boolean oddOnly, boolean periodicLast, boolean newMax) {
      this.onEveryEvent = onEveryEvent;
      this.oddOnly = oddOnly;
      this.periodicLast = periodicLast;
      this.newMax = newMax;
    }

    @Override
    public void onEvent(String event, long ts, WatermarkOutput out) {
      seen = true;
      last = ts;
      if (onEveryEvent && (!oddOnly || Math.floorMod(ts, 2) == 1)) {
        out.emitWatermark(new Watermark(ts));
      }
      if (newMax && ts > max) {
        max = ts;
        out.emitWatermark(new Watermark(ts));
      }
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput out) {
      if (periodicLast && seen) {
        out.emitWatermark(new Watermark(last));
      }
      if (newMax && max != Long.MIN_VALUE) {
        out.emitWatermark(new Watermark(max));
      }
    }
  }

  /** A watermark output that keeps its last watermark, idle flag and call counts. */
  static final class Recording implements WatermarkOutput {
    Long last;
    boolean idle;
    int watermarkCalls;
    int idleCalls;
    int activeCalls;

    @Override
    public void emitWatermark(Watermark w) {
      watermarkCalls++;
      last = w.getTimestamp();
      idle = false;
    }

    @Override
    public void markIdle() {
      idleCalls++;
      idle = true;
    }

    @Override
    public void markActive() {
      activeCalls++;
      idle = false;
    }

    void observe(Obs o) {
      o.values.put("last_watermark", last == null ? Js.F.nullNode() : Js.tsNode(last));
      o.values.put("idle", Js.F.booleanNode(idle));
      o.values.put("watermark_calls", Js.F.numberNode(watermarkCalls));
      o.values.put("idle_calls", Js.F.numberNode(idleCalls));
      o.values.put("active_calls", Js.F.numberNode(activeCalls));
    }
  }
}
