#include "runtime/time/internal_timer_service.h"

namespace tidemark {

// The common namespaces are instantiated once here, which also keeps the template compiled
// (and warning-checked) even when no other translation unit uses it.
template class InternalTimerService<VoidNamespace>;
template class InternalTimerService<std::string>;

}  // namespace tidemark
