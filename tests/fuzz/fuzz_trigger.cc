// Fuzz target: trigger specs (`window.trigger`, operators/window/trigger.h). Any input must give
// a Trigger or InvalidArgument, in time linear in its length.

#include <cstddef>
#include <cstdint>
#include <string>

#include "operators/window/trigger.h"
#include "runtime/core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tidemark::MakeTrigger(std::string(reinterpret_cast<const char*>(data), size))->ToString();
  } catch (const tidemark::InvalidArgument&) {
  }
  return 0;
}
