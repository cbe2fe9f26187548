#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <set>

#include "runtime/eventtime/watermark_generator.h"

namespace tidemark {

/// Parameters of `AdaptiveOutOfOrdernessWatermarks` (`strategy: adaptive-out-of-orderness`).
/// All durations in ms.
struct AdaptiveOutOfOrdernessParams {
  /// The bound follows this percentile of the observed lateness, in (0, 100]: 99 aims at about
  /// 1 % of records beyond the bound (nearest rank: the ceil(p/100 * n)-th smallest of n).
  double percentile = 99.0;
  /// Sliding window of **event time**: a record's lateness is kept while the largest timestamp
  /// seen is less than `window_ms` past the largest timestamp at its arrival. > 0.
  int64_t window_ms = 60000;
  int64_t min_ms = 0;      ///< lower clamp of the bound, >= 0
  int64_t max_ms = 60000;  ///< upper clamp of the bound, >= min_ms
  int64_t initial_ms = 0;  ///< bound until a whole window has been observed, in [min, max]
};

/// A periodic generator whose out-of-orderness bound adapts to the stream: the bound is a
/// percentile of the lateness of the records seen in a sliding window of event time, clamped to
/// [min, max]. tidemark's; Flink has no built-in for it (seed 002 §2.2 describes a hand-written
/// one), and it extends `BoundedOutOfOrdernessWatermarks`'s rule:
///
/// - **Lateness** of a record = (largest timestamp seen so far, this record included) − its
///   timestamp, so >= 0; an in-order record has lateness 0.
/// - **Bound** at a periodic emit: `initial` until the largest timestamp seen is at least
///   `window` past the first record's, then clamp(percentile of the window's latenesses, min, max).
/// - **Watermark** at a periodic emit: `max(previous, max_ts − bound − 1)`. A growing bound holds
///   the watermark where it is (it never moves back); a shrinking one lets it catch up. Nothing is
///   emitted before the first record (the watermark stays `kMinTimestamp`, as in
///   `BoundedOutOfOrdernessWatermarks`), and `OnEvent` never emits.
///
/// Trade-off: a higher percentile (or a longer window) gives fewer late records but a later
/// watermark, so windows fire later and hold more state; the bound reacts to drift within about
/// `window` of event time, and records arriving before it has grown are late. `max` caps the
/// latency an outlier can cause; `min` keeps a floor when the recent stream looks ordered.
///
/// Threading: mailbox thread only. Cost: O(log n) per event and memory O(n) for the n records
/// whose arrival lies within the last `window` of event time (two ordered multisets split at the
/// percentile's rank, and a queue in arrival order).
class AdaptiveOutOfOrdernessWatermarks : public WatermarkGenerator {
 public:
  /// Throws `InvalidArgument` for a percentile outside (0, 100], a window <= 0, a negative min,
  /// max < min, or initial outside [min, max].
  explicit AdaptiveOutOfOrdernessWatermarks(const AdaptiveOutOfOrdernessParams& params);

  /// Validates `params` as the constructor does (the message names the parameter).
  static void Validate(const AdaptiveOutOfOrdernessParams& params);

  void OnEvent(const StreamRecord& record, Timestamp event_timestamp,
               WatermarkOutput& output) override;
  void OnPeriodicEmit(WatermarkOutput& output) override;
  bool InspectsRecordOnEvent() const override { return false; }
  std::optional<int64_t> CurrentOutOfOrdernessMs() const override { return bound_ms_; }

  /// The bound the next periodic emit would apply (recomputed from the window).
  int64_t ComputeBoundMs() const;
  /// The last watermark emitted (kMinTimestamp before any).
  Timestamp last_watermark() const { return last_watermark_; }
  /// Latenesses currently in the window.
  size_t window_size() const { return arrivals_.size(); }

 private:
  struct Observation {
    Timestamp max_at_arrival;
    int64_t lateness_ms;
  };
  void Insert(int64_t lateness);
  void Erase(int64_t lateness);
  void Rebalance();
  /// The rank (1-based) of the percentile among n values: ceil(p/100 * n), at least 1.
  size_t TargetRank(size_t n) const;

  AdaptiveOutOfOrdernessParams params_;
  bool seen_any_ = false;
  Timestamp first_max_ = kMinTimestamp;
  Timestamp max_timestamp_ = kMinTimestamp;
  Timestamp last_watermark_ = kMinTimestamp;
  int64_t bound_ms_;
  std::deque<Observation> arrivals_;
  // The window's latenesses split at the percentile: `low_` holds the TargetRank(n) smallest, so
  // the percentile is the largest element of `low_`.
  std::multiset<int64_t> low_;
  std::multiset<int64_t> high_;
};

}  // namespace tidemark
