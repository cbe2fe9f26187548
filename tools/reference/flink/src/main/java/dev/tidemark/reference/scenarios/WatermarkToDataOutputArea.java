package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.runtime.event.WatermarkEvent;
import org.apache.flink.streaming.api.operators.source.WatermarkToDataOutput;
import org.apache.flink.streaming.runtime.io.PushingAsyncDataInput;
import org.apache.flink.streaming.runtime.streamrecord.LatencyMarker;
import org.apache.flink.streaming.runtime.streamrecord.RecordAttributes;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/** The watermark_to_data_output component: Flink's WatermarkToDataOutput on a recording output. */
final class WatermarkToDataOutputArea {
  private List<JsonNode> sink;
  private final WatermarkToDataOutput adapter =
      new WatermarkToDataOutput(
          new PushingAsyncDataInput.DataOutput<Object>() {
            @Override
            public void emitRecord(StreamRecord<Object> r) {}

            @Override
            public void emitWatermark(org.apache.flink.streaming.api.watermark.Watermark w) {
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
          });

  void step(JsonNode s, Obs o) {
    sink = o.outputs;
    String op = Js.str(s, "op", "");
    switch (op) {
      case "emit_watermark":
        adapter.emitWatermark(new Watermark(Js.ts(s.get("ts"))));
        break;
      case "mark_idle":
        adapter.markIdle();
        break;
      case "mark_active":
        adapter.markActive();
        break;
      default:
        throw new Area.Unsupported("watermark_to_data_output op " + op);
    }
  }
}
