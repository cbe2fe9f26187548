#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "runtime/core/mutex.h"
#include "runtime/core/timestamp.h"

namespace tidemark {

/// The event-time flow of a job as JSON Lines (`tidemark run --trace FILE`): one object per event,
/// in the order the events happened (under the virtual clock a function of the job alone):
///
/// ```
/// {"time":200,"task":"source ->
/// windows","subtask":0,"operator":"source","event":"split-watermark","split":"fast","watermark":9099}
/// ```
///
/// `time` is the task's processing time in ms (virtual: since the start; system: since the epoch).
/// Events, with their extra fields:
/// - `split-watermark` {split, watermark}: a source split's watermark rose (its generator's output
///   into the WatermarkOutputMultiplexer); `split-idle` / `split-active` {split}: its status
///   changed; `split-paused` / `split-resumed` {split}: watermark alignment paused or resumed it;
/// - `alignment-wait` / `alignment-resume`: a source subtask stopped / started reading for
///   alignment (`max_allowed`, its `watermark`);
/// - `output-watermark` {watermark}: an operator's output watermark changed (a source's: what its
///   subtask emits); `output-status` {status: IDLE | ACTIVE};
/// - `input-watermark` {input, watermark}: the watermark a task's StatusWatermarkValve handed to
///   its head operator's input `input` changed; `input-status` {input, status}.
/// Watermarks are int64 ms (MIN = -9223372036854775808: none yet; MAX = 9223372036854775807).
///
/// Thread-safe: `Record` from any task thread (lines are written whole, under a lock). The sink
/// is borrowed from the caller and must outlive every task.
class WatermarkTrace {
 public:
  /// Receives each line, without the newline.
  using LineSink = std::function<void(const std::string& line)>;
  explicit WatermarkTrace(LineSink sink) : sink_(std::move(sink)) {}

  /// Where an event happened: borrowed strings that live as long as the task.
  struct Where {
    const std::string* task = nullptr;
    int subtask = 0;
    const std::string* op = nullptr;
  };
  /// One extra field: a string or an integer value.
  struct Field {
    std::string_view name;
    std::string_view text;  ///< used when `is_text`
    int64_t number = 0;
    bool is_text = false;
  };
  static Field Text(std::string_view name, std::string_view value) {
    return Field{name, value, 0, true};
  }
  static Field Number(std::string_view name, int64_t value) {
    return Field{name, {}, value, false};
  }

  void Record(const Where& where, Timestamp processing_time_ms, std::string_view event,
              std::initializer_list<Field> fields);

 private:
  Mutex mu_;  // makes each line whole
  LineSink sink_ ABSL_GUARDED_BY(mu_);
};

/// What an operator needs to trace: the job's trace (null: tracing is off) and where it runs.
/// Copyable; the pointers are borrowed from the task.
struct TraceContext {
  WatermarkTrace* trace = nullptr;
  WatermarkTrace::Where where;
  explicit operator bool() const { return trace != nullptr; }
};

}  // namespace tidemark
