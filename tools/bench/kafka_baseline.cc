#include "tools/bench/kafka_baseline.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string_view>
#include <thread>

#include <fmt/format.h>

#include "runtime/io/kafka_client.h"
#include "tools/bench/file_baseline.h"

namespace tidemark::bench {
namespace {

KafkaHandle MakeBenchConsumer(const std::string& bootstrap_servers, const std::string& group) {
  return MakeKafkaHandle(RD_KAFKA_CONSUMER, MakeKafkaConf({{"bootstrap.servers", bootstrap_servers},
                                                           {"group.id", group},
                                                           {"enable.auto.commit", "false"},
                                                           {"enable.partition.eof", "false"},
                                                           {"log_level", "3"}}));
}

}  // namespace

std::vector<int64_t> KafkaEndOffsets(const std::string& bootstrap_servers, const std::string& topic,
                                     int partitions) {
  KafkaHandle consumer = MakeBenchConsumer(bootstrap_servers, "tidemark-bench-offsets");
  std::vector<int64_t> ends;
  for (int p = 0; p < partitions; ++p) {
    int64_t low = 0;
    int64_t high = 0;
    const rd_kafka_resp_err_t err =
        rd_kafka_query_watermark_offsets(consumer.get(), topic.c_str(), p, &low, &high, 10000);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error(
          fmt::format("{}-{}: cannot read its offsets: {}", topic, p, rd_kafka_err2str(err)));
    }
    if (low != 0) {
      throw std::runtime_error(fmt::format(
          "{}-{}: the mock cluster kept only offsets [{}, {}) of it (it keeps at most about "
          "100,000 records and 5 MB a partition): use more partitions",
          topic, p, low, high));
    }
    ends.push_back(high);
  }
  return ends;
}

KafkaBaselineResult RunKafkaBaseline(const std::vector<SchemaFieldSpec>& schema,
                                     const std::string& bootstrap_servers, const std::string& topic,
                                     const std::vector<int64_t>& expected_ends) {
  JsonValueScan scan(schema);
  const auto start = std::chrono::steady_clock::now();
  KafkaHandle consumer = MakeBenchConsumer(bootstrap_servers, "tidemark-bench-baseline");
  // Where to stop, timed as the source's look-up is: every partition's latest offset in one
  // ListOffsets request (the cheapest a plain consumer has; the source also looks up the earliest
  // ones, beside it).
  std::vector<int64_t> end_offsets;
  {
    KafkaPartitionList list(
        rd_kafka_topic_partition_list_new(static_cast<int>(expected_ends.size())));
    for (size_t p = 0; p < expected_ends.size(); ++p) {
      rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), static_cast<int32_t>(p))
          ->offset = RD_KAFKA_OFFSET_END;  // ListOffsets: timestamp -1 is "latest"
    }
    if (const rd_kafka_resp_err_t err =
            rd_kafka_offsets_for_times(consumer.get(), list.get(), 10000)) {
      throw std::runtime_error(
          fmt::format("{}: cannot read its end offsets: {}", topic, rd_kafka_err2str(err)));
    }
    for (int i = 0; i < list->cnt; ++i) {
      const rd_kafka_topic_partition_t& e = list->elems[i];
      const int64_t expected = expected_ends[static_cast<size_t>(e.partition)];
      if (e.err != RD_KAFKA_RESP_ERR_NO_ERROR || e.offset != expected) {
        throw std::runtime_error(fmt::format("{}-{}: end offset {} ({}), expected {}", topic,
                                             e.partition, e.offset, rd_kafka_err2str(e.err),
                                             expected));
      }
      end_offsets.push_back(e.offset);  // the list keeps the order it was given
    }
  }
  // One queue per partition, forwarded nowhere, as the source reads (through the consumer's
  // one queue librdkafka delivers 10^6 records from the mock 2-3 times slower). Made before the
  // assignment, as the source does: records fetched before a partition's queue stopped
  // forwarding would land in the consumer's queue, which nothing reads, and the loop below
  // would wait for them until its 30 s limit (seen once in bench_smoke under load).
  std::vector<KafkaQueue> queues;
  std::vector<bool> done;
  for (size_t p = 0; p < end_offsets.size(); ++p) {
    queues.emplace_back(
        rd_kafka_queue_get_partition(consumer.get(), topic.c_str(), static_cast<int32_t>(p)));
    rd_kafka_queue_forward(queues.back().get(), nullptr);
    done.push_back(end_offsets[p] <= 0);
  }
  size_t open = 0;
  {
    KafkaPartitionList list(
        rd_kafka_topic_partition_list_new(static_cast<int>(end_offsets.size())));
    for (size_t p = 0; p < end_offsets.size(); ++p) {
      if (end_offsets[p] > 0) {
        rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), static_cast<int32_t>(p))
            ->offset = 0;  // KafkaEndOffsets checked that every partition starts there
        ++open;
      }
    }
    if (const rd_kafka_resp_err_t err = rd_kafka_assign(consumer.get(), list.get())) {
      throw std::runtime_error(fmt::format("{}: cannot assign: {}", topic, rd_kafka_err2str(err)));
    }
  }
  std::vector<rd_kafka_message_t*> batch(1024);
  auto last_progress = std::chrono::steady_clock::now();
  while (open > 0) {
    ssize_t total = 0;
    for (size_t p = 0; p < queues.size(); ++p) {
      if (done[p]) {
        continue;
      }
      const ssize_t got =
          rd_kafka_consume_batch_queue(queues[p].get(), 0, batch.data(), batch.size());
      std::string failure;
      for (ssize_t i = 0; i < got; ++i) {
        rd_kafka_message_t* m = batch[static_cast<size_t>(i)];
        if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
          if (failure.empty()) {
            failure = fmt::format("{}-{}: {}", topic, p, rd_kafka_err2str(m->err));
          }
        } else {
          scan.Add(std::string_view(static_cast<const char*>(m->payload), m->payload ? m->len : 0));
          if (m->offset + 1 >= end_offsets[p] && !done[p]) {
            done[p] = true;
            --open;
          }
        }
        rd_kafka_message_destroy(m);
      }
      if (!failure.empty()) {
        throw std::runtime_error(failure);
      }
      total += std::max<ssize_t>(got, 0);
    }
    const auto now = std::chrono::steady_clock::now();
    if (total > 0) {
      last_progress = now;
    } else if (now - last_progress > std::chrono::seconds(30)) {
      throw std::runtime_error(
          fmt::format("{}: no record for 30 s, {} partitions unfinished", topic, open));
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));  // nothing fetched yet
    }
  }
  queues.clear();  // before the consumer closes
  KafkaBaselineResult out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.records = scan.records();
  out.errors = scan.errors();
  out.sink_records = scan.records();
  out.checksum = scan.checksum();
  rd_kafka_assign(consumer.get(), nullptr);
  return out;
}

}  // namespace tidemark::bench
