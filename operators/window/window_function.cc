#include "operators/window/window_function.h"

#include "runtime/core/errors.h"

namespace tidemark {

void ListWindowState::MergeFrom(const WindowState& other) {
  const auto& o = static_cast<const ListWindowState&>(other);
  elements_.insert(elements_.end(), o.elements_.begin(), o.elements_.end());
}

void BufferingWindowFunction::Process(const Context& ctx, const WindowState& state,
                                      std::vector<Row>& out) const {
  fn_(ctx, static_cast<const ListWindowState&>(state).elements(), out);
}

}  // namespace tidemark
