#include "operators/window_join_operator.h"

#include <algorithm>
#include <utility>

#include "operators/window/window_function.h"
#include "runtime/core/errors.h"

namespace tidemark {

WindowJoinOperator::WindowJoinOperator(std::unique_ptr<WindowAssigner> assigner, Options options)
    : options_(std::move(options)) {
  TM_CHECK(options_.left_layout != nullptr && options_.right_layout != nullptr,
           "window join needs both inputs' layouts");
  const size_t k = options_.left_key_slots.size();
  const size_t left_width = options_.left_layout->size();
  const size_t right_width = options_.right_layout->size();
  std::vector<FieldType> tagged;
  for (int slot : options_.left_key_slots) {
    tagged.push_back(options_.left_layout->type(static_cast<size_t>(slot)));
  }
  tagged.push_back(FieldType::kInt64);  // the side
  const std::vector<FieldType>& lt = options_.left_layout->types();
  const std::vector<FieldType>& rt = options_.right_layout->types();
  tagged.insert(tagged.end(), lt.begin(), lt.end());
  tagged.insert(tagged.end(), rt.begin(), rt.end());
  tagged_layout_ = RowLayout::Of(tagged);
  std::vector<FieldType> joined = lt;
  joined.insert(joined.end(), rt.begin(), rt.end());
  joined.push_back(FieldType::kTimestamp);
  joined.push_back(FieldType::kTimestamp);
  const RowLayout* output = RowLayout::Of(joined);
  auto join = [k, left_width, right_width, output](const WindowFunction::Context& ctx,
                                                   const std::vector<StreamRecord>& elements,
                                                   std::vector<Row>& out) {
    for (const StreamRecord& l : elements) {
      if (l.row.GetInt64(k) != 0) {
        continue;
      }
      for (const StreamRecord& r : elements) {
        if (r.row.GetInt64(k) != 1) {
          continue;
        }
        Row& row = out.emplace_back(output);
        for (size_t i = 0; i < left_width; ++i) {
          row.CopyCell(i, l.row, k + 1 + i);
        }
        for (size_t i = 0; i < right_width; ++i) {
          row.CopyCell(left_width + i, r.row, k + 1 + left_width + i);
        }
        row.SetInt64(left_width + right_width, ctx.window.start());
        row.SetInt64(left_width + right_width + 1, ctx.window.end());
      }
    }
  };
  WindowOperator::Options inner;
  for (size_t i = 0; i < k; ++i) {
    inner.key_slots.push_back(static_cast<int>(i));
  }
  inner.input_layout = tagged_layout_;
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
  tagged_.Reset(tagged_layout_);
  size_t at = 0;
  for (int slot : slots) {
    tagged_.CopyCell(at++, record.row, static_cast<size_t>(slot));
  }
  tagged_.SetInt64(at++, side);
  if (side == 1) {
    at += options_.left_layout->size();
  }
  for (size_t i = 0; i < record.row.size(); ++i) {
    tagged_.CopyCell(at + i, record.row, i);
  }
  record.row.swap(tagged_);
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

void WindowJoinOperator::CollectMetrics(MetricsWriter& out) const {
  MetricsWriter inner;
  inner_->CollectMetrics(inner);
  for (auto& [name, value] : inner.Take()) {
    if (name == "numLateRecordsDropped") {
      out.Gauge(std::move(name), value);
    }
  }
  for (auto& [name, text] : inner.TakeNotes()) {
    out.Note(std::move(name), std::move(text));
  }
}

}  // namespace tidemark
