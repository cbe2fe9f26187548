#include "runtime/time/system_processing_time_service.h"

#include <algorithm>
#include <chrono>
#include <cstdint>

#include "runtime/core/timestamp.h"

namespace tidemark {

Timestamp SystemProcessingTimeService::GetCurrentProcessingTime() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

ProcessingTimeService::TimerId SystemProcessingTimeService::RegisterTimer(Timestamp time_ms,
                                                                          Callback callback) {
  const TimerId id = next_id_++;
  pending_.emplace(id, std::move(callback));
  // The steady_timer counts nanoseconds in an int64: a delay over ~106,751 days (a duration
  // written as 200000d, a time near Long.MAX) would wrap, often to a negative expiry that fires
  // at once. Capped at 100 years, such a timer does not fire while the process lives.
  constexpr int64_t kMaxDelayMs = int64_t{100} * 365 * 24 * 3600 * 1000;
  const int64_t delay_ms =
      std::clamp<int64_t>(SaturatingAdd(time_ms, -GetCurrentProcessingTime()), 0, kMaxDelayMs);
  auto& io = timer_thread_.io_context();
  TaskMailbox* mailbox = &mailbox_;
  // Runs on the timer thread: it only turns the expiry into a mail.
  boost::asio::post(io, [&io, mailbox, this, id, time_ms, delay_ms] {
    auto timer =
        std::make_shared<boost::asio::steady_timer>(io, std::chrono::milliseconds(delay_ms));
    timer->async_wait([timer, mailbox, this, id, time_ms](const boost::system::error_code& ec) {
      if (ec) {
        return;
      }
      mailbox->Put(Mail{[this, id, time_ms] {
                          auto it = pending_.find(id);
                          if (it == pending_.end()) {
                            return;  // cancelled
                          }
                          Callback cb = std::move(it->second);
                          pending_.erase(it);
                          cb(time_ms);
                        },
                        "processing-time timer"});
    });
  });
  return id;
}

void SystemProcessingTimeService::CancelTimer(TimerId id) {
  pending_.erase(id);
}

}  // namespace tidemark
