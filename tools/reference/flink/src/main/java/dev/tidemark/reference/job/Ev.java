package dev.tidemark.reference.job;

import java.util.LinkedHashMap;

/**
 * One element of a job's stream on Flink: a record (its row, in schema order) or one of the
 * source's fixed watermark points, which travel in the stream as markers from the source to the
 * watermark generator and are dropped there: a periodic emission of tidemark's virtual clock
 * ({@code TICK}), a split's output registered, released, marked idle or active. A POJO (Flink
 * serializes the row map with Kryo).
 */
public class Ev {
  public static final int REC = 0;
  public static final int TICK = 1;
  public static final int REGISTER = 2;
  public static final int END = 3;
  public static final int IDLE = 4;
  public static final int ACTIVE = 5;

  public int kind;
  public String split;
  /** The source's own timestamp of a record (Long.MIN_VALUE: none). */
  public long ts = Long.MIN_VALUE;
  public LinkedHashMap<String, Object> row;

  public Ev() {}

  public static Ev record(String split, long ts, LinkedHashMap<String, Object> row) {
    Ev e = new Ev();
    e.kind = REC;
    e.split = split;
    e.ts = ts;
    e.row = row;
    return e;
  }

  public static Ev marker(int kind, String split) {
    Ev e = new Ev();
    e.kind = kind;
    e.split = split;
    return e;
  }

  public boolean isRecord() {
    return kind == REC;
  }
}
