package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.InternalTimer;
import org.apache.flink.streaming.api.operators.InternalTimerServiceImpl;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.Triggerable;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;

/**
 * timer_service cases ({@code component: internal_timer_service}) on Flink's
 * InternalTimerServiceImpl, obtained by a keyed operator from its time service manager under
 * KeyedOneInputStreamOperatorTestHarness (TestProcessingTimeService as processing time).
 * {@code keyed_process} cases with free-text functions are not mapped.
 */
public final class TimerServiceArea extends Area {
  private KeyedOneInputStreamOperatorTestHarness<String, String, String> harness;
  private TimerOperator operator;
  private long processingTime;
  private final TreeSet<String> namespaces = new TreeSet<>();

  /** A keyed operator that only owns a timer service and reports what fires. */
  static final class TimerOperator extends AbstractStreamOperator<String>
      implements OneInputStreamOperator<String, String>, Triggerable<String, String> {
    private static final long serialVersionUID = 1L;
    transient InternalTimerServiceImpl<String, String> timers;
    transient List<JsonNode> fired = new ArrayList<>();
    transient JsonNode eventAction;
    transient JsonNode processingAction;

    @Override
    @SuppressWarnings("unchecked")
    public void open() throws Exception {
      super.open();
      timers = (InternalTimerServiceImpl<String, String>) getInternalTimerService("timers", StringSerializer.INSTANCE, this);
    }

    @Override
    public void processElement(StreamRecord<String> element) {}

    @Override
    public void onEventTime(InternalTimer<String, String> timer) throws Exception {
      fired.add(timerNode("event", timer.getKey(), timer.getNamespace(), timer.getTimestamp()));
      act(eventAction);
    }

    @Override
    public void onProcessingTime(InternalTimer<String, String> timer) throws Exception {
      fired.add(timerNode("processing", timer.getKey(), timer.getNamespace(), timer.getTimestamp()));
      act(processingAction);
    }

    private void act(JsonNode action) {
      if (action != null && action.has("register_timer")) {
        register(action.get("register_timer"), true);
      } else if (action != null && action.has("delete_timer")) {
        register(action.get("delete_timer"), false);
      }
    }

    void register(JsonNode s, boolean add) {
      String ns = Js.str(s, "namespace", "");
      long ts = Js.ts(s.get("ts"));
      boolean event = "event".equals(Js.str(s, "domain", "event"));
      if (add && event) {
        timers.registerEventTimeTimer(ns, ts);
      } else if (add) {
        timers.registerProcessingTimeTimer(ns, ts);
      } else if (event) {
        timers.deleteEventTimeTimer(ns, ts);
      } else {
        timers.deleteProcessingTimeTimer(ns, ts);
      }
    }
  }

  static ObjectNode timerNode(String domain, Object key, String ns, long ts) {
    ObjectNode t = Js.F.objectNode();
    t.put("domain", domain);
    t.put("key", String.valueOf(key));
    t.put("namespace", ns);
    t.set("ts", Js.tsNode(ts));
    return t;
  }

  @Override
  protected void setUp(JsonNode c) throws Exception {
    if (!"internal_timer_service".equals(Js.str(c.path("config"), "component", ""))) {
      throw unsupported("timer_service config " + c.path("config"));
    }
    harness = newHarness();
    harness.open();
  }

  private KeyedOneInputStreamOperatorTestHarness<String, String, String> newHarness() throws Exception {
    operator = new TimerOperator();
    return new KeyedOneInputStreamOperatorTestHarness<>(operator, v -> v, Types.STRING);
  }

  @Override
  protected void step(JsonNode s, Obs o) throws Exception {
    String op = Js.str(s, "op", "");
    operator.fired.clear();
    switch (op) {
      case "set_key":
        operator.setCurrentKey(Js.str(s, "key", ""));
        break;
      case "register_timer":
      case "delete_timer":
        namespaces.add(Js.str(s, "namespace", ""));
        operator.register(s, op.equals("register_timer"));
        break;
      case "advance_watermark":
        harness.processWatermark(new Watermark(Js.ts(s.get("to"))));
        break;
      case "advance_processing_time":
        processingTime = s.has("to") ? Js.ts(s.get("to")) : processingTime + Js.ts(s.get("by"));
        harness.setProcessingTime(processingTime);
        break;
      case "set_on_timer_action":
        if ("event".equals(Js.str(s, "domain", ""))) {
          operator.eventAction = s.get("action");
        } else {
          operator.processingAction = s.get("action");
        }
        break;
      case "list_timers":
        {
          ArrayNode list = Js.F.arrayNode();
          boolean event = "event".equals(Js.str(s, "domain", "event"));
          Object before = operator.getCurrentKey();
          if (event) {
            operator.timers.forEachEventTimeTimer(
                (ns, ts) -> list.add(timerNode("event", operator.getCurrentKey(), ns, ts)));
          } else {
            operator.timers.forEachProcessingTimeTimer(
                (ns, ts) -> list.add(timerNode("processing", operator.getCurrentKey(), ns, ts)));
          }
          if (before != null) {
            operator.setCurrentKey(before);
          }
          o.values.put("returns", list);
          break;
        }
      case "snapshot_restore":
        {
          OperatorSubtaskState snapshot = harness.snapshot(0L, 0L);
          JsonNode ea = operator.eventAction;
          JsonNode pa = operator.processingAction;
          harness.close();
          harness = newHarness();
          harness.setup();
          harness.initializeState(snapshot);
          harness.setProcessingTime(processingTime);
          harness.open();
          operator.eventAction = ea;
          operator.processingAction = pa;
          o.reset = true;
          break;
        }
      default:
        throw unsupported("timer_service op " + op);
    }
    o.values.put("fired", Js.array(new ArrayList<>(operator.fired)));
    InternalTimerServiceImpl<String, String> t = operator.timers;
    ObjectNode num = Js.F.objectNode();
    num.put("event", t.numEventTimeTimers());
    num.put("processing", t.numProcessingTimeTimers());
    o.values.put("state.num_timers", num);
    ObjectNode byNs = Js.F.objectNode();
    ObjectNode ev = byNs.putObject("event");
    ObjectNode pr = byNs.putObject("processing");
    for (String ns : namespaces) {
      ev.put(ns, t.numEventTimeTimers(ns));
      pr.put(ns, t.numProcessingTimeTimers(ns));
    }
    o.values.put("state.num_timers_by_namespace", byNs);
    o.values.put("state.current_watermark", Js.tsNode(t.currentWatermark()));
    o.values.put("state.current_processing_time", Js.tsNode(t.currentProcessingTime()));
    ArrayNode wakeups = Js.F.arrayNode();
    new TreeSet<>(harness.getProcessingTimeService().getActiveTimerTimestamps()).forEach(wakeups::add);
    o.values.put("state.scheduled_wakeups", wakeups);
    o.values.put("state.scheduled_wakeups_count", Js.F.numberNode(wakeups.size()));
  }

  @Override
  protected void tearDown() throws Exception {
    if (harness != null) {
      harness.close();
    }
  }
}
