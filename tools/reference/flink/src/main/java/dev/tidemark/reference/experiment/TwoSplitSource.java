package dev.tidemark.reference.experiment;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SourceSplit;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * The seed's two-split source: both splits go to reader 0, which alternates fast, slow, fast, ...
 * and writes every record through its split's own output ({@link ReaderOutput#createOutputForSplit}),
 * so a watermark strategy given to {@code fromSource} gets one generator per split.
 *
 * <p>Pacing: record i (0-based, alternating) arrives at virtual processing time {@code i * pacing};
 * periodic watermark emission k happens at virtual time {@code k * interval}. The reader emits, in
 * one poll, every record that arrives before the next periodic emission, then waits until a periodic
 * emission has run ({@link PeriodicTicks}), so what each periodic emission sees does not depend on
 * wall-clock timing. At an instant shared by a record and a periodic emission, the emission comes
 * first (as on tidemark's virtual clock).
 */
public final class TwoSplitSource implements Source<Rec, TwoSplitSource.Split, Integer> {
  private static final long serialVersionUID = 1L;

  /** One split: {@code count} records from {@code start} ms, {@code step} ms apart. */
  public static final class Split implements SourceSplit, java.io.Serializable {
    private static final long serialVersionUID = 1L;
    final String id;
    final long start;
    final long step;
    final int count;

    Split(String id, long start, long step, int count) {
      this.id = id;
      this.start = start;
      this.step = step;
      this.count = count;
    }

    @Override
    public String splitId() {
      return id;
    }
  }

  private final List<Split> splits;
  private final long pacingMs;
  private final long intervalMs;

  public TwoSplitSource(List<Split> splits, long pacingMs, long intervalMs) {
    this.splits = splits;
    this.pacingMs = pacingMs;
    this.intervalMs = intervalMs;
  }

  public static Split split(String id, long start, long step, int count) {
    return new Split(id, start, step, count);
  }

  @Override
  public Boundedness getBoundedness() {
    return Boundedness.BOUNDED;
  }

  @Override
  public SplitEnumerator<Split, Integer> createEnumerator(SplitEnumeratorContext<Split> ctx) {
    return new Enumerator(ctx, new ArrayList<>(splits));
  }

  @Override
  public SplitEnumerator<Split, Integer> restoreEnumerator(
      SplitEnumeratorContext<Split> ctx, Integer checkpoint) {
    return new Enumerator(ctx, new ArrayList<>(splits));
  }

  @Override
  public SimpleVersionedSerializer<Split> getSplitSerializer() {
    return new SplitSerializer();
  }

  @Override
  public SimpleVersionedSerializer<Integer> getEnumeratorCheckpointSerializer() {
    return new IntSerializer();
  }

  @Override
  public SourceReader<Rec, Split> createReader(SourceReaderContext ctx) {
    return new Reader(splits.size(), pacingMs, intervalMs);
  }

  /** Assigns every split to reader 0 when it registers, then signals no more splits. */
  static final class Enumerator implements SplitEnumerator<Split, Integer> {
    private final SplitEnumeratorContext<Split> ctx;
    private final List<Split> pending;

    Enumerator(SplitEnumeratorContext<Split> ctx, List<Split> pending) {
      this.ctx = ctx;
      this.pending = pending;
    }

    @Override
    public void start() {}

    @Override
    public void handleSplitRequest(int subtaskId, String requesterHostname) {}

    @Override
    public void addSplitsBack(List<Split> back, int subtaskId) {
      pending.addAll(back);
    }

    @Override
    public void addReader(int subtaskId) {
      if (subtaskId != 0) {
        ctx.signalNoMoreSplits(subtaskId);
        return;
      }
      for (Split s : pending) {
        ctx.assignSplit(s, 0);
      }
      pending.clear();
      ctx.signalNoMoreSplits(0);
    }

    @Override
    public Integer snapshotState(long checkpointId) {
      return pending.size();
    }

    @Override
    public void close() {}
  }

  /** Alternates the splits, one batch of records per periodic watermark emission. */
  static final class Reader implements SourceReader<Rec, Split> {
    private final int expectedSplits;
    private final long pacingMs;
    private final long intervalMs;
    private final List<Split> splits = new ArrayList<>();
    private final List<SourceOutput<Rec>> outputs = new ArrayList<>();
    private final int[] next;
    private CompletableFuture<Void> splitsArrived = new CompletableFuture<>();
    private int emitted;
    private int total;
    private long tick = 1; // the next periodic emission, at virtual time tick * interval
    private long ticksSeenAtBatchEnd = -1;
    private boolean finished;

    Reader(int expectedSplits, long pacingMs, long intervalMs) {
      this.expectedSplits = expectedSplits;
      this.pacingMs = pacingMs;
      this.intervalMs = intervalMs;
      this.next = new int[expectedSplits];
    }

    @Override
    public void start() {}

    @Override
    public InputStatus pollNext(ReaderOutput<Rec> output) {
      if (splits.size() < expectedSplits) {
        return InputStatus.NOTHING_AVAILABLE;
      }
      if (ticksSeenAtBatchEnd >= 0 && PeriodicTicks.count() <= ticksSeenAtBatchEnd) {
        return InputStatus.NOTHING_AVAILABLE; // the periodic emission after the batch has not run yet
      }
      if (finished || emitted == total) {
        if (!finished) {
          for (Split s : splits) {
            output.releaseOutputForSplit(s.id);
          }
          finished = true;
        }
        return InputStatus.END_OF_INPUT;
      }
      if (outputs.isEmpty()) {
        for (Split s : splits) {
          outputs.add(output.createOutputForSplit(s.id));
        }
      }
      // Every record whose arrival time (emitted * pacing) is before the next periodic emission.
      final long before = tick * intervalMs;
      while (emitted < total && emitted * pacingMs < before) {
        emitOne();
      }
      tick++;
      ticksSeenAtBatchEnd = PeriodicTicks.count();
      return InputStatus.NOTHING_AVAILABLE;
    }

    private void emitOne() {
      // Round-robin over splits that still have records.
      int n = splits.size();
      for (int k = 0; k < n; k++) {
        int idx = (int) ((emittedRoundRobin + k) % n);
        Split s = splits.get(idx);
        if (next[idx] < s.count) {
          long ts = s.start + s.step * next[idx];
          next[idx]++;
          outputs.get(idx).collect(new Rec(s.id, ts), ts);
          emittedRoundRobin = idx + 1;
          emitted++;
          return;
        }
      }
    }

    private long emittedRoundRobin;

    @Override
    public CompletableFuture<Void> isAvailable() {
      if (splits.size() < expectedSplits) {
        return splitsArrived;
      }
      if (ticksSeenAtBatchEnd >= 0 && PeriodicTicks.count() <= ticksSeenAtBatchEnd) {
        return PeriodicTicks.next();
      }
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public List<Split> snapshotState(long checkpointId) {
      return List.of();
    }

    @Override
    public void addSplits(List<Split> added) {
      splits.addAll(added);
      total = 0;
      for (Split s : splits) {
        total += s.count;
      }
      if (splits.size() >= expectedSplits) {
        splitsArrived.complete(null);
      }
    }

    @Override
    public void notifyNoMoreSplits() {}

    @Override
    public void close() {}
  }

  static final class SplitSerializer implements SimpleVersionedSerializer<Split> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(Split s) throws IOException {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      try (DataOutputStream out = new DataOutputStream(bytes)) {
        out.writeUTF(s.id);
        out.writeLong(s.start);
        out.writeLong(s.step);
        out.writeInt(s.count);
      }
      return bytes.toByteArray();
    }

    @Override
    public Split deserialize(int version, byte[] serialized) throws IOException {
      try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized))) {
        return new Split(in.readUTF(), in.readLong(), in.readLong(), in.readInt());
      }
    }
  }

  static final class IntSerializer implements SimpleVersionedSerializer<Integer> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(Integer v) {
      return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) (int) v};
    }

    @Override
    public Integer deserialize(int version, byte[] b) {
      return ((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff);
    }
  }
}
