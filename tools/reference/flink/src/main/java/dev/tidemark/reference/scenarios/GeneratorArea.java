package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarksWithIdleness;
import org.apache.flink.util.clock.ManualClock;

/**
 * bounded_out_of_orderness and watermarks_with_idleness cases: Flink's generators (and
 * WatermarksWithIdleness' IdlenessTimer) called directly, on a manual relative clock.
 */
public final class GeneratorArea extends Area {
  private JsonNode config;
  private ManualClock clock;
  private WatermarkGenerator<String> generator;
  private WatermarksWithIdleness.IdlenessTimer timer;
  private final Generators.Recording output = new Generators.Recording();

  @Override
  protected void setUp(JsonNode c) {
    config = c.path("config");
    // A relative clock at 0 reads as "no countdown running" to the IdlenessTimer; like Flink's own
    // tests, start it elsewhere unless the case says where.
    clock = new ManualClock(config.path("clock_start_nanos").asLong(1_000_000_000L));
  }

  private void build() {
    if (generator != null || timer != null) {
      return;
    }
    if ("idleness_timer".equals(Js.str(config, "component", ""))) {
      timer = new WatermarksWithIdleness.IdlenessTimer(clock, Duration.ofMillis(config.path("idle_timeout").asLong()));
    } else {
      generator = Generators.of(Js.str(config, "generator", ""), config, clock);
    }
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    String op = Js.str(s, "op", "");
    if (!op.equals("construct")) {
      build();
    }
    switch (op) {
      case "construct":
        build();
        break;
      case "event":
        generator.onEvent("null", Js.ts(s.get("ts")), output);
        break;
      case "periodic_emit":
        generator.onPeriodicEmit(output);
        break;
      case "advance_clock":
        clock.advanceTime(Js.ts(s.get("by")), TimeUnit.MILLISECONDS);
        break;
      case "timer_check_idle":
        o.values.put("returns", Js.F.booleanNode(timer.checkIfIdle()));
        break;
      case "timer_activity":
        timer.activity();
        break;
      default:
        throw unsupported(Js.str(s, "op", "") + " op " + op);
    }
    output.observe(o);
  }
}
