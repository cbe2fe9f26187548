// The compact layout of the RocksDB window state ("window-slices-compact") and its merge operator
// on their own (window_slices_merge_operator.h); the operator's results on it are the RocksDB
// window tests' (window_rocksdb_test.cc, window_rocksdb_merge_test.cc).

#include <bit>
#include <deque>
#include <memory>
#include <rocksdb/merge_operator.h>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/window_aggregates.h"
#include "operators/window/window_slices_merge_operator.h"
#include "tests/testing/rocksdb_merge.h"

namespace tidemark {
namespace {

struct Slices {
  std::vector<Timestamp> starts;
  std::vector<uint64_t> words;
  Timestamp next_fire = kMinTimestamp;
  Timestamp timer = kMinTimestamp;
  bool operator==(const Slices&) const = default;
};

std::string Encode(const Slices& s, size_t words) {
  std::string out;
  AppendCompactSlices(s.starts.data(), s.starts.size(), s.next_fire, s.timer, s.words.data(), words,
                      &out);
  return out;
}

Slices Decode(const std::string& bytes, size_t words) {
  CompactSlicesReader r(bytes, words);
  EXPECT_TRUE(r.ok());
  Slices s;
  s.next_fire = r.next_fire();
  s.timer = r.timer();
  Timestamp start = 0;
  std::vector<uint64_t> w(words);
  while (r.Next(&start, w.data())) {
    s.starts.push_back(start);
    s.words.insert(s.words.end(), w.begin(), w.end());
  }
  EXPECT_TRUE(r.AtEnd());
  return s;
}

TEST(CompactWindowSlicesTest, RoundTripsStartsWordsAndTimes) {
  const Slices one{{0}, {1}, 999, 999};
  const std::string bytes = Encode(one, 1);
  // Format byte, 1 slice, start 0, next firing and timer 1 + zigzag(999) = 1999 (2 bytes each),
  // count 1: 8 bytes where the general layout takes 69.
  EXPECT_EQ(bytes, std::string("\x01\x01\x00\xcf\x0f\xcf\x0f\x01", 8));
  EXPECT_EQ(Decode(bytes, 1), one);
  // Negative starts, no next firing, words of every width, times before the first start.
  const Slices many{
      {-5000, -1000, 7000}, {3, ~uint64_t{0}, 0, uint64_t{1} << 63, 42, 1}, kMinTimestamp, -6000};
  EXPECT_EQ(Decode(Encode(many, 2), 2), many);
  // No words at all (slices by start only).
  const Slices bare{{10, 20}, {}, 30, kMinTimestamp};
  EXPECT_EQ(Decode(Encode(bare, 0), 0), bare);
}

TEST(CompactWindowSlicesTest, ReaderRejectsBytesThatAreNotAValue) {
  const std::string good = Encode(Slices{{0, 1000}, {2, 3}, 999, 999}, 1);
  for (size_t cut = 0; cut < good.size(); ++cut) {
    const std::string prefix = good.substr(0, cut);  // the reader views it
    CompactSlicesReader r(prefix, 1);
    Timestamp start = 0;
    uint64_t word = 0;
    while (r.Next(&start, &word)) {
    }
    EXPECT_FALSE(r.AtEnd()) << "cut at " << cut;
  }
  std::string other = good;
  other[0] = '\x02';  // an unknown format byte
  EXPECT_FALSE(CompactSlicesReader(other, 1).ok());
  EXPECT_FALSE(CompactSlicesReader(good + "x", 1).AtEnd());
}

std::shared_ptr<rocksdb::MergeOperator> CountAndSum() {
  ResolvedAggregate count;
  count.kind = AggregateKind::kCount;
  ResolvedAggregate sum;
  sum.kind = AggregateKind::kSum;
  sum.slot = 0;
  sum.input_type = FieldType::kInt64;
  sum.output_type = FieldType::kInt64;
  const SliceAggregates aggs(std::vector<ResolvedAggregate>{count, sum});
  EXPECT_FALSE(aggs.has_strings());
  EXPECT_EQ(aggs.words(), 4u);  // count; sum's values seen, int64 total, double total
  return NewCompactWindowSlicesMergeOperator(aggs);
}

uint64_t Bits(double d) {
  return std::bit_cast<uint64_t>(d);
}

TEST(CompactWindowSlicesTest, MergeUnitesSlicesAndMergesEqualStarts) {
  std::shared_ptr<rocksdb::MergeOperator> merge = CountAndSum();
  // Words per slice: count, then sum's values seen, int64 total and double total.
  const std::string a = Encode(Slices{{0, 1000}, {2, 2, 10, Bits(1.5), 1, 1, 5, 0}, 999, 999}, 4);
  const std::string b =
      Encode(Slices{{1000, 2000}, {4, 4, 40, Bits(2.5), 5, 5, 50, 0}, 1999, 1999}, 4);
  const std::string c = Encode(Slices{{0}, {1, 1, -3ULL, Bits(0.25)}, kMinTimestamp, 999}, 4);
  const std::optional<std::string> full = testing::FullMerge(*merge, a, {b, c});
  ASSERT_TRUE(full.has_value());
  const std::string merged = *full;
  EXPECT_EQ(
      Decode(merged, 4),
      (Slices{{0, 1000, 2000}, {3, 3, 7, Bits(1.75), 5, 5, 45, Bits(2.5), 5, 5, 50, 0}, 999, 999}));
  std::string partial;
  ASSERT_TRUE(merge->PartialMergeMulti(rocksdb::Slice("k"), {rocksdb::Slice(b), rocksdb::Slice(c)},
                                       &partial, nullptr));
  EXPECT_EQ(Decode(partial, 4), (Slices{{0, 1000, 2000},
                                        {1, 1, -3ULL, Bits(0.25), 4, 4, 40, Bits(2.5), 5, 5, 50, 0},
                                        1999,
                                        999}));
  // The same merge again on the same thread (its scratch reused) gives the same bytes.
  EXPECT_EQ(testing::FullMerge(*merge, a, {b, c}), merged);
  // Bytes that are not a value fail the merge (RocksDB reports a corruption).
  EXPECT_EQ(testing::FullMerge(*merge, a, {"xy"}), std::nullopt);
}

}  // namespace
}  // namespace tidemark
