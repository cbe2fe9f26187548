#include "operators/lookup_join_operator.h"

#include <bit>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "runtime/core/errors.h"

namespace tidemark {
namespace {

void AppendWord(std::string& out, uint64_t word) {
  char bytes[sizeof(word)];
  std::memcpy(bytes, &word, sizeof(word));
  out.append(bytes, sizeof(word));
}

/// The key of `row` at `slots`, encoded into `out` (cleared first); false when a key field is
/// NULL. Equal keys encode equally across int64 and timestamp fields, and -0.0 as 0.0.
bool EncodeKey(const Row& row, const std::vector<int>& slots, std::string& out) {
  out.clear();
  for (int s : slots) {
    const auto slot = static_cast<size_t>(s);
    if (row.IsNull(slot)) {
      return false;
    }
    switch (row.type(slot)) {
      case FieldType::kString: {
        const std::string_view v = row.GetString(slot);
        const auto n = static_cast<uint32_t>(v.size());
        char len[sizeof(n)];
        std::memcpy(len, &n, sizeof(n));
        out.append(len, sizeof(n));
        out.append(v);
        break;
      }
      case FieldType::kBool:
        out.push_back(row.GetBool(slot) ? '\1' : '\0');
        break;
      case FieldType::kDouble: {
        const double d = row.GetDouble(slot);
        AppendWord(out, std::bit_cast<uint64_t>(d == 0.0 ? 0.0 : d));
        break;
      }
      case FieldType::kInt64:
      case FieldType::kTimestamp:
        AppendWord(out, row.GetBits(slot));
        break;
    }
  }
  return true;
}

/// The file's modification time (in the file clock's ticks) and size; false with `error` set
/// when it cannot be read.
bool FileVersion(const std::string& path, int64_t& mtime, int64_t& size, std::error_code& error) {
  const auto time = std::filesystem::last_write_time(path, error);
  if (error) {
    return false;
  }
  const auto bytes = std::filesystem::file_size(path, error);
  if (error) {
    return false;
  }
  mtime = static_cast<int64_t>(time.time_since_epoch().count());
  size = static_cast<int64_t>(bytes);
  return true;
}

}  // namespace

LookupJoinOperator::LookupJoinOperator(Options options) : options_(std::move(options)) {}

void LookupJoinOperator::Open(const OperatorContext& context) {
  StreamOperator::Open(context);
  Load();
  if (options_.reload_interval_ms > 0) {
    ScheduleReload(processing_time().GetCurrentProcessingTime());
  }
}

void LookupJoinOperator::Load() {
  // Stat before reading: a change made while reading is then seen by the next check.
  int64_t mtime = 0;
  int64_t size = 0;
  if (std::error_code error; !FileVersion(options_.file.path, mtime, size, error)) {
    throw IoError(
        fmt::format("cannot open lookup table '{}': {}", options_.file.path, error.message()));
  }
  std::vector<Row> rows;
  absl::flat_hash_map<std::string, absl::InlinedVector<uint32_t, 1>> index;
  std::string key;
  options_.reader(options_.file, options_.table_schema, [&](const Row& row, int64_t /*line*/) {
    rows.push_back(row);
    if (EncodeKey(row, options_.table_key_slots, key)) {
      index[key].push_back(static_cast<uint32_t>(rows.size() - 1));
    }
  });
  rows_ = std::move(rows);
  index_ = std::move(index);
  file_mtime_ = mtime;
  file_size_ = size;
  ++loads_;
}

void LookupJoinOperator::ScheduleReload(Timestamp now) {
  reload_pending_ = true;
  reload_timer_ = processing_time().RegisterTimer(now + options_.reload_interval_ms,
                                                  [this](Timestamp time) { OnReloadTimer(time); });
}

void LookupJoinOperator::OnReloadTimer(Timestamp time) {
  reload_pending_ = false;
  int64_t mtime = 0;
  int64_t size = 0;
  // A file missing for a moment (replaced by a rename) is checked again at the next interval.
  if (std::error_code error; FileVersion(options_.file.path, mtime, size, error)) {
    if (mtime != file_mtime_ || size != file_size_) {
      Load();
    }
  }
  ScheduleReload(time);
}

void LookupJoinOperator::ProcessElement(StreamRecord& record, int /*input*/) {
  const absl::InlinedVector<uint32_t, 1>* matches = nullptr;
  if (EncodeKey(record.row, options_.left_key_slots, key_scratch_)) {
    auto it = index_.find(key_scratch_);
    if (it != index_.end()) {
      matches = &it->second;
    }
  }
  if (matches == nullptr) {
    ++misses_;
    if (!options_.inner) {
      EmitJoined(record, nullptr, true);
    }
    return;
  }
  for (size_t i = 0; i < matches->size(); ++i) {
    EmitJoined(record, &rows_[(*matches)[i]], i + 1 == matches->size());
  }
}

void LookupJoinOperator::EmitJoined(StreamRecord& record, const Row* table_row, bool last) {
  joined_.Reset(options_.output_layout);
  const size_t width = record.row.size();
  for (size_t i = 0; i < width; ++i) {
    joined_.CopyCell(i, record.row, i);
  }
  if (table_row != nullptr) {
    for (size_t i = 0; i < table_row->size(); ++i) {
      joined_.CopyCell(width + i, *table_row, i);
    }
  }
  if (last) {
    // The record itself carries the last (usually the only) row: swapping keeps both buffers.
    record.row.swap(joined_);
    output().Collect(record);
    return;
  }
  copy_.row.swap(joined_);
  copy_.timestamp = record.timestamp;
  copy_.has_timestamp = record.has_timestamp;
  output().Collect(copy_);
}

void LookupJoinOperator::Close() {
  if (reload_pending_) {
    processing_time().CancelTimer(reload_timer_);
    reload_pending_ = false;
  }
}

void LookupJoinOperator::CollectMetrics(MetricsWriter& out) const {
  out.Gauge("lookupTableRows", static_cast<int64_t>(rows_.size()));
  out.Gauge("lookupTableLoads", loads_);
  out.Gauge("lookupMisses", misses_);
}

}  // namespace tidemark
