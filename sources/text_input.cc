#include "sources/text_input.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <simdjson.h>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "runtime/core/errors.h"
#include "runtime/core/non_recoverable_error.h"
#include "sources/text_input_simdjson.h"

namespace tidemark {
namespace {

constexpr size_t kBufferBytes = size_t{64} * 1024;
constexpr size_t kKeptPrefix = 200;

std::string Quoted(std::string_view text) {
  constexpr size_t kShown = 40;
  if (text.size() > kShown) {
    return fmt::format("\"{}...\"", text.substr(0, kShown));
  }
  return fmt::format("\"{}\"", text);
}

// "a, b, c" (a CSV header's or a schema's names, in messages); an empty name shows as "".
std::string JoinNames(const std::vector<std::string>& names, std::string_view sep = ", ") {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) {
      out += sep;
    }
    out += n.empty() ? std::string("\"\"") : n;
  }
  return out;
}

// A header's names as a message shows them: bytes that are no printable text (control bytes,
// and every byte >= 0x80 when the header is not valid UTF-8) as \xNN, at most 200 bytes, so a
// binary file read as CSV does not write raw bytes to the terminal.
std::string ShownHeader(const std::vector<std::string>& names) {
  const std::string joined = JoinNames(names);
  const bool utf8 = simdjson::validate_utf8(joined.data(), joined.size());
  std::string out;
  for (const char ch : joined) {
    const auto c = static_cast<unsigned char>(ch);
    if (out.size() >= 200) {
      out += "...";
      break;
    }
    if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;
    }
  }
  return out;
}

// The offset of the first byte of the first ill-formed UTF-8 sequence in `s` (Unicode's Table 3-7:
// no overlong forms, no surrogates, nothing above U+10FFFF); s.size() when there is none. Scalar:
// the error path only.
size_t FirstInvalidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t n = 0;                        // continuation bytes
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the first continuation byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      lo = c == 0xE0 ? 0xA0 : 0x80;
      hi = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      lo = c == 0xF0 ? 0x90 : 0x80;
      hi = c == 0xF4 ? 0x8F : 0xBF;
    } else {
      return i;  // a continuation byte without a lead, C0, C1 or F5..FF
    }
    if (i + n >= s.size()) {
      return i;  // truncated at the end
    }
    for (size_t k = 1; k <= n; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) {
        return i;
      }
    }
    i += n + 1;
  }
  return s.size();
}

// Why nlohmann refused `line` (whose depth is checked), on the error path only: a number beyond
// the double range is valid JSON that no field type holds, and is named as CSV names it ("1e400"
// is a bad value on both paths); anything else is invalid JSON. A SAX pass hands over the
// parser's first error with its token, without exceptions or a value built.
std::string JsonErrorReason(std::string_view line) {
  using json = nlohmann::json;
  struct FirstError {
    int id = 0;
    size_t position = 0;  // bytes read when the parser stopped
    std::string token;
    bool null() { return true; }
    bool boolean(bool) { return true; }
    bool number_integer(json::number_integer_t) { return true; }
    bool number_unsigned(json::number_unsigned_t) { return true; }
    bool number_float(json::number_float_t, const json::string_t&) { return true; }
    bool string(json::string_t&) { return true; }
    bool binary(json::binary_t&) { return true; }
    bool start_object(std::size_t) { return true; }
    bool key(json::string_t&) { return true; }
    bool end_object() { return true; }
    bool start_array(std::size_t) { return true; }
    bool end_array() { return true; }
    bool parse_error(std::size_t at, const std::string& last_token, const json::exception& e) {
      id = e.id;
      position = at;
      token = last_token;
      return false;
    }
  } error;
  json::sax_parse(line.begin(), line.end(), &error);
  if (error.id == 406) {  // out_of_range.406: number overflow
    return fmt::format("a number out of the double range: {}", Quoted(error.token));
  }
  // nlohmann stops at (or just after) an ill-formed UTF-8 sequence: when the parser got that far,
  // that sequence is why; point at its first byte.
  if (!simdjson::validate_utf8(line.data(), line.size())) {
    const size_t bad = FirstInvalidUtf8(line);
    if (error.position > bad) {
      return fmt::format("invalid UTF-8 at column {}", bad + 1);
    }
  }
  return "invalid JSON";
}

}  // namespace

