#include "tests/testing/collecting_output.h"

#include <fmt/format.h>

#include "runtime/core/key.h"

namespace tidemark::testing {

std::vector<StreamRecord> CollectingOutput::Records() const {
  std::vector<StreamRecord> out;
  for (const Element& e : elements_) {
    if (const auto* r = std::get_if<StreamRecord>(&e)) {
      out.push_back(*r);
    }
  }
  return out;
}

std::vector<Timestamp> CollectingOutput::Watermarks() const {
  std::vector<Timestamp> out;
  for (const Element& e : elements_) {
    if (const auto* w = std::get_if<Watermark>(&e)) {
      out.push_back(w->timestamp);
    }
  }
  return out;
}

std::vector<StreamRecord> CollectingOutput::SideOutput(std::string_view tag) const {
  auto it = side_outputs_.find(tag);
  return it == side_outputs_.end() ? std::vector<StreamRecord>{} : it->second;
}

std::string DescribeRecord(const StreamRecord& record) {
  std::string ts = record.has_timestamp ? std::to_string(record.timestamp) : "-";
  std::string row = "[";
  for (size_t i = 0; i < record.row.size(); ++i) {
    // Appended piece by piece: `const char* + std::string&&` makes g++ 12 -O2 report a false
    // -Wrestrict in the inlined string insert (GCC PR 105329).
    if (i > 0) {
      row += ',';
    }
    row += ValueToJson(record.row.Get(i));
  }
  return fmt::format("record({}]@{})", row, ts);
}

std::vector<std::string> CollectingOutput::Describe() const {
  std::vector<std::string> out;
  for (const Element& e : elements_) {
    if (const auto* r = std::get_if<StreamRecord>(&e)) {
      out.push_back(DescribeRecord(*r));
    } else if (const auto* w = std::get_if<Watermark>(&e)) {
      out.push_back(fmt::format("watermark({})", w->timestamp));
    } else {
      out.push_back(fmt::format("status({})", ToString(std::get<WatermarkStatus>(e))));
    }
  }
  return out;
}

}  // namespace tidemark::testing
