#include "runtime/state/key_groups.h"

#include <cstdint>
#include <string>
#include <vector>
#include <xxhash.h>

#include <gtest/gtest.h>

#include "config/job_loader.h"
#include "runtime/graph/job_graph.h"
#include "runtime/graph/job_resources.h"
#include "runtime/io/wakeup.h"
#include "runtime/task/record_writer.h"
#include "tools/engine/engine.h"

namespace tidemark {
namespace {

TEST(KeyGroupsTest, RangesAreFlinksContiguousSplit) {
  EXPECT_EQ(KeyGroupRangeForOperator(128, 1, 0), (KeyGroupRange{0, 127}));
  EXPECT_EQ(KeyGroupRangeForOperator(128, 3, 0), (KeyGroupRange{0, 42}));
  EXPECT_EQ(KeyGroupRangeForOperator(128, 3, 1), (KeyGroupRange{43, 85}));
  EXPECT_EQ(KeyGroupRangeForOperator(128, 3, 2), (KeyGroupRange{86, 127}));
  EXPECT_EQ(KeyGroupRangeForOperator(4, 4, 3), (KeyGroupRange{3, 3}));
  // Every group belongs to exactly the subtask whose range holds it.
  for (int p : {1, 2, 3, 5, 7, 128}) {
    int covered = 0;
    for (int i = 0; i < p; ++i) {
      const KeyGroupRange r = KeyGroupRangeForOperator(128, p, i);
      EXPECT_GE(r.size(), 1);
      covered += r.size();
      for (int kg = r.start; kg <= r.end; ++kg) {
        EXPECT_EQ(OperatorIndexForKeyGroup(128, p, kg), i) << "p=" << p << " kg=" << kg;
      }
    }
    EXPECT_EQ(covered, 128);
  }
}

TEST(KeyGroupsTest, DefaultMaxParallelismFollowsFlink) {
  EXPECT_EQ(DefaultMaxParallelism(1), 128);
  EXPECT_EQ(DefaultMaxParallelism(85), 128);
  EXPECT_EQ(DefaultMaxParallelism(86), 256);
  EXPECT_EQ(DefaultMaxParallelism(1024), 2048);
  EXPECT_EQ(DefaultMaxParallelism(30000), 32768);
}

TEST(KeyGroupsTest, HashIsXxh3OfTheCanonicalBytes) {
  const unsigned char one[9] = {1, 42, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(Int64KeyHash64(42), XXH3_64bits(one, sizeof one));
  EXPECT_EQ(KeyHash64(Key{Value(int64_t{42})}), Int64KeyHash64(42));
  const unsigned char neg[9] = {1, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(Int64KeyHash64(-1), XXH3_64bits(neg, sizeof neg));
  // "ab" then NULL: tag 4, length 2 (little-endian), the bytes; tag 0.
  const char two[] = {4, 2, 0, 0, 0, 'a', 'b', 0};
  EXPECT_EQ(KeyHash64(Key{Value(std::string("ab")), Value()}), XXH3_64bits(two, sizeof two));
  // The row form hashes the same fields without building a key.
  const Row row{Value(1.5), Value(std::string("ab")), Value(true), Value()};
  EXPECT_EQ(KeyHash64(row, {1, 3}), KeyHash64(Key{Value(std::string("ab")), Value()}));
  EXPECT_EQ(KeyHash64(row, {2}), KeyHash64(Key{Value(true)}));
  EXPECT_NE(KeyHash64(Key{Value(int64_t{1})}), KeyHash64(Key{Value(true)}));
  EXPECT_NE(KeyHash64(Key{Value()}), KeyHash64(Key{Value(int64_t{0})}));
  // Pinned: a key's group must not change between versions (state restores by key group).
  EXPECT_EQ(KeyGroupForHash(Int64KeyHash64(0), 128),
            KeyGroupForHash(XXH3_64bits("\1\0\0\0\0\0\0\0", 9), 128));
}

TEST(KeyGroupsTest, Int64HashIsTheLibrarysXxh3OverTheWholeRange) {
  // Int64KeyHash64 forms XXH3's two 8-byte reads in registers; the library hashing the bytes
  // must agree for every bit pattern (small, negative, extreme, every byte position set).
  std::vector<int64_t> values = {0, 1, -1, INT64_MAX, INT64_MIN, 255, 256, -256};
  for (int shift = 0; shift < 64; ++shift) {
    values.push_back(static_cast<int64_t>(uint64_t{1} << shift));
    values.push_back(static_cast<int64_t>(uint64_t{0x9E3779B97F4A7C15} >> shift));
  }
  for (int64_t v = -20000; v < 20000; v += 3) {
    values.push_back(v);
  }
  for (const int64_t v : values) {
    unsigned char bytes[9] = {1};
    for (int i = 0; i < 8; ++i) {
      bytes[1 + i] = static_cast<unsigned char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xFF);
    }
    ASSERT_EQ(Int64KeyHash64(v), XXH3_64bits(bytes, sizeof bytes)) << v;
  }
}

TEST(KeyGroupsTest, StringHashIsTheLibrarysXxh3ForEveryLength) {
  // A one-string key of 4 to 11 bytes is hashed from two reads of the string in registers; the
  // row form must give the library's XXH3 of the canonical bytes for every length around that
  // range and many byte patterns at every position (the reads overlap, shift and join).
  for (size_t n = 0; n <= 40; ++n) {
    for (int variant = 0; variant < 300; ++variant) {
      std::string s(n, '\0');
      for (size_t i = 0; i < n; ++i) {
        const auto k = static_cast<int>(i);
        s[i] = static_cast<char>((variant * 131 + k * 29 + (variant >> 3) * k * k) & 0xFF);
      }
      if (variant == 1) {
        s.assign(n, '\xFF');
      }
      std::string canonical = {'\4', static_cast<char>(n), '\0', '\0', '\0'};
      canonical += s;
      const Row row{Value(s)};
      ASSERT_EQ(KeyHash64(row, {0}), XXH3_64bits(canonical.data(), canonical.size()))
          << "length " << n << " variant " << variant;
      ASSERT_EQ(KeyHash64(row, {0}), KeyHash64(Key{Value(s)})) << "length " << n;
    }
  }
}

TEST(KeyGroupsTest, HashPartitionerSendsAKeyToTheSubtaskOwningItsGroup) {
  Wakeup wakeup;
  std::vector<std::unique_ptr<Channel>> owned;
  std::vector<Channel*> chans;
  for (int i = 0; i < 3; ++i) {
    owned.push_back(std::make_unique<Channel>(64, &wakeup));
    chans.push_back(owned.back().get());
  }
  RecordWriter writer(Partitioning::kHash, chans, {0}, 0, 1, /*max_parallelism=*/16);
  for (int64_t k = 0; k < 200; ++k) {
    StreamRecord r(Row{Value(k)}, 0);
    writer.Emit(r);
    const int want = OperatorIndexForKeyGroup(16, 3, KeyGroupForHash(Int64KeyHash64(k), 16));
    for (int c = 0; c < 3; ++c) {
      const bool got = chans[static_cast<size_t>(c)]->Pop() != nullptr;
      EXPECT_EQ(got, c == want) << "key " << k << " channel " << c;
    }
  }
}

JobSpec Spec(const std::string& pipeline_extra, int window_parallelism,
             const std::string& input = "source") {
  return LoadJobSpecString(R"(
name: t
pipeline:
  clock: virtual
)" + pipeline_extra + R"(
operators:
  - id: source
    type: source
    source:
      type: sequence
      splits:
        - {id: a, start: 0s, step: 100ms, count: 5, fields: {k: a}}
    watermarks: {strategy: bounded-out-of-orderness, max-out-of-orderness: 0s, timestamp-field: ts}
  - id: windows
    type: window
    input: )" + input + R"(
    parallelism: )" + std::to_string(window_parallelism) +
                               R"(
    key-by: [k]
    window: {assigner: tumbling, size: 1s, aggregate: [count]}
  - id: out
    type: sink
    input: windows
    sink: {type: collect}
)",
                           "t.yaml");
}

TEST(KeyGroupsTest, MaxParallelismIsValidated) {
  JobResources resources;
  resources.SetLineWriter([](const std::string&) {});
  EXPECT_EQ(CompileJobGraph(Spec("", 2), BuiltinRegistry(), resources).pipeline.max_parallelism,
            128);
  EXPECT_EQ(CompileJobGraph(Spec("  max-parallelism: 2\n", 2), BuiltinRegistry(), resources)
                .pipeline.max_parallelism,
            2);
  try {
    (void)CompileJobGraph(Spec("  max-parallelism: 2\n", 3), BuiltinRegistry(), resources);
    FAIL() << "no error";
  } catch (const JobCompileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.yaml:5:20: error: pipeline.max-parallelism: 2 is lower than the parallelism 3 of "
              "operator 'windows'; it must be >= every operator's parallelism (it is the number of "
              "key groups)");
  }
  for (const char* bad : {"0", "32769", "many"}) {
    try {
      (void)Spec(std::string("  max-parallelism: ") + bad + "\n", 1);
      FAIL() << "no error for " << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("t.yaml:5:20"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("max-parallelism"), std::string::npos) << e.what();
    }
  }
}

TEST(KeyGroupsTest, AKeyedOperatorWiderThanOneOnlyTakesHashPartitionedInput) {
  JobResources resources;
  resources.SetLineWriter([](const std::string&) {});
  (void)CompileJobGraph(Spec("", 1, "{from: source, partition: rebalance}"), BuiltinRegistry(),
                        resources);
  try {
    (void)CompileJobGraph(Spec("", 2, "{from: source, partition: rebalance}"), BuiltinRegistry(),
                          resources);
    FAIL() << "no error";
  } catch (const JobCompileError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "partition: rebalance into the keyed operator 'windows' (parallelism 2) would "
                  "send a key to a subtask that does not own its key group"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tidemark
