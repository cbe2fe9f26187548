#include "tools/daemon/worker_protocol.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <unistd.h>

namespace tidemark {
namespace {

bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool ReadAll(int fd, char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

uint32_t DecodeLength(const char* p) {
  const auto* u = reinterpret_cast<const unsigned char*>(p);
  return static_cast<uint32_t>(u[0]) | static_cast<uint32_t>(u[1]) << 8 |
         static_cast<uint32_t>(u[2]) << 16 | static_cast<uint32_t>(u[3]) << 24;
}

}  // namespace

bool WriteWorkerFrame(int fd, const nlohmann::json& message) {
  const std::string payload =
      message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (payload.size() > kMaxWorkerFrameBytes) {
    return false;
  }
  const auto n = static_cast<uint32_t>(payload.size());
  std::string frame(4, '\0');
  frame[0] = static_cast<char>(n & 0xff);
  frame[1] = static_cast<char>((n >> 8) & 0xff);
  frame[2] = static_cast<char>((n >> 16) & 0xff);
  frame[3] = static_cast<char>((n >> 24) & 0xff);
  frame += payload;
  return WriteAll(fd, frame.data(), frame.size());
}

std::optional<std::string> ReadWorkerFrame(int fd) {
  char header[4];
  if (!ReadAll(fd, header, sizeof(header))) {
    return std::nullopt;
  }
  const uint32_t n = DecodeLength(header);
  if (n > kMaxWorkerFrameBytes) {
    return std::nullopt;
  }
  std::string payload(n, '\0');
  if (!ReadAll(fd, payload.data(), n)) {
    return std::nullopt;
  }
  return payload;
}

std::optional<std::string> WorkerFrameReader::Next(std::string* error) {
  if (buffer_.size() - offset_ < 4) {
    return std::nullopt;
  }
  const uint32_t n = DecodeLength(buffer_.data() + offset_);
  if (n > kMaxWorkerFrameBytes) {
    *error = "a frame of " + std::to_string(n) + " bytes (the limit is " +
             std::to_string(kMaxWorkerFrameBytes) + ")";
    return std::nullopt;
  }
  if (buffer_.size() - offset_ - 4 < n) {
    return std::nullopt;
  }
  std::string payload = buffer_.substr(offset_ + 4, n);
  offset_ += 4 + n;
  if (offset_ == buffer_.size()) {
    buffer_.clear();
    offset_ = 0;
  } else if (offset_ > (64u << 10)) {
    buffer_.erase(0, offset_);  // keep the partial frame only
    offset_ = 0;
  }
  return payload;
}

nlohmann::json MetricsToJson(const std::vector<SubtaskMetrics>& metrics) {
  nlohmann::json out = nlohmann::json::array();
  for (const SubtaskMetrics& m : metrics) {
    nlohmann::json ops = nlohmann::json::array();
    for (const OperatorMetrics& o : m.operators) {
      nlohmann::json gauges = nlohmann::json::array();
      for (const auto& [name, value] : o.gauges) {
        gauges.push_back(nlohmann::json::array({name, value}));
      }
      nlohmann::json notes = nlohmann::json::array();
      for (const auto& [name, text] : o.notes) {
        notes.push_back(nlohmann::json::array({name, text}));
      }
      nlohmann::json side = nlohmann::json::array();
      for (const auto& [tag, count] : o.side_records_out) {
        side.push_back(nlohmann::json::array({tag, count}));
      }
      ops.push_back(nlohmann::json::array({o.name, o.records_out, o.output_watermark,
                                           std::move(gauges), std::move(notes), std::move(side)}));
    }
    nlohmann::json task_gauges = nlohmann::json::array();
    for (const auto& [name, value] : m.task_gauges) {
      task_gauges.push_back(nlohmann::json::array({name, value}));
    }
    out.push_back(nlohmann::json::array({m.task, m.subtask_index, m.records_in, m.input_watermark,
                                         m.finished, std::move(ops), std::move(task_gauges)}));
  }
  return out;
}

std::vector<SubtaskMetrics> MetricsFromJson(const nlohmann::json& j) {
  std::vector<SubtaskMetrics> out;
  for (const nlohmann::json& s : j) {
    SubtaskMetrics m;
    m.task = s.at(0).get<std::string>();
    m.subtask_index = s.at(1).get<int>();
    m.records_in = s.at(2).get<int64_t>();
    m.input_watermark = s.at(3).get<int64_t>();
    m.finished = s.at(4).get<bool>();
    for (const nlohmann::json& o : s.at(5)) {
      OperatorMetrics op;
      op.name = o.at(0).get<std::string>();
      op.records_out = o.at(1).get<int64_t>();
      op.output_watermark = o.at(2).get<int64_t>();
      for (const nlohmann::json& g : o.at(3)) {
        op.gauges.emplace_back(g.at(0).get<std::string>(), g.at(1).get<int64_t>());
      }
      if (o.size() > 4) {
        for (const nlohmann::json& n : o.at(4)) {
          op.notes.emplace_back(n.at(0).get<std::string>(), n.at(1).get<std::string>());
        }
      }
      if (o.size() > 5) {
        for (const nlohmann::json& n : o.at(5)) {
          op.side_records_out.emplace_back(n.at(0).get<std::string>(), n.at(1).get<int64_t>());
        }
      }
      m.operators.push_back(std::move(op));
    }
    if (s.size() > 6) {
      for (const nlohmann::json& g : s.at(6)) {
        m.task_gauges.emplace_back(g.at(0).get<std::string>(), g.at(1).get<int64_t>());
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::string SignalName(int signal) {
  const char* abbrev = ::sigabbrev_np(signal);
  return abbrev != nullptr ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

}  // namespace tidemark
