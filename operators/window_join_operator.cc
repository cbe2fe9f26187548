#include "operators/window_join_operator.h"

#include <algorithm>
#include <utility>

#include "operators/window/window_function.h"

namespace tidemark {

WindowJoinOperator::WindowJoinOperator(std::unique_ptr<WindowAssigner> assigner, Options options)
    : options_(std::move(options)) {
  const size_t k = options_.left_key_slots.size();
  const size_t left_width = options_.left_width;
  const size_t right_width = options_.right_width;
  auto join = [k, left_width, right_width](const WindowFunction::Context& ctx,
                                           const std::vector<StreamRecord>& elements,
                                           std::vector<Row>& out) {
    for (const StreamRecord& l : elements) {
      if (std::get<int64_t>(l.row[k]) != 0) {
        continue;
      }
      for (const StreamRecord& r : elements) {
        if (std::get<int64_t>(r.row[k]) != 1) {
          continue;
        }
        Row row;
        row.reserve(left_width + right_width + 2);
        row.insert(row.end(), l.row.begin() + static_cast<std::ptrdiff_t>(k + 1), l.row.end());
        row.insert(row.end(), r.row.begin() + static_cast<std::ptrdiff_t>(k + 1), r.row.end());
        row.emplace_back(ctx.window.start());
        row.emplace_back(ctx.window.end());
        out.push_back(std::move(row));
      }
    }
  };
  WindowOperator::Options inner;
  for (size_t i = 0; i < k; ++i) {
    inner.key_slots.push_back(static_cast<int>(i));
  }
  inner_ = std::make_unique<WindowOperator>(
      std::move(assigner), nullptr, std::make_unique<BufferingWindowFunction>(std::move(join)),
      inner);
}

WindowJoinOperator::~WindowJoinOperator() = default;

void WindowJoinOperator::Open(const OperatorContext& context) {
  StreamOperator::Open(context);
  inner_->Open(context);
}

void WindowJoinOperator::Close() {
  inner_->Close();
}

void WindowJoinOperator::SnapshotState(StateSnapshotContext& context) {
  StateWriter& w = context.writer;
  w.BeginSection("window-join", 1);
  w.WriteI64(input_watermarks_[0]);
  w.WriteI64(input_watermarks_[1]);
  w.WriteI64(combined_);
  w.WriteBool(idle_[0]);
  w.WriteBool(idle_[1]);
  w.WriteBool(status_ == WatermarkStatus::kIdle);
  inner_->SnapshotState(context);
  w.EndSection();
}

void WindowJoinOperator::InitializeState(StateInitializationContext& context) {
  if (!context.is_restored()) {
    return;
  }
  StateReader& r = *context.reader;
  r.BeginSection("window-join", 1);
  input_watermarks_[0] = r.ReadI64();
  input_watermarks_[1] = r.ReadI64();
  combined_ = r.ReadI64();
  idle_[0] = r.ReadBool();
  idle_[1] = r.ReadBool();
  status_ = r.ReadBool() ? WatermarkStatus::kIdle : WatermarkStatus::kActive;
  inner_->InitializeState(context);
  r.EndSection();
}

void WindowJoinOperator::ProcessElement(StreamRecord& record, int input) {
  const int side = input == 1 ? 1 : 0;
  const std::vector<int>& slots = side == 0 ? options_.left_key_slots : options_.right_key_slots;
  Row tagged;
  tagged.reserve(slots.size() + 1 + record.row.size());
  for (int slot : slots) {
    tagged.push_back(record.row[static_cast<size_t>(slot)]);
  }
  tagged.emplace_back(static_cast<int64_t>(side));
  for (Value& v : record.row) {
    tagged.push_back(std::move(v));
  }
  record.row = std::move(tagged);
  inner_->ProcessElement(record, 0);
}

void WindowJoinOperator::ProcessWatermark(Watermark watermark, int input) {
  Timestamp& w = input_watermarks_[input == 1 ? 1 : 0];
  w = std::max(w, watermark.timestamp);
  const Timestamp next = std::min(input_watermarks_[0], input_watermarks_[1]);
  if (next > combined_) {
    combined_ = next;
    inner_->ProcessWatermark(Watermark{next}, 0);  // fires windows, then forwards
  }
}

void WindowJoinOperator::ProcessWatermarkStatus(WatermarkStatus status, int input) {
  idle_[input == 1 ? 1 : 0] = status == WatermarkStatus::kIdle;
  const WatermarkStatus next =
      idle_[0] && idle_[1] ? WatermarkStatus::kIdle : WatermarkStatus::kActive;
  if (next != status_) {
    status_ = next;
    output().EmitWatermarkStatus(next);
  }
}

}  // namespace tidemark
