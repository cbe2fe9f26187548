#include "runtime/io/kafka_client.h"

#include <gtest/gtest.h>

#include "runtime/core/errors.h"

namespace tidemark {
namespace {

TEST(KafkaClientTest, AnUnknownPropertyIsNamedInTheError) {
  try {
    MakeKafkaConf({{"bootstrap.servers", "127.0.0.1:1"}, {"no.such.property", "1"}});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("'no.such.property'"), std::string::npos) << e.what();
  }
}

// A record produced with an explicit CreateTime into partition 1 of a two-partition mock topic is
// read back from that partition with the same key, value, offset and timestamp.
TEST(KafkaClientTest, TheMockClusterRoundTripsARecordWithItsCreateTime) {
  KafkaMockCluster cluster(1);
  cluster.CreateTopic("events", 2);

  KafkaHandle producer = MakeKafkaHandle(
      RD_KAFKA_PRODUCER, MakeKafkaConf({{"bootstrap.servers", cluster.bootstrap_servers()}}));
  ASSERT_EQ(
      rd_kafka_producev(producer.get(), RD_KAFKA_V_TOPIC("events"), RD_KAFKA_V_PARTITION(1),
                        RD_KAFKA_V_KEY("k", 1), RD_KAFKA_V_VALUE(const_cast<char*>("{\"a\":1}"), 7),
                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_TIMESTAMP(5000),
                        RD_KAFKA_V_END),
      RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(producer.get(), 10000), RD_KAFKA_RESP_ERR_NO_ERROR);

  KafkaHandle consumer = MakeKafkaHandle(
      RD_KAFKA_CONSUMER, MakeKafkaConf({{"bootstrap.servers", cluster.bootstrap_servers()},
                                        {"group.id", "test"},
                                        {"enable.auto.commit", "false"}}));
  {
    KafkaPartitionList assignment(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(assignment.get(), "events", 1)->offset =
        RD_KAFKA_OFFSET_BEGINNING;
    ASSERT_EQ(rd_kafka_assign(consumer.get(), assignment.get()), RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  KafkaMessage message;
  for (int i = 0; i < 100 && !message; ++i) {
    KafkaMessage m(rd_kafka_consumer_poll(consumer.get(), 100));
    if (m && m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      message = std::move(m);
    }
  }
  ASSERT_TRUE(message);
  EXPECT_EQ(message->partition, 1);
  EXPECT_EQ(message->offset, 0);
  EXPECT_EQ(std::string(static_cast<const char*>(message->payload), message->len), "{\"a\":1}");
  EXPECT_EQ(std::string(static_cast<const char*>(message->key), message->key_len), "k");
  rd_kafka_timestamp_type_t type;
  EXPECT_EQ(rd_kafka_message_timestamp(message.get(), &type), 5000);
  EXPECT_EQ(type, RD_KAFKA_TIMESTAMP_CREATE_TIME);
  message.reset();
  rd_kafka_assign(consumer.get(), nullptr);
}

}  // namespace
}  // namespace tidemark
