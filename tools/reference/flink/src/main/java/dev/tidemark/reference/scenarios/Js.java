package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** JSON helpers for the case format: MIN/MAX timestamps, canonical text for comparisons. */
public final class Js {
  public static final ObjectMapper MAPPER = new ObjectMapper();
  public static final JsonNodeFactory F = JsonNodeFactory.instance;

  private Js() {}

  public static JsonNode parse(String text) {
    try {
      return MAPPER.readTree(text);
    } catch (Exception e) {
      throw new IllegalArgumentException("invalid JSON: " + e.getMessage(), e);
    }
  }

  /** A timestamp: a number, or "MIN" / "MAX". */
  public static long ts(JsonNode n) {
    if (n == null || n.isNull()) {
      throw new IllegalArgumentException("missing timestamp");
    }
    if (n.isTextual()) {
      switch (n.asText()) {
        case "MIN":
          return Long.MIN_VALUE;
        case "MAX":
          return Long.MAX_VALUE;
        default:
          return Long.parseLong(n.asText());
      }
    }
    if (!n.canConvertToLong()) {
      throw new IllegalArgumentException("not a timestamp: " + n);
    }
    return n.asLong();
  }

  public static long ts(JsonNode obj, String field, long fallback) {
    JsonNode n = obj.get(field);
    return n == null || n.isNull() ? fallback : ts(n);
  }

  /** A timestamp as the case format writes it: MIN/MAX as strings. */
  public static JsonNode tsNode(long ts) {
    if (ts == Long.MIN_VALUE) {
      return F.textNode("MIN");
    }
    if (ts == Long.MAX_VALUE) {
      return F.textNode("MAX");
    }
    return F.numberNode(ts);
  }

  public static JsonNode watermark(long ts) {
    ObjectNode o = F.objectNode();
    o.set("watermark", tsNode(ts));
    return o;
  }

  public static JsonNode status(boolean idle) {
    ObjectNode o = F.objectNode();
    o.put("status", idle ? "idle" : "active");
    return o;
  }

  /** {"value": v, "ts": ts} (no ts when the record has none). */
  public static ObjectNode valueTs(JsonNode value, Long ts) {
    ObjectNode r = F.objectNode();
    r.set("value", value);
    if (ts != null) {
      r.set("ts", tsNode(ts));
    }
    return r;
  }

  public static JsonNode record(JsonNode value, Long ts) {
    ObjectNode o = F.objectNode();
    o.set("record", valueTs(value, ts));
    return o;
  }

  /**
   * Canonical text: object keys sorted, numbers as integers where integral, "MIN"/"MAX" strings
   * under timestamp-like keys turned into numbers, so equal values compare equal.
   */
  public static String canon(JsonNode n) {
    StringBuilder sb = new StringBuilder();
    canon(n, null, sb);
    return sb.toString();
  }

  private static final java.util.Set<String> TS_KEYS =
      java.util.Set.of("ts", "watermark", "timestamp", "to", "last_watermark", "windows", "result", "merged");

  private static void canon(JsonNode n, String key, StringBuilder sb) {
    if (n == null || n.isNull() || n.isMissingNode()) {
      sb.append("null");
    } else if (n.isObject()) {
      TreeMap<String, JsonNode> sorted = new TreeMap<>();
      Iterator<Map.Entry<String, JsonNode>> it = n.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        sorted.put(e.getKey(), e.getValue());
      }
      sb.append('{');
      boolean first = true;
      for (Map.Entry<String, JsonNode> e : sorted.entrySet()) {
        if (!first) {
          sb.append(',');
        }
        first = false;
        sb.append(F.textNode(e.getKey()).toString()).append(':');
        canon(e.getValue(), e.getKey(), sb);
      }
      sb.append('}');
    } else if (n.isArray() && "merged".equals(key)) {
      List<String> items = new ArrayList<>();
      for (JsonNode item : n) {
        StringBuilder one = new StringBuilder();
        canon(item, key, one);
        items.add(one.toString());
      }
      java.util.Collections.sort(items);
      sb.append('[').append(String.join(",", items)).append(']');
    } else if (n.isArray()) {
      sb.append('[');
      for (int i = 0; i < n.size(); i++) {
        if (i > 0) {
          sb.append(',');
        }
        canon(n.get(i), key != null && TS_KEYS.contains(key) ? key : null, sb);
      }
      sb.append(']');
    } else if (n.isTextual() && (n.asText().equals("MIN") || n.asText().equals("MAX"))) {
      // The case format writes Long.MIN_VALUE / MAX_VALUE as "MIN" / "MAX" wherever a number goes.
      sb.append(ts(n));
    } else if (n.isNumber() && n.canConvertToLong() && (n.isIntegralNumber() || n.asDouble() == Math.rint(n.asDouble()))) {
      sb.append(n.asLong());
    } else {
      sb.append(n.toString());
    }
  }

  public static List<String> canonAll(List<JsonNode> nodes) {
    List<String> out = new ArrayList<>();
    for (JsonNode n : nodes) {
      out.add(canon(n));
    }
    return out;
  }

  public static ArrayNode array(List<JsonNode> nodes) {
    ArrayNode a = F.arrayNode();
    nodes.forEach(a::add);
    return a;
  }

  public static String str(JsonNode obj, String field, String fallback) {
    JsonNode n = obj.get(field);
    return n == null || n.isNull() ? fallback : n.asText();
  }
}
