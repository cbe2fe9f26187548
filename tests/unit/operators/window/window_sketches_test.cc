// The fixed-memory sketches of approx-count-distinct (HyperLogLog) and approx-percentile
// (t-digest): their error on 100,000 values against the exact answer, merging, and snapshots.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "operators/window/sketches.h"
#include "runtime/core/errors.h"

namespace tidemark {
namespace {

uint64_t HashOf(int64_t v) {
  return HyperLogLog::HashBytes(std::string_view(reinterpret_cast<const char*>(&v), sizeof v));
}

// A fixed pseudo-random sequence (a 64-bit LCG), the same on every machine.
class Lcg {
 public:
  double NextUnit() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<double>(state_ >> 11) / static_cast<double>(uint64_t{1} << 53);
  }

 private:
  uint64_t state_ = 42;
};

TEST(HyperLogLogTest, SmallSetsAreNearExactAndLargeOnesWithinTheStandardError) {
  HyperLogLog hll;
  EXPECT_EQ(hll.Estimate(), 0);
  EXPECT_EQ(hll.bytes(), 0u);
  for (int64_t i = 0; i < 100; ++i) {
    hll.AddHash(HashOf(i));
    hll.AddHash(HashOf(i));  // duplicates do not count
  }
  EXPECT_NEAR(hll.Estimate(), 100, 1);  // linear counting: within a value or so
  EXPECT_EQ(hll.bytes(), 4096u);        // fixed, whatever is added
  for (int64_t n : {1000, 10000, 100000, 1000000}) {
    HyperLogLog h;
    for (int64_t i = 0; i < n; ++i) {
      h.AddHash(HashOf(i * 7919));
    }
    const double error = std::abs(static_cast<double>(h.Estimate() - n)) / static_cast<double>(n);
    // 1.04 / sqrt(4096) = 1.6 % standard error; 3 standard errors.
    EXPECT_LT(error, 0.049) << n << " distinct, estimate " << h.Estimate();
    EXPECT_EQ(h.bytes(), 4096u);
  }
}

TEST(HyperLogLogTest, MergeEqualsTheSketchOfTheUnionAndSnapshotsRoundTrip) {
  HyperLogLog a;
  HyperLogLog b;
  HyperLogLog all;
  for (int64_t i = 0; i < 20000; ++i) {
    (i % 3 == 0 ? a : b).AddHash(HashOf(i));
    all.AddHash(HashOf(i));
  }
  a.Merge(b);
  EXPECT_EQ(a.Estimate(), all.Estimate());
  StateWriter w;
  a.Write(w);
  HyperLogLog restored;
  StateReader r(w.bytes());
  restored.Read(r);
  EXPECT_EQ(restored.Estimate(), all.Estimate());

  StateWriter bad;
  bad.WriteString("xyz");
  StateReader br(bad.bytes());
  EXPECT_THROW(restored.Read(br), StateCorrupt);
}

// The rank error of `q` at `p` among `sorted` values: |rank(q) / n - p|.
double RankError(const std::vector<double>& sorted, double q, double p) {
  const auto below = std::lower_bound(sorted.begin(), sorted.end(), q) - sorted.begin();
  return std::abs(static_cast<double>(below) / static_cast<double>(sorted.size()) - p);
}

TEST(TDigestTest, SmallInputsGiveTheExactPercentile) {
  TDigest d;
  EXPECT_TRUE(std::isnan(d.Quantile(0.5)));
  for (double x : {10.0, 0.0, 10.0}) {
    d.Add(x);
  }
  EXPECT_DOUBLE_EQ(d.Quantile(0.3), 6.0);  // Flink's PERCENTILE example
  EXPECT_DOUBLE_EQ(d.Quantile(0.0), 0.0);
  EXPECT_DOUBLE_EQ(d.Quantile(1.0), 10.0);
}

TEST(TDigestTest, RankErrorOnAHundredThousandValuesAndBoundedSize) {
  for (bool skewed : {false, true}) {
    Lcg rng;
    TDigest d;
    std::vector<double> values;
    for (int i = 0; i < 100000; ++i) {
      const double u = rng.NextUnit();
      const double x = skewed ? -std::log(1 - u) * 30 : u * 1000;  // exponential, uniform
      d.Add(x);
      values.push_back(x);
    }
    std::sort(values.begin(), values.end());
    EXPECT_LT(RankError(values, d.Quantile(0.5), 0.5), 0.005) << "skewed " << skewed;
    EXPECT_LT(RankError(values, d.Quantile(0.01), 0.01), 0.001) << "skewed " << skewed;
    EXPECT_LT(RankError(values, d.Quantile(0.99), 0.99), 0.001) << "skewed " << skewed;
    EXPECT_DOUBLE_EQ(d.Quantile(0), values.front());
    EXPECT_DOUBLE_EQ(d.Quantile(1), values.back());
    // ~100 centroids and at most 500 buffered: bounded whatever the input.
    EXPECT_LT(d.bytes(), 16u * 700u);
  }
}

TEST(TDigestTest, MergedDigestsAndSnapshots) {
  Lcg rng;
  TDigest a;
  TDigest b;
  std::vector<double> values;
  for (int i = 0; i < 50000; ++i) {
    const double x = rng.NextUnit() * 100;
    (i % 2 == 0 ? a : b).Add(x);
    values.push_back(x);
  }
  a.Merge(b);
  EXPECT_EQ(a.count(), 50000);
  std::sort(values.begin(), values.end());
  EXPECT_LT(RankError(values, a.Quantile(0.9), 0.9), 0.005);
  StateWriter w;
  a.Write(w);
  TDigest restored;
  StateReader r(w.bytes());
  restored.Read(r);
  EXPECT_DOUBLE_EQ(restored.Quantile(0.9), a.Quantile(0.9));
}

}  // namespace
}  // namespace tidemark
