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
  EXPECT_EQ(MakeTrigger("continuous_event_time(3000ms)")->ToString(),
            "ContinuousEventTimeTrigger(3000)");
  // A YAML job writes the interval with a unit, like every duration.
  EXPECT_EQ(MakeTrigger("continuous-event-time(3s)")->ToString(),
            "ContinuousEventTimeTrigger(3000)");
  EXPECT_EQ(MakeTrigger("purging(continuous-event-time(250ms))")->ToString(),
            "PurgingTrigger(ContinuousEventTimeTrigger(250))");
  EXPECT_THROW(MakeTrigger("continuous-event-time(3sec)"), InvalidArgument);
  EXPECT_THROW(MakeTrigger("sometimes"), InvalidArgument);
  EXPECT_THROW(MakeTrigger("count(0)"), InvalidArgument);
  EXPECT_THROW(MakeTrigger("count(x)"), InvalidArgument);
}

std::string TriggerError(const std::string& spec) {
  try {
    MakeTrigger(spec);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST_F(TriggerTest, MakeTriggerNamesTheFaultExactly) {
  EXPECT_EQ(TriggerError("count(-1)"),
            "trigger 'count(-1)': count(N) needs at least 1 element, got -1");
  EXPECT_EQ(TriggerError("count(0)"),
            "trigger 'count(0)': count(N) needs at least 1 element, got 0");
  EXPECT_EQ(TriggerError("count(2.5)"),
            "trigger 'count(2.5)': count(N) needs a whole number of elements, got '2.5'");
  EXPECT_EQ(TriggerError("continuous-event-time(0ms)"),
            "trigger 'continuous-event-time(0ms)': the interval must be positive, got 0ms");
  EXPECT_EQ(TriggerError("continuous-event-time(-5s)"),
            "trigger 'continuous-event-time(-5s)': the interval must be positive, got -5s");
  EXPECT_EQ(TriggerError("continuous-event-time(1000)"),
            "trigger 'continuous-event-time(1000)': the interval needs a unit, e.g. "
            "continuous-event-time(1000ms)");
  EXPECT_EQ(
      TriggerError("continuous-event-time(3sec)"),
      "trigger 'continuous-event-time(3sec)': expected an interval like 1s or 250ms, got '3sec'");
  EXPECT_EQ(TriggerError("purging(event-time"),
            "trigger 'purging(event-time': purging( is not closed");
  EXPECT_EQ(TriggerError("purging()"), "purging trigger needs a nested trigger");
}

TEST_F(TriggerTest, NestedPurgingIsBoundedAndParsedInOnePass) {
  auto nested = [](int levels) {
    std::string s;
    for (int i = 0; i < levels; ++i) {
      s += "purging(";
    }
    s += "event-time";
    s.append(static_cast<size_t>(levels), ')');
    return s;
  };
  EXPECT_EQ(MakeTrigger(nested(2))->ToString(),
            "PurgingTrigger(PurgingTrigger(EventTimeTrigger()))");
  EXPECT_NO_THROW(MakeTrigger(nested(kMaxTriggerNesting)));
  // 20,000 levels (160 KB) used to take 30 s and 4 GB; now the ninth level is refused at once.
  EXPECT_EQ(TriggerError(nested(20000)),
            "trigger 'purging(purging(purging(purging(purging(purging(purging(purg...': "
            "purging(...) nests deeper than 8 levels");
}

}  // namespace
}  // namespace tidemark