namespace {

std::string NotRegularMessage(const std::string& path, mode_t mode) {
  return fmt::format("input file '{}' is {}; a source reads regular files only", path,
                     FileKind(mode));
}

}  // namespace

void CheckRegularFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    throw IoError(fmt::format("cannot open input file '{}': {}", path,
                              std::generic_category().message(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    throw IoError(NotRegularMessage(path, st.st_mode));
  }
}

LineReader::LineReader(std::string path, int64_t max_line_bytes, int64_t offset,
                       int64_t line_number, int64_t end)
    : path_(std::move(path)),
      max_line_bytes_(max_line_bytes),
      buffer_(kBufferBytes + kLinePadding, ' '),
      line_number_(line_number),
      bytes_read_(offset),
      end_offset_(end) {
  // O_NONBLOCK: opening a FIFO without a writer must not block the reader thread (it would ignore
  // cancel); the file is checked to be regular on the open descriptor, so a path swapped for a
  // FIFO or a device after the job was compiled is refused too. Reads of a regular file ignore
  // O_NONBLOCK.
  const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    throw IoError(fmt::format("cannot open input file '{}': {}", path_,
                              std::generic_category().message(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw IoError(fmt::format("cannot open input file '{}': {}", path_,
                              std::generic_category().message(err)));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw IoError(NotRegularMessage(path_, st.st_mode));
  }
  size_at_open_ = static_cast<int64_t>(st.st_size);
  if (offset > size_at_open_ || end > size_at_open_) {
    // A position taken from this file (a restored split, a byte range cut when the job started)
    // lies past its end: it was truncated or replaced since, and the input after the position is
    // gone. Reading on from there would quietly read nothing; no restart can bring it back.
    ::close(fd);
    throw NonRecoverableError(
        fmt::format("input file '{}' has {} bytes, fewer than the position {} it is read from: it "
                    "was truncated or replaced after that position was taken, and the rest of "
                    "its input is gone",
                    path_, size_at_open_, std::max(offset, end)));
  }
  file_ = ::fdopen(fd, "rb");
  if (file_ == nullptr) {
    const int err = errno;
    ::close(fd);
    throw IoError(fmt::format("cannot open input file '{}': {}", path_,
                              std::generic_category().message(err)));
  }
  if (offset > 0 && ::fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0) {
    const int err = errno;
    std::fclose(file_);
    file_ = nullptr;
    throw IoError(fmt::format("cannot seek input file '{}' to byte {}: {}", path_, offset,
                              std::generic_category().message(err)));
  }
}

LineReader::LineReader(int fd, std::string name, int64_t max_line_bytes)
    : path_(std::move(name)),
      max_line_bytes_(max_line_bytes),
      buffer_(kBufferBytes + kLinePadding, ' '),
      stream_(true) {
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    throw IoError(fmt::format("cannot read {}: {}", path_, std::generic_category().message(errno)));
  }
  file_ = ::fdopen(own, "rb");
  if (file_ == nullptr) {
    const int err = errno;
    ::close(own);
    throw IoError(fmt::format("cannot read {}: {}", path_, std::generic_category().message(err)));
  }
}

int64_t CountNewlines(const std::string& path, int64_t bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    throw IoError(fmt::format("cannot open input file '{}': {}", path,
                              std::generic_category().message(errno)));
  }
  std::vector<char> buffer(kBufferBytes);
  int64_t left = bytes;
  int64_t count = 0;
  while (left > 0) {
    const size_t want =
        static_cast<size_t>(std::min<int64_t>(left, static_cast<int64_t>(buffer.size())));
    const size_t got = std::fread(buffer.data(), 1, want, f);
    if (got == 0) {
      const bool failed = std::ferror(f) != 0;
      std::fclose(f);
      if (failed) {
        throw IoError(fmt::format("cannot read input file '{}': {}", path,
                                  std::generic_category().message(errno)));
      }
      return count;  // shorter than `bytes`
    }
    const char* p = buffer.data();
    const char* const stop = p + got;
    while ((p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(stop - p)))) !=
           nullptr) {
      ++count;
      ++p;
    }
    left -= static_cast<int64_t>(got);
  }
  std::fclose(f);
  return count;
}

