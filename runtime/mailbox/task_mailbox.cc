#include "runtime/mailbox/task_mailbox.h"

namespace tidemark {

bool TaskMailbox::Put(Mail mail) {
  {
    MutexLock lock(mu_);
    if (state_ != State::kOpen) {
      return false;
    }
    queue_.push_back(std::move(mail));
  }
  wakeup_->Signal();
  return true;
}

std::optional<Mail> TaskMailbox::TryTake() {
  MutexLock lock(mu_);
  if (queue_.empty() || state_ == State::kClosed) {
    return std::nullopt;
  }
  Mail m = std::move(queue_.front());
  queue_.pop_front();
  return m;
}

bool TaskMailbox::HasMail() {
  MutexLock lock(mu_);
  return !queue_.empty() && state_ != State::kClosed;
}

void TaskMailbox::Quiesce() {
  MutexLock lock(mu_);
  if (state_ == State::kOpen) {
    state_ = State::kQuiesced;
  }
}

void TaskMailbox::Close() {
  MutexLock lock(mu_);
  state_ = State::kClosed;
  queue_.clear();
}

TaskMailbox::State TaskMailbox::state() {
  MutexLock lock(mu_);
  return state_;
}

}  // namespace tidemark
