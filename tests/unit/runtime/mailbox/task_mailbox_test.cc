#include "runtime/mailbox/task_mailbox.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

TEST(TaskMailboxTest, RunsMailInFifoOrder) {
  Wakeup w;
  TaskMailbox mb(&w);
  std::vector<int> order;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(mb.Put(Mail{[&order, i] { order.push_back(i); }, "m"}));
  }
  while (auto m = mb.TryTake()) {
    m->action();
  }
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

TEST(TaskMailboxTest, QuiescedRejectsNewMailButKeepsPending) {
  Wakeup w;
  TaskMailbox mb(&w);
  int ran = 0;
  ASSERT_TRUE(mb.Put(Mail{[&] { ++ran; }, "before"}));
  mb.Quiesce();
  EXPECT_FALSE(mb.Put(Mail{[&] { ran += 10; }, "after"}));
  while (auto m = mb.TryTake()) {
    m->action();
  }
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(mb.state(), TaskMailbox::State::kQuiesced);
  mb.Close();
  EXPECT_EQ(mb.state(), TaskMailbox::State::kClosed);
}

TEST(TaskMailboxTest, PutFromOtherThreadsWakesTheTask) {
  Wakeup w;
  TaskMailbox mb(&w);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kPerThread; ++i) {
        mb.Put(Mail{[] {}, "x"});
      }
    });
  }
  int taken = 0;
  while (taken < kThreads * kPerThread) {
    if (auto m = mb.TryTake()) {
      m->action();
      ++taken;
    } else {
      w.WaitFor(std::chrono::milliseconds(50));
    }
  }
  for (auto& t : threads) {
    t.join();
  }
  EXPECT_EQ(taken, kThreads * kPerThread);
  EXPECT_FALSE(mb.HasMail());
}

}  // namespace
}  // namespace tidemark
