#include "sources/source_reader.h"

namespace tidemark {

std::vector<std::unique_ptr<SourceSplit>> SplitEnumerator::SplitsFor(const Source& source,
                                                                     int subtask_index,
                                                                     int parallelism) {
  std::vector<std::unique_ptr<SourceSplit>> all = source.CreateSplits();
  std::vector<std::unique_ptr<SourceSplit>> mine;
  for (size_t i = 0; i < all.size(); ++i) {
    if (static_cast<int>(i % static_cast<size_t>(parallelism)) == subtask_index) {
      mine.push_back(std::move(all[i]));
    }
  }
  return mine;
}

}  // namespace tidemark
