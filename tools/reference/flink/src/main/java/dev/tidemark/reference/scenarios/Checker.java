package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Checks a case's {@code expect} checkpoints against what the steps did on Flink, with the
 * comparison rules of the case format (README of the acceptance cases): exact / harness_sorted /
 * multiset outputs, side outputs as multisets, returns, errors and named values.
 */
public final class Checker {
  private Checker() {}

  /** Every checkpoint key this checker reads; any other key fails the case instead of passing it. */
  private static final java.util.Set<String> KNOWN =
      java.util.Set.of(
          "after_step", "internal", "error", "message_contains", "outputs", "match", "side_outputs",
          "no_late_records", "watermarks", "watermark_occurrences", "order", "returns", "last_watermark",
          "idle", "watermark_calls", "idle_calls", "active_calls", "windows", "merges", "merge_calls",
          "fired", "available", "emitted_records", "last_reported_watermark", "no_reported_watermark",
          "paused_splits", "wait_released", "latest_alignment_event", "state");

  /** The first difference, or null when every checkpoint holds. */
  public static String check(JsonNode c, List<Obs> obs) {
    String mode = Js.str(c, "expect_mode", "exact");
    boolean keepOnRestore = c.path("restore_keeps_output").asBoolean(false);
    boolean caseInternal = c.path("internal").asBoolean(false);
    int cursor = 0; // exact mode: how many outputs (all steps flattened) were consumed
    List<JsonNode> expectedSinceReset = new ArrayList<>();
    java.util.Map<String, List<JsonNode>> expectedSideSinceReset = new java.util.HashMap<>();
    int lastReset = -1;
    // A step that failed must be a step some checkpoint expects to fail.
    java.util.Set<Integer> errorExpected = new java.util.HashSet<>();
    for (JsonNode cp : c.path("expect")) {
      if (cp.has("error")) {
        errorExpected.add(cp.path("after_step").asInt());
      }
    }
    for (int i = 0; i < obs.size(); i++) {
      if (obs.get(i).error != null && !errorExpected.contains(i)) {
        return "step " + i + " failed: " + obs.get(i).error + ": " + obs.get(i).errorMessage;
      }
    }
    for (JsonNode cp : c.path("expect")) {
      int at = cp.path("after_step").asInt();
      if (at >= obs.size()) {
        return "step " + at + " did not run (an earlier step failed: " + lastError(obs) + ")";
      }
      // Reset bookkeeping: the latest reset at or before this step.
      int reset = -1;
      for (int i = 0; i <= at; i++) {
        if (obs.get(i).reset && !keepOnRestore) {
          reset = i;
        }
      }
      if (reset != lastReset) {
        expectedSinceReset.clear();
        expectedSideSinceReset.clear();
        lastReset = reset;
      }
      for (Iterator<String> keys = cp.fieldNames(); keys.hasNext(); ) {
        String key = keys.next();
        if (!KNOWN.contains(key)) {
          return "after step " + at + ": unsupported: expectation key " + key + " is not checked by this harness";
        }
      }
      boolean internal = caseInternal || cp.path("internal").asBoolean(false);
      Obs here = obs.get(at);
      String where = "after step " + at + ": ";
      if (cp.has("error")) {
        if (here.error == null) {
          return where + "expected error " + cp.get("error").asText() + ", step succeeded";
        }
        if (!here.error.equals(cp.get("error").asText())) {
          return where + "expected error " + cp.get("error").asText() + ", got " + here.error + ": " + here.errorMessage;
        }
        if (cp.has("message_contains")
            && (here.errorMessage == null || !here.errorMessage.contains(cp.get("message_contains").asText()))) {
          return where + "error message '" + here.errorMessage + "' lacks '" + cp.get("message_contains").asText() + "'";
        }
      } else if (here.error != null) {
        return where + "step failed: " + here.error + ": " + here.errorMessage;
      }
      if (cp.has("outputs")) {
        List<JsonNode> expected = list(cp.get("outputs"));
        if (mode.equals("exact")) {
          // Outputs flattened; `cursor` counts the ones earlier checkpoints consumed.
          int begin = Math.max(cursor, startOf(obs, Math.max(reset, 0)));
          int end = startOf(obs, at + 1);
          List<JsonNode> actual = flat(obs, at).subList(Math.min(begin, end), end);
          boolean prefix = "prefix".equals(Js.str(cp, "match", ""));
          List<String> a = Js.canonAll(actual);
          List<String> e = Js.canonAll(expected);
          if (prefix ? !(a.size() >= e.size() && a.subList(0, e.size()).equals(e)) : !a.equals(e)) {
            return where + "outputs " + e + " expected, got " + a;
          }
          cursor = prefix ? begin + e.size() : end;
        } else {
          expectedSinceReset.addAll(expected);
          List<JsonNode> actual = new ArrayList<>();
          for (int i = Math.max(reset, 0); i <= at; i++) {
            actual.addAll(obs.get(i).outputs);
          }
          String diff =
              mode.equals("multiset")
                  ? multiset(records(expectedSinceReset), records(actual))
                  : harnessSorted(expectedSinceReset, actual);
          if (diff != null) {
            return where + diff;
          }
        }
      }
      if (cp.has("side_outputs")) {
        Iterator<Map.Entry<String, JsonNode>> it = cp.get("side_outputs").fields();
        while (it.hasNext()) {
          Map.Entry<String, JsonNode> e = it.next();
          List<JsonNode> exp = expectedSideSinceReset.computeIfAbsent(e.getKey(), k -> new ArrayList<>());
          exp.addAll(list(e.getValue()));
          List<JsonNode> actual = new ArrayList<>();
          for (int i = Math.max(reset, 0); i <= at; i++) {
            actual.addAll(obs.get(i).side.getOrDefault(e.getKey(), List.of()));
          }
          String diff = multiset(exp, actual);
          if (diff != null) {
            return where + "side output " + e.getKey() + ": " + diff;
          }
        }
      }
      if (cp.path("no_late_records").asBoolean(false)) {
        long wm = Long.MIN_VALUE;
        for (int i = Math.max(reset, 0); i <= at; i++) {
          for (JsonNode o : obs.get(i).outputs) {
            if (o.has("watermark")) {
              wm = Js.ts(o.get("watermark"));
            } else if (o.has("record") && o.get("record").has("ts") && Js.ts(o.get("record").get("ts")) <= wm) {
              return where + "late record " + o + " after watermark " + wm;
            }
          }
        }
      }
      if (cp.has("watermarks")) {
        List<String> actual = new ArrayList<>();
        for (int i = 0; i <= at; i++) {
          for (JsonNode o : obs.get(i).outputs) {
            if (o.has("watermark")) {
              actual.add(Long.toString(Js.ts(o.get("watermark"))));
            }
          }
        }
        List<String> exp = new ArrayList<>();
        for (JsonNode w : cp.get("watermarks")) {
          exp.add(Long.toString(Js.ts(w)));
        }
        if (!exp.equals(actual)) {
          return where + "watermarks " + exp + " expected, got " + actual;
        }
      }
      if (cp.has("watermark_occurrences")) {
        Iterator<Map.Entry<String, JsonNode>> it = cp.get("watermark_occurrences").fields();
        while (it.hasNext()) {
          Map.Entry<String, JsonNode> e = it.next();
          long w = Js.ts(Js.F.textNode(e.getKey()));
          int n = 0;
          for (int i = 0; i <= at; i++) {
            for (JsonNode o : obs.get(i).outputs) {
              if (o.has("watermark") && Js.ts(o.get("watermark")) == w) {
                n++;
              }
            }
          }
          if (n != e.getValue().asInt()) {
            return where + "watermark " + w + " emitted " + n + " times, expected " + e.getValue();
          }
        }
      }
      String anyOrder = Js.str(cp, "order", "exact");
      for (String key : new String[] {"returns", "last_watermark", "idle", "watermark_calls", "idle_calls",
          "active_calls", "windows", "merges", "merge_calls", "fired", "available", "emitted_records",
          "last_reported_watermark", "no_reported_watermark", "paused_splits", "wait_released"}) {
        if (!cp.has(key)) {
          continue;
        }
        JsonNode actual = here.values.get(key);
        if (actual == null) {
          return where + "unsupported: " + key + " is not observed for this area";
        }
        String diff = compareValue(cp.get(key), actual, anyOrder.equals("any") || key.equals("merges"));
        if (diff != null) {
          return where + key + ": " + diff;
        }
      }
      if (cp.has("latest_alignment_event")) {
        // Only the listed subtasks are checked.
        JsonNode actual = here.values.get("latest_alignment_event");
        if (actual == null) {
          return where + "unsupported: latest_alignment_event is not observed for this area";
        }
        Iterator<Map.Entry<String, JsonNode>> it = cp.get("latest_alignment_event").fields();
        while (it.hasNext()) {
          Map.Entry<String, JsonNode> e = it.next();
          JsonNode a = actual.get(e.getKey());
          if (a == null) {
            return where + "latest_alignment_event: subtask " + e.getKey() + " received no event (expected "
                + e.getValue() + ")";
          }
          String diff = compareValue(e.getValue(), a, false);
          if (diff != null) {
            return where + "latest_alignment_event: subtask " + e.getKey() + ": " + diff;
          }
        }
      }
      if (cp.has("state")) {
        Iterator<Map.Entry<String, JsonNode>> it = cp.get("state").fields();
        while (it.hasNext()) {
          Map.Entry<String, JsonNode> e = it.next();
          JsonNode actual = here.values.get("state." + e.getKey());
          if (actual == null) {
            if (internal) {
              continue;
            }
            return where + "unsupported: state." + e.getKey() + " is not observed for this area";
          }
          String diff = compareValue(e.getValue(), actual, true);
          if (diff != null) {
            return where + "state." + e.getKey() + ": " + diff;
          }
        }
      }
    }
    return null;
  }

