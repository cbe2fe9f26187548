package dev.tidemark.reference.scenarios;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.mocks.MockSourceSplit;
import org.apache.flink.core.io.InputStatus;

/**
 * A SourceReader over Flink's MockSourceSplit whose next poll emits the record the case chooses
 * ({@code reader_emit {split, ts}}) through that split's own output (created with
 * createOutputForSplit, as MockSourceReader does with per-split outputs). For a split assigned with
 * records the chosen record must be its next one; a split assigned as a bare id emits what the case
 * chooses. A paused split cannot emit. Otherwise the poll fails, which the case reports. Pauses and resumes from SourceOperator's split alignment are recorded, as
 * MockSourceReader.getPausedSplits records them. One thread (the case's).
 */
final class ChosenSplitReader implements SourceReader<Integer, MockSourceSplit> {
  private final Map<String, Deque<Integer>> records = new LinkedHashMap<>();
  private final List<String> withoutOutput = new ArrayList<>();
  private final Map<String, SourceOutput<Integer>> outputs = new LinkedHashMap<>();
  private final Set<String> paused = new LinkedHashSet<>();
  /** Splits assigned without records: they emit whatever the case chooses. */
  private final Set<String> free = new LinkedHashSet<>();
  private String chosenSplit;
  private long chosenTs;
  private boolean chosen;

  /** The record the next poll emits. */
  void choose(String split, long ts) {
    chosenSplit = split;
    chosenTs = ts;
    chosen = true;
  }

  /** Whether a chosen record is still waiting for a poll. */
  boolean pending() {
    return chosen;
  }

  Set<String> pausedSplits() {
    return paused;
  }

  @Override
  public void start() {}

  @Override
  public InputStatus pollNext(ReaderOutput<Integer> out) {
    for (String id : withoutOutput) {
      outputs.put(id, out.createOutputForSplit(id));
    }
    withoutOutput.clear();
    if (!chosen) {
      return InputStatus.NOTHING_AVAILABLE;
    }
    chosen = false;
    Deque<Integer> queue = records.get(chosenSplit);
    if (queue == null) {
      throw new IllegalStateException("reader_emit: split " + chosenSplit + " was not assigned");
    }
    if (paused.contains(chosenSplit)) {
      throw new IllegalStateException("reader_emit: split " + chosenSplit + " is paused");
    }
    if (free.contains(chosenSplit)) {
      queue.add(Math.toIntExact(chosenTs));
    } else if (queue.isEmpty() || queue.peek() != chosenTs) {
      throw new IllegalStateException(
          "reader_emit: split " + chosenSplit + "'s next record is " + queue.peek() + ", not " + chosenTs);
    }
    outputs.get(chosenSplit).collect(queue.poll());
    for (Map.Entry<String, Deque<Integer>> e : records.entrySet()) {
      if (!e.getValue().isEmpty() && !paused.contains(e.getKey())) {
        return InputStatus.MORE_AVAILABLE;
      }
    }
    return InputStatus.NOTHING_AVAILABLE;
  }

  @Override
  public List<MockSourceSplit> snapshotState(long checkpointId) {
    return List.of();
  }

  @Override
  public CompletableFuture<Void> isAvailable() {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public void addSplits(List<MockSourceSplit> splits) {
    for (MockSourceSplit s : splits) {
      Deque<Integer> queue = new ArrayDeque<>();
      try {
        int[] next;
        while ((next = s.getNext(false)) != null) {
          queue.add(next[0]);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException(e);
      }
      if (queue.isEmpty()) {
        free.add(s.splitId());
      }
      records.put(s.splitId(), queue);
      withoutOutput.add(s.splitId());
    }
  }

  @Override
  public void notifyNoMoreSplits() {}

  @Override
  public void pauseOrResumeSplits(Collection<String> toPause, Collection<String> toResume) {
    paused.addAll(toPause);
    paused.removeAll(toResume);
  }

  @Override
  public void close() {}
}