LineReader::~LineReader() {
  if (file_ != nullptr) {
    std::fclose(file_);
  }
}

bool LineReader::Fill() {
  if (stream_) {
    // fread would wait for a whole buffer: a pipe's lines must pass as they arrive.
    ssize_t got = -1;
    do {
      got = ::read(::fileno(file_), buffer_.data(), kBufferBytes);
    } while (got < 0 && errno == EINTR);
    if (got < 0) {
      throw IoError(fmt::format("cannot read {} after {} bytes: {}", path_, bytes_read_,
                                std::generic_category().message(errno)));
    }
    end_ = static_cast<size_t>(got);
  } else {
    end_ = std::fread(buffer_.data(), 1, kBufferBytes, file_);
  }
  // A number no fill of any reader had before: a reader made where a destroyed one lived (the
  // next byte range of a file) gets the same addresses, and must not pass for it.
  static std::atomic<uint64_t> next_fill{1};
  fill_ = next_fill.fetch_add(1, std::memory_order_relaxed);
  std::memset(buffer_.data() + end_, ' ', kLinePadding);
  IndexNewlines();
  pos_ = 0;
  if (end_ == 0 && std::ferror(file_) != 0) {
    throw IoError(fmt::format("cannot read input file '{}' after {} bytes: {}", path_, bytes_read_,
                              std::generic_category().message(errno)));
  }
  if (end_ == 0 && bytes_read_ < size_at_open_) {
    // The file ended before the size it had when it was opened: it was truncated (or replaced
    // in place) while being read, and the rest of the input is gone. Going on would give results
    // for part of it without a word, as an unreadable file would.
    // Not a restart's to cure: a restart would read whatever the file holds now.
    throw NonRecoverableError(
        fmt::format("input file '{}' shrank while being read: it had {} bytes when "
                    "opened, and ended after {}",
                    path_, size_at_open_, bytes_read_));
  }
  if (bytes_read_ == 0 && end_ >= 3 && std::memcmp(buffer_.data(), "\xEF\xBB\xBF", 3) == 0) {
    // A UTF-8 byte order mark at the start of the file is no part of its first line (it would
    // make the first CSV field unparsable, invisibly in the error text).
    pos_ = 3;
    bytes_read_ = 3;
  }
  return end_ > 0;
}

void LineReader::IndexNewlines() {
  // 64 bytes a word, SSE2 (every x86-64): the last word reads into the padding (spaces).
  const size_t words = (end_ + 63) / 64;
  newlines_.resize(words);
  for (size_t w = 0; w < words; ++w) {
    const char* p = buffer_.data() + w * 64;
    uint64_t bits = 0;
#if defined(__SSE2__)
    for (size_t k = 0; k < 4; ++k) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
      bits |= static_cast<uint64_t>(static_cast<uint32_t>(
                  _mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('\n')))))
              << (16 * k);
    }
#else
    for (size_t k = 0; k < 64; ++k) {
      bits |= static_cast<uint64_t>(p[k] == '\n') << k;
    }
#endif
    newlines_[w] = bits;
  }
}

