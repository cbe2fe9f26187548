package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkOutputMultiplexer;

/** output_multiplexer cases on Flink's WatermarkOutputMultiplexer. */
public final class MultiplexerArea extends Area {
  private final Generators.Recording underlying = new Generators.Recording();
  private WatermarkOutputMultiplexer mux;

  @Override
  protected void setUp(JsonNode c) {
    mux = new WatermarkOutputMultiplexer(underlying);
  }

  private WatermarkOutput handle(JsonNode s) {
    String id = Js.str(s, "output", "");
    return "deferred".equals(Js.str(s, "mode", "immediate")) ? mux.getDeferredOutput(id) : mux.getImmediateOutput(id);
  }

  @Override
  protected void step(JsonNode s, Obs o) {
    String op = Js.str(s, "op", "");
    switch (op) {
      case "register":
        mux.registerNewOutput(Js.str(s, "output", ""));
        break;
      case "unregister":
        o.values.put("returns", Js.F.booleanNode(mux.unregisterOutput(Js.str(s, "output", ""))));
        break;
      case "emit":
        handle(s).emitWatermark(new Watermark(Js.ts(s.get("ts"))));
        break;
      case "mark_idle":
        handle(s).markIdle();
        break;
      case "mark_active":
        handle(s).markActive();
        break;
      case "periodic_emit":
        mux.onPeriodicEmit();
        break;
      default:
        throw unsupported("output_multiplexer op " + op);
    }
    underlying.observe(o);
  }
}
