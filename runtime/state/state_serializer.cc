#include "runtime/state/state_serializer.h"

#include <bit>
#include <cstring>

namespace tidemark {
namespace {

static_assert(std::endian::native == std::endian::little, "snapshot format is little-endian");

enum ValueTag : uint8_t { kNull = 0, kInt64 = 1, kDouble = 2, kBool = 3, kString = 4 };

template <typename T>
void Append(std::string& buf, T v) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &v, sizeof(T));
  buf.append(bytes, sizeof(T));
}

}  // namespace

void StateWriter::WriteU8(uint8_t v) {
  buf_.push_back(static_cast<char>(v));
}
void StateWriter::WriteU32(uint32_t v) {
  Append(buf_, v);
}
void StateWriter::WriteI64(int64_t v) {
  Append(buf_, v);
}
void StateWriter::WriteF64(double v) {
  Append(buf_, v);
}
void StateWriter::WriteBool(bool v) {
  WriteU8(v ? 1 : 0);
}

void StateWriter::WriteString(std::string_view v) {
  TM_CHECK(v.size() <= UINT32_MAX, "state string of {} bytes", v.size());
  WriteU32(static_cast<uint32_t>(v.size()));
  buf_.append(v);
}

void StateWriter::WriteValue(const Value& v) {
  switch (v.index()) {
    case 0:
      WriteU8(kNull);
      break;
    case 1:
      WriteU8(kInt64);
      WriteI64(std::get<int64_t>(v));
      break;
    case 2:
      WriteU8(kDouble);
      WriteF64(std::get<double>(v));
      break;
    case 3:
      WriteU8(kBool);
      WriteBool(std::get<bool>(v));
      break;
    default:
      WriteU8(kString);
      WriteString(std::get<std::string>(v));
      break;
  }
}

void StateWriter::WriteRow(const Row& row) {
  WriteU32(static_cast<uint32_t>(row.size()));
  for (size_t i = 0; i < row.size(); ++i) {
    if (row.IsNull(i)) {
      WriteU8(kNull);
      continue;
    }
    switch (row.type(i)) {
      case FieldType::kInt64:
      case FieldType::kTimestamp:
        WriteU8(kInt64);
        WriteI64(row.GetInt64(i));
        break;
      case FieldType::kDouble:
        WriteU8(kDouble);
        WriteF64(row.GetDouble(i));
        break;
      case FieldType::kBool:
        WriteU8(kBool);
        WriteBool(row.GetBool(i));
        break;
      case FieldType::kString:
        WriteU8(kString);
        WriteString(row.GetString(i));
        break;
    }
  }
}

void StateWriter::WriteKey(const Key& key) {
  WriteU32(static_cast<uint32_t>(key.size()));
  for (const Value& v : key) {
    WriteValue(v);
  }
}

void StateWriter::BeginSection(std::string_view name, uint32_t version) {
  WriteString(name);
  WriteU32(version);
  open_sections_.push_back(buf_.size());
  WriteI64(0);  // body length, patched by EndSection
}

void StateWriter::EndSection() {
  TM_CHECK(!open_sections_.empty(), "StateWriter::EndSection without BeginSection");
  const size_t at = open_sections_.back();
  open_sections_.pop_back();
  const int64_t len = static_cast<int64_t>(buf_.size() - at - sizeof(int64_t));
  std::memcpy(buf_.data() + at, &len, sizeof(len));
}

void StateWriter::BeginBlock(StateBlock::Kind kind) {
  TM_CHECK(open_block_ < 0, "StateWriter: state blocks do not nest");
  StateBlock b;
  b.kind = kind;
  b.begin = buf_.size();
  b.enclosing.assign(open_sections_.begin(), open_sections_.end());
  open_block_ = static_cast<int>(blocks_.size());
  blocks_.push_back(std::move(b));
}

void StateWriter::EndBlock(StateBlock::Kind kind) {
  TM_CHECK(open_block_ >= 0 && blocks_[static_cast<size_t>(open_block_)].kind == kind,
           "StateWriter: a state block ends that was not begun");
  StateBlock& b = blocks_[static_cast<size_t>(open_block_)];
  TM_CHECK(b.enclosing.size() == open_sections_.size(),
           "StateWriter: a state block ends in another section than it began");
  b.end = buf_.size();
  open_block_ = -1;
}

void StateWriter::BeginKeyGroups() {
  BeginBlock(StateBlock::Kind::kKeyGroups);
}
void StateWriter::EndKeyGroups() {
  EndBlock(StateBlock::Kind::kKeyGroups);
}

void StateWriter::BeginList(uint32_t count) {
  BeginBlock(StateBlock::Kind::kList);
  WriteU32(count);
}

void StateWriter::NextListElement() {
  TM_CHECK(
      open_block_ >= 0 && blocks_[static_cast<size_t>(open_block_)].kind == StateBlock::Kind::kList,
      "StateWriter::NextListElement outside a list");
  blocks_[static_cast<size_t>(open_block_)].elements.push_back(buf_.size());
}

void StateWriter::EndList() {
  EndBlock(StateBlock::Kind::kList);
}

