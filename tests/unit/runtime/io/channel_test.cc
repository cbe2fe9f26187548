#include "runtime/io/channel.h"

#include <thread>

#include <gtest/gtest.h>

#include "runtime/task/record_writer.h"

namespace tidemark {
namespace {

std::unique_ptr<StreamElement> RecordBatch(int64_t first, int n) {
  auto e = std::make_unique<StreamElement>();
  for (int i = 0; i < n; ++i) {
    e->records.emplace_back(Row{Value{first + i}}, first + i);
  }
  return e;
}

TEST(ChannelTest, KeepsOrderAndReportsFull) {
  Wakeup consumer;
  Channel ch(2, &consumer);
  auto a = RecordBatch(0, 1);
  auto b = StreamElement::OfWatermark(Watermark{5});
  auto c = RecordBatch(7, 1);
  ASSERT_TRUE(ch.TryPush(a));
  ASSERT_TRUE(ch.TryPush(b));
  EXPECT_FALSE(ch.TryPush(c));
  ASSERT_NE(c, nullptr) << "a rejected element stays with the producer";
  auto x = ch.Pop();
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->kind, StreamElement::Kind::kRecords);
  EXPECT_EQ(x->records[0].timestamp, 0);
  auto y = ch.Pop();
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->kind, StreamElement::Kind::kWatermark);
  EXPECT_EQ(y->watermark.timestamp, 5);
  EXPECT_EQ(ch.Pop(), nullptr);
}

TEST(ChannelTest, PopWakesAWaitingProducer) {
  Wakeup consumer;
  Wakeup producer;
  Channel ch(1, &consumer);
  ch.SetProducerWakeup(&producer);
  auto a = RecordBatch(0, 1);
  ASSERT_TRUE(ch.TryPush(a));
  ch.SetProducerWaiting();
  producer.Clear();
  std::thread t([&] { EXPECT_NE(ch.Pop(), nullptr); });
  producer.Wait();  // returns only because the pop signalled
  t.join();
  auto b = RecordBatch(1, 1);
  EXPECT_TRUE(ch.TryPush(b));
}

TEST(ChannelTest, WakesAWaitingProducerOnceHalfTheChannelIsFree) {
  Wakeup consumer;
  Wakeup producer;
  Channel ch(4, &consumer);
  ch.SetProducerWakeup(&producer);
  for (int i = 0; i < 4; ++i) {
    auto e = RecordBatch(i, 1);
    ASSERT_TRUE(ch.TryPush(e));
  }
  ch.SetProducerWaiting();
  producer.Clear();
  ASSERT_NE(ch.Pop(), nullptr);  // 3 of 4 left: the producer sleeps on
  EXPECT_FALSE(producer.WaitFor(std::chrono::nanoseconds(0)));
  ASSERT_NE(ch.Pop(), nullptr);  // 2 of 4 left: wake it to refill
  EXPECT_TRUE(producer.WaitFor(std::chrono::nanoseconds(0)));
  ASSERT_NE(ch.Pop(), nullptr);  // no longer waiting: no further signal
  EXPECT_FALSE(producer.WaitFor(std::chrono::nanoseconds(0)));
}

// Two threads, a small channel and many batches: every record arrives once, in order.
TEST(ChannelTest, TransfersEverythingInOrderAcrossThreads) {
  Wakeup consumer;
  Wakeup producer;
  Channel ch(4, &consumer);
  ch.SetProducerWakeup(&producer);
  constexpr int kBatches = 2000;
  std::thread prod([&] {
    for (int i = 0; i < kBatches; ++i) {
      auto e = RecordBatch(i * 3, 3);
      while (!ch.TryPush(e)) {
        ch.SetProducerWaiting();
        if (ch.TryPush(e)) {
          break;
        }
        producer.WaitFor(std::chrono::milliseconds(10));
      }
    }
    auto end = StreamElement::OfEndOfInput();
    while (!ch.TryPush(end)) {
      producer.WaitFor(std::chrono::milliseconds(1));
    }
  });
  int64_t expected = 0;
  bool done = false;
  while (!done) {
    auto e = ch.Pop();
    if (!e) {
      consumer.WaitFor(std::chrono::milliseconds(10));
      continue;
    }
    if (e->kind == StreamElement::Kind::kEndOfInput) {
      done = true;
      continue;
    }
    for (const auto& r : e->records) {
      ASSERT_EQ(r.timestamp, expected);
      ++expected;
    }
  }
  prod.join();
  EXPECT_EQ(expected, kBatches * 3);
}