  /** Index of the first output of step `step` in the flattened outputs. */
  private static int startOf(List<Obs> obs, int step) {
    int n = 0;
    for (int i = 0; i < step && i < obs.size(); i++) {
      n += obs.get(i).outputs.size();
    }
    return n;
  }

  private static List<JsonNode> flat(List<Obs> obs, int at) {
    List<JsonNode> out = new ArrayList<>();
    for (int i = 0; i <= at; i++) {
      out.addAll(obs.get(i).outputs);
    }
    return out;
  }

  private static String lastError(List<Obs> obs) {
    for (int i = obs.size() - 1; i >= 0; i--) {
      if (obs.get(i).error != null) {
        return obs.get(i).error + ": " + obs.get(i).errorMessage;
      }
    }
    return "unknown";
  }

  static List<JsonNode> list(JsonNode array) {
    List<JsonNode> out = new ArrayList<>();
    if (array != null) {
      array.forEach(out::add);
    }
    return out;
  }

  private static List<JsonNode> records(List<JsonNode> outputs) {
    List<JsonNode> out = new ArrayList<>();
    for (JsonNode o : outputs) {
      if (o.has("record")) {
        out.add(o.get("record"));
      }
    }
    return out;
  }

  static String multiset(List<JsonNode> expected, List<JsonNode> actual) {
    List<String> e = Js.canonAll(expected);
    List<String> a = Js.canonAll(actual);
    Collections.sort(e);
    Collections.sort(a);
    return e.equals(a) ? null : "expected (any order) " + e + ", got " + a;
  }

