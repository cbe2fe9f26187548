// The JSON Lines fast path on simdjson On-Demand (see text_input_simdjson.h).
//
// simdjson compiles its On-Demand API for one CPU target only (its "builtin" implementation);
// this file compiles it for AVX2 (simdjson's haswell kernel) inside a GCC target region, and
// MakeJsonFastPath hands it out only on a CPU that has those instructions. Every standard header
// is included before the region, so no code outside simdjson's namespace is compiled for AVX2.
// simdjson_inline is plain `inline` here: its forced inlining cannot cross the target boundary.

#include "sources/text_input_simdjson.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string.h>  // memrchr
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

// A JSON integer token of at most 15 digits (`raw`: the token as On-Demand's raw_json_token gives
// it, from its first byte to the next token, so maybe followed by whitespace; at least 16 bytes
// readable after its first digit, which the line's padding guarantees) into `out`: the value
// simdjson's get_int64 gives it, without its digit-by-digit loop (a chain of multiplies, about a
// tenth of a file scan's time on 13-digit millisecond timestamps). False, and the caller asks
// get_int64, for anything else: a longer number, a fraction or exponent, a leading zero, a bare
// '-', bytes after the digits that are not whitespace.
bool ParseShortInteger(std::string_view raw, int64_t& out) {
  const char* p = raw.data();
  const bool negative = !raw.empty() && *p == '-';
  p += negative ? 1 : 0;
  const __m128i digits =
      _mm_sub_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), _mm_set1_epi8('0'));
  // Digit bytes are 0..9 after the subtraction; every other byte is larger as unsigned.
  const auto is_digit = static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(digits, _mm_set1_epi8(9)), digits)));
  const uint32_t not_digit = ~is_digit & 0xFFFFu;
  if (not_digit == 0) {
    return false;  // 16 digits or more
  }
  const auto n = static_cast<unsigned>(__builtin_ctz(not_digit));
  const char* const end = raw.data() + raw.size();
  if (n == 0 || (n > 1 && *p == '0') || p + n > end) {
    return false;
  }
  for (const char* q = p + n; q < end; ++q) {
    if (*q != ' ' && *q != '\t' && *q != '\r' && *q != '\n') {
      return false;
    }
  }
  // The n digits moved to the high end of 16 bytes with zeros before them, then combined in
  // pairs, fours and eights: two 8-digit halves.
  const __m128i shift = _mm_add_epi8(
      _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
      _mm_set1_epi8(static_cast<char>(static_cast<int>(n) - 16)));  // negative: a zero byte
  const __m128i aligned = _mm_shuffle_epi8(digits, shift);
  const __m128i pairs = _mm_maddubs_epi16(
      aligned, _mm_setr_epi8(10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1));
  const __m128i fours = _mm_madd_epi16(pairs, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
  const __m128i packed = _mm_packus_epi32(fours, fours);
  const __m128i eights =
      _mm_madd_epi16(packed, _mm_setr_epi16(10000, 1, 10000, 1, 10000, 1, 10000, 1));
  const auto high = static_cast<uint64_t>(static_cast<uint32_t>(_mm_cvtsi128_si32(eights)));
  const auto low = static_cast<uint64_t>(static_cast<uint32_t>(_mm_extract_epi32(eights, 1)));
  const auto magnitude = static_cast<int64_t>(high * 100000000u + low);
  out = negative ? -magnitude : magnitude;
  return true;
}

