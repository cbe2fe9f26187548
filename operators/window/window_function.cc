#include "operators/window/window_function.h"

#include "runtime/core/errors.h"
#include "runtime/state/state_codec.h"

namespace tidemark {

void ListWindowState::MergeFrom(const WindowState& other) {
  const auto& o = static_cast<const ListWindowState&>(other);
  elements_.insert(elements_.end(), o.elements_.begin(), o.elements_.end());
}

void ListWindowState::WriteTo(StateWriter& writer) const {
  writer.WriteU32(static_cast<uint32_t>(elements_.size()));
  for (const StreamRecord& r : elements_) {
    WriteRecord(writer, r);
  }
}

void ListWindowState::ReadFrom(StateReader& reader, const RowLayout* element_layout) {
  const uint32_t n = reader.ReadU32();
  elements_.clear();
  if (n > 0 && element_layout == nullptr) {
    throw StateCorrupt("window state: buffered elements, but the operator knows no input schema");
  }
  for (uint32_t i = 0; i < n; ++i) {
    elements_.push_back(ReadRecord(reader, element_layout));
  }
}

void BufferingWindowFunction::Process(const Context& ctx, const WindowState& state,
                                      std::vector<Row>& out) const {
  fn_(ctx, static_cast<const ListWindowState&>(state).elements(), out);
}

}  // namespace tidemark
