#pragma once

#include <atomic>
#include <memory>

#include <boost/lockfree/spsc_queue.hpp>

#include "runtime/io/stream_element.h"
#include "runtime/io/wakeup.h"

namespace tidemark {

/// A bounded single-producer single-consumer channel between one upstream subtask and one
/// downstream subtask, over `boost::lockfree::spsc_queue`. Order is kept.
///
/// Producer: the upstream task thread only (`TryPush`). Consumer: the downstream task thread only
/// (`Pop`). A push signals the consumer's `Wakeup`; a pop signals the producer's `Wakeup` when the
/// producer announced it is waiting for space (backpressure) and the channel has drained to half
/// its capacity, so neither side spins and a blocked producer is woken once per half channel
/// instead of once per popped element (each wake-up is a futex call and, with more tasks than
/// cores, a context switch).
/// Capacity is counted in elements (a record batch is one element).
/// Ownership: the channel owns elements between push and pop; it deletes leftovers on destruction.
class Channel {
 public:
  Channel(size_t capacity, Wakeup* consumer_wakeup)
      : queue_(capacity),
        recycled_(capacity),
        consumer_wakeup_(consumer_wakeup),
        producer_wake_level_(capacity / 2) {}
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  /// Set once, before the tasks start, by the execution graph.
  void SetProducerWakeup(Wakeup* w) { producer_wakeup_ = w; }

  /// Producer: pushes `element` and takes ownership; returns false (leaving `element` with the
  /// caller) when the channel is full.
  [[nodiscard]] bool TryPush(std::unique_ptr<StreamElement>& element);

  /// Producer: declares it is blocked on a full channel, so a pop wakes it once the channel has
  /// drained to half. Sequentially consistent, like the consumer's check in `Pop`: the producer
  /// stores the flag then reads the queue, the consumer writes the queue then reads the flag, and
  /// only a total order guarantees one of them sees the other.
  void SetProducerWaiting() { producer_waiting_.store(true, std::memory_order_seq_cst); }

  /// Consumer: next element or null when empty.
  std::unique_ptr<StreamElement> Pop();

  /// Consumer: whether an element is ready.
  bool HasData() const { return queue_.read_available() > 0; }

  /// Consumer: hands a processed record batch back to the producer for reuse, so its wire
  /// buffers are not freed on this thread and allocated again on the producer's. Deletes it when
  /// the free list is full. The free list holds as many batches as the channel itself, so it
  /// practically never is: with a smaller one, a consumer draining a full channel while the
  /// producer was descheduled freed the surplus, and the producer then allocated a new batch and a
  /// new row per record.
  void Recycle(std::unique_ptr<StreamElement> element);
  /// Producer: a batch given back by `Recycle` (its buffers keep their capacity), or null.
  std::unique_ptr<StreamElement> TakeRecycled();

 private:
  boost::lockfree::spsc_queue<StreamElement*> queue_;
  /// Reverse direction: producer = the consumer task, consumer = the producer task.
  boost::lockfree::spsc_queue<StreamElement*> recycled_;
  Wakeup* consumer_wakeup_;
  Wakeup* producer_wakeup_ = nullptr;
  /// A waiting producer is woken when at most this many elements are left after a pop.
  size_t producer_wake_level_;
  std::atomic<bool> producer_waiting_{false};
};

}  // namespace tidemark
