#include "runtime/graph/job_resources.h"

#include <algorithm>
#include <cstdio>

namespace tidemark {

void SinkResult::Add(const StreamRecord& record) {
  count_.fetch_add(1, std::memory_order_relaxed);
  if (retain_) {
    MutexLock lock(mu_);
    records_.push_back(record);
  }
}

std::vector<StreamRecord> SinkResult::Records() const {
  MutexLock lock(mu_);
  return records_;
}

void SinkResult::AddChecksumPart(int64_t count, uint64_t checksum,
                                 const std::vector<int64_t>& latency_ns) {
  count_.fetch_add(count, std::memory_order_relaxed);
  MutexLock lock(mu_);
  checksum_ += checksum;
  latency_ns_.insert(latency_ns_.end(), latency_ns.begin(), latency_ns.end());
}

uint64_t SinkResult::checksum() const {
  MutexLock lock(mu_);
  return checksum_;
}

std::vector<int64_t> SinkResult::LatencySamplesNs() const {
  MutexLock lock(mu_);
  return latency_ns_;
}

JobResources::JobResources()
    : line_writer_([](const std::string& line) {
        std::fwrite(line.data(), 1, line.size(), stdout);
        std::fputc('\n', stdout);
        std::fflush(stdout);
      }) {}

void JobResources::WriteLine(const std::string& line) {
  MutexLock lock(write_mu_);
  line_writer_(line);
}

std::shared_ptr<SinkResult> JobResources::AddSinkResult(const std::string& id, Schema schema,
                                                        bool retain_rows) {
  MutexLock lock(mu_);
  auto& slot = sinks_[id];
  if (!slot) {
    slot = std::make_shared<SinkResult>(std::move(schema), retain_rows);
  }
  return slot;
}

std::shared_ptr<SinkResult> JobResources::FindSinkResult(const std::string& id) const {
  MutexLock lock(mu_);
  auto it = sinks_.find(id);
  return it == sinks_.end() ? nullptr : it->second;
}

bool JobResources::ShouldRetainRows(const std::string& id) const {
  return std::find(retained_.begin(), retained_.end(), id) != retained_.end();
}

}  // namespace tidemark