TEST(RecordWriterTest, HashPartitioningSendsEqualKeysToOneChannel) {
  Wakeup consumer;
  Channel c0(64, &consumer);
  Channel c1(64, &consumer);
  RecordWriter writer(Partitioning::kHash, {&c0, &c1}, {0}, 0, 4);
  for (int i = 0; i < 40; ++i) {
    StreamRecord r(Row{Value{int64_t{i % 5}}}, i);
    writer.Emit(r);
  }
  writer.Broadcast(*StreamElement::OfWatermark(Watermark{100}));
  ASSERT_TRUE(writer.TryDrain());
  std::map<int64_t, std::set<int>> channels_of_key;
  int records = 0;
  int watermarks = 0;
  for (int c = 0; c < 2; ++c) {
    Channel& ch = c == 0 ? c0 : c1;
    while (auto e = ch.Pop()) {
      if (e->kind == StreamElement::Kind::kWatermark) {
        ++watermarks;
        EXPECT_EQ(ch.Pop(), nullptr) << "the watermark comes after every record of the channel";
        break;
      }
      for (const auto& r : e->records) {
        channels_of_key[std::get<int64_t>(r.row.Get(0))].insert(c);
        ++records;
      }
    }
  }
  EXPECT_EQ(records, 40);
  EXPECT_EQ(watermarks, 2) << "watermarks go to every channel";
  ASSERT_EQ(channels_of_key.size(), 5u);
  for (const auto& [key, chans] : channels_of_key) {
    EXPECT_EQ(chans.size(), 1u) << "key " << key;
  }
}

TEST(RecordWriterTest, FullChannelQueuesInsteadOfBlocking) {
  Wakeup consumer;
  Channel ch(1, &consumer);
  RecordWriter writer(Partitioning::kForward, {&ch}, {}, 0, 1);
  for (int i = 0; i < 3; ++i) {
    StreamRecord r(Row{Value{int64_t{i}}}, i);
    writer.Emit(r);
  }
  EXPECT_TRUE(writer.HasQueued());
  EXPECT_FALSE(writer.TryDrain());
  std::vector<int64_t> seen;
  while (seen.size() < 3) {
    auto e = ch.Pop();
    ASSERT_NE(e, nullptr);
    seen.push_back(e->records[0].timestamp);
    (void)writer.TryDrain();
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_FALSE(writer.HasQueued());
}

TEST(ChannelTest, WriterEmitBatchSwapsRowsIntoRecycledSlotsInOrder) {
  // RecordWriter::EmitBatch over one channel: the records arrive in order with their values and
  // timestamps; into a recycled batch they go by swapping row buffers (the caller's record gets
  // the slot's old buffer, of the same width), into a fresh one by a move.
  Wakeup consumer;
  Channel ch(8, &consumer);
  RecordWriter writer(Partitioning::kForward, {&ch}, {}, 0, /*batch_size=*/4);
  std::vector<StreamRecord> records;
  for (int64_t i = 0; i < 4; ++i) {
    records.emplace_back(Row{Value{i}, Value{i * 0.5}}, 100 + i);
  }
  std::vector<StreamRecord*> pointers;
  for (auto& r : records) {
    pointers.push_back(&r);
  }
  tidemark::RecordBatch batch{pointers.data(), pointers.size()};
  writer.EmitBatch(batch);  // a full batch: pushed at once
  auto first = ch.Pop();
  ASSERT_NE(first, nullptr);
  ASSERT_EQ(first->records.size(), 4u);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(first->records[static_cast<size_t>(i)].row, (Row{Value{i}, Value{i * 0.5}}));
    EXPECT_EQ(first->records[static_cast<size_t>(i)].timestamp, 100 + i);
  }
  ch.Recycle(std::move(first));
  // The next batch reuses the recycled slots: the callers' records get the old rows back.
  for (int64_t i = 0; i < 4; ++i) {
    records[static_cast<size_t>(i)] = StreamRecord(Row{Value{10 + i}, Value{-1.0}}, 200 + i);
  }
  for (size_t i = 0; i < records.size(); ++i) {
    pointers[i] = &records[i];
  }
  tidemark::RecordBatch second_batch{pointers.data(), 3};
  writer.EmitBatch(second_batch);
  writer.FlushBatches();  // a partial batch of 3
  auto second = ch.Pop();
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(second->records.size(), 3u);
  for (int64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(second->records[static_cast<size_t>(i)].row, (Row{Value{10 + i}, Value{-1.0}}));
    EXPECT_EQ(second->records[static_cast<size_t>(i)].timestamp, 200 + i);
    EXPECT_EQ(records[static_cast<size_t>(i)].row,
              (Row{Value{i}, Value{i * 0.5}}));  // swapped back
  }
  EXPECT_EQ(writer.records_out(), 7);
}

