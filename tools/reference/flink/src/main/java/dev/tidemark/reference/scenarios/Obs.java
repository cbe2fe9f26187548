package dev.tidemark.reference.scenarios;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** What one step of a case did on Flink: its outputs, side outputs, return value and state. */
public final class Obs {
  /** Output elements ({"watermark": ts}, {"status": s}, {"record": {...}}) in emission order. */
  public final List<JsonNode> outputs = new ArrayList<>();
  /** Side-output records ({value, ts}) per tag. */
  public final Map<String, List<JsonNode>> side = new LinkedHashMap<>();
  /** Named observations after the step: "returns", "last_watermark", "state.current_watermark", ... */
  public final Map<String, JsonNode> values = new LinkedHashMap<>();
  /** Error kind ("invalid_argument", "no_timestamp", or the exception class) if the step failed. */
  public String error;
  public String errorMessage;
  /** The step reset the output capture (snapshot_restore). */
  public boolean reset;
}