LineReader::Result LineReader::Next(std::string_view& line) {
  if (pos_ < end_ && !(end_offset_ >= 0 && bytes_read_ >= end_offset_)) {
    const char* begin = buffer_.data() + pos_;
    // The next '\n' from the fill's index (no memchr call per line).
    size_t w = pos_ / 64;
    uint64_t bits = newlines_[w] & (~uint64_t{0} << (pos_ % 64));
    const size_t last = (end_ - 1) / 64;
    while (bits == 0 && w < last) {
      bits = newlines_[++w];
    }
    const bool nl = bits != 0;
    const size_t chunk = nl ? w * 64 + static_cast<size_t>(std::countr_zero(bits)) - pos_ : 0;
    if (nl && static_cast<int64_t>(chunk) <= max_line_bytes_) {
      // The whole line is in the buffer and its '\n' (whitespace) follows it, then more of
      // the buffer and its kLinePadding spaces.
      pos_ += chunk + 1;
      bytes_read_ += static_cast<int64_t>(chunk) + 1;
      ++line_number_;
      line = std::string_view(begin, chunk > 0 && begin[chunk - 1] == '\r' ? chunk - 1 : chunk);
      lent_from_buffer_ = true;
      return Result::kLine;
    }
  }
  lent_from_buffer_ = false;
  const Result r = Next(assembled_);
  const size_t size = assembled_.size();
  assembled_.append(kLinePadding, ' ');
  line = std::string_view(assembled_.data(), size);
  return r;
}

LinesAhead LineReader::Ahead() const {
  if (!lent_from_buffer_) {
    return LinesAhead{{}, this, fill_};
  }
  return LinesAhead{std::string_view(buffer_.data() + pos_, end_ - pos_), this, fill_};
}

LineReader::Result LineReader::Next(std::string& line) {
  lent_from_buffer_ = false;
  line.clear();
  if (end_offset_ >= 0 && bytes_read_ >= end_offset_) {
    return Result::kEnd;  // the next line starts in the next byte-range split
  }
  bool any = false;
  bool too_long = false;
  int64_t length = 0;
  while (true) {
    if (pos_ == end_ && !Fill()) {
      break;  // end of file: return what we have
    }
    any = true;
    const char* begin = buffer_.data() + pos_;
    const size_t available = end_ - pos_;
    const void* nl = std::memchr(begin, '\n', available);
    const size_t chunk = nl ? static_cast<size_t>(static_cast<const char*>(nl) - begin) : available;
    length += static_cast<int64_t>(chunk);
    if (!too_long) {
      if (length > max_line_bytes_) {
        too_long = true;
        // Keep a prefix for the error report only; the rest of the line is skipped unbuffered.
        const size_t room = line.size() < kKeptPrefix ? kKeptPrefix - line.size() : 0;
        line.append(begin, std::min(room, chunk));
        if (line.size() > kKeptPrefix) {
          line.resize(kKeptPrefix);
        }
      } else {
        line.append(begin, chunk);
      }
    }
    pos_ += chunk;
    bytes_read_ += static_cast<int64_t>(chunk);
    if (nl != nullptr) {
      ++pos_;
      ++bytes_read_;
      break;
    }
  }
  if (!any) {
    return Result::kEnd;
  }
  ++line_number_;
  if (too_long) {
    return Result::kTooLong;
  }
  if (!line.empty() && line.back() == '\r') {
    line.pop_back();
  }
  return Result::kLine;
}

