package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;

/** One area of the case format, executed on Flink's own classes. */
public abstract class Area {
  /** Thrown for a config or step this harness does not map to Flink yet. */
  public static final class Unsupported extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public Unsupported(String what) {
      super(what);
    }
  }

  /** Builds the component from {@code config}; called once before the steps. */
  protected abstract void setUp(JsonNode c) throws Exception;

  /** Applies one step, recording what it did in {@code o}. */
  protected abstract void step(JsonNode step, Obs o) throws Exception;

  /** Releases the component. */
  protected void tearDown() throws Exception {}

  /** Runs every step; a failing step records its error and the case goes on. */
  public final List<Obs> run(JsonNode c) throws Exception {
    setUp(c);
    List<Obs> obs = new ArrayList<>();
    try {
      for (JsonNode s : c.path("steps")) {
        Obs o = new Obs();
        try {
          step(s, o);
        } catch (Unsupported u) {
          throw u;
        } catch (Exception | AssertionError e) {
          o.error = classify(e);
          o.errorMessage = String.valueOf(e.getMessage());
        }
        obs.add(o);
      }
    } finally {
      tearDown();
    }
    return obs;
  }

  static String classify(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && !(t instanceof IllegalArgumentException)) {
      t = t.getCause();
    }
    if (t instanceof IllegalArgumentException) {
      return "invalid_argument";
    }
    if (t instanceof NoTimestamp || String.valueOf(t.getMessage()).contains("no timestamp marker")) {
      return "no_timestamp";
    }
    return t.getClass().getSimpleName();
  }

  /** Raised by the harness when Flink rejects a record for having no timestamp. */
  static final class NoTimestamp extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NoTimestamp(String message) {
      super(message);
    }
  }

  static Unsupported unsupported(String what) {
    return new Unsupported(what);
  }
}
