package dev.tidemark.reference.bench;

/**
 * A record of tidemark's {@code generator} source (sources/generator_source.h), as a Flink POJO:
 * record i has {@code key = Mix64(i) mod keys} (unsigned), {@code value = (Mix64(i ^ 0x5DEECE66D)
 * >>> 11) * 2^-53} and {@code ts = i * step_ms}.
 */
public class GenRec implements BenchRecord {
  public long key;
  public double value;
  public long ts;

  public GenRec() {}

  public static GenRec make(long i, long keys, long stepMs) {
    GenRec r = new GenRec();
    r.key = Long.remainderUnsigned(Checksums.mix64(i), keys);
    r.value = (Checksums.mix64(i ^ 0x5DEECE66DL) >>> 11) * 0x1.0p-53;
    r.ts = i * stepMs;
    return r;
  }

  @Override
  public long longAt(int f) {
    return f == 0 ? key : ts;
  }

  @Override
  public double doubleAt(int f) {
    return value;
  }

  @Override
  public String stringAt(int f) {
    throw new IllegalStateException("no string field");
  }

  /** The checksum sink's hash of the row {key, value, ts}. */
  @Override
  public long hash() {
    return Checksums.record(Checksums.field(0, key) + Checksums.field(1, value) + Checksums.field(2, ts));
  }
}
