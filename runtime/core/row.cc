#include "runtime/core/row.h"

#include <absl/container/flat_hash_map.h>
#include <cmath>
#include <memory>

#include <nlohmann/json.hpp>

#include "runtime/core/errors.h"
#include "runtime/core/mutex.h"

namespace tidemark {

const char* ToString(FieldType t) {
  switch (t) {
    case FieldType::kInt64:
      return "int64";
    case FieldType::kDouble:
      return "double";
    case FieldType::kBool:
      return "bool";
    case FieldType::kString:
      return "string";
    case FieldType::kTimestamp:
      return "timestamp";
  }
  return "?";
}

std::optional<FieldType> ParseFieldType(std::string_view s) {
  if (s == "int64" || s == "long" || s == "int") {
    return FieldType::kInt64;
  }
  if (s == "double") {
    return FieldType::kDouble;
  }
  if (s == "bool") {
    return FieldType::kBool;
  }
  if (s == "string") {
    return FieldType::kString;
  }
  if (s == "timestamp") {
    return FieldType::kTimestamp;
  }
  return std::nullopt;
}

namespace {
nlohmann::json ToJson(const Value& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, double>) {
          // NaN and the infinities as strings, as Flink's JSON format (Jackson) writes them.
          return std::isfinite(x) ? nlohmann::json(x)
                 : std::isnan(x)  ? nlohmann::json("NaN")
                                  : nlohmann::json(x > 0 ? "Infinity" : "-Infinity");
        } else {
          return x;
        }
      },
      v);
}

// Strings hold whatever bytes the input had (a CSV field, a constant); invalid UTF-8 becomes
// U+FFFD instead of throwing, so one bad record cannot fail the sink that prints it.
template <typename Json>
std::string Dump(const Json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}
}  // namespace

std::string ValueToJson(const Value& v) {
  return Dump(ToJson(v));
}

std::optional<double> AsDouble(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return static_cast<double>(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return *d;
  }
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b ? 1.0 : 0.0;
  }
  return std::nullopt;
}

std::optional<int64_t> AsInt64(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    return *i;
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return static_cast<int64_t>(*d);
  }
  if (const auto* b = std::get_if<bool>(&v)) {
    return *b ? 1 : 0;
  }
  return std::nullopt;
}

// ---- RowLayout ----

RowLayout::RowLayout(std::vector<FieldType> types) : types_(std::move(types)) {
  fixed_words_ = types_.size() + (types_.size() + 63) / 64;
  for (FieldType t : types_) {
    has_strings_ = has_strings_ || t == FieldType::kString;
  }
}

// The process-wide set of layouts. A job has a handful of schemas, so the set stays small; the
// lock is taken when a job is compiled or an operator opens, never per record.
class LayoutRegistry {
 public:
  static LayoutRegistry& Instance() {
    static auto* registry = new LayoutRegistry();  // never destroyed: layouts outlive every row
    return *registry;
  }
  const RowLayout* Of(const std::vector<FieldType>& types) {
    std::string key(types.size(), '\0');
    for (size_t i = 0; i < types.size(); ++i) {
      key[i] = static_cast<char>(types[i]);
    }
    MutexLock lock(mu_);
    auto& slot = layouts_[key];
    if (slot == nullptr) {
      slot.reset(new RowLayout(types));
    }
    return slot.get();
  }

 private:
  Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<RowLayout>> layouts_ ABSL_GUARDED_BY(mu_);
};

const RowLayout* RowLayout::Of(const std::vector<FieldType>& types) {
  return LayoutRegistry::Instance().Of(types);
}

const RowLayout* RowLayout::Empty() {
  static const RowLayout* empty = Of({});
  return empty;
}

bool RowLayout::StoresAs(const RowLayout& other) const {
  if (this == &other) {
    return true;
  }
  if (size() != other.size()) {
    return false;
  }
  auto storage = [](FieldType t) {
    return t == FieldType::kTimestamp ? FieldType::kInt64 : t;
  };
  for (size_t i = 0; i < size(); ++i) {
    if (storage(types_[i]) != storage(other.types_[i])) {
      return false;
    }
  }
  return true;
}