namespace {

// Java's Double.parseDouble spellings of the values that are no decimal numbers: NaN,
// [+-]Infinity (case-sensitive, as Java). Flink's CSV and JSON formats read and write them.
std::optional<double> JavaNonFinite(std::string_view text) {
  if (text == "NaN") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (text == "Infinity" || text == "+Infinity") {
    return std::numeric_limits<double>::infinity();
  }
  if (text == "-Infinity") {
    return -std::numeric_limits<double>::infinity();
  }
  return std::nullopt;
}

// ParseTextValue into cell `slot` of `row` (of type `type`): false when `text` does not fit.
bool ParseTextInto(std::string_view text, FieldType type, Row& row, size_t slot) {
  if (text.empty()) {
    row.SetNull(slot);
    return true;
  }
  switch (type) {
    case FieldType::kString:
      row.SetString(slot, text);
      return true;
    case FieldType::kBool:
      if (text == "true") {
        row.SetBool(slot, true);
        return true;
      }
      if (text == "false") {
        row.SetBool(slot, false);
        return true;
      }
      return false;
    case FieldType::kInt64:
    case FieldType::kTimestamp: {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc() && ptr == text.data() + text.size()) {
        row.SetInt64(slot, v);
        return true;
      }
      return false;
    }
    case FieldType::kDouble: {
      double v = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec == std::errc::result_out_of_range && ptr == text.data() + text.size()) {
        // Too small or too large for a double: a number too close to zero is zero (signed), as
        // in a JSON field and Java's Double.parseDouble; strtod (the C locale: the process never
        // sets one) tells the two apart. 1e400 stays a bad value below.
        const std::string copy(text);
        v = std::strtod(copy.c_str(), nullptr);
        ec = std::isfinite(v) ? std::errc() : ec;
      }
      // from_chars also reads "nan", "inf" and "infinity" in any case; only Java's spellings
      // (NaN, Infinity) are taken, as Flink's CSV format does; 1e400 stays a bad value.
      if (ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(v)) {
        row.SetDouble(slot, v);
        return true;
      }
      if (const auto d = JavaNonFinite(text)) {
        row.SetDouble(slot, *d);
        return true;
      }
      return false;
    }
  }
  return false;
}

}  // namespace

std::optional<Value> ParseTextValue(std::string_view text, FieldType type, std::string* reason) {
  Row row(RowLayout::Of({type}));
  if (ParseTextInto(text, type, row, 0)) {
    return row.Get(0);
  }
  *reason = fmt::format("expected {}, got {}", ToString(type), Quoted(text));
  return std::nullopt;
}

bool SplitCsvLine(std::string_view line, char delimiter, std::vector<std::string>& fields,
                  std::string* reason) {
  fields.clear();
  std::string current;
  size_t i = 0;
  while (true) {
    current.clear();
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      while (i < line.size()) {
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            current += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        current += line[i++];
      }
      if (!closed) {
        *reason = fmt::format("unterminated quote in field {}", fields.size() + 1);
        return false;
      }
      if (i < line.size() && line[i] != delimiter) {
        *reason = fmt::format("text after the closing quote of field {}", fields.size() + 1);
        return false;
      }
    } else {
      while (i < line.size() && line[i] != delimiter) {
        current += line[i++];
      }
    }
    fields.push_back(current);
    if (i >= line.size()) {
      return true;
    }
    ++i;  // the delimiter
  }
}

std::optional<Row> CsvLineToRow(std::string_view line, char delimiter, const Schema& schema,
                                std::string* reason, const CsvColumns* columns) {
  std::vector<std::string> fields;
  if (!SplitCsvLine(line, delimiter, fields, reason)) {
    return std::nullopt;
  }
  const bool by_name = columns != nullptr && !columns->empty();
  const size_t expected = by_name ? columns->size() : schema.size();
  if (fields.size() != expected) {
    *reason = fmt::format("expected {} fields, got {}", expected, fields.size());
    return std::nullopt;
  }
  Row row(schema.layout());
  for (size_t f = 0; f < fields.size(); ++f) {
    const int slot = by_name ? (*columns)[f] : static_cast<int>(f);
    if (slot < 0) {
      continue;
    }
    const Field& field = schema.field(static_cast<size_t>(slot));
    if (!ParseTextInto(fields[f], field.type, row, static_cast<size_t>(slot))) {
      *reason = fmt::format("field {} \"{}\": expected {}, got {}", f + 1, field.name,
                            ToString(field.type), Quoted(fields[f]));
      return std::nullopt;
    }
  }
  return row;
}

