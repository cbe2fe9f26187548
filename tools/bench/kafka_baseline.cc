#include "tools/bench/kafka_baseline.h"

#include <chrono>
#include <stdexcept>
#include <string_view>

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
          "{}-{}: the mock cluster kept only offsets [{}, {}) of it (it keeps about 100,000 "
          "records and 5 MB a partition): use more partitions",
          topic, p, low, high));
    }
    ends.push_back(high);
  }
  return ends;
}

KafkaBaselineResult RunKafkaBaseline(const std::vector<SchemaFieldSpec>& schema,
                                     const std::string& bootstrap_servers, const std::string& topic,
                                     const std::vector<int64_t>& end_offsets) {
  JsonValueScan scan(schema);
  const auto start = std::chrono::steady_clock::now();
  KafkaHandle consumer = MakeBenchConsumer(bootstrap_servers, "tidemark-bench-baseline");
  size_t open = 0;
  {
    KafkaPartitionList list(rd_kafka_topic_partition_list_new(static_cast<int>(end_offsets.size())));
    for (size_t p = 0; p < end_offsets.size(); ++p) {
      if (end_offsets[p] > 0) {
        rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), static_cast<int32_t>(p))->offset =
            0;  // KafkaEndOffsets checked that every partition starts there
        ++open;
      }
    }
    if (const rd_kafka_resp_err_t err = rd_kafka_assign(consumer.get(), list.get())) {
      throw std::runtime_error(fmt::format("{}: cannot assign: {}", topic, rd_kafka_err2str(err)));
    }
  }
  KafkaQueue queue(rd_kafka_queue_get_consumer(consumer.get()));
  std::vector<rd_kafka_message_t*> batch(1024);
  auto last_progress = std::chrono::steady_clock::now();
  while (open > 0) {
    const ssize_t got = rd_kafka_consume_batch_queue(queue.get(), 100, batch.data(), batch.size());
    std::string failure;
    for (ssize_t i = 0; i < got; ++i) {
      rd_kafka_message_t* m = batch[static_cast<size_t>(i)];
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (failure.empty()) {
          failure = fmt::format("{}-{}: {}", topic, m->partition, rd_kafka_err2str(m->err));
        }
      } else {
        scan.Add(std::string_view(static_cast<const char*>(m->payload), m->payload ? m->len : 0));
        const auto p = static_cast<size_t>(m->partition);
        if (p < end_offsets.size() && m->offset + 1 == end_offsets[p]) {
          --open;
        }
      }
      rd_kafka_message_destroy(m);
    }
    if (!failure.empty()) {
      throw std::runtime_error(failure);
    }
    const auto now = std::chrono::steady_clock::now();
    if (got > 0) {
      last_progress = now;
    } else if (now - last_progress > std::chrono::seconds(30)) {
      throw std::runtime_error(fmt::format("{}: no record for 30 s, {} partitions unfinished", topic, open));
    }
  }
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