const RowLayout* RowLayout::Extend(const RowLayout* base, const std::vector<FieldType>& extra) {
  std::vector<FieldType> types = base->types();
  types.insert(types.end(), extra.begin(), extra.end());
  return Of(types);
}

// ---- Schema ----

int Schema::IndexOf(std::string_view name) const {
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int Schema::Add(std::string name, FieldType type) {
  fields_.push_back(Field{std::move(name), type});
  return static_cast<int>(fields_.size() - 1);
}

const RowLayout* Schema::layout() const {
  std::vector<FieldType> types;
  types.reserve(fields_.size());
  for (const Field& f : fields_) {
    types.push_back(f.type);
  }
  return RowLayout::Of(types);
}

std::string Schema::RowToJson(const Row& row) const {
  nlohmann::ordered_json obj = nlohmann::ordered_json::object();
  for (size_t i = 0; i < fields_.size() && i < row.size(); ++i) {
    obj[fields_[i].name] = ToJson(row.Get(i));
  }
  return Dump(obj);
}

// ---- Row ----

namespace {
FieldType InferType(const Value& v) {
  switch (v.index()) {
    case 2:
      return FieldType::kDouble;
    case 3:
      return FieldType::kBool;
    case 4:
      return FieldType::kString;
    default:
      return FieldType::kInt64;
  }
}
}  // namespace

Row::Row(std::initializer_list<Value> values) {
  std::vector<FieldType> types;
  types.reserve(values.size());
  for (const Value& v : values) {
    types.push_back(InferType(v));
  }
  Reset(RowLayout::Of(types));
  size_t i = 0;
  for (const Value& v : values) {
    Set(i++, v);
  }
}

Row Row::FromValues(const std::vector<Value>& values) {
  std::vector<FieldType> types;
  types.reserve(values.size());
  for (const Value& v : values) {
    types.push_back(InferType(v));
  }
  return Of(RowLayout::Of(types), values);
}

Row Row::Of(const RowLayout* layout, const std::vector<Value>& values) {
  TM_CHECK(values.size() == layout->size(), "Row::Of: {} values for a layout of {} fields",
           values.size(), layout->size());
  Row row(layout);
  for (size_t i = 0; i < values.size(); ++i) {
    row.Set(i, values[i]);
  }
  return row;
}

void Row::Reserve(size_t words, size_t keep_bytes) {
  if (words <= cap_words_) {
    return;
  }
  size_t cap = std::max<size_t>(words, static_cast<size_t>(cap_words_) * 2);
  if (cap > UINT32_MAX) {
    throw InvalidArgument("a row larger than 32 GiB");
  }
  auto* fresh = new uint64_t[cap];
  if (keep_bytes > 0) {
    std::memcpy(fresh, buf_, keep_bytes);
  }
  delete[] buf_;
  buf_ = fresh;
  cap_words_ = static_cast<uint32_t>(cap);
}

void Row::ResetSlow(const RowLayout* layout) {
  layout_ = layout;
  heap_bytes_ = 0;
  size_ = static_cast<uint32_t>(layout->size());
  fixed_words_ = static_cast<uint32_t>(layout->fixed_words());
  if (size_ == 0) {
    return;
  }
  Reserve(fixed_words_, 0);
  // Every field NULL; the bits past the last field stay 0, so AnyNull reads whole words.
  if (fixed_words_ - size_ == 1) {
    buf_[size_] = ~uint64_t{0};  // up to 64 fields: one word, no memset call per row
  } else {
    std::memset(buf_ + size_, 0xFF, static_cast<size_t>(fixed_words_ - size_) * 8);
  }
  if (const uint32_t tail = size_ % 64; tail != 0) {
    buf_[fixed_words_ - 1] = (uint64_t{1} << tail) - 1;
  }
}

void Row::CopyFrom(const Row& other) {
  layout_ = other.layout_;
  heap_bytes_ = other.heap_bytes_;
  size_ = other.size_;
  fixed_words_ = other.fixed_words_;
  const size_t bytes = static_cast<size_t>(fixed_words_) * 8 + heap_bytes_;
  if (bytes == 0) {
    return;
  }
  Reserve((bytes + 7) / 8, 0);
  std::memcpy(buf_, other.buf_, bytes);
}

void Row::SetStringSlow(size_t i, std::string_view v) {
  if (v.size() > UINT32_MAX) {
    throw InvalidArgument("a string longer than 4 GiB");
  }
  const auto len = static_cast<uint32_t>(v.size());
  if (!IsNull(i) && (buf_[i] & 0xFFFFFFFFu) >= len) {
    // Fits where the old string was: overwrite (memmove: `v` may overlap it).
    const uint64_t off = buf_[i] >> 32;
    std::memmove(Heap() + off, v.data(), len);
    buf_[i] = (off << 32) | len;
    return;
  }
  const size_t fixed_bytes = static_cast<size_t>(fixed_words_) * 8;
  if (heap_bytes_ >= 4096 && !IsInside(v)) {
    CompactStrings();  // bytes of replaced strings: dropped before the buffer grows for them
  }
  const size_t off = heap_bytes_;
  const size_t need = fixed_bytes + off + len;
  const char* src = v.data();
  // `v` may point into this buffer, which growing frees: remember where.
  const bool inside = IsInside(v);
  const size_t src_off =
      inside ? static_cast<size_t>(src - reinterpret_cast<const char*>(buf_)) : 0;
  Reserve((need + 7) / 8, fixed_bytes + off);
  if (inside) {
    src = reinterpret_cast<const char*>(buf_) + src_off;
  }
  if (off + len > UINT32_MAX) {
    throw InvalidArgument("a row's strings longer than 4 GiB");
  }
  std::memcpy(Heap() + off, src, len);
  heap_bytes_ = static_cast<uint32_t>(off + len);
  buf_[i] = (static_cast<uint64_t>(off) << 32) | len;
  MarkSet(i);
}

bool Row::IsInside(std::string_view v) const {
  const char* base = reinterpret_cast<const char*>(buf_);
  return buf_ != nullptr && v.data() >= base &&
         v.data() < base + static_cast<size_t>(cap_words_) * 8;
}

void Row::CompactStrings() {
  size_t live = 0;
  for (size_t i = 0; i < size_; ++i) {
    if (type(i) == FieldType::kString && !IsNull(i)) {
      live += buf_[i] & 0xFFFFFFFFu;
    }
  }
  if (live * 2 > heap_bytes_) {
    return;  // mostly live: compacting would not pay
  }
  std::string bytes;
  bytes.reserve(live);
  for (size_t i = 0; i < size_; ++i) {
    if (type(i) == FieldType::kString && !IsNull(i)) {
      const uint64_t len = buf_[i] & 0xFFFFFFFFu;
      const uint64_t off = bytes.size();
      bytes.append(Heap() + (buf_[i] >> 32), len);
      buf_[i] = (off << 32) | len;
    }
  }
  std::memcpy(Heap(), bytes.data(), bytes.size());
  heap_bytes_ = static_cast<uint32_t>(bytes.size());
}

void Row::CopyCell(size_t i, const Row& from, size_t from_slot) {
  if (from.IsNull(from_slot)) {
    SetNull(i);
  } else if (from.type(from_slot) == FieldType::kString) {
    SetString(i, from.GetString(from_slot));
  } else {
    SetBits(i, from.GetBits(from_slot));
  }
}

void Row::Widen(const RowLayout* wider) {
  TM_CHECK(wider->size() >= size(), "Row::Widen to {} fields from {}", wider->size(), size());
  Row out(wider);
  for (size_t i = 0; i < size(); ++i) {
    TM_CHECK(wider->type(i) == type(i), "Row::Widen: field {} changes type", i);
    out.CopyCell(i, *this, i);
  }
  swap(out);
}

Value Row::Get(size_t i) const {
  if (IsNull(i)) {
    return Value{};
  }
  switch (type(i)) {
    case FieldType::kInt64:
    case FieldType::kTimestamp:
      return Value(static_cast<int64_t>(buf_[i]));
    case FieldType::kDouble:
      return Value(std::bit_cast<double>(buf_[i]));
    case FieldType::kBool:
      return Value(buf_[i] != 0);
    case FieldType::kString:
      return Value(std::string(GetString(i)));
  }
  return Value{};
}

void Row::Set(size_t i, const Value& v) {
  const FieldType t = type(i);
  switch (v.index()) {
    case 0:
      SetNull(i);
      return;
    case 1: {
      const int64_t x = std::get<int64_t>(v);
      if (t == FieldType::kDouble) {
        SetBits(i, std::bit_cast<uint64_t>(static_cast<double>(x)));
        return;
      }
      if (t == FieldType::kBool) {
        SetBits(i, x != 0 ? 1 : 0);
        return;
      }
      if (t != FieldType::kString) {
        SetBits(i, static_cast<uint64_t>(x));
        return;
      }
      break;
    }
    case 2: {
      const double x = std::get<double>(v);
      if (t == FieldType::kDouble) {
        SetBits(i, std::bit_cast<uint64_t>(x));
        return;
      }
      if (t == FieldType::kInt64 || t == FieldType::kTimestamp) {
        SetBits(i, static_cast<uint64_t>(static_cast<int64_t>(x)));
        return;
      }
      break;
    }
    case 3: {
      const bool x = std::get<bool>(v);
      if (t == FieldType::kDouble) {
        SetBits(i, std::bit_cast<uint64_t>(x ? 1.0 : 0.0));
        return;
      }
      if (t != FieldType::kString) {
        SetBits(i, x ? 1 : 0);
        return;
      }
      break;
    }
    default:
      if (t == FieldType::kString) {
        SetString(i, std::get<std::string>(v));
        return;
      }
      break;
  }
  throw InvalidArgument(fmt::format("cannot store {} in a {} field", ValueToJson(v), ToString(t)));
}

std::vector<Value> Row::ToValues() const {
  std::vector<Value> out;
  out.reserve(size());
  for (size_t i = 0; i < size(); ++i) {
    out.push_back(Get(i));
  }
  return out;
}

bool operator==(const Row& a, const Row& b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (size_t i = 0; i < a.size(); ++i) {
    const bool an = a.IsNull(i);
    if (an != b.IsNull(i)) {
      return false;
    }
    if (an) {
      continue;
    }
    if (a.type(i) == b.type(i) && a.type(i) != FieldType::kDouble &&
        a.type(i) != FieldType::kString) {
      if (a.GetBits(i) != b.GetBits(i)) {
        return false;
      }
    } else if (!(a.Get(i) == b.Get(i))) {
      return false;
    }
  }
  return true;
}

bool operator<(const Row& a, const Row& b) {
  return a.ToValues() < b.ToValues();
}

std::ostream& operator<<(std::ostream& os, const Row& row) {
  os << '[';
  for (size_t i = 0; i < row.size(); ++i) {
    if (i > 0) {
      os << ", ";
    }
    os << ValueToJson(row.Get(i));
  }
  return os << ']';
}

void Row::DCheckTypeSlow(size_t i, FieldType t) const {
  TM_CHECK(i < size(), "row slot {} out of range (row of {} fields)", i, size());
  const FieldType actual = type(i);
  const bool ok = actual == t || (t == FieldType::kInt64 && actual == FieldType::kTimestamp);
  TM_CHECK(ok, "row slot {} is {}, read or written as {}", i, ToString(actual), ToString(t));
}

}  // namespace tidemark
