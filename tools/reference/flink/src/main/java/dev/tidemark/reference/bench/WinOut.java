package dev.tidemark.reference.bench;

/**
 * A window result as tidemark's window operator writes it: the key, window_start, window_end, then
 * the aggregates (count and sums: int64, or double for a double field).
 */
public class WinOut implements BenchRecord {
  public boolean stringKey;
  public long longKey;
  public String key;
  public long start;
  public long end;
  /** The aggregates' values: int64s, or a double's raw bits where {@code isDouble} says so. */
  public long[] aggs;
  public boolean[] isDouble;

  public WinOut() {}

  @Override
  public long longAt(int f) {
    return f == 0 ? longKey : f == 1 ? start : f == 2 ? end : aggs[f - 3];
  }

  @Override
  public double doubleAt(int f) {
    return Double.longBitsToDouble(aggs[f - 3]);
  }

  @Override
  public String stringAt(int f) {
    return key;
  }

  @Override
  public long hash() {
    long sum = stringKey ? Checksums.field(0, key) : Checksums.field(0, longKey);
    sum += Checksums.field(1, start);
    sum += Checksums.field(2, end);
    for (int i = 0; i < aggs.length; i++) {
      sum += isDouble[i] ? Checksums.field(3 + i, Double.longBitsToDouble(aggs[i])) : Checksums.field(3 + i, aggs[i]);
    }
    return Checksums.record(sum);
  }
}