CsvColumns CsvColumnsOfHeader(std::string_view header, char delimiter, const Schema& schema,
                              bool by_name, const std::string& file) {
  std::vector<std::string> names;
  std::string why;
  if (!SplitCsvLine(header, delimiter, names, &why)) {
    throw KeyedInvalidArgument("csv-header",
                               fmt::format("the header of '{}' is not a CSV line: {}", file, why));
  }
  for (std::string& n : names) {
    const size_t b = n.find_first_not_of(" \t");
    const size_t e = n.find_last_not_of(" \t");
    n = b == std::string::npos ? "" : n.substr(b, e - b + 1);
  }
  std::vector<std::string> declared;
  for (size_t i = 0; i < schema.size(); ++i) {
    declared.push_back(schema.field(i).name);
  }
  const std::string header_names = ShownHeader(names);
  const std::string schema_names = JoinNames(declared);
  if (!by_name) {
    if (names != declared) {
      throw KeyedInvalidArgument(
          "csv-header",
          fmt::format("the header of '{}' names {}; the schema declares {} (fields are read by "
                      "position: declare them in the header's order, or read them by name with "
                      "columns: by-name)",
                      file, header_names, schema_names));
    }
    return {};
  }
  CsvColumns slots(names.size(), -1);
  std::vector<std::string> missing;
  for (size_t i = 0; i < declared.size(); ++i) {
    size_t found = 0;
    for (size_t k = 0; k < names.size(); ++k) {
      if (names[k] == declared[i]) {
        slots[k] = static_cast<int>(i);
        ++found;
      }
    }
    if (found > 1) {
      throw KeyedInvalidArgument(
          "columns", fmt::format("the header of '{}' names {} more than once ({}); the schema "
                                 "declares {}",
                                 file, declared[i], header_names, schema_names));
    }
    if (found == 0) {
      missing.push_back(declared[i]);
    }
  }
  if (!missing.empty()) {
    throw KeyedInvalidArgument(
        "columns", fmt::format("the header of '{}' has no column {} (header: {}; schema: {})", file,
                               JoinNames(missing, " or "), header_names, schema_names));
  }
  return slots;
}

namespace {

std::optional<Value> JsonToValue(const nlohmann::json& j, FieldType type, std::string* reason) {
  if (j.is_null()) {
    return Value{};
  }
  switch (type) {
    case FieldType::kString:
      if (j.is_string()) {
        return Value{j.get<std::string>()};
      }
      break;
    case FieldType::kBool:
      if (j.is_boolean()) {
        return Value{j.get<bool>()};
      }
      break;
    case FieldType::kInt64:
    case FieldType::kTimestamp:
      if (j.is_number_integer() && !(j.is_number_unsigned() && j.get<uint64_t>() > INT64_MAX)) {
        return Value{j.get<int64_t>()};
      }
      break;
    case FieldType::kDouble:
      if (j.is_number()) {
        return Value{j.get<double>()};
      }
      if (j.is_string()) {  // "NaN", "Infinity": what Flink's JSON format (and tidemark) write
        if (const auto d = JavaNonFinite(j.get_ref<const std::string&>())) {
          return Value{*d};
        }
      }
      break;
  }
  // The value as JSON text: a string keeps its own quotes once ("soon"), a number or an object
  // shows as written (1.5, {...}).
  const std::string shown = j.dump();
  constexpr size_t kShown = 40;
  *reason = fmt::format("expected {}, got {}", ToString(type),
                        shown.size() > kShown ? shown.substr(0, kShown) + "..." : shown);
  return std::nullopt;
}

}  // namespace

