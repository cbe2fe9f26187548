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

// Every record of a channel element, in order: its hand-built records, then its wire batch's.
std::vector<StreamRecord> Decoded(const StreamElement& e) {
  std::vector<StreamRecord> out = e.records;
  std::vector<StreamRecord> wire(e.wire.size());
  e.wire.Decode(0, wire.size(), wire.data());
  out.insert(out.end(), wire.begin(), wire.end());
  return out;
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
    for (const auto& r : Decoded(*e)) {
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
      for (const auto& r : Decoded(*e)) {
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
    seen.push_back(Decoded(*e)[0].timestamp);
    (void)writer.TryDrain();
  }
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_FALSE(writer.HasQueued());
}

TEST(ChannelTest, WriterEmitBatchCopiesRecordsInOrderAndLeavesThemToTheCaller) {
  // RecordWriter::EmitBatch over one channel: the records arrive in order with their values and
  // timestamps, in a full batch at once and then in a partial one behind a single record; the
  // caller's records are copied, never taken, and a recycled batch is refilled.
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
  const std::vector<StreamRecord> got = Decoded(*first);
  ASSERT_EQ(got.size(), 4u);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(got[static_cast<size_t>(i)].row, (Row{Value{i}, Value{i * 0.5}}));
    EXPECT_EQ(got[static_cast<size_t>(i)].timestamp, 100 + i);
    EXPECT_EQ(records[static_cast<size_t>(i)].row, (Row{Value{i}, Value{i * 0.5}}));  // kept
  }
  const StreamElement* const recycled = first.get();
  ch.Recycle(std::move(first));
  StreamRecord single(Row{Value{int64_t{9}}, Value{9.5}}, 9);
  writer.Emit(single);
  for (int64_t i = 0; i < 4; ++i) {
    records[static_cast<size_t>(i)] = StreamRecord(Row{Value{10 + i}, Value{-1.0}}, 200 + i);
  }
  tidemark::RecordBatch second_batch{pointers.data(), 4};
  writer.EmitBatch(second_batch);  // fills the batch behind `single`, then a partial one of 1
  writer.FlushBatches();
  auto second = ch.Pop();
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second.get(), recycled);  // the recycled batch, refilled
  auto third = ch.Pop();
  ASSERT_NE(third, nullptr);
  std::vector<StreamRecord> rest = Decoded(*second);
  for (StreamRecord& r : Decoded(*third)) {
    rest.push_back(std::move(r));
  }
  ASSERT_EQ(rest.size(), 5u);
  EXPECT_EQ(rest[0].row, (Row{Value{int64_t{9}}, Value{9.5}}));
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(rest[static_cast<size_t>(i) + 1].row, (Row{Value{10 + i}, Value{-1.0}}));
    EXPECT_EQ(rest[static_cast<size_t>(i) + 1].timestamp, 200 + i);
  }
  EXPECT_EQ(third->wire.size(), 1u);
  EXPECT_EQ(writer.records_out(), 9);
}

TEST(ChannelTest, WireBatchCarriesNullsStringsTimestampsAndLayoutChangesExactly) {
  // Strings (empty, long, repeated), NULLs of every type, a record without a timestamp and one
  // with Long.MIN as its timestamp, and rows of another layout in the middle: every record comes
  // out as it went in, in order, however the writer cuts the batches.
  Wakeup consumer;
  Channel ch(64, &consumer);
  RecordWriter writer(Partitioning::kForward, {&ch}, {}, 0, /*batch_size=*/3);
  const RowLayout* layout =
      RowLayout::Of({FieldType::kInt64, FieldType::kString, FieldType::kDouble});
  const Value null;
  std::vector<StreamRecord> in;
  in.emplace_back(Row::Of(layout, {int64_t{1}, std::string("a"), 1.5}), 10);
  in.emplace_back(Row::Of(layout, {int64_t{2}, std::string(300, 'x'), null}), 11);
  in.emplace_back(Row::Of(layout, {null, std::string(), -2.0}));  // no timestamp
  in.emplace_back(Row::Of(layout, {int64_t{4}, null, 2.5}), kMinTimestamp);
  in.emplace_back(Row{Value{true}, Value{int64_t{5}}}, 14);  // another layout
  in.emplace_back(Row::Of(layout, {int64_t{6}, std::string("zz"), 6.5}), 15);
  in.emplace_back(Row::Of(layout, {int64_t{7}, std::string("zz"), 7.5}), 16);
  std::vector<StreamRecord*> pointers;
  for (auto& r : in) {
    pointers.push_back(&r);
  }
  tidemark::RecordBatch batch{pointers.data(), 4};
  writer.EmitBatch(batch);
  for (size_t i = 4; i < in.size(); ++i) {
    writer.Emit(in[i]);
  }
  writer.FlushBatches();
  std::vector<StreamRecord> out;
  std::vector<size_t> batch_sizes;
  while (auto e = ch.Pop()) {
    const std::vector<StreamRecord> got = Decoded(*e);
    batch_sizes.push_back(got.size());
    out.insert(out.end(), got.begin(), got.end());
  }
  // 3 | 1 (the layout changes) | 1 (back) | 2.
  EXPECT_EQ(batch_sizes, (std::vector<size_t>{3, 1, 1, 2}));
  ASSERT_EQ(out.size(), in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].row, in[i].row) << i;
    EXPECT_EQ(out[i].row.layout_ptr(), in[i].row.layout_ptr()) << i;
    EXPECT_EQ(out[i].timestamp, in[i].timestamp) << i;
    EXPECT_EQ(out[i].has_timestamp, in[i].has_timestamp) << i;
  }
  EXPECT_TRUE(out[1].row.IsNull(2));
  EXPECT_EQ(out[1].row.GetString(1).size(), 300u);
  EXPECT_TRUE(out[2].row.IsNull(0));
  EXPECT_FALSE(out[2].has_timestamp);
  EXPECT_TRUE(out[3].has_timestamp);
  EXPECT_EQ(out[3].timestamp, kMinTimestamp);
}

}  // namespace
}  // namespace tidemark
