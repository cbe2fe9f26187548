package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Seeded random operator-level cases in the scenario format: generated here, run on Flink's
 * operators to get the expected outputs, then run by tidemark-scenarios; every case tidemark
 * fails (or skips) is a difference, written out as a case and counted failed.
 *
 * <p>Kinds: window operator (tumbling / sliding / session event-time assigners, event-time and
 * purging triggers, allowed lateness, late side output, reduce and list window state, snapshot and
 * restore), interval join (bounds, inclusiveness, late side outputs), status watermark valve and
 * bounded out-of-orderness generator.
 */
public final class Differential {
  private Differential() {}

  private static final String[] KINDS = {
    "window_operator", "interval_join", "status_watermark_valve", "bounded_out_of_orderness", "timer_service"
  };

  /** Generates case number {@code n} of seed {@code seed} (no expectations yet). */
  static ObjectNode generate(long seed, int n) {
    SplittableRandom r = new SplittableRandom(seed * 1_000_003L + n);
    String kind = KINDS[n % KINDS.length];
    ObjectNode c = Js.F.objectNode();
    c.put("id", "diff-" + seed + "-" + n);
    c.put("area", kind);
    c.put("describe", "differential case " + n + " of seed " + seed + " (" + kind + "), expected outputs from Flink 2.3.0");
    ObjectNode config = c.putObject("config");
    ArrayNode steps = c.putArray("steps");
    switch (kind) {
      case "window_operator":
        windowCase(r, c, config, steps);
        break;
      case "interval_join":
        joinCase(r, c, config, steps);
        break;
      case "status_watermark_valve":
        valveCase(r, config, steps);
        break;
      case "timer_service":
        timerCase(r, config, steps);
        break;
      default:
        generatorCase(r, config, steps);
    }
    return c;
  }

  private static void windowCase(SplittableRandom r, ObjectNode c, ObjectNode config, ArrayNode steps) {
    c.put("expect_mode", "harness_sorted");
    ObjectNode a = config.putObject("assigner");
    int type = r.nextInt(6);
    boolean session = type == 2 || type == 5;
    boolean processing = type >= 3;
    if (type == 0 || type == 3) {
      long size = 1 + r.nextInt(20) * 100L;
      a.put("type", processing ? "tumbling_processing_time" : "tumbling_event_time");
      a.put("size", size);
      a.put("offset", r.nextInt(4) == 0 ? r.nextLong(size) : 0);
    } else if (type == 1 || type == 4) {
      long slide = 100L * (1 + r.nextInt(5));
      long size = slide * (1 + r.nextInt(4)) + (r.nextInt(3) == 0 ? 100 : 0);
      a.put("type", processing ? "sliding_processing_time" : "sliding_event_time");
      a.put("size", size);
      a.put("slide", slide);
      a.put("offset", r.nextInt(4) == 0 ? r.nextLong(slide) : 0);
    } else {
      a.put("type", processing ? "processing_time_session" : "event_time_session");
      a.put("gap", 100L * (1 + r.nextInt(10)));
    }
    String base = processing ? "processing_time" : "event_time";
    String[] triggers = {
      base, base, "purging(" + base + ")", "count(" + (1 + r.nextInt(3)) + ")",
      "purging(count(" + (1 + r.nextInt(3)) + "))",
      processing ? base : "continuous_event_time(" + (100 * (1 + r.nextInt(4))) + ")"
    };
    config.put("trigger", triggers[r.nextInt(triggers.length)]);
    config.put("allowed_lateness", r.nextInt(2) == 0 ? 0 : 100L * r.nextInt(8));
    config.put("late_output", r.nextBoolean());
    config.put("window_function", session && r.nextBoolean() ? "session_summary" : r.nextInt(4) == 0 ? "pass_through" : "sum");
    config.put("window_state", r.nextBoolean() ? "reduce" : "list");
    config.put("key", "field0");
    long wm = -500 + r.nextInt(500);
    long now = 0;
    int n = 5 + r.nextInt(30);
    boolean restored = false;
    for (int i = 0; i < n; i++) {
      int what = r.nextInt(10);
      if (processing && what == 8) {
        now += r.nextInt(700);
        steps.addObject().put("op", "advance_processing_time").put("to", now);
        continue;
      }
      if (what < 6) {
        ObjectNode s = steps.addObject();
        s.put("op", "record");
        s.put("key", "k" + r.nextInt(3));
        s.put("value", 1 + r.nextInt(9));
        s.put("ts", wm - 600 + r.nextInt(2000));
      } else if (what < 9) {
        wm += r.nextInt(700);
        steps.addObject().put("op", "watermark").put("ts", wm);
      } else if (!restored) {
        // Flink does not snapshot the operator's watermark: a restored WindowOperator starts at
        // MIN, tidemark keeps it. Re-announce the watermark (as upstream would) right away.
        steps.addObject().put("op", "snapshot_restore");
        wm += 1;
        steps.addObject().put("op", "watermark").put("ts", wm);
        restored = true;
      }
    }
    steps.addObject().put("op", "watermark").put("ts", wm + 5000);
    if (processing) {
      steps.addObject().put("op", "advance_processing_time").put("to", now + 5000);
    }
  }

