#include "config/block_registry.h"

#include <algorithm>

namespace tidemark {

void BlockRegistry::RegisterSource(std::string type, std::vector<std::string_view> keys,
                                   SourceBlockParser parse) {
  auto it = std::find_if(sources_.begin(), sources_.end(),
                         [&](const SourceBlockType& s) { return s.type == type; });
  SourceBlockType entry{std::move(type), std::move(keys), std::move(parse)};
  if (it != sources_.end()) {
    *it = std::move(entry);
  } else {
    sources_.push_back(std::move(entry));
  }
  Reindex();
}

const SourceBlockType* BlockRegistry::FindSource(std::string_view type) const {
  for (const SourceBlockType& s : sources_) {
    if (s.type == type) {
      return &s;
    }
  }
  return nullptr;
}

std::vector<std::string_view> BlockRegistry::SourceTypes() const {
  std::vector<std::string_view> types;
  for (const SourceBlockType& s : sources_) {
    types.push_back(s.type);
  }
  return types;
}

void BlockRegistry::Reindex() {
  source_keys_.clear();
  for (const SourceBlockType& s : sources_) {
    for (std::string_view key : s.keys) {
      if (std::find(source_keys_.begin(), source_keys_.end(), key) == source_keys_.end()) {
        source_keys_.push_back(key);
      }
    }
  }
}

}  // namespace tidemark