// The characters of a JSON string value without escapes, from its token (`raw`, as
// raw_json_token gives it: the opening quote to the next token, so maybe whitespace after the
// closing quote; readable bytes after it, the line's padding), into `out`: what get_string
// gives it, without unescaping a copy into the parser's string buffer. UTF-8 and control
// characters are checked before (simdjson's stage 1, HasControlCharacter). False, and the
// caller asks get_string, when the string has a backslash, or when the next token is not the
// ',' or '}' a member value is followed by (the object's iteration steps over the unread value
// and finds any other there an error only so).
bool PlainString(std::string_view raw, std::string_view& out) {
  size_t end = raw.size();
  while (end > 0 && (raw[end - 1] == ' ' || raw[end - 1] == '\t' || raw[end - 1] == '\r' ||
                     raw[end - 1] == '\n')) {
    --end;
  }
  const char next = raw.data()[raw.size()];
  if (end < 2 || raw[end - 1] != '"' || (next != ',' && next != '}')) {
    return false;
  }
  // No quote or backslash among the characters: 32 bytes at a time, the last load's bytes past
  // them masked off (they are followed by the line's padding).
  const char* const chars = raw.data() + 1;
  const size_t size = end - 2;
  for (size_t i = 0; i < size; i += 32) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(chars + i));
    auto special = static_cast<uint32_t>(
        _mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(bytes, _mm256_set1_epi8('"')),
                                             _mm256_cmpeq_epi8(bytes, _mm256_set1_epi8('\\')))));
    if (size - i < 32) {
      special &= (uint32_t{1} << (size - i)) - 1;
    }
    if (special != 0) {
      return false;
    }
  }
  out = std::string_view(chars, size);
  return true;
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
      if (json_type != od::json_type::string) {
        return false;
      }
      if (!PlainString(value.raw_json_token(), s) &&
          value.get_string().get(s) != simdjson::SUCCESS) {
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
      if (json_type != od::json_type::number) {
        return false;
      }
      // A short integer is read from its token and left to the object's iteration to step over
      // (On-Demand skips a scalar nobody read); any other number goes to get_int64.
      if (!ParseShortInteger(value.raw_json_token(), v) &&
          value.get_int64().get(v) != simdjson::SUCCESS) {
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

// HasControlCharacter for a line followed by at least 32 readable bytes (a lent line and its
// padding, LineReader::kLinePadding): the tail is one more 32-byte load, its bytes past the
// line masked off, instead of a loop over up to 31 bytes.
bool HasControlCharacterPadded(const char* data, size_t size) {
  static_assert(LineReader::kLinePadding >= 32);
  const __m256i limit = _mm256_set1_epi8(0x20);
  const __m256i zero = _mm256_setzero_si256();
  __m256i any = zero;
  size_t i = 0;
  for (; i + 32 <= size; i += 32) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i));
    any = _mm256_or_si256(any, _mm256_subs_epu8(limit, bytes));  // nonzero where byte < 0x20
  }
  const __m256i tail =
      _mm256_subs_epu8(limit, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + i)));
  const auto below_in_tail = static_cast<uint32_t>(
      ~static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(tail, zero))));
  const uint32_t in_line = (uint32_t{1} << (size - i)) - 1;  // size - i < 32
  return (below_in_tail & in_line) != 0 || _mm256_testz_si256(any, any) == 0;
}

class HaswellJsonFastPath final : public JsonFastPath {
 public:
  explicit HaswellJsonFastPath(const Schema& s)
      : schema(s), seen(s.size()), plain_name(s.size()), short_name(s.size()) {
    for (size_t i = 0; i < s.size(); ++i) {
      const std::string& name = s.field(i).name;
      plain_name[i] = name.size() <= simdjson::SIMDJSON_PADDING &&
                      name.find_first_of("\"\\") == std::string::npos;
      if (plain_name[i] != 0 && name.size() < 16) {
        // The name and its closing quote, compared 16 bytes at a time (RawSlotOf).
        alignas(16) char pattern[16] = {};
        std::memcpy(pattern, name.data(), name.size());
        pattern[name.size()] = '"';
        short_name[i] = ShortName{_mm_load_si128(reinterpret_cast<const __m128i*>(pattern)),
                                  (1u << (name.size() + 1)) - 1, true};
      }
    }
  }

  bool Decode(std::string_view line, bool in_place, Row& row) override {
    return FastJson(line, in_place, row);
  }