std::string_view StateReader::Take(size_t n) {
  const size_t limit = section_ends_.empty() ? data_.size() : section_ends_.back();
  if (n > limit - pos_) {
    throw StateCorrupt(fmt::format("state truncated: {} bytes wanted at offset {}, {} left", n,
                                   pos_, limit - pos_));
  }
  std::string_view out = data_.substr(pos_, n);
  pos_ += n;
  return out;
}

uint8_t StateReader::ReadU8() {
  return static_cast<uint8_t>(Take(1)[0]);
}

#define TM_READ_FIXED(T)                              \
  T v;                                                \
  std::memcpy(&v, Take(sizeof(T)).data(), sizeof(T)); \
  return v

uint32_t StateReader::ReadU32() {
  TM_READ_FIXED(uint32_t);
}
int64_t StateReader::ReadI64() {
  TM_READ_FIXED(int64_t);
}
double StateReader::ReadF64() {
  TM_READ_FIXED(double);
}
#undef TM_READ_FIXED

bool StateReader::ReadBool() {
  const uint8_t b = ReadU8();
  if (b > 1) {
    throw StateCorrupt(fmt::format("state: bool byte {} at offset {}", b, pos_ - 1));
  }
  return b == 1;
}

std::string StateReader::ReadString() {
  const uint32_t n = ReadU32();
  return std::string(Take(n));
}

Value StateReader::ReadValue() {
  const uint8_t tag = ReadU8();
  switch (tag) {
    case kNull:
      return Value{};
    case kInt64:
      return Value(ReadI64());
    case kDouble:
      return Value(ReadF64());
    case kBool:
      return Value(ReadBool());
    case kString:
      return Value(ReadString());
    default:
      throw StateCorrupt(fmt::format("state: unknown value tag {} at offset {}", tag, pos_ - 1));
  }
}

Row StateReader::ReadRow(const RowLayout* layout) {
  const uint32_t n = ReadU32();
  if (n != layout->size()) {
    throw StateCorrupt(
        fmt::format("state: a row of {} fields where the schema has {}", n, layout->size()));
  }
  Row row(layout);
  for (uint32_t i = 0; i < n; ++i) {
    const size_t at = pos_;
    const uint8_t tag = ReadU8();
    const FieldType t = layout->type(i);
    const uint8_t want = t == FieldType::kDouble   ? kDouble
                         : t == FieldType::kBool   ? kBool
                         : t == FieldType::kString ? kString
                                                   : kInt64;
    if (tag == kNull) {
      continue;  // Row(layout) starts all NULL
    }
    if (tag != want) {
      throw StateCorrupt(
          fmt::format("state: value tag {} at offset {} in a {} field", tag, at, ToString(t)));
    }
    switch (tag) {
      case kInt64:
        row.SetBits(i, static_cast<uint64_t>(ReadI64()));
        break;
      case kDouble:
        row.SetDouble(i, ReadF64());
        break;
      case kBool:
        row.SetBool(i, ReadBool());
        break;
      default: {
        const uint32_t len = ReadU32();
        row.SetString(i, Take(len));
        break;
      }
    }
  }
  return row;
}

Key StateReader::ReadKey() {
  const uint32_t n = ReadU32();
  // Each value takes at least one byte: a larger arity is corrupt, not an allocation to try.
  if (n > remaining()) {
    throw StateCorrupt(fmt::format("state: key arity {} exceeds {} bytes left", n, remaining()));
  }
  Key key;
  key.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    key.push_back(ReadValue());
  }
  return key;
}

uint32_t StateReader::BeginSection(std::string_view name, uint32_t max_version) {
  const std::string got = ReadString();
  if (got != name) {
    throw StateCorrupt(fmt::format("state: section '{}' where '{}' was expected", got, name));
  }
  const uint32_t version = ReadU32();
  if (version > max_version) {
    throw StateCorrupt(fmt::format("state: section '{}' has version {}, this build reads up to {}",
                                   name, version, max_version));
  }
  const int64_t len = ReadI64();
  const size_t limit = section_ends_.empty() ? data_.size() : section_ends_.back();
  if (len < 0 || static_cast<uint64_t>(len) > limit - pos_) {
    throw StateCorrupt(
        fmt::format("state: section '{}' of {} bytes, {} left", name, len, limit - pos_));
  }
  section_ends_.push_back(pos_ + static_cast<size_t>(len));
  return version;
}

void StateReader::EndSection() {
  TM_CHECK(!section_ends_.empty(), "StateReader::EndSection without BeginSection");
  pos_ = section_ends_.back();
  section_ends_.pop_back();
}

}  // namespace tidemark

#include "runtime/state/state_codec.h"

namespace tidemark {

void WriteRecord(StateWriter& writer, const StreamRecord& record) {
  writer.WriteBool(record.has_timestamp);
  writer.WriteI64(record.timestamp);
  writer.WriteRow(record.row);
}

StreamRecord ReadRecord(StateReader& reader, const RowLayout* layout) {
  StreamRecord r;
  r.has_timestamp = reader.ReadBool();
  r.timestamp = reader.ReadI64();
  r.row = reader.ReadRow(layout);
  return r;
}

}  // namespace tidemark