TEST(ChannelTest, WriterEmitBatchHandsAWholeStorageVectorOverAndReturnsARecycledOne) {
  // A full batch that is exactly its caller's vector, in order (RecordBatch::storage), goes out as
  // that vector; the caller gets the recycled batch's records (as many) in exchange. A batch that
  // is not all of its vector in order, or that joins a partial batch, goes record by record.
  Wakeup consumer;
  Channel ch(8, &consumer);
  RecordWriter writer(Partitioning::kForward, {&ch}, {}, 0, /*batch_size=*/4);
  auto fill = [](std::vector<StreamRecord>& v, int64_t base) {
    v.clear();
    for (int64_t i = 0; i < 4; ++i) {
      v.emplace_back(Row{Value{base + i}}, base + i);
    }
  };
  auto pointers_of = [](std::vector<StreamRecord>& v) {
    std::vector<StreamRecord*> p;
    for (auto& r : v) {
      p.push_back(&r);
    }
    return p;
  };
  std::vector<StreamRecord> storage;
  fill(storage, 0);
  const StreamRecord* const first_data = storage.data();
  auto pointers = pointers_of(storage);
  tidemark::RecordBatch batch{pointers.data(), pointers.size(), &storage};
  writer.EmitBatch(batch);
  auto first = ch.Pop();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->records.data(), first_data);  // the vector itself, not copies
  ASSERT_EQ(first->records.size(), 4u);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(first->records[static_cast<size_t>(i)].row, (Row{Value{i}}));
    EXPECT_EQ(first->records[static_cast<size_t>(i)].timestamp, i);
  }
  EXPECT_EQ(storage.size(), 4u);  // a new batch's records in exchange: as many, rows to overwrite
  ch.Recycle(std::move(first));

  // Next round: the caller's vector is swapped with the recycled one, which it gets back.
  fill(storage, 10);
  pointers = pointers_of(storage);
  tidemark::RecordBatch second_batch{pointers.data(), pointers.size(), &storage};
  writer.EmitBatch(second_batch);
  EXPECT_EQ(storage.data(), first_data);
  auto second = ch.Pop();
  ASSERT_NE(second, nullptr);
  ASSERT_EQ(second->records.size(), 4u);
  EXPECT_EQ(second->records[3].row, (Row{Value{13}}));

  // Out of order (a filter that kept everything but reordered): records go one by one, in the
  // batch's order, and the caller's vector stays its own.
  fill(storage, 20);
  const StreamRecord* const third_data = storage.data();
  pointers = pointers_of(storage);
  std::swap(pointers[0], pointers[1]);
  tidemark::RecordBatch third_batch{pointers.data(), pointers.size(), &storage};
  writer.EmitBatch(third_batch);
  EXPECT_EQ(storage.data(), third_data);
  auto third = ch.Pop();
  ASSERT_NE(third, nullptr);
  ASSERT_EQ(third->records.size(), 4u);
  EXPECT_EQ(third->records[0].row, (Row{Value{21}}));
  EXPECT_EQ(third->records[1].row, (Row{Value{20}}));

  // Behind a partial batch: appended record by record after it, order kept.
  StreamRecord single(Row{Value{int64_t{30}}}, 30);
  StreamRecord* single_pointer = &single;
  tidemark::RecordBatch one{&single_pointer, 1};
  writer.EmitBatch(one);
  fill(storage, 31);
  pointers = pointers_of(storage);
  tidemark::RecordBatch fourth_batch{pointers.data(), pointers.size(), &storage};
  writer.EmitBatch(fourth_batch);
  writer.FlushBatches();
  std::vector<int64_t> seen;
  while (auto e = ch.Pop()) {
    for (auto& r : e->records) {
      seen.push_back(r.timestamp);
    }
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{30, 31, 32, 33, 34}));
  EXPECT_EQ(writer.records_out(), 17);
}

}  // namespace
}  // namespace tidemark
