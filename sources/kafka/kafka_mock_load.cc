#include "sources/kafka/kafka_mock_load.h"

#include <atomic>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/core/errors.h"
#include "runtime/io/kafka_client.h"
#include "sources/text_input.h"

namespace tidemark {
namespace {

struct DeliveryCounts {
  std::atomic<int64_t> failed{0};
  std::string first_error;  // written by librdkafka's thread before `failed` is incremented
};

void OnDelivery(rd_kafka_t* /*rk*/, const rd_kafka_message_t* m, void* opaque) {
  auto* counts = static_cast<DeliveryCounts*>(opaque);
  if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (counts->failed.load() == 0) {
      counts->first_error = rd_kafka_err2str(m->err);
    }
    counts->failed.fetch_add(1);
  }
}

int64_t IntField(const nlohmann::json& object, const std::string& field, const std::string& where) {
  auto it = object.find(field);
  if (it == object.end() || !it->is_number_integer()) {
    throw InvalidArgument(
        fmt::format("{}: field \"{}\" is missing or not an integer", where, field));
  }
  return it->get<int64_t>();
}

}  // namespace

int64_t LoadJsonLinesIntoTopic(const std::string& bootstrap_servers,
                               const KafkaLoadOptions& options) {
  std::ifstream in(options.path);
  if (!in) {
    throw IoError(fmt::format("cannot read '{}'", options.path));
  }
  DeliveryCounts counts;
  KafkaConf conf = MakeKafkaConf({{"bootstrap.servers", bootstrap_servers},
                                  {"max.in.flight.requests.per.connection", "1"},
                                  {"linger.ms", "5"},
                                  {"log_level", "3"}});
  rd_kafka_conf_set_dr_msg_cb(conf.get(), OnDelivery);
  rd_kafka_conf_set_opaque(conf.get(), &counts);
  KafkaHandle producer = MakeKafkaHandle(RD_KAFKA_PRODUCER, std::move(conf));
  std::string line;
  int64_t line_no = 0;
  int64_t produced = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) {
      continue;
    }
    const std::string where = fmt::format("{}:{}", options.path, line_no);
    std::string reason;
    std::optional<nlohmann::json> object = ParseJsonLine(line, &reason);
    if (!object || !object->is_object()) {
      throw InvalidArgument(fmt::format("{}: {}", where, object ? "not a JSON object" : reason));
    }
    int64_t partition = produced % options.partitions;
    if (!options.partition_field.empty()) {
      partition = IntField(*object, options.partition_field, where);
      if (partition < 0 || partition >= options.partitions) {
        throw InvalidArgument(fmt::format("{}: partition {} is not in [0, {})", where, partition,
                                          options.partitions));
      }
    }
    int64_t timestamp = 0;  // librdkafka: now
    if (!options.timestamp_field.empty()) {
      timestamp = IntField(*object, options.timestamp_field, where);
      if (timestamp < 0) {
        throw InvalidArgument(
            fmt::format("{}: a Kafka timestamp cannot be negative ({})", where, timestamp));
      }
    }
    std::string key;
    if (!options.key_field.empty()) {
      auto it = object->find(options.key_field);
      if (it != object->end() && !it->is_null()) {
        key = it->is_string() ? it->get<std::string>() : it->dump();
      }
    }
    while (true) {
      // librdkafka's RD_KAFKA_V_* macros type-check each argument in a GNU statement expression;
      // clang's -Wpedantic reports it where the macro is expanded, i.e. here.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wgnu-statement-expression"
#endif
      const rd_kafka_resp_err_t err = rd_kafka_producev(
          producer.get(), RD_KAFKA_V_TOPIC(options.topic.c_str()),
          RD_KAFKA_V_PARTITION(static_cast<int32_t>(partition)),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(line.data(), line.size()),
          RD_KAFKA_V_KEY(key.empty() ? nullptr : key.data(), key.size()),
          RD_KAFKA_V_TIMESTAMP(timestamp), RD_KAFKA_V_END);
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
      if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(producer.get(), 10);
        continue;
      }
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        throw IoError(fmt::format("{}: cannot produce to '{}': {}", where, options.topic,
                                  rd_kafka_err2str(err)));
      }
      break;
    }
    ++produced;
    rd_kafka_poll(producer.get(), 0);
  }
  if (rd_kafka_flush(producer.get(), 30000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw IoError(
        fmt::format("loading '{}' into '{}': not every record was acknowledged within 30 s",
                    options.path, options.topic));
  }
  if (counts.failed.load() > 0) {
    throw IoError(fmt::format("loading '{}' into '{}': {} records failed ({})", options.path,
                              options.topic, counts.failed.load(), counts.first_error));
  }
  return produced;
}

}  // namespace tidemark
