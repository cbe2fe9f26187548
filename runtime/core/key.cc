#include "runtime/core/key.h"

namespace tidemark {

std::string KeyToString(const Key& key) {
  if (key.size() == 1) {
    return ValueToJson(key[0]);
  }
  std::string out = "[";
  for (size_t i = 0; i < key.size(); ++i) {
    if (i > 0) {
      out += ',';
    }
    out += ValueToJson(key[i]);
  }
  return out + "]";
}

}  // namespace tidemark