bool JsonDepthWithin(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        return false;
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

std::optional<nlohmann::json> ParseJsonLine(std::string_view line, std::string* reason) {
  // nlohmann's parser is iterative, but dumping and walking a value recurse per level: the depth
  // is checked first, in one pass without allocation.
  if (!JsonDepthWithin(line, kMaxJsonDepth)) {
    *reason = fmt::format("JSON nests deeper than {} levels", kMaxJsonDepth);
    return std::nullopt;
  }
  // nlohmann's lexer takes a NUL byte for the end of its input: `{"ts": 1}\0{"ts": 2}` would be
  // read as its first object, the rest of the line dropped without a word.
  if (const size_t nul = line.find('\0'); nul != std::string_view::npos) {
    *reason = fmt::format("invalid JSON: a NUL byte at column {}", nul + 1);
    return std::nullopt;
  }
  nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  if (j.is_discarded()) {
    *reason = JsonErrorReason(line);
    return std::nullopt;
  }
  return j;
}

std::optional<Row> JsonLineToRow(std::string_view line, const Schema& schema, std::string* reason) {
  std::optional<nlohmann::json> j = ParseJsonLine(line, reason);
  if (!j) {
    return std::nullopt;
  }
  return JsonObjectToRow(*j, schema, reason);
}

std::optional<Row> JsonObjectToRow(const nlohmann::json& object, const Schema& schema,
                                   std::string* reason) {
  if (!object.is_object()) {
    *reason = fmt::format("expected a JSON object, got {}", Quoted(object.dump()));
    return std::nullopt;
  }
  Row row(schema.layout());
  for (size_t i = 0; i < schema.size(); ++i) {
    const Field& field = schema.field(i);
    auto it = object.find(field.name);
    if (it == object.end()) {
      continue;  // missing is NULL
    }
    std::string why;
    std::optional<Value> v = JsonToValue(*it, field.type, &why);
    if (!v) {
      *reason = fmt::format("field \"{}\": {}", field.name, why);
      return std::nullopt;
    }
    row.Set(i, *v);
  }
  return row;
}

struct LineDecoder::Impl {
  Format format;
  const Schema& schema;
  const RowLayout* layout;  // the rows filled: the schema's fields first
  char delimiter;
  std::unique_ptr<JsonFastPath> json;   // null for CSV and on CPUs without AVX2
  std::vector<std::string_view> csv;    // the CSV fields of this line
  std::string unquoted;                 // CSV quoted fields with "" turned into "
  const CsvColumns* columns = nullptr;  // by name (UseCsvColumns); null or empty: by position

  Impl(Format f, const Schema& s, char d, const RowLayout* l)
      : format(f), schema(s), layout(l), delimiter(d) {
    if (format == Format::kJson) {
      json = MakeJsonFastPath(schema);
    }
    csv.reserve(schema.size());
  }

  bool FastCsv(std::string_view line, Row& row) {
    csv.clear();
    unquoted.clear();
    unquoted.reserve(line.size());  // views into it stay valid: it never grows past the line
    const size_t n = line.size();
    const size_t expected = ByName() ? columns->size() : schema.size();
    size_t i = 0;
    while (true) {
      if (csv.size() == expected) {
        return false;  // more fields than declared
      }
      if (i < n && line[i] == '"') {
        ++i;
        const size_t start = unquoted.size();
        bool closed = false;
        while (i < n) {
          const void* q = std::memchr(line.data() + i, '"', n - i);
          if (q == nullptr) {
            break;
          }
          const size_t at = static_cast<size_t>(static_cast<const char*>(q) - line.data());
          unquoted.append(line.data() + i, at - i);
          i = at;
          if (i + 1 < n && line[i + 1] == '"') {
            unquoted += '"';
            i += 2;
            continue;
          }
          closed = true;
          ++i;
          break;
        }
        if (!closed || (i < n && line[i] != delimiter)) {
          return false;
        }
        csv.emplace_back(unquoted.data() + start, unquoted.size() - start);
      } else {
        const void* d = std::memchr(line.data() + i, delimiter, n - i);
        const size_t at = d ? static_cast<size_t>(static_cast<const char*>(d) - line.data()) : n;
        csv.emplace_back(line.data() + i, at - i);
        i = at;
      }
      if (i >= n) {
        break;
      }
      ++i;  // the delimiter
    }
    if (csv.size() != expected) {
      return false;
    }
    if (ByName()) {
      for (size_t f = 0; f < csv.size(); ++f) {
        const int slot = (*columns)[f];
        if (slot >= 0 && !ParseTextInto(csv[f], schema.field(static_cast<size_t>(slot)).type, row,
                                        static_cast<size_t>(slot))) {
          return false;
        }
      }
      return true;
    }
    for (size_t f = 0; f < csv.size(); ++f) {
      if (!ParseTextInto(csv[f], schema.field(f).type, row, f)) {
        return false;
      }
    }
    return true;
  }

  bool ByName() const { return columns != nullptr && !columns->empty(); }
};

LineDecoder::LineDecoder(Format format, const Schema& schema, char csv_delimiter,
                         const RowLayout* row_layout)
    : impl_(std::make_unique<Impl>(format, schema, csv_delimiter,
                                   row_layout != nullptr ? row_layout : schema.layout())) {}

LineDecoder::~LineDecoder() = default;

bool LineDecoder::Decode(std::string_view line, Row& row, std::string* reason) {
  return DecodeLine(line, nullptr, row, reason);
}

bool LineDecoder::DecodeLent(std::string_view line, const LinesAhead& ahead, Row& row,
                             std::string* reason) {
  return DecodeLine(line, &ahead, row, reason);
}

void LineDecoder::UseCsvColumns(const CsvColumns* columns) {
  impl_->columns = columns;
}

int64_t LineDecoder::json_stream_lines() const {
  return impl_->json != nullptr ? impl_->json->stream_lines() : 0;
}

bool LineDecoder::DecodeLine(std::string_view line, const LinesAhead* lent, Row& row,
                             std::string* reason) {
  // Every line starts from an empty row: its strings are written from the start of the row's
  // buffer again (a row refilled without a reset would keep the bytes of every longer string).
  row.Reset(impl_->layout);
  const bool json = impl_->format == Format::kJson;
  if (json ? impl_->json != nullptr && (lent != nullptr && !lent->bytes.empty()
                                            ? impl_->json->DecodeAhead(line, *lent, row)
                                            : impl_->json->Decode(line, lent != nullptr, row))
           : impl_->FastCsv(line, row)) {
    return true;
  }
  std::optional<Row> slow =
      json ? JsonLineToRow(line, impl_->schema, reason)
           : CsvLineToRow(line, impl_->delimiter, impl_->schema, reason, impl_->columns);
  if (!slow) {
    return false;
  }
  if (impl_->layout == slow->layout_ptr()) {
    row = std::move(*slow);
  } else {
    row.Reset(impl_->layout);  // wider than the schema: the extra fields NULL
    for (size_t i = 0; i < slow->size(); ++i) {
      row.CopyCell(i, *slow, i);
    }
  }
  return true;
}

Schema SchemaFromSpec(const std::vector<SchemaFieldSpec>& fields) {
  if (fields.empty()) {
    throw KeyedInvalidArgument("schema", "must declare at least one field");
  }
  Schema schema;
  std::set<std::string> names;
  for (const SchemaFieldSpec& f : fields) {
    std::optional<FieldType> type = ParseFieldType(f.type);
    if (!type) {
      throw KeyedInvalidArgument("schema." + f.name, fmt::format("unknown type '{}'", f.type));
    }
    if (!names.insert(f.name).second) {
      throw KeyedInvalidArgument("schema." + f.name, "field declared twice");
    }
    schema.Add(f.name, *type);
  }
  return schema;
}

int FirstTimestampSlot(const Schema& schema) {
  for (size_t i = 0; i < schema.size(); ++i) {
    if (schema.field(i).type == FieldType::kTimestamp) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::string ResolveAgainstJobFile(const std::string& path, const std::string& job_file) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  if (p.is_absolute() || job_file.empty() || job_file == "<string>") {
    return path;
  }
  return (fs::path(job_file).parent_path() / p).lexically_normal().string();
}

void CheckLineFormatKeys(const FileSourceSpec& file) {
  if (file.csv_delimiter.size() != 1) {
    throw KeyedInvalidArgument("csv-delimiter",
                               fmt::format("must be one character, got '{}'", file.csv_delimiter));
  }
  if (file.max_line_bytes < 1) {
    throw KeyedInvalidArgument("max-line-bytes", "must be at least 1");
  }
}

}  // namespace tidemark