  private static void joinCase(SplittableRandom r, ObjectNode c, ObjectNode config, ArrayNode steps) {
    c.put("expect_mode", "multiset");
    long lower = -3 + r.nextInt(5);
    long upper = lower + r.nextInt(5);
    boolean lowerInclusive = r.nextBoolean();
    boolean upperInclusive = r.nextBoolean();
    // Flink accepts bounds that are empty once made inclusive (it joins nothing); tidemark rejects
    // them as a configuration error. Only non-empty intervals are generated.
    if ((lowerInclusive ? lower : lower + 1) > (upperInclusive ? upper : upper - 1)) {
      lowerInclusive = true;
      upperInclusive = true;
    }
    config.put("operator", "interval_join");
    config.put("lower_bound", lower);
    config.put("lower_inclusive", lowerInclusive);
    config.put("upper_bound", upper);
    config.put("upper_inclusive", upperInclusive);
    config.put("key", "constant 'key'");
    config.put("join_function", "emit (left, right)");
    boolean late = r.nextBoolean();
    config.put("left_late_output", late);
    config.put("right_late_output", late);
    long[] wm = {0, 0};
    int n = 5 + r.nextInt(30);
    for (int i = 0; i < n; i++) {
      int input = 1 + r.nextInt(2);
      if (r.nextInt(3) < 2) {
        long ts = Math.min(wm[0], wm[1]) - 2 + r.nextInt(8);
        ObjectNode s = steps.addObject();
        s.put("op", "record");
        s.put("input", input);
        s.put("key", "key");
        ArrayNode v = s.putArray("value");
        v.add(input == 1 ? "lhs" : "rhs");
        v.add(ts);
        s.put("ts", ts);
      } else {
        wm[input - 1] += r.nextInt(4);
        steps.addObject().put("op", "watermark").put("input", input).put("ts", wm[input - 1]);
      }
    }
  }

  private static void valveCase(SplittableRandom r, ObjectNode config, ArrayNode steps) {
    int channels = 1 + r.nextInt(4);
    config.put("num_channels", channels);
    long[] wm = new long[channels];
    int n = 3 + r.nextInt(20);
    for (int i = 0; i < n; i++) {
      int ch = r.nextInt(channels);
      if (r.nextInt(4) == 0) {
        steps.addObject().put("op", "status").put("channel", ch).put("status", r.nextBoolean() ? "idle" : "active");
      } else {
        wm[ch] += r.nextInt(5) - 1;
        steps.addObject().put("op", "watermark").put("channel", ch).put("ts", wm[ch]);
      }
    }
  }

  /** Keyed timers on the internal timer service: register, delete, advance both clocks. */
  private static void timerCase(SplittableRandom r, ObjectNode config, ArrayNode steps) {
    config.put("component", "internal_timer_service");
    long wm = 0;
    long now = 0;
    int n = 5 + r.nextInt(30);
    steps.addObject().put("op", "set_key").put("key", "k0");
    String key = "k0";
    boolean keyMoved = false;
    for (int i = 0; i < n; i++) {
      int what = r.nextInt(10);
      if (what < 2) {
        key = "k" + r.nextInt(3);
        steps.addObject().put("op", "set_key").put("key", key);
        keyMoved = false;
      } else if (what < 7) {
        if (keyMoved) {
          // Firing leaves the key context at the last fired timer's key (an artefact of driving
          // the timer service directly; which timer of one timestamp fires last is unspecified).
          steps.addObject().put("op", "set_key").put("key", key);
          keyMoved = false;
        }
        boolean event = r.nextBoolean();
        long base = event ? wm : now;
        steps.addObject()
            .put("op", what < 6 ? "register_timer" : "delete_timer")
            .put("domain", event ? "event" : "processing")
            .put("namespace", "n" + r.nextInt(2))
            .put("ts", base - 3 + r.nextInt(24));
      } else if (what < 9) {
        wm += r.nextInt(10);
        steps.addObject().put("op", "advance_watermark").put("to", wm);
        keyMoved = true;
      } else {
        now += r.nextInt(10);
        steps.addObject().put("op", "advance_processing_time").put("to", now);
        keyMoved = true;
      }
    }
  }

  private static void generatorCase(SplittableRandom r, ObjectNode config, ArrayNode steps) {
    if (r.nextInt(4) == 0) {
      config.put("generator", "ascending_timestamps");
    } else {
      config.put("generator", "bounded_out_of_orderness");
      config.put("max_out_of_orderness", r.nextInt(50));
    }
    int n = 2 + r.nextInt(12);
    for (int i = 0; i < n; i++) {
      if (r.nextBoolean()) {
        steps.addObject().put("op", "event").put("ts", -20 + r.nextInt(200));
      } else {
        steps.addObject().put("op", "periodic_emit");
      }
    }
  }