  /** Same length; watermarks at the same positions; records equal as multisets. */
  static String harnessSorted(List<JsonNode> expected, List<JsonNode> actual) {
    List<String> e = Js.canonAll(expected);
    List<String> a = Js.canonAll(actual);
    String both = "expected " + e + ", got " + a;
    if (e.size() != a.size()) {
      return "output length differs: " + both;
    }
    List<String> er = new ArrayList<>();
    List<String> ar = new ArrayList<>();
    for (int i = 0; i < e.size(); i++) {
      boolean ew = expected.get(i).has("watermark");
      boolean aw = actual.get(i).has("watermark");
      if (ew || aw) {
        if (!e.get(i).equals(a.get(i))) {
          return "watermark at index " + i + " differs: " + both;
        }
      } else {
        er.add(e.get(i));
        ar.add(a.get(i));
      }
    }
    Collections.sort(er);
    Collections.sort(ar);
    return er.equals(ar) ? null : "records differ: " + both;
  }

  static String compareValue(JsonNode expected, JsonNode actual, boolean anyOrder) {
    if (expected.isObject() && actual.isObject()) {
      // A map assertion names what it checks ({"processing": 4}); other entries are not asserted.
      Iterator<Map.Entry<String, JsonNode>> it = expected.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        JsonNode a = actual.get(e.getKey());
        String diff = a == null ? "missing " + e.getKey() : compareValue(e.getValue(), a, anyOrder);
        if (diff != null) {
          return e.getKey() + ": " + diff;
        }
      }
      return null;
    }
    if (anyOrder && expected.isArray() && actual.isArray()) {
      return multiset(list(expected), list(actual));
    }
    String e = Js.canon(expected);
    String a = Js.canon(actual);
    return e.equals(a) ? null : "expected " + e + ", got " + a;
  }
}
