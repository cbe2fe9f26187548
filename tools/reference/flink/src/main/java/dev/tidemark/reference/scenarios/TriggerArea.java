package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.triggers.TriggerResult;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.runtime.operators.windowing.TriggerTestHarness;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/** event_time_trigger cases: Flink's triggers on their own, under Flink's TriggerTestHarness. */
public final class TriggerArea extends Area {
  private Trigger<Object, TimeWindow> trigger;
  private TriggerTestHarness<Object, TimeWindow> harness;
  private final Set<TimeWindow> windows = new LinkedHashSet<>();

  @Override
  @SuppressWarnings("unchecked")
  protected void setUp(JsonNode c) throws Exception {
    JsonNode config = c.path("config");
    if (!"trigger_harness".equals(Js.str(config, "harness", "trigger_harness"))) {
      throw unsupported("event_time_trigger harness " + Js.str(config, "harness", ""));
    }
    trigger = (Trigger<Object, TimeWindow>) WindowOperatorArea.trigger(Js.str(config, "trigger", "event_time"), null);
    harness = new TriggerTestHarness<>(trigger, new TimeWindow.Serializer());
  }

  private TimeWindow window(JsonNode pair) {
    TimeWindow w = new TimeWindow(Js.ts(pair.get(0)), Js.ts(pair.get(1)));
    windows.add(w);
    return w;
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    String op = Js.str(s, "op", "");
    switch (op) {
      case "trigger_element":
        {
          StreamRecord<Object> element = s.has("ts") ? new StreamRecord<>(1, Js.ts(s.get("ts"))) : new StreamRecord<>(1);
          o.values.put("returns", result(harness.processElement(element, window(s.get("window")))));
        }
        break;
      case "advance_watermark":
        if (s.has("window")) {
          o.values.put("returns", result(harness.advanceWatermark(Js.ts(s.get("to")), window(s.get("window")))));
        } else {
          harness.advanceWatermark(Js.ts(s.get("to")));
        }
        break;
      case "advance_processing_time":
        if (s.has("window")) {
          o.values.put("returns", result(harness.advanceProcessingTime(Js.ts(s.get("to")), window(s.get("window")))));
        } else {
          harness.advanceProcessingTime(Js.ts(s.get("to")));
        }
        break;
      case "clear":
        harness.clearTriggerState(window(s.get("window")));
        break;
      case "merge":
        {
          List<TimeWindow> merged = new ArrayList<>();
          for (JsonNode w : s.get("merged")) {
            merged.add(window(w));
          }
          harness.mergeWindows(window(s.get("into")), merged);
          break;
        }
      case "can_merge":
        o.values.put("returns", Js.F.booleanNode(trigger.canMerge()));
        break;
      default:
        throw unsupported("event_time_trigger op " + op);
    }
    o.values.put("state.state_entries", Js.F.numberNode(harness.numStateEntries()));
    o.values.put("state.processing_timers", Js.F.numberNode(harness.numProcessingTimeTimers()));
    o.values.put("state.event_timers", Js.F.numberNode(harness.numEventTimeTimers()));
    ObjectNode perWindow = Js.F.objectNode();
    for (TimeWindow w : windows) {
      perWindow.put("[" + w.getStart() + "," + w.getEnd() + ")", harness.numEventTimeTimers(w));
    }
    o.values.put("state.event_timers_per_window", perWindow);
    ObjectNode perWindowProcessing = Js.F.objectNode();
    for (TimeWindow w : windows) {
      perWindowProcessing.put("[" + w.getStart() + "," + w.getEnd() + ")", harness.numProcessingTimeTimers(w));
    }
    o.values.put("state.processing_timers_per_window", perWindowProcessing);
  }

  private static JsonNode result(TriggerResult r) {
    return Js.F.textNode(r.name());
  }
}
