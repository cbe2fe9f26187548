#pragma once

// Thin RAII over librdkafka (Debian librdkafka-dev 2.0, C API) shared by the Kafka source
// (sources/kafka/), the Kafka sink (operators/kafka_sink/), `tidemark kafka-mock` and the tests.
// Nothing here knows about records or splits: handles, configuration and librdkafka's mock cluster.
//
// Facts about the mock cluster probed on this machine are in shared/notes/kafka-mock.md: pause
// purges prefetched messages, offsets_for_times returns -1, a blocking look-up while every broker
// is down does not return, and rd_kafka_destroy hangs while a partition list used in assign or
// commit is still alive — destroy lists first (the KafkaPartitionList deleter makes that natural).

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <map>
#include <memory>
#include <string>

namespace tidemark {

struct KafkaHandleDeleter {
  void operator()(rd_kafka_t* rk) const;
};
struct KafkaConfDeleter {
  void operator()(rd_kafka_conf_t* conf) const { rd_kafka_conf_destroy(conf); }
};
struct KafkaPartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* list) const {
    rd_kafka_topic_partition_list_destroy(list);
  }
};
struct KafkaQueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct KafkaMessageDeleter {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};

/// Owning handles. `KafkaHandle`'s deleter closes a consumer first (rd_kafka_consumer_close when
/// the handle is a consumer), then destroys it.
using KafkaHandle = std::unique_ptr<rd_kafka_t, KafkaHandleDeleter>;
using KafkaConf = std::unique_ptr<rd_kafka_conf_t, KafkaConfDeleter>;
using KafkaPartitionList =
    std::unique_ptr<rd_kafka_topic_partition_list_t, KafkaPartitionListDeleter>;
using KafkaQueue = std::unique_ptr<rd_kafka_queue_t, KafkaQueueDeleter>;
using KafkaMessage = std::unique_ptr<rd_kafka_message_t, KafkaMessageDeleter>;

/// Builds a librdkafka configuration from `properties` (Kafka client property names, passed
/// through as given, e.g. `bootstrap.servers`, `group.id`, `isolation.level`).
/// Errors: throws InvalidArgument naming the property and librdkafka's reason when a name is
/// unknown or a value is invalid.
KafkaConf MakeKafkaConf(const std::map<std::string, std::string>& properties);

/// Creates a producer or consumer from `conf` (ownership of `conf` passes to the handle).
/// Errors: throws IoError with librdkafka's reason.
KafkaHandle MakeKafkaHandle(rd_kafka_type_t type, KafkaConf conf);

/// librdkafka's in-process mock Kafka cluster (rdkafka_mock.h): real brokers speaking the Kafka
/// protocol on loopback ports, without transaction markers (read_committed is not observable).
/// Thread-safe as librdkafka is; create and destroy on one thread. Lives until destroyed.
class KafkaMockCluster {
 public:
  /// Starts `brokers` mock brokers on 127.0.0.1 ephemeral ports. Throws IoError on failure.
  explicit KafkaMockCluster(int brokers = 1);
  ~KafkaMockCluster();
  KafkaMockCluster(const KafkaMockCluster&) = delete;
  KafkaMockCluster& operator=(const KafkaMockCluster&) = delete;

  /// "127.0.0.1:port,..." for `bootstrap.servers`.
  const std::string& bootstrap_servers() const { return bootstrap_servers_; }

  /// Creates `topic` with `partitions` partitions (replication factor 1). Throws IoError.
  void CreateTopic(const std::string& topic, int partitions);

  /// Takes broker `broker_id` (1-based) down or up: its connections close and it refuses new ones.
  void SetBrokerUp(int broker_id, bool up);

  /// The underlying cluster, for the mock's other controls (e.g.
  /// rd_kafka_mock_push_request_errors).
  rd_kafka_mock_cluster_t* raw() const { return cluster_; }

 private:
  KafkaHandle owner_;  // the throw-away producer the cluster is attached to
  rd_kafka_mock_cluster_t* cluster_ = nullptr;
  std::string bootstrap_servers_;
};

}  // namespace tidemark
