#pragma once

#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "runtime/core/mutex.h"
#include "runtime/io/wakeup.h"

namespace tidemark {

/// A unit of work run on a task's mailbox thread: a timer firing, a control action (cancel,
/// alignment update). Mirrors Flink's `Mail`. `description` is for logs and errors.
struct Mail {
  std::function<void()> action;
  std::string description;
};

/// The queue of mails of one StreamTask. Mirrors Flink's `TaskMailbox`.
///
/// States: `kOpen` (accepts mail) -> `kQuiesced` (rejects new mail, pending mail may still run) ->
/// `kClosed` (rejects everything; pending mail dropped).
/// Threading: `Put` from any thread (thread-safe; signals the task's Wakeup); `TryTake`, `Quiesce`,
/// `Close` from the mailbox thread.
class TaskMailbox {
 public:
  enum class State { kOpen, kQuiesced, kClosed };

  explicit TaskMailbox(Wakeup* wakeup) : wakeup_(wakeup) {}

  /// Enqueues a mail. Returns false (dropping it) when the mailbox is no longer open.
  bool Put(Mail mail);
  /// Next mail in FIFO order, or nullopt.
  std::optional<Mail> TryTake();
  bool HasMail();
  void Quiesce();
  void Close();
  State state();

 private:
  Wakeup* wakeup_;
  Mutex mu_;
  std::deque<Mail> queue_ ABSL_GUARDED_BY(mu_);
  State state_ ABSL_GUARDED_BY(mu_) = State::kOpen;
};

}  // namespace tidemark
