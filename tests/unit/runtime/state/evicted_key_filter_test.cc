// EvictedKeyFilter (runtime/state/evicted_key_filter.h): no false negatives while a key's drop
// time is live, few false positives, filters freed once their drop time has passed.

#include "runtime/state/evicted_key_filter.h"

#include <cstdint>
#include <xxhash.h>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

uint64_t Hash(int64_t key) {
  return XXH3_64bits(&key, sizeof key);
}

TEST(EvictedKeyFilterTest, EveryAddedKeyMayBeThereAndFewOthersAre) {
  EvictedKeyFilter filter;
  constexpr int64_t kAdded = 300000;  // several segments (65,536 keys, then 4x)
  for (int64_t k = 0; k < kAdded; ++k) {
    filter.Add(1000, Hash(k));
  }
  for (int64_t k = 0; k < kAdded; ++k) {
    ASSERT_TRUE(filter.MayContain(Hash(k), 999)) << k;
  }
  int64_t false_positives = 0;
  for (int64_t k = kAdded; k < 2 * kAdded; ++k) {
    false_positives += filter.MayContain(Hash(k), 999) ? 1 : 0;
  }
  EXPECT_LT(false_positives, kAdded / 50);  // under 2%
  EXPECT_GT(filter.bytes(), size_t{0});
}

TEST(EvictedKeyFilterTest, AKeyIsForgottenOnceItsDropTimeHasPassed) {
  EvictedKeyFilter filter;
  filter.Add(1000, Hash(1));
  filter.Add(2000, Hash(2));
  EXPECT_TRUE(filter.MayContain(Hash(1), 999));
  EXPECT_TRUE(filter.MayContain(Hash(2), 999));
  EXPECT_FALSE(filter.MayContain(Hash(1), 1000));  // dead at its drop time
  EXPECT_TRUE(filter.MayContain(Hash(2), 1000));
  EXPECT_FALSE(filter.MayContain(Hash(1), 999));  // freed: a later read never rewinds time
  EXPECT_FALSE(filter.MayContain(Hash(2), 2000));
  EXPECT_EQ(filter.bytes(), size_t{0});
  filter.Add(3000, Hash(3));
  filter.Clear();
  EXPECT_FALSE(filter.MayContain(Hash(3), 0));
}

TEST(EvictedKeyFilterTest, BeyondTheMaximumDropTimesKeysAreKeptLongerNeverShorter) {
  EvictedKeyFilter filter;
  const auto n = static_cast<int64_t>(EvictedKeyFilter::kMaxDropTimes);
  for (int64_t i = 0; i < n; ++i) {
    filter.Add(100 * (i + 1), Hash(i));  // drop times 100, 200, ..., 1600 (full)
  }
  filter.Add(150, Hash(1000));   // into 200's filter
  filter.Add(5000, Hash(1001));  // into the latest, which now drops at 5000
  filter.Add(1650, Hash(1002));  // also the latest
  EXPECT_TRUE(filter.MayContain(Hash(1000), 149));
  EXPECT_TRUE(filter.MayContain(Hash(1000), 199));
  EXPECT_TRUE(filter.MayContain(Hash(n - 1), 4999));  // 1600's key, kept until 5000
  EXPECT_TRUE(filter.MayContain(Hash(1001), 4999));
  EXPECT_TRUE(filter.MayContain(Hash(1002), 4999));
  EXPECT_FALSE(filter.MayContain(Hash(1000), 4999));
  EXPECT_FALSE(filter.MayContain(Hash(1001), 5000));
}

}  // namespace
}  // namespace tidemark
