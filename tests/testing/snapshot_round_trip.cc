#include "tests/testing/snapshot_round_trip.h"

#include <gtest/gtest.h>

#include "runtime/state/state_serializer.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark::testing {

ScriptStep ElementStep(Row row, Timestamp timestamp, int input) {
  ScriptStep s;
  s.kind = ScriptStep::Kind::kElement;
  s.record = StreamRecord(std::move(row), timestamp);
  s.input = input;
  return s;
}

ScriptStep WatermarkStep(Timestamp timestamp, int input) {
  ScriptStep s;
  s.kind = ScriptStep::Kind::kWatermark;
  s.time = timestamp;
  s.input = input;
  return s;
}

ScriptStep ProcessingTimeStep(Timestamp time) {
  ScriptStep s;
  s.kind = ScriptStep::Kind::kProcessingTime;
  s.time = time;
  return s;
}

ScriptStep EndInputStep(int input) {
  ScriptStep s;
  s.kind = ScriptStep::Kind::kEndInput;
  s.input = input;
  return s;
}

namespace {

struct Instance {
  std::unique_ptr<ManualProcessingTimeService> clock;
  std::unique_ptr<StreamOperator> op;
};

Instance OpenInstance(const OperatorFactory& factory, CollectingOutput& out, Timestamp now) {
  Instance i;
  i.clock = std::make_unique<ManualProcessingTimeService>(now);
  i.op = factory();
  OperatorContext ctx;
  ctx.name = "op";
  ctx.output = &out;
  ctx.processing_time = i.clock.get();
  i.op->Open(ctx);
  return i;
}

std::string Snapshot(StreamOperator& op) {
  StateWriter writer;
  StateSnapshotContext ctx{1, 0, writer};
  op.SnapshotState(ctx);
  return writer.Release();
}

}  // namespace

std::string SnapshotOf(StreamOperator& op) {
  return Snapshot(op);
}

void RestoreFrom(StreamOperator& op, const std::string& bytes) {
  StateReader reader(bytes);
  StateInitializationContext restore{&reader, 1, /*restore_watermarks=*/true, {}};
  op.InitializeState(restore);
}

void WriteIncrementalCheckpoint(StreamOperator& op, CheckpointStorage& storage,
                                const std::string& operator_id, int64_t id) {
  StateWriter w;
  StateSnapshotContext ctx{id, 0, w};
  IncrementalSnapshotTarget target;
  target.root = storage.dir();
  ctx.incremental = &target;
  op.SnapshotState(ctx);
  std::vector<StateFileHandle> h;
  h.push_back(storage.WriteState(id, operator_id, 0, w.bytes(), w.ReleaseBlocks(),
                                 std::move(target.referenced)));
  storage.Finalize(id, id, h);
}

void RestoreFromCheckpoint(StreamOperator& op, const CompletedCheckpoint& cp,
                           const std::string& operator_id) {
  StateReader r(*cp.Find(operator_id, 0));
  StateInitializationContext ctx;
  ctx.reader = &r;
  ctx.restored_checkpoint_id = cp.id;
  ctx.restore_watermarks = true;
  ctx.restored_directory = cp.directory;
  op.InitializeState(ctx);
}

ScriptRun RunScript(const OperatorFactory& factory, const std::vector<ScriptStep>& script, int cut,
                    const OperatorCounters& counters) {
  CollectingOutput out;
  ScriptRun run;
  Instance inst = OpenInstance(factory, out, 0);
  StateInitializationContext fresh;
  inst.op->InitializeState(fresh);
  int ended = 0;
  for (size_t i = 0; i <= script.size(); ++i) {
    if (static_cast<int>(i) == cut) {
      run.snapshot = Snapshot(*inst.op);
      const Timestamp now = inst.clock->GetCurrentProcessingTime();
      inst.op->Close();
      inst.op.reset();
      inst = OpenInstance(factory, out, now);
      StateReader reader(run.snapshot);
      // An exact continuation: the operator keeps its event time too (restore-watermarks), where a
      // job restored in Flink's mode starts it again at Long.MIN.
      StateInitializationContext restore{&reader, 1, /*restore_watermarks=*/true, {}};
      inst.op->InitializeState(restore);
      EXPECT_EQ(Snapshot(*inst.op), run.snapshot)
          << "the restored operator's snapshot differs from the one it was restored from";
    }
    if (i == script.size()) {
      break;
    }
    ScriptStep step = script[i];  // a copy: operators may move from the record
    switch (step.kind) {
      case ScriptStep::Kind::kElement:
        inst.op->ProcessElement(step.record, step.input);
        break;
      case ScriptStep::Kind::kWatermark:
        inst.op->ProcessWatermark(Watermark{step.time}, step.input);
        break;
      case ScriptStep::Kind::kProcessingTime:
        inst.clock->AdvanceTo(step.time);
        break;
      case ScriptStep::Kind::kEndInput:
        inst.op->EndInput(step.input);
        if (++ended == inst.op->NumInputs()) {
          inst.op->Finish();
        }
        break;
    }
  }
  if (counters) {
    run.counters = counters(*inst.op);
  }
  inst.op->Close();
  run.main = out.Describe();
  for (const std::string& tag : out.SideOutputTags()) {
    for (const StreamRecord& r : out.SideOutput(tag)) {
      run.side.push_back(tag + ": " + DescribeRecord(r));
    }
  }
  return run;
}

ScriptRun ExpectSnapshotRoundTrips(const OperatorFactory& factory,
                                   const std::vector<ScriptStep>& script,
                                   const OperatorCounters& counters) {
  ScriptRun whole = RunScript(factory, script, -1, counters);
  for (int cut = 0; cut <= static_cast<int>(script.size()); ++cut) {
    SCOPED_TRACE("snapshot and restore before step " + std::to_string(cut));
    const ScriptRun restored = RunScript(factory, script, cut, counters);
    EXPECT_EQ(restored.main, whole.main);
    EXPECT_EQ(restored.side, whole.side);
    EXPECT_EQ(restored.counters, whole.counters);
    if (::testing::Test::HasFailure()) {
      break;  // one failing cut says enough
    }
  }
  return whole;
}

}  // namespace tidemark::testing
