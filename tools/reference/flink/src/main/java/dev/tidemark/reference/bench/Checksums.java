package dev.tidemark.reference.bench;

import java.nio.charset.StandardCharsets;

/**
 * tidemark's order-independent record checksum (runtime/core/checksum.h), so a Flink run of a bench
 * job can be checked to have produced exactly tidemark's records: a record's hash is
 * {@code Mix64(sum over its fields of Mix64(bits ^ salt(position)))}, a stream's checksum the
 * wrapping sum of its records' hashes. A string field's bits are libstdc++'s
 * {@code std::hash<std::string_view>} of its UTF-8 bytes (_Hash_bytes, seed 0xc70f6907).
 */
public final class Checksums {
  private Checksums() {}

  /** SplitMix64's finaliser. */
  public static long mix64(long x) {
    x += 0x9E3779B97F4A7C15L;
    x = (x ^ (x >>> 30)) * 0xBF58476D1CE4E5B9L;
    x = (x ^ (x >>> 27)) * 0x94D049BB133111EBL;
    return x ^ (x >>> 31);
  }

  static long salt(int position) {
    return (position + 1L) * 0xD6E8FEB86659FD93L;
  }

  /** The hash of field {@code position} (0-based among the checksummed fields) holding int64 bits. */
  public static long field(int position, long bits) {
    return mix64(bits ^ salt(position));
  }

  /** A double field: -0.0 hashes as 0.0. */
  public static long field(int position, double v) {
    return field(position, Double.doubleToRawLongBits(v == 0.0 ? 0.0 : v));
  }

  public static long field(int position, String s) {
    return field(position, stdHash(s));
  }

  /** A record's contribution from the sum of its fields' hashes. */
  public static long record(long fieldHashSum) {
    return mix64(fieldHashSum);
  }

  private static final long MUL = 0xc6a4a7935bd1e995L;

  private static long shiftMix(long v) {
    return v ^ (v >>> 47);
  }

  /** libstdc++'s std::hash of a string's UTF-8 bytes (64-bit size_t, libsupc++/hash_bytes.cc). */
  public static long stdHash(String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    int len = b.length;
    int aligned = len & ~7;
    long hash = 0xc70f6907L ^ (len * MUL);
    for (int p = 0; p < aligned; p += 8) {
      long data = 0;
      for (int i = 7; i >= 0; i--) {
        data = (data << 8) | (b[p + i] & 0xFF);
      }
      data = shiftMix(data * MUL) * MUL;
      hash ^= data;
      hash *= MUL;
    }
    if ((len & 7) != 0) {
      long data = 0;
      for (int i = len - 1; i >= aligned; i--) {
        data = (data << 8) | (b[i] & 0xFF);
      }
      hash ^= data;
      hash *= MUL;
    }
    hash = shiftMix(hash) * MUL;
    return shiftMix(hash);
  }
}
