#include "runtime/task/watermark_trace.h"

#include <nlohmann/json.hpp>

namespace tidemark {

void WatermarkTrace::Record(const Where& where, Timestamp processing_time_ms,
                            std::string_view event, std::initializer_list<Field> fields) {
  // An ordered object, so the keys come in the order written (time, task, ..., event, fields).
  nlohmann::ordered_json j;
  j["time"] = processing_time_ms;
  j["task"] = where.task != nullptr ? *where.task : std::string();
  j["subtask"] = where.subtask;
  j["operator"] = where.op != nullptr ? *where.op : std::string();
  j["event"] = event;
  for (const Field& f : fields) {
    if (f.is_text) {
      j[std::string(f.name)] = f.text;
    } else {
      j[std::string(f.name)] = f.number;
    }
  }
  const std::string line = j.dump();
  MutexLock lock(mu_);
  sink_(line);
}

}  // namespace tidemark
