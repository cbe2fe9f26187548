// The JSON Lines fast path on simdjson On-Demand (see text_input_simdjson.h).
//
// simdjson compiles its On-Demand API for one CPU target only (its "builtin" implementation);
// this file compiles it for AVX2 (simdjson's haswell kernel) inside a GCC target region, and
// MakeJsonFastPath hands it out only on a CPU that has those instructions. Every standard header
// is included before the region, so no code outside simdjson's namespace is compiled for AVX2.
// simdjson_inline is plain `inline` here: its forced inlining cannot cross the target boundary.

#include "sources/text_input_simdjson.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "sources/text_input.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TM_SIMDJSON_HASWELL 1
#pragma GCC push_options
#pragma GCC target("avx2,bmi,pclmul,lzcnt")
#define SIMDJSON_BUILTIN_IMPLEMENTATION haswell
#define simdjson_inline inline
#include <immintrin.h>
#include <simdjson.h>
#endif

namespace tidemark {

#if TM_SIMDJSON_HASWELL
namespace {

namespace od = simdjson::haswell::ondemand;
static_assert(LineReader::kLinePadding >= simdjson::SIMDJSON_PADDING);

// Walks a value the row does not use, so that the line is accepted only when it is valid JSON
// within the depth limit, as the nlohmann path requires (On-Demand skips lazily otherwise).
bool ValidateJson(od::value value, int depth) {
  od::json_type type;
  if (value.type().get(type) != simdjson::SUCCESS) {
    return false;
  }
  switch (type) {
    case od::json_type::array: {
      if (depth + 1 > kMaxJsonDepth) {
        return false;
      }
      od::array array;
      if (value.get_array().get(array) != simdjson::SUCCESS) {
        return false;
      }
      for (auto element : array) {
        od::value v;
        if (element.get(v) != simdjson::SUCCESS || !ValidateJson(v, depth + 1)) {
          return false;
        }
      }
      return true;
    }
    case od::json_type::object: {
      if (depth + 1 > kMaxJsonDepth) {
        return false;
      }
      od::object object;
      if (value.get_object().get(object) != simdjson::SUCCESS) {
        return false;
      }
      for (auto member : object) {
        od::field field;
        std::string_view key;
        if (std::move(member).get(field) != simdjson::SUCCESS ||
            field.unescaped_key().get(key) != simdjson::SUCCESS ||
            !ValidateJson(field.value(), depth + 1)) {
          return false;
        }
      }
      return true;
    }
    case od::json_type::number: {
      od::number n;
      return value.get_number().get(n) == simdjson::SUCCESS;
    }
    case od::json_type::string: {
      std::string_view s;
      return value.get_string().get(s) == simdjson::SUCCESS;
    }
    case od::json_type::boolean: {
      bool b = false;
      return value.get_bool().get(b) == simdjson::SUCCESS;
    }
    case od::json_type::null: {
      bool is_null = false;
      return value.is_null().get(is_null) == simdjson::SUCCESS && is_null;
    }
  }
  return false;
}

// Reads `value` into cell `slot` of `row` as `type` exactly as JsonToValue would; false when it
// does not fit (the slow path then gives the reason) or is not valid JSON.
bool ReadJsonInto(od::value value, FieldType type, Row& row, size_t slot) {
  od::json_type json_type;
  if (value.type().get(json_type) != simdjson::SUCCESS) {
    return false;
  }
  if (json_type == od::json_type::null) {
    bool is_null = false;
    if (value.is_null().get(is_null) != simdjson::SUCCESS || !is_null) {
      return false;
    }
    row.SetNull(slot);
    return true;
  }
  switch (type) {
    case FieldType::kString: {
      std::string_view s;
      if (json_type != od::json_type::string || value.get_string().get(s) != simdjson::SUCCESS) {
        return false;
      }
      row.SetString(slot, s);
      return true;
    }
    case FieldType::kBool: {
      bool b = false;
      if (json_type != od::json_type::boolean || value.get_bool().get(b) != simdjson::SUCCESS) {
        return false;
      }
      row.SetBool(slot, b);
      return true;
    }
    case FieldType::kInt64:
    case FieldType::kTimestamp: {
      int64_t v = 0;
      if (json_type != od::json_type::number || value.get_int64().get(v) != simdjson::SUCCESS) {
        return false;  // a fraction, an exponent or out of range: the slow path decides
      }
      row.SetInt64(slot, v);
      return true;
    }
    case FieldType::kDouble: {
      double v = 0;
      if (json_type != od::json_type::number || value.get_double().get(v) != simdjson::SUCCESS) {
        return false;
      }
      row.SetDouble(slot, v);
      return true;
    }
  }
  return false;
}


// Whether one of the `size` bytes at `data` is below 0x20. Reads only those bytes: 32 at a time,
// then the tail one by one. It runs on the caller's line, before the line is copied into the
// padded buffer: reading that buffer right after writing it stalled on store forwarding (wide
// loads over the narrower stores of the copy), about 4% of a file scan.
bool HasControlCharacter(const char* data, size_t size) {
  const __m256i limit = _mm256_set1_epi8(0x20);
  __m256i any = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
    any = _mm256_or_si256(any, _mm256_subs_epu8(limit, bytes));  // nonzero where byte < 0x20
  }
  unsigned char below = 0;
  for (; i < size; ++i) {
    below |= static_cast<unsigned char>(static_cast<unsigned char>(data[i]) < 0x20);
  }
  return below != 0 || _mm256_testz_si256(any, any) == 0;
}

class HaswellJsonFastPath final : public JsonFastPath {
 public:
  explicit HaswellJsonFastPath(const Schema& s) : schema(s), seen(s.size()), plain_name(s.size()) {
    for (size_t i = 0; i < s.size(); ++i) {
      const std::string& name = s.field(i).name;
      plain_name[i] = name.size() <= simdjson::SIMDJSON_PADDING && name.find_first_of("\"\\") == std::string::npos;
    }
  }

