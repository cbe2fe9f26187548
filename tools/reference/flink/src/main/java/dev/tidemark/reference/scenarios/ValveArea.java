package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.apache.flink.runtime.event.WatermarkEvent;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.io.PushingAsyncDataInput;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.StatusWatermarkValve;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/** status_watermark_valve cases on Flink's StatusWatermarkValve. */
public final class ValveArea extends Area {
  private StatusWatermarkValve valve;
  private List<JsonNode> sink;

  private final PushingAsyncDataInput.DataOutput<Object> output =
      new PushingAsyncDataInput.DataOutput<Object>() {
        @Override
        public void emitRecord(StreamRecord<Object> r) {}

        @Override
        public void emitWatermark(Watermark w) {
          sink.add(Js.watermark(w.getTimestamp()));
        }

        @Override
        public void emitWatermarkStatus(WatermarkStatus s) {
          sink.add(Js.status(s.isIdle()));
        }

        @Override
        public void emitLatencyMarker(LatencyMarker m) {}

        @Override
        public void emitRecordAttributes(RecordAttributes a) {}

        @Override
        public void emitWatermark(WatermarkEvent e) {}
      };

  @Override
  protected void setUp(JsonNode c) {
    valve = new StatusWatermarkValve(c.path("config").path("num_channels").asInt(1));
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    sink = o.outputs;
    String op = Js.str(s, "op", "");
    int channel = s.path("channel").asInt(0);
    switch (op) {
      case "watermark":
        valve.inputWatermark(new Watermark(Js.ts(s.get("ts"))), channel, output);
        break;
      case "status":
        valve.inputWatermarkStatus(
            "idle".equals(Js.str(s, "status", "")) ? WatermarkStatus.IDLE : WatermarkStatus.ACTIVE, channel, output);
        break;
      default:
        throw unsupported("status_watermark_valve op " + op);
    }
  }
}
