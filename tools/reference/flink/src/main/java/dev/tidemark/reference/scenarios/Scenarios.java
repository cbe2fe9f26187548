package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * Runs scenario cases (JSON Lines) on Flink's own operators: the case's {@code area} picks the
 * Flink component, its {@code config} and {@code op}s are read as data. Prints PASS/FAIL per case
 * and {@code N passed, M failed}; a case whose area or op is not mapped fails as unsupported.
 */
public final class Scenarios {
  private Scenarios() {}

  static Area areaFor(JsonNode c) {
    String area = Js.str(c, "area", "");
    if (area.equals("timer_service") && "keyed_process".equals(Js.str(c.path("config"), "operator", ""))) {
      return new KeyedProcessArea();
    }
    Supplier<Area> s = AREAS.get(area);
    if (s == null) {
      throw new Area.Unsupported("area " + area);
    }
    return s.get();
  }

  private static final Map<String, Supplier<Area>> AREAS =
      Map.ofEntries(
          Map.entry("window_operator", WindowOperatorArea::new),
          Map.entry("interval_join", IntervalJoinArea::new),
          Map.entry("status_watermark_valve", ValveArea::new),
          Map.entry("timestamps_operator", TimestampsArea::new),
          Map.entry("bounded_out_of_orderness", GeneratorArea::new),
          Map.entry("watermarks_with_idleness", GeneratorArea::new),
          Map.entry("output_multiplexer", MultiplexerArea::new),
          Map.entry("window_assignment", WindowAssignmentArea::new),
          Map.entry("timer_service", TimerServiceArea::new),
          Map.entry("event_time_trigger", TriggerArea::new),
          Map.entry("source_event_time", SourceArea::new),
          Map.entry("alignment", AlignmentArea::new));

  /** A case that has not finished after this long fails (a harness that loops must not hang CI). */
  private static final long CASE_TIMEOUT_SECONDS = 30;

  /** Runs one case; the failure reason, or null when it passed. */
  public static String runCase(JsonNode c) {
    java.util.concurrent.FutureTask<List<Obs>> task =
        new java.util.concurrent.FutureTask<>(() -> areaFor(c).run(c));
    Thread t = new Thread(task, "case " + Js.str(c, "id", ""));
    t.setDaemon(true);
    t.start();
    try {
      List<Obs> obs = task.get(CASE_TIMEOUT_SECONDS, java.util.concurrent.TimeUnit.SECONDS);
      return Checker.check(c, obs);
    } catch (java.util.concurrent.TimeoutException e) {
      t.interrupt();
      return "harness error: no result after " + CASE_TIMEOUT_SECONDS + " s (the case's steps do not finish on Flink)";
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof Area.Unsupported) {
        return "unsupported: " + cause.getMessage();
      }
      return "harness error: " + cause;
    } catch (Throwable other) {
      return "harness error: " + other;
    }
  }

  /**
   * Reads an allow file: one {@code CASE_ID  reason} per line ({@code #} comments), the cases
   * known to fail on Flink and why.
   */
  public static Map<String, String> readAllowList(Path file) throws IOException {
    Map<String, String> allowed = new TreeMap<>();
    int lineNo = 0;
    for (String line : Files.readAllLines(file)) {
      lineNo++;
      String t = line.strip();
      if (t.isEmpty() || t.startsWith("#")) {
        continue;
      }
      String[] parts = t.split("\\s+", 2);
      if (parts.length < 2) {
        throw new IOException(file + ":" + lineNo + ":1: an allowed case needs a reason after its id");
      }
      allowed.put(parts[0], parts[1]);
    }
    return allowed;
  }

  /**
   * Runs the files; returns the number of failed cases that are not in {@code allowed}, plus the
   * allowed cases that passed (a stale entry is an error too).
   */
  public static int run(List<String> files, Map<String, String> allowed, PrintStream out) throws IOException {
    int unexpected = 0;
    java.util.Set<String> seenAllowed = new java.util.TreeSet<>();
    int passed = 0;
    int failed = 0;
    Map<String, int[]> perArea = new TreeMap<>();
    for (String file : files) {
      try (BufferedReader in = Files.newBufferedReader(Path.of(file))) {
        String line;
        int lineNo = 0;
        while ((line = in.readLine()) != null) {
          lineNo++;
          if (line.isBlank()) {
            continue;
          }
          String id = file + ":" + lineNo;
          JsonNode c;
          try {
            c = Js.parse(line);
          } catch (IllegalArgumentException e) {
            out.println("FAIL " + id + ": " + e.getMessage());
            failed++;
            continue;
          }
          id = Js.str(c, "id", id);
          String why = runCase(c);
          int[] counts = perArea.computeIfAbsent(Js.str(c, "area", "?"), k -> new int[2]);
          if (why == null) {
            out.println("PASS " + id);
            passed++;
            counts[0]++;
            if (allowed.containsKey(id)) {
              out.println("# " + id + " is listed as a known failure but passed: remove it from the list");
              unexpected++;
            }
          } else {
            boolean known = allowed.containsKey(id);
            out.println("FAIL " + id + ": " + why + (known ? " [known: " + allowed.get(id) + "]" : ""));
            failed++;
            counts[1]++;
            if (known) {
              seenAllowed.add(id);
            } else {
              unexpected++;
            }
          }
        }
      }
    }
    for (Map.Entry<String, int[]> e : perArea.entrySet()) {
      out.println("# " + e.getKey() + ": " + e.getValue()[0] + " passed, " + e.getValue()[1] + " failed");
    }
    if (!allowed.isEmpty()) {
      out.println("# " + seenAllowed.size() + " of the failures are listed as known, " + unexpected + " unexpected");
    }
    out.println(passed + " passed, " + failed + " failed");
    return unexpected;
  }
}
