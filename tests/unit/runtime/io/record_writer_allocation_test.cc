// RecordWriter with partial batches (a paced source flushes whatever it has at every pause): a
// recycled batch keeps its wire buffers and the consumer decodes into rows it reuses, so steady
// state allocates nothing per record on either side. A global operator new counter over 100 and
// 1,000 rounds of the same pattern: any allocation per record or per round shows as a difference.

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/row.h"
#include "runtime/io/channel.h"
#include "runtime/task/record_writer.h"
#include "tests/testing/counting_allocator.h"

namespace tidemark {
namespace {

struct Rounds {
  int64_t allocations = 0;
  int64_t records = 0;
  int64_t sum = 0;
};

// A source's pool of 8 records: each round fills `sizes[round % 3]` of them (rows reused when
// they still have the layout, as the generator does), emits them as one partial batch, flushes;
// the consumer reads the batch and gives it back.
Rounds RunRounds(int rounds) {
  const RowLayout* layout = RowLayout::Of({FieldType::kInt64, FieldType::kInt64});
  Wakeup consumer;
  Channel ch(16, &consumer);
  RecordWriter writer(Partitioning::kForward, {&ch}, {}, 0, /*batch_size=*/8);
  std::vector<StreamRecord> pool(8);
  std::vector<StreamRecord*> pointers;
  std::vector<StreamRecord> decoded(8);  // the consumer's rows, reused as a task reuses them
  const size_t sizes[] = {3, 7, 5};
  Rounds out;
  int64_t next = 0;
  auto round = [&](int r) {
    const size_t n = sizes[r % 3];
    pointers.clear();
    for (size_t i = 0; i < n; ++i) {
      Row& row = pool[i].row;
      if (row.layout_ptr() != layout) {
        row.Reset(layout);
      }
      row.SetInt64(0, next);
      row.SetInt64(1, next * 2);
      pool[i].SetTimestamp(next);
      ++next;
      pointers.push_back(&pool[i]);
    }
    RecordBatch batch{pointers.data(), n, &pool};
    writer.EmitBatch(batch);
    writer.FlushBatches();
    auto element = ch.Pop();
    ASSERT_NE(element, nullptr);
    ASSERT_EQ(element->wire.size(), n);
    element->wire.Decode(0, n, decoded.data());
    for (size_t i = 0; i < n; ++i) {
      out.sum += decoded[i].row.GetInt64(0) + decoded[i].row.GetInt64(1);
      ++out.records;
    }
    ch.Recycle(std::move(element));
  };
  for (int r = 0; r < 10; ++r) {  // warm-up: the pool, the batches and the spare slots
    round(r);
  }
  out = Rounds{};
  const int64_t before = testing::AllocationCount();
  for (int r = 10; r < 10 + rounds; ++r) {
    round(r);
  }
  out.allocations = testing::AllocationCount() - before;
  return out;
}

TEST(RecordWriterAllocationTest, PartialBatchesAllocateNothingPerRecordInSteadyState) {
  const Rounds small = RunRounds(100);
  const Rounds large = RunRounds(1000);
  // Rounds 10.. (after 10 warm-up rounds, which wrote 48 records): 34 of 7, 33 of 5, 33 of 3.
  EXPECT_EQ(small.records, 502);
  EXPECT_EQ(large.records, 5002);
  // Each record r (r = 48, 49, ...) carries r and 2r.
  EXPECT_EQ(small.sum, 449541);
  EXPECT_EQ(large.sum, 38242791);
  EXPECT_EQ(small.allocations, large.allocations);
  EXPECT_EQ(large.allocations, 0);
}

}  // namespace
}  // namespace tidemark
