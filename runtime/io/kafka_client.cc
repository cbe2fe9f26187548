#include "runtime/io/kafka_client.h"

#include "runtime/core/errors.h"

namespace tidemark {

void KafkaHandleDeleter::operator()(rd_kafka_t* rk) const {
  if (rd_kafka_type(rk) == RD_KAFKA_CONSUMER) {
    rd_kafka_consumer_close(rk);
  }
  rd_kafka_destroy(rk);
}

KafkaConf MakeKafkaConf(const std::map<std::string, std::string>& properties) {
  KafkaConf conf(rd_kafka_conf_new());
  char err[512];
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      throw InvalidArgument(fmt::format("Kafka property '{}': {}", name, err));
    }
  }
  return conf;
}

KafkaHandle MakeKafkaHandle(rd_kafka_type_t type, KafkaConf conf) {
  char err[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf.get(), err, sizeof err);
  if (rk == nullptr) {
    throw IoError(fmt::format("cannot create a Kafka client: {}", err));
  }
  (void)conf.release();  // rd_kafka_new owns it on success
  return KafkaHandle(rk);
}

KafkaMockCluster::KafkaMockCluster(int brokers) {
  // The cluster needs a handle to live on; a producer that never produces costs nothing.
  KafkaConf conf = MakeKafkaConf({{"log_level", "3"}});
  owner_ = MakeKafkaHandle(RD_KAFKA_PRODUCER, std::move(conf));
  cluster_ = rd_kafka_mock_cluster_new(owner_.get(), brokers);
  if (cluster_ == nullptr) {
    throw IoError(fmt::format("cannot start a Kafka mock cluster of {} brokers", brokers));
  }
  bootstrap_servers_ = rd_kafka_mock_cluster_bootstraps(cluster_);
}

KafkaMockCluster::~KafkaMockCluster() {
  if (cluster_ != nullptr) {
    rd_kafka_mock_cluster_destroy(cluster_);
  }
}

void KafkaMockCluster::CreateTopic(const std::string& topic, int partitions) {
  rd_kafka_resp_err_t err = rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw IoError(fmt::format("cannot create mock topic '{}': {}", topic, rd_kafka_err2str(err)));
  }
}

void KafkaMockCluster::SetBrokerUp(int broker_id, bool up) {
  rd_kafka_resp_err_t err = up ? rd_kafka_mock_broker_set_up(cluster_, broker_id)
                               : rd_kafka_mock_broker_set_down(cluster_, broker_id);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw IoError(fmt::format("mock broker {}: {}", broker_id, rd_kafka_err2str(err)));
  }
}

}  // namespace tidemark
