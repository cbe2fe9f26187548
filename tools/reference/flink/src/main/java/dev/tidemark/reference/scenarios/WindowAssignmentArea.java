package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.MergingWindowAssigner;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.assigners.WindowStagger;
import org.apache.flink.streaming.api.windowing.assigners.ProcessingTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

/**
 * window_assignment cases on Flink's TimeWindow and event-time assigners (tumbling, sliding,
 * session), called directly. A stagger needs the operator's processing time: not mapped.
 */
public final class WindowAssignmentArea extends Area {
  private JsonNode config;
  private JsonNode constructed = Js.F.objectNode();

  @Override
  protected void setUp(JsonNode c) {
    config = c.path("config");
    String stagger = Js.str(config, "stagger", "aligned");
    if (!stagger.equals("aligned") && !stagger.equals("natural")) {
      throw unsupported("window_assignment stagger " + stagger);
    }
  }

  /** The assigner of {@code config} with the step's parameters overriding it (construct). */
  private WindowAssigner<Object, TimeWindow> assigner(JsonNode params) {
    String type = Js.str(config, "assigner", "");
    long size = params.has("size") ? params.get("size").asLong() : config.path("size").asLong();
    long offset = params.has("offset") ? params.get("offset").asLong() : config.path("offset").asLong(0);
    long slide = params.has("slide") ? params.get("slide").asLong() : config.path("slide").asLong();
    long gap = params.has("gap") ? params.get("gap").asLong() : config.path("gap").asLong();
    switch (type) {
      case "tumbling_event_time":
        return TumblingEventTimeWindows.of(
            Duration.ofMillis(size),
            Duration.ofMillis(offset),
            "natural".equals(Js.str(config, "stagger", "aligned")) ? WindowStagger.NATURAL : WindowStagger.ALIGNED);
      case "sliding_event_time":
        return SlidingEventTimeWindows.of(Duration.ofMillis(size), Duration.ofMillis(slide), Duration.ofMillis(offset));
      case "event_time_session":
        return EventTimeSessionWindows.withGap(Duration.ofMillis(gap));
      case "tumbling_processing_time":
        return TumblingProcessingTimeWindows.of(Duration.ofMillis(size), Duration.ofMillis(offset));
      case "sliding_processing_time":
        return SlidingProcessingTimeWindows.of(Duration.ofMillis(size), Duration.ofMillis(slide), Duration.ofMillis(offset));
      case "processing_time_session":
        return ProcessingTimeSessionWindows.withGap(Duration.ofMillis(gap));
      default:
        throw unsupported("window_assignment assigner " + type);
    }
  }

  private static TimeWindow window(JsonNode pair) {
    return new TimeWindow(Js.ts(pair.get(0)), Js.ts(pair.get(1)));
  }

  private static ArrayNode pair(TimeWindow w) {
    ArrayNode a = Js.F.arrayNode();
    a.add(w.getStart());
    a.add(w.getEnd());
    return a;
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    String op = Js.str(s, "op", "");
    switch (op) {
      case "window_start":
        o.values.put("returns", Js.F.numberNode(TimeWindow.getWindowStartWithOffset(
            Js.ts(s.get("ts")), config.path("offset").asLong(0), config.path("size").asLong())));
        break;
      case "intersects":
        o.values.put("returns", Js.F.booleanNode(window(s.get("a")).intersects(window(s.get("b")))));
        break;
      case "construct":
        assigner(s);
        constructed = s; // later steps use the assigner built last
        break;
      case "assign":
        {
          ArrayNode ws = Js.F.arrayNode();
          final boolean noTs = s.path("ts").isNull() || s.path("ts").isMissingNode();
          long ts = noTs ? Long.MIN_VALUE : Js.ts(s.get("ts"));
          final long now =
              s.has("processing_time")
                  ? Js.ts(s.get("processing_time"))
                  : config.path("processing_time_at_assignment").asLong(0);
          WindowAssigner.WindowAssignerContext context =
              new WindowAssigner.WindowAssignerContext() {
                @Override
                public long getCurrentProcessingTime() {
                  return now;
                }
              };
          Collection<TimeWindow> assigned;
          try {
            assigned = assigner(constructed).assignWindows(null, ts, context);
          } catch (RuntimeException e) {
            if (noTs && String.valueOf(e.getMessage()).contains("no timestamp marker")) {
              throw new NoTimestamp(e.getMessage());
            }
            throw e;
          }
          for (TimeWindow w : assigned) {
            ws.add(pair(w));
          }
          o.values.put("windows", ws);
          break;
        }
      case "merge_windows":
        {
          List<TimeWindow> in = new ArrayList<>();
          for (JsonNode w : s.get("windows")) {
            in.add(window(w));
          }
          ArrayNode merges = Js.F.arrayNode();
          ((MergingWindowAssigner<Object, TimeWindow>) assigner(Js.F.objectNode()))
              .mergeWindows(
                  in,
                  (Collection<TimeWindow> merged, TimeWindow result) -> {
                    ObjectNode m = merges.addObject();
                    ArrayNode ms = m.putArray("merged");
                    merged.forEach(w -> ms.add(pair(w)));
                    m.set("result", pair(result));
                  });
          o.values.put("merges", merges);
          o.values.put("merge_calls", Js.F.numberNode(merges.size()));
          break;
        }
      default:
        throw unsupported("window_assignment op " + op);
    }
  }
}
