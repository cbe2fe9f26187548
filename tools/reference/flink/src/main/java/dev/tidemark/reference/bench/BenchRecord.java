package dev.tidemark.reference.bench;

/** A record of a bench job on Flink: its checksum-sink hash and its fields by position. */
public interface BenchRecord {
  /** The checksum sink's hash of the row (Checksums). */
  long hash();

  /** Field {@code f} as int64 (an int64 or timestamp field). */
  long longAt(int f);

  /** Field {@code f} as double (a double field). */
  double doubleAt(int f);

  /** Field {@code f} as a string (a string field). */
  String stringAt(int f);
}
