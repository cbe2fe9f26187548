#include "runtime/io/kafka_client.h"

#include "runtime/core/errors.h"

#if defined(__SANITIZE_THREAD__)
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <pthread.h>
#include <threads.h>

// librdkafka threads and locks are C11 `thrd_*` / `mtx_*` / `cnd_*`, which glibc implements without
// going through the `pthread_*` entry points ThreadSanitizer intercepts: TSan never sees those
// threads start (and crashes in its allocator on their first malloc) nor their locks (and reports
// every hand-over through librdkafka's queues as a race). In TSan builds the executable defines
// these functions itself over `pthread_*` and librdkafka binds to them. glibc's C11 types are the
// pthread ones (`thrd_t` is a `pthread_t`; `mtx_t`, `cnd_t`, `once_flag` have their layout).
namespace {
struct ThrdStart {
  thrd_start_t func;
  void* arg;
};
void* RunThrd(void* p) {
  const ThrdStart start = *static_cast<ThrdStart*>(p);
  delete static_cast<ThrdStart*>(p);
  return reinterpret_cast<void*>(static_cast<intptr_t>(start.func(start.arg)));
}
int C11Result(int err) {
  switch (err) {
    case 0:
      return thrd_success;
    case EBUSY:
      return thrd_busy;
    case ETIMEDOUT:
      return thrd_timedout;
    case ENOMEM:
    case EAGAIN:
      return thrd_nomem;
    default:
      return thrd_error;
  }
}
pthread_mutex_t* P(mtx_t* m) {
  return reinterpret_cast<pthread_mutex_t*>(m);
}
pthread_cond_t* P(cnd_t* c) {
  return reinterpret_cast<pthread_cond_t*>(c);
}
static_assert(sizeof(mtx_t) == sizeof(pthread_mutex_t) && sizeof(cnd_t) == sizeof(pthread_cond_t));
}  // namespace

extern "C" {
int thrd_create(thrd_t* thr, thrd_start_t func, void* arg) {
  auto* start = new ThrdStart{func, arg};
  const int err = pthread_create(thr, nullptr, RunThrd, start);
  if (err != 0) {
    delete start;
  }
  return C11Result(err);
}
int thrd_join(thrd_t thr, int* res) {
  void* out = nullptr;
  const int err = pthread_join(thr, &out);
  if (err == 0 && res != nullptr) {
    *res = static_cast<int>(reinterpret_cast<intptr_t>(out));
  }
  return C11Result(err);
}
int thrd_detach(thrd_t thr) {
  return C11Result(pthread_detach(thr));
}
int mtx_init(mtx_t* m, int type) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  if ((type & mtx_recursive) != 0) {
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  }
  const int err = pthread_mutex_init(P(m), &attr);
  pthread_mutexattr_destroy(&attr);
  return C11Result(err);
}
int mtx_lock(mtx_t* m) {
  return C11Result(pthread_mutex_lock(P(m)));
}
int mtx_trylock(mtx_t* m) {
  return C11Result(pthread_mutex_trylock(P(m)));
}
int mtx_timedlock(mtx_t* __restrict m, const struct timespec* __restrict t) {
  return C11Result(pthread_mutex_timedlock(P(m), t));
}
int mtx_unlock(mtx_t* m) {
  return C11Result(pthread_mutex_unlock(P(m)));
}
void mtx_destroy(mtx_t* m) {
  pthread_mutex_destroy(P(m));
}
int cnd_init(cnd_t* c) {
  return C11Result(pthread_cond_init(P(c), nullptr));
}
int cnd_signal(cnd_t* c) {
  return C11Result(pthread_cond_signal(P(c)));
}
int cnd_broadcast(cnd_t* c) {
  return C11Result(pthread_cond_broadcast(P(c)));
}
int cnd_wait(cnd_t* c, mtx_t* m) {
  return C11Result(pthread_cond_wait(P(c), P(m)));
}
int cnd_timedwait(cnd_t* __restrict c, mtx_t* __restrict m, const struct timespec* __restrict t) {
  return C11Result(pthread_cond_timedwait(P(c), P(m), t));
}
void cnd_destroy(cnd_t* c) {
  pthread_cond_destroy(P(c));
}
void call_once(once_flag* flag, void (*func)(void)) {
  pthread_once(reinterpret_cast<pthread_once_t*>(flag), func);
}
}  // extern "C"
#endif

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
    if (rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), err, sizeof err) !=
        RD_KAFKA_CONF_OK) {
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
