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
    element.release();
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
  element.release();
  consumer_wakeup_->Signal();
  return true;
}

std::unique_ptr<StreamElement> Channel::Pop() {
  StreamElement* e = nullptr;
  if (!queue_.pop(e)) {
    return nullptr;
  }
  if (producer_wakeup_ != nullptr && producer_waiting_.exchange(false, std::memory_order_acq_rel)) {
    producer_wakeup_->Signal();
  }
  return std::unique_ptr<StreamElement>(e);
}

}  // namespace tidemark
