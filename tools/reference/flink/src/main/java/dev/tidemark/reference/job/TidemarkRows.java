package dev.tidemark.reference.job;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * Rows as tidemark's print sink writes them (operators/json_row_formatter.cc): one JSON object per
 * row, fields in schema order, no spaces; int64 and timestamps as integers (epoch ms), doubles as
 * nlohmann::json writes them (shortest round trip, {@code 1.0}, {@code 1e+20}), non-finite doubles
 * and NULL as {@code null}. Also runs tidemark itself and compares two outputs.
 */
public final class TidemarkRows {
  private TidemarkRows() {}

  /** One row: names and values in order. */
  public static String format(List<String> names, List<Object> values) {
    StringBuilder out = new StringBuilder("{");
    for (int i = 0; i < names.size(); i++) {
      if (i > 0) {
        out.append(',');
      }
      appendString(names.get(i), out);
      out.append(':');
      appendValue(values.get(i), out);
    }
    return out.append('}').toString();
  }

  public static String format(Map<String, Object> row) {
    return format(new ArrayList<>(row.keySet()), new ArrayList<>(row.values()));
  }

  static void appendValue(Object v, StringBuilder out) {
    if (v == null) {
      out.append("null");
    } else if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) {
      out.append(((Number) v).longValue());
    } else if (v instanceof Boolean) {
      out.append(((Boolean) v) ? "true" : "false");
    } else if (v instanceof Double || v instanceof Float) {
      appendDouble(((Number) v).doubleValue(), out);
    } else if (v instanceof BigDecimal) {
      appendDouble(((BigDecimal) v).doubleValue(), out);
    } else if (v instanceof LocalDateTime) {
      out.append(((LocalDateTime) v).toInstant(ZoneOffset.UTC).toEpochMilli());
    } else if (v instanceof Instant) {
      out.append(((Instant) v).toEpochMilli());
    } else {
      appendString(v.toString(), out);
    }
  }

  /** nlohmann::json's number layout (grisu2 digits; fixed for exponents -4..15, else d.ddde+XX). */
  static void appendDouble(double d, StringBuilder out) {
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      // As tidemark and Flink's JSON format (Jackson's quoted non-numeric numbers) write them.
      out.append(Double.isNaN(d) ? "\"NaN\"" : d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
      return;
    }
    if (d == 0) {
      out.append(1 / d < 0 ? "-0.0" : "0.0");
      return;
    }
    BigDecimal shortest = new BigDecimal(Double.toString(Math.abs(d))).stripTrailingZeros();
    String digits = shortest.unscaledValue().toString();
    int n = digits.length();
    int k = n - shortest.scale(); // decimal point position: value = 0.digits * 10^k
    StringBuilder s = new StringBuilder(d < 0 ? "-" : "");
    // nlohmann (to_chars / format_buffer) with min_exp = -4, max_exp = 15 (std::numeric_limits<double>::digits10 + 1 = 16? it uses 15)
    if (k <= 15 && k >= n) {
      s.append(digits).append("0".repeat(k - n)).append(".0");
    } else if (0 < k && k <= 15) {
      s.append(digits, 0, k).append('.').append(digits, k, n);
    } else if (-4 < k && k <= 0) {
      s.append("0.").append("0".repeat(-k)).append(digits);
    } else {
      int e = k - 1;
      s.append(digits.charAt(0));
      if (n > 1) {
        s.append('.').append(digits, 1, n);
      }
      s.append('e').append(e < 0 ? '-' : '+');
      int ae = Math.abs(e);
      if (ae < 10) {
        s.append('0');
      }
      s.append(ae);
    }
    out.append(s);
  }

  static void appendString(String s, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          out.append("\\\"");
          break;
        case '\\':
          out.append("\\\\");
          break;
        case '\b':
          out.append("\\b");
          break;
        case '\f':
          out.append("\\f");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\t':
          out.append("\\t");
          break;
        default:
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
      }
    }
    out.append('"');
  }

  /** The output of {@code tidemark run JOB}: its stdout lines; null (and the reason in why) on failure. */
  public static List<String> runTidemark(String tidemark, String job, StringBuilder why)
      throws IOException, InterruptedException {
    ProcessBuilder pb = new ProcessBuilder(tidemark, "run", job);
    pb.redirectError(ProcessBuilder.Redirect.PIPE);
    Process p = pb.start();
    byte[] err;
    String out;
    try (var stdout = p.getInputStream(); var stderr = p.getErrorStream()) {
      var errReader = new java.util.concurrent.CompletableFuture<byte[]>();
      Thread t = new Thread(() -> {
        try {
          errReader.complete(stderr.readAllBytes());
        } catch (IOException e) {
          errReader.complete(new byte[0]);
        }
      });
      t.start();
      out = new String(stdout.readAllBytes(), StandardCharsets.UTF_8);
      err = errReader.join();
    }
    int rc = p.waitFor();
    if (rc != 0) {
      why.append("tidemark run exited ").append(rc).append(": ")
          .append(new String(err, StandardCharsets.UTF_8).strip());
      return null;
    }
    List<String> lines = new ArrayList<>();
    for (String l : out.split("\n", -1)) {
      if (!l.isEmpty()) {
        lines.add(l);
      }
    }
    return lines;
  }

  /** Relative tolerance for DOUBLE values (see {@link #compare}). */
  public static final double DOUBLE_TOLERANCE = 1e-12;

  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * Whether two rows are equal but for DOUBLE values within {@link #DOUBLE_TOLERANCE} of each
   * other, relatively: the same keys in the same order, every other value equal exactly. A DOUBLE
   * is a number written with a fraction or an exponent on both sides (both write int64 and
   * timestamps as plain integers, doubles always with '.' or 'e').
   */
  static boolean nearlyEqual(String flink, String tidemark) {
    JsonNode a;
    JsonNode b;
    try {
      a = JSON.readTree(flink);
      b = JSON.readTree(tidemark);
    } catch (IOException e) {
      return false;
    }
    if (!a.isObject() || !b.isObject() || a.size() != b.size()) {
      return false;
    }
    var fa = a.fields();
    var fb = b.fields();
    while (fa.hasNext()) {
      var x = fa.next();
      var y = fb.next();
      if (!x.getKey().equals(y.getKey())) {
        return false;
      }
      JsonNode u = x.getValue();
      JsonNode v = y.getValue();
      if (u.isDouble() && v.isDouble()) {
        double p = u.doubleValue();
        double q = v.doubleValue();
        if (p != q && Math.abs(p - q) > DOUBLE_TOLERANCE * Math.max(Math.abs(p), Math.abs(q))) {
          return false;
        }
      } else if (!u.equals(v)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Compares two outputs as multisets of lines (Flink does not order rows of timers with the same
   * timestamp, nor the rows of parallel subtasks); null when equal, else a short report. DOUBLE
   * values compare within a relative {@link #DOUBLE_TOLERANCE}: Flink sums an AVG or SUM of
   * doubles in another order (two-phase local/global window aggregation) and floating-point
   * addition is not associative, so the last digit may differ. Every other value is exact.
   */
  public static String compare(List<String> flink, List<String> tidemark) {
    List<String> a = new ArrayList<>(flink);
    List<String> b = new ArrayList<>(tidemark);
    Collections.sort(a);
    Collections.sort(b);
    if (a.equals(b)) {
      return null;
    }
    List<String> onlyFlink = new ArrayList<>(a);
    for (String l : b) {
      onlyFlink.remove(l);
    }
    List<String> onlyTidemark = new ArrayList<>(b);
    for (String l : a) {
      onlyTidemark.remove(l);
    }
    // What is left pairs up row by row when only DOUBLE values differ, within the tolerance.
    for (var it = onlyFlink.iterator(); it.hasNext(); ) {
      String l = it.next();
      for (int i = 0; i < onlyTidemark.size(); i++) {
        if (nearlyEqual(l, onlyTidemark.get(i))) {
          onlyTidemark.remove(i);
          it.remove();
          break;
        }
      }
    }
    if (onlyFlink.isEmpty() && onlyTidemark.isEmpty()) {
      return null;
    }
    StringBuilder s = new StringBuilder();
    s.append("    ").append(flink.size()).append(" rows from Flink, ").append(tidemark.size())
        .append(" from tidemark\n");
    int shown = 0;
    for (String l : onlyFlink) {
      if (shown++ == 10) {
        s.append("    ...\n");
        break;
      }
      s.append("    flink only:    ").append(l).append('\n');
    }
    shown = 0;
    for (String l : onlyTidemark) {
      if (shown++ == 10) {
        s.append("    ...\n");
        break;
      }
      s.append("    tidemark only: ").append(l).append('\n');
    }
    return s.toString();
  }
}
