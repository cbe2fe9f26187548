#include "operators/window/trigger.h"

#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/time/manual_processing_time_service.h"

namespace tidemark {
namespace {

// A trigger on its own over a timer service (like Flink's TriggerTestHarness).
class TriggerTest : public ::testing::Test, public Triggerable<Window> {
 protected:
  TriggerTest() { keys_.SetCurrentKey(Key{Value{"k"}}); }
  void Use(std::unique_ptr<Trigger> t) { trigger_ = std::move(t); }
  TriggerResult Element(const Window& w, Timestamp ts = 0) {
    ctx_.set_window(w);
    return trigger_->OnElement(StreamRecord(Row{}, ts), ts, w, ctx_);
  }
  std::vector<TriggerResult> Advance(Timestamp wm) {
    fired_.clear();
    timers_.AdvanceWatermark(wm);
    return fired_;
  }
  void OnEventTime(const InternalTimer<Window>& t) override {
    ctx_.set_window(t.ns);
    fired_.push_back(trigger_->OnEventTime(t.timestamp, t.ns, ctx_));
  }
  void OnProcessingTime(const InternalTimer<Window>& t) override {
    ctx_.set_window(t.ns);
    fired_.push_back(trigger_->OnProcessingTime(t.timestamp, t.ns, ctx_));
  }

  ManualProcessingTimeService clock_;
  SimpleKeyContext keys_;
  InternalTimerService<Window> timers_{clock_, keys_, *this};
  TriggerStateStore state_;
  TriggerContext ctx_{timers_, keys_, state_};
  std::unique_ptr<Trigger> trigger_;
  std::vector<TriggerResult> fired_;
};

TEST_F(TriggerTest, EventTimeTriggerFiresAtMaxTimestampAndAtOnceWhenLate) {
  Use(std::make_unique<EventTimeTrigger>());
  EXPECT_EQ(Element(TimeWindow(0, 2)), TriggerResult::kContinue);
  EXPECT_EQ(Element(TimeWindow(0, 2)), TriggerResult::kContinue);
  EXPECT_EQ(timers_.NumEventTimeTimers(), 1u);  // de-duplicated
  EXPECT_EQ(Advance(0), std::vector<TriggerResult>{});
  EXPECT_EQ(Advance(1), std::vector<TriggerResult>{TriggerResult::kFire});
  EXPECT_EQ(Element(TimeWindow(0, 2)), TriggerResult::kFire);
  EXPECT_EQ(timers_.NumEventTimeTimers(), 0u);
}

TEST_F(TriggerTest, CountTriggerMergesCountsAndPurgingTurnsFireIntoFireAndPurge) {
  Use(std::make_unique<PurgingTrigger>(std::make_unique<CountTrigger>(3)));
  EXPECT_EQ(Element(TimeWindow(0, 3)), TriggerResult::kContinue);
  EXPECT_EQ(Element(TimeWindow(4, 7)), TriggerResult::kContinue);
  ctx_.set_window(TimeWindow(0, 7));
  ctx_.set_merged_windows({TimeWindow(0, 3), TimeWindow(4, 7)});
  trigger_->OnMerge(TimeWindow(0, 7), ctx_);
  for (const Window& m : std::vector<Window>{TimeWindow(0, 3), TimeWindow(4, 7)}) {
    ctx_.set_window(m);
    trigger_->Clear(m, ctx_);
  }
  EXPECT_EQ(state_.size(), 1u);
  EXPECT_EQ(Element(TimeWindow(0, 7)), TriggerResult::kFireAndPurge);  // 1 + 1 + 1
  EXPECT_EQ(state_.size(), 0u);
}

TEST_F(TriggerTest, ContinuousEventTimeTriggerFiresEveryIntervalAndAtTheEnd) {
  Use(std::make_unique<ContinuousEventTimeTrigger>(1000));
  EXPECT_EQ(Element(TimeWindow(0, 2500), 300), TriggerResult::kContinue);
  EXPECT_EQ(Advance(999), std::vector<TriggerResult>{});
  EXPECT_EQ(Advance(1000), std::vector<TriggerResult>{TriggerResult::kFire});
  EXPECT_EQ(Advance(2000), std::vector<TriggerResult>{TriggerResult::kFire});
  // Next fire time is capped at maxTimestamp 2499, where the end-of-window timer also is.
  EXPECT_EQ(Advance(2499), std::vector<TriggerResult>{TriggerResult::kFire});
  EXPECT_EQ(timers_.NumEventTimeTimers(), 0u);
}

TEST_F(TriggerTest, MakeTriggerParsesSpecsAndRejectsUnknownOnes) {
  EXPECT_EQ(MakeTrigger("purging(count(4))")->ToString(), "PurgingTrigger(CountTrigger(4))");
  EXPECT_EQ(MakeTrigger("event-time")->ToString(), "EventTimeTrigger()");
  EXPECT_EQ(MakeTrigger("continuous_event_time(3000)")->ToString(),
            "ContinuousEventTimeTrigger(3000)");
  // A YAML job writes the interval with a unit, like every duration.
  EXPECT_EQ(MakeTrigger("continuous-event-time(3s)")->ToString(), "ContinuousEventTimeTrigger(3000)");
  EXPECT_EQ(MakeTrigger("purging(continuous-event-time(250ms))")->ToString(),
            "PurgingTrigger(ContinuousEventTimeTrigger(250))");
  EXPECT_THROW(MakeTrigger("continuous-event-time(3sec)"), InvalidArgument);
  EXPECT_THROW(MakeTrigger("sometimes"), InvalidArgument);
  EXPECT_THROW(MakeTrigger("count(0)"), InvalidArgument);
  EXPECT_THROW(MakeTrigger("count(x)"), InvalidArgument);
}

}  // namespace
}  // namespace tidemark
