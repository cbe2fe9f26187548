#include "tests/testing/kafka_read_back.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>

#include <gtest/gtest.h>

#include "runtime/io/kafka_client.h"

namespace tidemark::testing {

std::vector<KafkaRecord> ReadTopic(const std::string& bootstrap_servers, const std::string& topic,
                                   int partitions, const std::string& isolation_level) {
  std::vector<KafkaRecord> out;
  KafkaHandle consumer =
      MakeKafkaHandle(RD_KAFKA_CONSUMER, MakeKafkaConf({{"bootstrap.servers", bootstrap_servers},
                                                        {"group.id", "tidemark-test-read-back"},
                                                        {"enable.auto.commit", "false"},
                                                        {"enable.partition.eof", "true"},
                                                        {"isolation.level", isolation_level},
                                                        {"log_level", "3"}}));
  {
    KafkaPartitionList assignment(rd_kafka_topic_partition_list_new(partitions));
    for (int p = 0; p < partitions; ++p) {
      rd_kafka_topic_partition_list_add(assignment.get(), topic.c_str(), p)->offset =
          RD_KAFKA_OFFSET_BEGINNING;
    }
    EXPECT_EQ(rd_kafka_assign(consumer.get(), assignment.get()), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  std::set<int32_t> at_end;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (static_cast<int>(at_end.size()) < partitions &&
         std::chrono::steady_clock::now() < deadline) {
    KafkaMessage m(rd_kafka_consumer_poll(consumer.get(), 100));
    if (!m) {
      continue;
    }
    if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      at_end.insert(m->partition);
      continue;
    }
    if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      continue;
    }
    KafkaRecord r;
    r.partition = m->partition;
    r.offset = m->offset;
    r.has_key = m->key != nullptr;
    if (r.has_key) {
      r.key.assign(static_cast<const char*>(m->key), m->key_len);
    }
    r.value.assign(static_cast<const char*>(m->payload), m->len);
    r.timestamp_ms = rd_kafka_message_timestamp(m.get(), nullptr);
    out.push_back(std::move(r));
  }
  EXPECT_EQ(static_cast<int>(at_end.size()), partitions)
      << "topic " << topic << " not read to its end";
  rd_kafka_assign(consumer.get(), nullptr);
  std::stable_sort(out.begin(), out.end(), [](const KafkaRecord& a, const KafkaRecord& b) {
    return a.partition != b.partition ? a.partition < b.partition : a.offset < b.offset;
  });
  return out;
}

std::vector<nlohmann::json> CommittedLines(const std::filesystem::path& commit_log) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(commit_log);
  for (std::string l; std::getline(in, l);) {
    nlohmann::json j = nlohmann::json::parse(l, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded() && j.value("state", "") == "committed") {
      lines.push_back(std::move(j));
    }
  }
  return lines;
}

}  // namespace tidemark::testing
