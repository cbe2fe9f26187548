#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include <boost/container_hash/hash.hpp>

#include "runtime/core/row.h"

namespace tidemark {

/// The key of a keyed stream: the values of the key-by fields, in key-by order. An all-records
/// (non-keyed) window uses the empty key. Value type; compared and hashed by content.
using Key = Row;

/// Hash for `Key` (and any `Row`) for unordered containers.
struct KeyHash {
  size_t operator()(const Key& key) const noexcept {
    size_t seed = key.size();
    for (const Value& v : key) {
      boost::hash_combine(seed, std::hash<Value>{}(v));
    }
    return seed;
  }
};

/// Renders a key for output and logs: the single value as JSON, or a JSON array for several.
std::string KeyToString(const Key& key);

}  // namespace tidemark