  bool Decode(std::string_view line, bool in_place, Row& row) override {
    return FastJson(line, in_place, row);
  }

 private:
  int SlotOf(std::string_view key, size_t& hint) const {
    const size_t n = schema.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = hint + k < n ? hint + k : hint + k - n;
      if (schema.field(i).name == key) {
        hint = i + 1 < n ? i + 1 : 0;  // keys usually come in schema order
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  // The slot whose name the key is, compared in its raw (still escaped) form: no unescaping
  // copy. Only names without a quote or backslash are compared so (then equal raw bytes
  // followed by the closing quote mean the same key); -1 otherwise, and the caller unescapes.
  int RawSlotOf(od::raw_json_string key, size_t& hint) const {
    const size_t n = schema.size();
    for (size_t k = 0; k < n; ++k) {
      const size_t i = hint + k < n ? hint + k : hint + k - n;
      if (plain_name[i] != 0 && key.unsafe_is_equal(schema.field(i).name)) {
        hint = i + 1 < n ? i + 1 : 0;
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  // flatten: simdjson_inline is plain inline in this file (see the top), so the iterators are
  // inlined here explicitly; without it they go through memory (store-forwarding stalls).
  __attribute__((flatten)) bool FastJson(std::string_view line, bool in_place, Row& row) {
    // A raw control character is invalid inside a string (nlohmann refuses it; simdjson may
    // not): such lines, and lines with tabs between tokens, take the slow path.
    if (HasControlCharacter(line.data(), line.size())) {
      return false;
    }
    // In place, the bytes after the line are not spaces but whitespace and then more input;
    // simdjson reads padding only past a token that ends inside the line (a number, an atom,
    // a string's 32-byte blocks) and stops at that whitespace, as at a padding space.
    const char* json = line.data();
    size_t capacity = line.size() + LineReader::kLinePadding;
    if (!in_place) {
      padded.assign(line.data(), line.size());
      padded.append(simdjson::SIMDJSON_PADDING, ' ');
      json = padded.data();
      capacity = padded.size();
    }
    od::document doc;
    if (parser.iterate(json, line.size(), capacity).get(doc) != simdjson::SUCCESS) {
      return false;
    }
    od::object object;
    if (doc.get_object().get(object) != simdjson::SUCCESS) {
      return false;
    }
    std::fill(seen.begin(), seen.end(), 0);
    size_t hint = 0;
    for (auto member : object) {
      od::field field;
      if (std::move(member).get(field) != simdjson::SUCCESS) {
        return false;
      }
      int slot = RawSlotOf(field.key(), hint);
      if (slot < 0) {
        std::string_view key;
        if (field.unescaped_key().get(key) != simdjson::SUCCESS) {
          return false;
        }
        slot = SlotOf(key, hint);
      }
      if (slot < 0) {
        if (!ValidateJson(field.value(), 1)) {
          return false;
        }
        continue;
      }
      // A repeated key: the last one wins, as in nlohmann's object.
      if (!ReadJsonInto(field.value(), schema.field(static_cast<size_t>(slot)).type, row,
                        static_cast<size_t>(slot))) {
        return false;
      }
      seen[static_cast<size_t>(slot)] = 1;
    }
    // The object must be the whole line: no token after its closing brace (which the loop has
    // just consumed; JSON whitespace is no token). Checked here rather than with raw_json()
    // up front, which walked the whole object once more before the fields were read.
    const char* trailing = nullptr;
    if (doc.current_location().get(trailing) != simdjson::OUT_OF_BOUNDS) {
      return false;
    }
    for (size_t i = 0; i < seen.size(); ++i) {
      if (seen[i] == 0) {
        row.SetNull(i);  // missing is NULL
      }
    }
    return true;
  }

  const Schema& schema;
  od::parser parser;
  std::string padded;         // the line followed by simdjson's padding
  std::vector<uint8_t> seen;  // per slot: set by this line
  std::vector<uint8_t> plain_name;  // per slot: RawSlotOf may compare its name raw
};

}  // namespace

#pragma GCC pop_options
#endif  // TM_SIMDJSON_HASWELL

std::unique_ptr<JsonFastPath> MakeJsonFastPath(const Schema& schema) {
#if TM_SIMDJSON_HASWELL
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
      __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("lzcnt")) {
    return std::make_unique<HaswellJsonFastPath>(schema);
  }
#endif
  (void)schema;
  return nullptr;
}

}  // namespace tidemark