  bool DecodeAhead(std::string_view line, const LinesAhead& ahead, Row& row) override {
    if (StreamJson(line, ahead, row)) {
      ++streamed;
      return true;
    }
    return FastJson(line, true, row);
  }
  int64_t stream_lines() const override { return streamed; }

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
      const ShortName& sn = short_name[i];
      if (sn.valid ? RawEquals(key.raw(), sn)
                   : plain_name[i] != 0 && key.unsafe_is_equal(schema.field(i).name)) {
        hint = i + 1 < n ? i + 1 : 0;
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  // A name shorter than 16 bytes followed by its closing quote, as 16 bytes and the mask of
  // those that count.
  struct ShortName {
    __m128i pattern{};
    uint32_t mask = 0;
    bool valid = false;
  };

  // Whether the raw key at `raw` (just after its opening quote; simdjson's padding makes 16
  // bytes readable there) is `name`: its bytes, then the closing quote. No call to memcmp.
  static bool RawEquals(const char* raw, const ShortName& name) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(raw));
    const auto equal =
        static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, name.pattern)));
    return (equal & name.mask) == name.mask;
  }

  // flatten: simdjson_inline is plain inline in this file (see the top), so the iterators are
  // inlined here explicitly; without it they go through memory (store-forwarding stalls).
  __attribute__((flatten)) bool FastJson(std::string_view line, bool in_place, Row& row) {
    // A raw control character is invalid inside a string (nlohmann refuses it; simdjson may
    // not): such lines, and lines with tabs between tokens, take the slow path.
    if (in_place ? HasControlCharacterPadded(line.data(), line.size())
                 : HasControlCharacter(line.data(), line.size())) {
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
    if (doc.get_object().get(object) != simdjson::SUCCESS || !ReadObject(object, row)) {
      return false;
    }
    // The object must be the whole line: no token after its closing brace (which the loop has
    // just consumed; JSON whitespace is no token). Checked here rather than with raw_json()
    // up front, which walked the whole object once more before the fields were read.
    const char* trailing = nullptr;
    return doc.current_location().get(trailing) == simdjson::OUT_OF_BOUNDS;
  }

  // The schema's fields of `row` from the members of `object` (a line's top-level object, not
  // yet read); false when a member is not one the nlohmann path reads the same way.
  __attribute__((flatten)) bool ReadObject(od::object& object, Row& row) {
    // Slots set by this line: bits of a word for up to 64 fields (no memset call per line),
    // the vector beyond.
    uint64_t seen_bits = 0;
    const bool few = seen.size() <= 64;
    if (!few) {
      std::fill(seen.begin(), seen.end(), 0);
    }
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
      if (few) {
        seen_bits |= uint64_t{1} << static_cast<unsigned>(slot);
      } else {
        seen[static_cast<size_t>(slot)] = 1;
      }
    }
    if (few) {
      const uint64_t all = seen.size() == 64 ? ~uint64_t{0} : (uint64_t{1} << seen.size()) - 1;
      for (uint64_t missing = all & ~seen_bits; missing != 0; missing &= missing - 1) {
        row.SetNull(static_cast<size_t>(std::countr_zero(missing)));  // missing is NULL
      }
      return true;
    }
    for (size_t i = 0; i < seen.size(); ++i) {
      if (seen[i] == 0) {
        row.SetNull(i);  // missing is NULL
      }
    }
    return true;
  }

  // One LineReader buffer's complete lines as a simdjson document stream: stage 1 runs once
  // over all of them, and each line's object is read from the stream when the stream's next
  // document starts at the line's first token. Owned by the fast path (a few at a time: the
  // files a reader takes turns over).
  struct LineStream {
    const void* reader = nullptr;  // the LineReader and fill of the buffer indexed
    uint64_t fill = 0;
    const char* begin = nullptr;  // the lines indexed: [begin, end), end at a '\n'
    const char* end = nullptr;
    bool usable = false;  // false: its lines are decoded one by one
    uint64_t used = 0;    // last use, for replacing the least recently used
    od::parser parser;
    od::document_stream docs;
    od::document_stream::iterator it;
  };

  // The stream of the buffer `line` was lent from, started over the line and the complete
  // lines after it when there is none; null when no stream serves it.
  LineStream* StreamFor(std::string_view line, const LinesAhead& ahead) {
    ++clock;  // every call, so the slots of readers that are done fall idle while others read
    const char* line_end = line.data() + line.size();
    LineStream* pick = nullptr;
    for (auto& s : streams) {
      if (s && s->reader == ahead.reader && s->fill == ahead.fill && line.data() >= s->begin &&
          line_end <= s->end) {
        s->used = clock;
        return s->usable ? s.get() : nullptr;
      }
    }
    // The complete lines ahead: up to the last '\n' the buffer holds.
    const void* last_nl = memrchr(ahead.bytes.data(), '\n', ahead.bytes.size());
    if (last_nl == nullptr) {
      return nullptr;  // the line is the buffer's last complete one: nothing to share a pass with
    }
    // A free slot, the same reader's (its previous buffer), or one no line asked for lately (its
    // reader is done). Readers beyond the slots parse their lines one by one: replacing a stream
    // that is in use would run stage 1 over the rest of a buffer again at every line when
    // several readers take turns.
    for (auto& s : streams) {
      if (!s) {
        s = std::make_unique<LineStream>();
#ifdef SIMDJSON_THREADS_ENABLED
        s->parser.threaded = false;  // one batch per buffer: no stage-1 thread
#endif
        pick = s.get();
        break;
      }
      if (s->reader == ahead.reader) {
        pick = s.get();
        break;
      }
      if (s->used + kIdleCalls < clock && (pick == nullptr || s->used < pick->used)) {
        pick = s.get();
      }
    }
    if (pick == nullptr) {
      return nullptr;
    }
    pick->reader = ahead.reader;
    pick->fill = ahead.fill;
    pick->begin = line.data();
    pick->end = static_cast<const char*>(last_nl);
    pick->used = clock;
    const auto size = static_cast<size_t>(pick->end - pick->begin);
    // A batch as large as the lines (so one stage 1, no thread), and at least a read buffer's
    // size, so the parser keeps its allocation from buffer to buffer.
    pick->usable =
        pick->parser.iterate_many(pick->begin, size, std::max<size_t>(size, kStreamBatchBytes))
            .get(pick->docs) == simdjson::SUCCESS;
    if (pick->usable) {
      pick->it = pick->docs.begin();
    }
    return pick->usable ? pick : nullptr;
  }

  static bool IsJsonSpace(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
  }

  // `line` from its buffer's document stream; false when the stream cannot vouch for it (the
  // caller then decodes the line on its own, which gives the same answer or the reason).
  __attribute__((flatten)) bool StreamJson(std::string_view line, const LinesAhead& ahead,
                                           Row& row) {
    if (HasControlCharacterPadded(line.data(), line.size())) {
      return false;
    }
    LineStream* s = StreamFor(line, ahead);
    if (s == nullptr) {
      return false;
    }
    const char* first = line.data();
    const char* const line_end = first + line.size();
    while (first < line_end && IsJsonSpace(*first)) {
      ++first;
    }
    if (first == line_end) {
      return false;  // blank: no document of the stream is this line's
    }
    // Documents of lines decoded on their own since (a control character) are passed over.
    const od::document_stream::iterator end = s->docs.end();
    while (true) {
      if (!(s->it != end) || s->it.error() != simdjson::SUCCESS) {
        s->usable = false;
        return false;
      }
      const char* doc_start = s->begin + s->it.current_index();
      if (doc_start >= first) {
        if (doc_start > first) {
          return false;  // the line's first token is inside a document that began before it
        }
        break;
      }
      ++s->it;
    }
    // A document the row cannot be read from: On-Demand may have abandoned its iterator, so
    // the stream cannot be moved past it; this buffer's remaining lines are parsed one by one.
    od::document_reference doc;
    od::object object;
    if ((*s->it).get(doc) != simdjson::SUCCESS ||
        doc.get_object().get(object) != simdjson::SUCCESS || !ReadObject(object, row)) {
      s->usable = false;
      return false;
    }
    // The object must be the whole line: the next document starts after the line, with only
    // whitespace between (no token after the closing brace; no object running on past the
    // line). Then every token of the document lies in the line. A line refused here leaves
    // the stream at the next document, which the next line finds by its start. Without a next
    // document nothing bounds this one (stage 1 drops an unfinished value at the end of its
    // input: `{...} [` as the buffer's last line), so that line is parsed alone.
    ++s->it;
    if (!(s->it != end) || s->it.error() != simdjson::SUCCESS) {
      s->usable = false;
      return false;
    }
    const char* next = s->begin + s->it.current_index();
    if (next < line_end) {
      return false;
    }
    for (const char* p = line_end; p < next; ++p) {
      if (!IsJsonSpace(*p)) {
        return false;
      }
    }
    return true;
  }

  // Read buffers are 64 KiB (LineReader); a stream's batch is never smaller.
  static constexpr size_t kStreamBatchBytes = 64 * 1024;
  // Calls since a stream's last use after which its slot may go to another reader.
  static constexpr uint64_t kIdleCalls = 4096;

  const Schema& schema;
  od::parser parser;
  std::array<std::unique_ptr<LineStream>, 4> streams;  // by buffer (reader, fill)
  uint64_t clock = 0;
  int64_t streamed = 0;
  std::string padded;                 // the line followed by simdjson's padding
  std::vector<uint8_t> seen;          // per slot: set by this line
  std::vector<uint8_t> plain_name;    // per slot: RawSlotOf may compare its name raw
  std::vector<ShortName> short_name;  // per slot: the name as a 16-byte pattern, when short
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
