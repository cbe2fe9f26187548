package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;

/** Flink's harness output elements in the case format. */
final class Outputs {
  private Outputs() {}

  /** A StreamRecord whose value is JSON text, a Watermark or a WatermarkStatus. */
  static JsonNode element(Object e) {
    if (e instanceof Watermark) {
      return Js.watermark(((Watermark) e).getTimestamp());
    }
    if (e instanceof WatermarkStatus) {
      return Js.status(((WatermarkStatus) e).isIdle());
    }
    if (e instanceof StreamRecord) {
      StreamRecord<?> r = (StreamRecord<?>) e;
      Object v = r.getValue();
      JsonNode value = v instanceof String ? Js.parse((String) v) : Js.F.textNode(String.valueOf(v));
      return Js.record(value, r.hasTimestamp() ? r.getTimestamp() : null);
    }
    return Js.F.textNode("unknown element " + e.getClass().getSimpleName());
  }
}
