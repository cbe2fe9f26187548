#pragma once

#include <memory>
#include <vector>

#include "runtime/checkpoint/checkpoint_barrier.h"
#include "runtime/core/stream_record.h"
#include "runtime/core/watermark.h"
#include "runtime/io/wire_batch.h"

namespace tidemark {

/// What travels through a channel between two subtasks, in order: a batch of records, a
/// watermark, a watermark status, end of input, a checkpoint barrier, or the cancellation of a
/// checkpoint. Mirrors Flink's StreamElement / EndOfData / CheckpointBarrier /
/// CancelCheckpointMarker.
/// A batch's records normally travel in `wire`, so a record crosses in its own few words instead
/// of as a `StreamRecord` object plus its row's separate buffer.
/// Owned by whoever holds the pointer; a channel transfers ownership from producer to consumer.
struct StreamElement {
  enum class Kind {
    kRecords,
    kWatermark,
    kWatermarkStatus,
    kEndOfInput,
    kCheckpointBarrier,       ///< `barrier`
    kCancelCheckpointMarker,  ///< `barrier.id` was aborted upstream: stop aligning it
  };

  Kind kind = Kind::kRecords;
  /// kRecords: the batch as a RecordWriter sends it, in the compact wire form (see WireBatch).
  WireBatch wire;
  /// kRecords: records handed over as objects (elements built by hand, e.g. in tests); a
  /// consumer takes these first, then `wire`'s.
  std::vector<StreamRecord> records;
  Watermark watermark;                                ///< kWatermark only
  WatermarkStatus status = WatermarkStatus::kActive;  ///< kWatermarkStatus only
  CheckpointBarrier barrier;  ///< kCheckpointBarrier, kCancelCheckpointMarker (its id)

  static std::unique_ptr<StreamElement> OfWatermark(Watermark w) {
    auto e = std::make_unique<StreamElement>();
    e->kind = Kind::kWatermark;
    e->watermark = w;
    return e;
  }
  static std::unique_ptr<StreamElement> OfStatus(WatermarkStatus s) {
    auto e = std::make_unique<StreamElement>();
    e->kind = Kind::kWatermarkStatus;
    e->status = s;
    return e;
  }
  static std::unique_ptr<StreamElement> OfBarrier(const CheckpointBarrier& b) {
    auto e = std::make_unique<StreamElement>();
    e->kind = Kind::kCheckpointBarrier;
    e->barrier = b;
    return e;
  }
  static std::unique_ptr<StreamElement> OfCancelCheckpoint(int64_t checkpoint_id) {
    auto e = std::make_unique<StreamElement>();
    e->kind = Kind::kCancelCheckpointMarker;
    e->barrier.id = checkpoint_id;
    return e;
  }
  static std::unique_ptr<StreamElement> OfEndOfInput() {
    auto e = std::make_unique<StreamElement>();
    e->kind = Kind::kEndOfInput;
    return e;
  }
};

}  // namespace tidemark
