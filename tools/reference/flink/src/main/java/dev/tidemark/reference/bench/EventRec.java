package dev.tidemark.reference.bench;

/** A line of a generated events file (tools/bench/events_data.h): {user, ts (epoch ms), amount, page}. */
public class EventRec implements BenchRecord {
  public String user;
  public long ts;
  public long amount;
  public String page;

  public EventRec() {}

  @Override
  public long longAt(int f) {
    return f == 1 ? ts : amount;
  }

  @Override
  public double doubleAt(int f) {
    throw new IllegalStateException("no double field");
  }

  @Override
  public String stringAt(int f) {
    return f == 0 ? user : page;
  }

  /** The checksum sink's hash of the row {user, ts, amount, page}. */
  @Override
  public long hash() {
    return Checksums.record(Checksums.field(0, user) + Checksums.field(1, ts) + Checksums.field(2, amount)
        + Checksums.field(3, page));
  }
}