  /** Fills in {@code expect} from what the steps did on Flink: a checkpoint after every step. */
  static void expectFrom(ObjectNode c, List<Obs> obs) {
    ArrayNode expect = c.putArray("expect");
    String area = Js.str(c, "area", "");
    Map<String, Boolean> sideSeen = new HashMap<>();
    for (int i = 0; i < obs.size(); i++) {
      Obs o = obs.get(i);
      ObjectNode cp = Js.F.objectNode();
      cp.put("after_step", i);
      if (o.error != null) {
        cp.put("error", o.error);
      }
      if (area.equals("bounded_out_of_orderness")) {
        cp.set("last_watermark", o.values.get("last_watermark"));
      } else if (area.equals("timer_service")) {
        JsonNode fired = o.values.get("fired");
        cp.set("fired", fired);
        java.util.Set<String> times = new java.util.HashSet<>();
        fired.forEach(t -> times.add(Js.canon(t.get("ts"))));
        // Flink leaves the order among timers of one timestamp unspecified.
        cp.put("order", times.size() == fired.size() ? "exact" : "any");
        cp.putObject("state").set("num_timers", o.values.get("state.num_timers"));
      } else if (!o.outputs.isEmpty() || area.equals("status_watermark_valve") || i == obs.size() - 1) {
        cp.set("outputs", Js.array(o.outputs));
      }
      ObjectNode side = Js.F.objectNode();
      for (Map.Entry<String, List<JsonNode>> e : o.side.entrySet()) {
        if (!e.getValue().isEmpty() || (i == obs.size() - 1 && !sideSeen.containsKey(e.getKey()))) {
          side.set(e.getKey(), Js.array(e.getValue()));
          sideSeen.put(e.getKey(), true);
        }
      }
      if (side.size() > 0) {
        cp.set("side_outputs", side);
      }
      if (cp.size() > 1) {
        expect.add(cp);
      }
    }
  }

  /** Generates, runs on Flink, runs on tidemark; returns the number of failed cases. */
  public static int run(long seed, int cases, Path outDir, String tidemark, PrintStream out) throws Exception {
    Files.createDirectories(outDir);
    Path all = outDir.resolve("differential-cases.jsonl");
    Path failures = outDir.resolve("differential-failures.jsonl");
    Map<String, ObjectNode> byId = new LinkedHashMap<>();
    int flinkErrors = 0;
    try (BufferedWriter w = Files.newBufferedWriter(all, StandardCharsets.UTF_8)) {
      for (int n = 0; n < cases; n++) {
        ObjectNode c = generate(seed, n);
        try {
          List<Obs> obs = Scenarios.areaFor(c).run(c);
          expectFrom(c, obs);
        } catch (Exception | AssertionError t) {
          out.println("FAIL " + Js.str(c, "id", "") + ": harness error on Flink: " + t);
          flinkErrors++;
          continue;
        }
        byId.put(Js.str(c, "id", ""), c);
        w.write(c.toString());
        w.newLine();
      }
    }
    // tidemark-scenarios prints FAIL/SKIP lines and `N passed, M failed, K skipped`.
    Process p = new ProcessBuilder(tidemark, all.toString()).redirectErrorStream(true).start();
    Map<String, String> differing = new LinkedHashMap<>();
    String summary = null;
    try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.startsWith("FAIL ") || line.startsWith("SKIP ")) {
          int colon = line.indexOf(": ");
          String id = colon > 0 ? line.substring(5, colon) : line.substring(5);
          differing.put(id, line.substring(0, 4) + " on tidemark: " + (colon > 0 ? line.substring(colon + 2) : ""));
        } else if (line.matches("\\d+ passed, \\d+ failed, \\d+ skipped")) {
          summary = line;
        }
      }
    }
    int rc = p.waitFor();
    if (summary == null) {
      throw new IOException("tidemark-scenarios exited " + rc + " without a summary line");
    }
    try (BufferedWriter w = Files.newBufferedWriter(failures, StandardCharsets.UTF_8)) {
      for (Map.Entry<String, String> e : differing.entrySet()) {
        ObjectNode c = byId.get(e.getKey());
        if (c == null) {
          continue;
        }
        c.put("notes", e.getValue());
        w.write(c.toString());
        w.newLine();
        out.println("FAIL " + e.getKey() + ": " + e.getValue());
      }
    }
    int failed = differing.size() + flinkErrors;
    int passed = cases - failed;
    Map<String, int[]> perKind = new LinkedHashMap<>();
    for (ObjectNode c : byId.values()) {
      int[] k = perKind.computeIfAbsent(Js.str(c, "area", ""), x -> new int[2]);
      k[differing.containsKey(Js.str(c, "id", "")) ? 1 : 0]++;
    }
    for (Map.Entry<String, int[]> e : perKind.entrySet()) {
      out.println("# " + e.getKey() + ": " + e.getValue()[0] + " passed, " + e.getValue()[1] + " failed");
    }
    if (failed > 0) {
      out.println("# differing cases written to " + failures);
    }
    out.println(passed + " passed, " + failed + " failed");
    return failed;
  }
}
