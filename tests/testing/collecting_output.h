#pragma once

#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/core/stream_record.h"
#include "runtime/core/watermark.h"
#include "runtime/task/stream_operator.h"

namespace tidemark::testing {

/// A test `Output` that records what an operator emits, in order: main-output elements (records,
/// watermarks, statuses) in `elements()` and side-output records per tag. Copies records (never
/// moves from them). Single-threaded; the test owns it and passes it in `OperatorContext::output`.
class CollectingOutput : public Output {
 public:
  /// One main-output element: a record, a watermark or a watermark status.
  using Element = std::variant<StreamRecord, Watermark, WatermarkStatus>;

  void Collect(StreamRecord& record) override { elements_.emplace_back(record); }
  void CollectSide(std::string_view tag, StreamRecord& record) override {
    side_outputs_[std::string(tag)].push_back(record);
  }
  void EmitWatermark(Watermark watermark) override { elements_.emplace_back(watermark); }
  void EmitWatermarkStatus(WatermarkStatus status) override { elements_.emplace_back(status); }

  const std::vector<Element>& elements() const { return elements_; }
  /// Main-output records only, in order.
  std::vector<StreamRecord> Records() const;
  /// Main-output watermark values only, in order.
  std::vector<Timestamp> Watermarks() const;
  /// Records sent to side output `tag` (empty when none).
  std::vector<StreamRecord> SideOutput(std::string_view tag) const;
  /// The side-output tags that received records, in order.
  std::vector<std::string> SideOutputTags() const {
    std::vector<std::string> tags;
    for (const auto& [tag, records] : side_outputs_) {
      tags.push_back(tag);
    }
    return tags;
  }
  /// "record(<row json>@<ts>)", "watermark(<ts>)", "status(IDLE)", one per element, for
  /// readable assertion failures.
  std::vector<std::string> Describe() const;
  /// Forgets everything.
  void Clear() {
    elements_.clear();
    side_outputs_.clear();
  }

 private:
  std::vector<Element> elements_;
  std::map<std::string, std::vector<StreamRecord>, std::less<>> side_outputs_;
};

/// "record([\"a\",3]@2999)" style rendering of one record (ts "-" when it has none).
std::string DescribeRecord(const StreamRecord& record);

}  // namespace tidemark::testing
