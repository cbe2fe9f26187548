#include "runtime/io/channel.h"

namespace tidemark {

Channel::~Channel() {
  StreamElement* e = nullptr;
  while (queue_.pop(e)) {
    delete e;
  }
  while (recycled_.pop(e)) {
    delete e;
  }
}

void Channel::Recycle(std::unique_ptr<StreamElement> element) {
  if (recycled_.push(element.get())) {
    (void)element.release();  // the free list owns it now
  }
}

std::unique_ptr<StreamElement> Channel::TakeRecycled() {
  StreamElement* e = nullptr;
  if (!recycled_.pop(e)) {
    return nullptr;
  }
  return std::unique_ptr<StreamElement>(e);
}

bool Channel::TryPush(std::unique_ptr<StreamElement>& element) {
  if (!queue_.push(element.get())) {
    return false;
  }
  (void)element.release();  // the queue owns it now
  consumer_wakeup_->Signal();
  return true;
}

std::unique_ptr<StreamElement> Channel::Pop() {
  StreamElement* e = nullptr;
  if (!queue_.pop(e)) {
    return nullptr;
  }
  // Wake a producer blocked on the full channel only once half of it is free: it then refills in
  // one go instead of waking (a futex call, often a context switch) after every pop.
  // The exchange (a locked read-modify-write) also orders this pop before the flag is read.
  if (producer_wakeup_ != nullptr && queue_.read_available() <= producer_wake_level_ &&
      producer_waiting_.exchange(false, std::memory_order_seq_cst)) {
    producer_wakeup_->Signal();
  }
  return std::unique_ptr<StreamElement>(e);
}

}  // namespace tidemark
