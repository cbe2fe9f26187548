package org.apache.flink.runtime.source.coordinator;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkAlignmentParams;
import org.apache.flink.api.connector.source.mocks.MockSourceSplit;
import org.apache.flink.api.connector.source.mocks.MockSourceSplitSerializer;
import org.apache.flink.api.connector.source.mocks.MockSplitEnumeratorCheckpointSerializer;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.operators.coordination.CoordinatorStoreImpl;
import org.apache.flink.runtime.operators.coordination.EventReceivingTasks;
import org.apache.flink.runtime.operators.coordination.MockOperatorCoordinatorContext;
import org.apache.flink.runtime.operators.coordination.OperatorEvent;
import org.apache.flink.runtime.source.event.ReportedWatermarkEvent;
import org.apache.flink.util.concurrent.ExecutorThreadFactory;

/**
 * Flink's SourceCoordinator driven as Flink 2.3.0's SourceCoordinatorAlignmentTest drives it
 * (through SourceCoordinatorTestBase): one MockOperatorCoordinatorContext and one
 * EventReceivingTasks shared by every coordinator; per coordinator a SourceCoordinatorContext on its
 * own executors, a TestingSplitEnumerator source, its own CoordinatorStoreImpl and
 * WatermarkAlignmentParams; started, with every subtask's attempt 0 ready. A report is
 * handleEventFromOperator(ReportedWatermarkEvent), waiting for the coordinator thread, then
 * announceCombinedWatermark(). Lives in Flink's package because the test hooks it uses
 * (announceCombinedWatermark, CoordinatorTestUtils, the context's constructor) are package-private.
 * Reference tooling of tidemark, not part of Flink.
 */
public final class ReferenceCoordinators implements AutoCloseable {
  private static final OperatorID OPERATOR_ID = new OperatorID(1234L, 5678L);

  private final int numSubtasks;
  private final EventReceivingTasks receivingTasks = EventReceivingTasks.createForRunningTasks();
  private final MockOperatorCoordinatorContext operatorContext;
  private final List<AutoCloseable> closeables = new ArrayList<>();

  /** {@code numSubtasks}: the source's parallelism (Flink's test uses 3). */
  public ReferenceCoordinators(int numSubtasks) {
    this.numSubtasks = numSubtasks;
    this.operatorContext = new MockOperatorCoordinatorContext(OPERATOR_ID, numSubtasks);
  }

  /** A started coordinator of alignment group {@code group}, all subtasks ready. */
  public SourceCoordinator<MockSourceSplit, Set<MockSourceSplit>> start(
      String group, long maxDrift, long updateInterval) throws Exception {
    String threadName = OPERATOR_ID.toHexString();
    SourceCoordinatorProvider.CoordinatorExecutorThreadFactory factory =
        new SourceCoordinatorProvider.CoordinatorExecutorThreadFactory(threadName, operatorContext);
    SourceCoordinatorContext<MockSourceSplit> context =
        new SourceCoordinatorContext<>(
            new JobID(),
            Executors.newScheduledThreadPool(1, factory),
            Executors.newScheduledThreadPool(1, new ExecutorThreadFactory(threadName + "-worker")),
            factory,
            operatorContext,
            new MockSourceSplitSerializer(),
            new SplitAssignmentTracker<>(),
            false);
    closeables.add(context);
    SourceCoordinator<MockSourceSplit, Set<MockSourceSplit>> coordinator =
        new SourceCoordinator<>(
            new JobID(),
            "TestOperator",
            TestingSplitEnumerator.factorySource(
                new MockSourceSplitSerializer(), new MockSplitEnumeratorCheckpointSerializer()),
            context,
            new CoordinatorStoreImpl(),
            new WatermarkAlignmentParams(maxDrift, group, updateInterval),
            null);
    closeables.add(coordinator);
    coordinator.start();
    for (int subtask = 0; subtask < numSubtasks; subtask++) {
      coordinator.executionAttemptReady(subtask, 0, receivingTasks.createGatewayForSubtask(subtask, 0));
    }
    return coordinator;
  }

  /** Subtask {@code subtask} (attempt 0) reports {@code watermark}; the coordinator then announces. */
  public static void report(SourceCoordinator<?, ?> coordinator, int subtask, long watermark) throws Exception {
    coordinator.handleEventFromOperator(subtask, 0, new ReportedWatermarkEvent(watermark));
    CoordinatorTestUtils.waitForCoordinatorToProcessActions(coordinator.getContext());
    coordinator.announceCombinedWatermark();
  }

  /** Per subtask that was sent any event: the last event sent to it (as Flink's test reads it). */
  public Map<Integer, OperatorEvent> lastEvents() {
    Map<Integer, OperatorEvent> last = new TreeMap<>();
    for (int subtask = 0; subtask < numSubtasks; subtask++) {
      List<OperatorEvent> events = receivingTasks.getSentEventsForSubtask(subtask);
      if (!events.isEmpty()) {
        last.put(subtask, events.get(events.size() - 1));
      }
    }
    return last;
  }

  /** Whether the coordinators failed the (mock) job. */
  public boolean jobFailed() {
    return operatorContext.isJobFailed();
  }

  @Override
  public void close() throws Exception {
    Collections.reverse(closeables);
    Exception first = null;
    for (AutoCloseable c : closeables) {
      try {
        c.close();
      } catch (Exception e) {
        first = first == null ? e : first;
      }
    }
    closeables.clear();
    if (first != null) {
      throw first;
    }
  }
}
