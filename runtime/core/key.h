#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include <boost/container_hash/hash.hpp>

#include "runtime/core/row.h"

namespace tidemark {

/// The key of a keyed stream: the values of the key-by fields, in key-by order, boxed. An
/// all-records (non-keyed) window uses the empty key. Value type; compared and hashed by content.
/// Built only for keys that are not a single int64 (those have their own fast path), and then
/// once per key held in state (`KeyPool`), not per record: a record's key is read in place
/// (`KeyProbe`).
using Key = std::vector<Value>;

/// Hash for `Key` for unordered containers.
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
