#pragma once

#include <optional>
#include <rocksdb/merge_operator.h>
#include <string>
#include <string_view>
#include <vector>

namespace tidemark::testing {

/// `op`'s FullMergeV2 of `operands` onto `existing` (key "k"): the merged bytes, or nullopt when
/// the operator refuses (RocksDB would report a corruption).
inline std::optional<std::string> FullMerge(const rocksdb::MergeOperator& op,
                                            std::string_view existing,
                                            const std::vector<std::string_view>& operands) {
  const rocksdb::Slice base(existing.data(), existing.size());
  std::vector<rocksdb::Slice> slices;
  for (const std::string_view o : operands) {
    slices.emplace_back(o.data(), o.size());
  }
  const rocksdb::MergeOperator::MergeOperationInput in(rocksdb::Slice("k"), &base, slices, nullptr);
  std::string merged;
  rocksdb::Slice existing_operand;
  rocksdb::MergeOperator::MergeOperationOutput out(merged, existing_operand);
  if (!op.FullMergeV2(in, &out)) {
    return std::nullopt;
  }
  return merged;
}

}  // namespace tidemark::testing
