#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "config/job_spec.h"
#include "config/regular_file.h"
#include "runtime/core/row.h"

namespace tidemark {

/// What a `LineReader` holds after the line it just lent (`LineReader::Ahead`): the JSON fast
/// path indexes the complete lines in it with one simdjson stage-1 pass (`iterate_many`) instead
/// of one per line. `bytes` starts right after the line's '\n' (empty: the line was not lent
/// from the read buffer); `fill` names what the buffer holds, a number unique to that read in
/// the whole process (a refill reuses the memory, and a new reader may be given the memory of
/// a destroyed one); `reader` is the reader. Borrowed, valid until the reader's next call.
struct LinesAhead {
  std::string_view bytes;
  const void* reader = nullptr;
  uint64_t fill = 0;
};

/// Reads a text file line by line with a bounded line length, so that a 10 MB line costs at most
/// `max_line_bytes` of memory. Lines end at `\n`; a trailing `\r` is dropped; the last line needs
/// no newline; a UTF-8 byte order mark at the start of the file is skipped (byte offsets still
/// count it). A file that ends before the size it had when opened (truncated while being read)
/// is a NonRecoverableError: no restart brings the lost input back. Owns its FILE*. Not
/// thread-safe (one reader thread).
class LineReader {
 public:
  enum class Result { kLine, kTooLong, kEnd };

  /// Throws IoError (with the path and the OS reason) when the file cannot be opened, or when it
  /// is not a regular file (`input file '/dev/zero' is a character device; a source reads regular
  /// files only`): a FIFO or a device could block or never end. Never blocks.
  ///
  /// `offset` (bytes) and `line_number` resume a read: the first line returned is the one
  /// starting at byte `offset`, numbered `line_number + 1` (a restored split; `offset` must be a
  /// line start). `end` >= 0 stops before the first line that starts at or after byte `end` (a
  /// line that starts before it is read whole, past `end`): a byte-range split. An `offset` or
  /// `end` past the file's size throws NonRecoverableError: the file was truncated or replaced
  /// since the position was taken.
  LineReader(std::string path, int64_t max_line_bytes, int64_t offset = 0, int64_t line_number = 0,
             int64_t end = -1);
  /// Reads a stream (the process's stdin, a pipe) from a duplicate of `fd`, named `name` in
  /// messages: no regular-file or truncation check, and each fill takes what one read(2) gives,
  /// so a line is returned as soon as it has arrived (a fill blocks until some input or its end).
  /// Throws IoError when `fd` cannot be duplicated.
  LineReader(int fd, std::string name, int64_t max_line_bytes);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  /// kLine: `line` holds the next line. kTooLong: the line was longer than `max_line_bytes`;
  /// `line` holds its first 200 bytes and the rest was skipped. kEnd: end of file.
  /// Throws IoError on a read error, NonRecoverableError when the file shrank while read.
  Result Next(std::string& line);
  /// The same lines, without copying those that lie whole in the read buffer: `line` views the
  /// reader's memory, valid until the next call. At least kLinePadding readable bytes follow
  /// it, the first of them whitespace ('\n', '\r' or ' '), as simdjson's padding asks
  /// (LineDecoder::DecodeLent).
  Result Next(std::string_view& line);
  /// Readable bytes after a line returned by Next(std::string_view&).
  static constexpr size_t kLinePadding = 64;
  /// After Next(std::string_view&) returned a line from the read buffer: the bytes the buffer
  /// holds after that line's '\n' (lines not returned yet, the last one maybe cut short), with
  /// the buffer's identity and fill number (LinesAhead); `bytes` is empty after any other call.
  LinesAhead Ahead() const;
  /// 1-based number of the line last returned.
  int64_t line_number() const { return line_number_; }
  /// Bytes consumed so far, counted from the start of the file: the offset of the next line.
  int64_t bytes_read() const { return bytes_read_; }
  const std::string& path() const { return path_; }
  /// The file's size in bytes when it was opened (0 for a stream).
  int64_t size_at_open() const { return size_at_open_; }

 private:
  bool Fill();           // false at end of file
  void IndexNewlines();  // newlines_ for the fill's [0, end_)

  std::string path_;
  int64_t max_line_bytes_;
  std::FILE* file_ = nullptr;
  std::vector<char> buffer_;        // read data in [0, end_), then kLinePadding spaces
  std::string assembled_;           // a line that spans two reads, followed by kLinePadding spaces
  std::vector<uint64_t> newlines_;  // bit i % 64 of word i / 64: buffer_[i] is '\n', i < end_
  size_t pos_ = 0;
  size_t end_ = 0;
  uint64_t fill_ = 0;              // the current fill's process-unique number (LinesAhead::fill)
  bool lent_from_buffer_ = false;  // the last line returned views buffer_
  int64_t line_number_ = 0;
  int64_t bytes_read_ = 0;
  int64_t end_offset_ = -1;
  int64_t size_at_open_ = 0;  // the file's size when opened: ending before it means truncation
  bool stream_ = false;       // a pipe or terminal: read(2) what is there, no size to check
};

/// Number of `\n` in the first `bytes` bytes of the regular file `path` (a byte-range split's
/// first line number). Throws IoError when the file cannot be read.
int64_t CountNewlines(const std::string& path, int64_t bytes);

// FileKind (a file type for messages): config/regular_file.h.

/// Throws IoError unless `path` is a regular file (following symlinks): `cannot open input file
/// 'x': No such file or directory`, or `input file '/dev/zero' is a character device; a source
/// reads regular files only`.
void CheckRegularFile(const std::string& path);

/// Parses `text` as a value of `type`. Empty text is NULL. Returns nullopt and sets `reason`
/// (`expected int64, got "abc"`) when the text does not fit: int64 and timestamp are whole decimal
/// numbers, double any finite decimal number (not `nan`, `inf`, nor one beyond double's range),
/// bool `true` / `false`.
std::optional<Value> ParseTextValue(std::string_view text, FieldType type, std::string* reason);

/// Splits one CSV line at `delimiter`. Fields may be quoted with `"`; `""` inside quotes is one
/// quote. Returns false (with `reason`) for an unterminated quote or text after a closing quote.
bool SplitCsvLine(std::string_view line, char delimiter, std::vector<std::string>& fields,
                  std::string* reason);

/// Where each field of a CSV line goes (`columns: by-name`): `slot[k]` is the schema field the
/// line's k-th field fills, or -1 for a column the schema does not read; a line has exactly
/// `slot.size()` fields. Empty: by position (field k is schema field k, `schema.size()` fields).
using CsvColumns = std::vector<int>;

/// The row of a CSV line for `schema`: exactly one field per schema field (or per entry of
/// `columns` when non-null and not empty), converted by type. Reasons name the field by its
/// 1-based place in the line and its schema name: `field 3 "amount": expected int64, got "x"`.
std::optional<Row> CsvLineToRow(std::string_view line, char delimiter, const Schema& schema,
                                std::string* reason, const CsvColumns* columns = nullptr);

/// The columns of a CSV header line `header` for `schema` (the header of `file`, for messages).
/// by_name false: the header must name the schema's fields in order; returns empty columns.
/// by_name true: every schema field must be named exactly once; returns where each field of
/// a line goes. Names are compared after trimming spaces and tabs. Throws
/// KeyedInvalidArgument (key `csv-header`, or `columns` for by-name) naming the header's and the
/// schema's names: `the header of 'in.csv' names ts, amount, user; the schema declares ts,
/// user, amount (...)`.
CsvColumns CsvColumnsOfHeader(std::string_view header, char delimiter, const Schema& schema,
                              bool by_name, const std::string& file);

/// Deepest nesting of arrays and objects a JSON data line may have (as Jackson's default
/// StreamReadConstraints in Flink's JSON format): deeper lines are errors, not stack overflows.
inline constexpr int kMaxJsonDepth = 1000;

/// Whether `text`'s arrays and objects nest at most `max_depth` levels (brackets inside strings
/// do not count). One pass, no allocation; says nothing about whether `text` is valid JSON.
bool JsonDepthWithin(std::string_view text, int max_depth);

/// Parses one JSON data line. Returns nullopt with `reason` ("JSON nests deeper than 1000
/// levels", "invalid JSON: a NUL byte at column N", "invalid UTF-8 at column N" (1-based byte
/// column of the first byte of the first ill-formed sequence) or "invalid JSON") instead of
/// throwing.
std::optional<nlohmann::json> ParseJsonLine(std::string_view line, std::string* reason);

/// The row of one JSON object for `schema`: each schema field read by name; missing or null is
/// NULL; other keys are ignored. Returns nullopt with `reason` for invalid or too deep JSON
/// (ParseJsonLine), a non-object, or
/// a value of the wrong type (a number where a string is declared is an error, and vice versa).
std::optional<Row> JsonLineToRow(std::string_view line, const Schema& schema, std::string* reason);

/// As JsonLineToRow, for an already parsed value.
std::optional<Row> JsonObjectToRow(const nlohmann::json& object, const Schema& schema,
                                   std::string* reason);

/// Decodes the data lines of one file source into rows of its schema, compiled from the schema
/// once: JSON Lines on simdjson's On-Demand API, each key matched to its slot and each value read
/// straight into the row; CSV split in place and converted with `std::from_chars`. No DOM, no
/// per-field allocation: `Decode` refills the caller's row, reusing the buffers of its strings.
///
/// Results are exactly those of `JsonLineToRow` / `CsvLineToRow` (the documented rules of the
/// file source): a line the fast path cannot decode with certainty (invalid or too deep JSON,
/// invalid UTF-8, a raw control character, a value of the wrong type, an unterminated CSV quote,
/// the wrong number of CSV fields, a number out of range) is decoded again by those functions,
/// which give the row or the same reason as before. Bad lines cost more; good lines the same.
///
/// Ownership: owns its simdjson parser and scratch buffers. Threading: one thread (the reader's
/// mailbox thread); one decoder per reader.
class LineDecoder {
 public:
  enum class Format { kJson, kCsv };
  /// Rows are filled in `row_layout` (default: the schema's), which may have fields after the
  /// schema's (a Kafka source's key field): the decoder leaves those as they are, except that
  /// a line decoded the slow way leaves them NULL.
  LineDecoder(Format format, const Schema& schema, char csv_delimiter = ',',
              const RowLayout* row_layout = nullptr);
  ~LineDecoder();
  LineDecoder(const LineDecoder&) = delete;
  LineDecoder& operator=(const LineDecoder&) = delete;

  /// Fills `row` (reset to the decoder's layout unless it has it; the schema's fields in order)
  /// from `line` (no newline). Returns false and sets `reason` when the line is bad; `row` is then
  /// unspecified.
  bool Decode(std::string_view line, Row& row, std::string* reason);
  /// Decode for a line lent by `LineReader::Next(std::string_view&)`: at least
  /// LineReader::kLinePadding readable bytes follow it, the first of them whitespace, so the
  /// JSON fast path parses it in place; with the reader's `Ahead()` (non-empty `bytes`) JSON
  /// lines are parsed many at a time (one simdjson stage 1 over the buffered lines). Same
  /// results as Decode.
  bool DecodeLent(std::string_view line, const LinesAhead& ahead, Row& row, std::string* reason);
  /// CSV: the columns of the lines decoded from now on (`CsvColumns`; null or empty: by
  /// position). Borrowed, must outlive its use; O(1), so a reader taking turns between files
  /// with different headers sets it per line.
  void UseCsvColumns(const CsvColumns* columns);
  /// JSON lines DecodeLent read from a document stream so far (0 without the fast path).
  int64_t json_stream_lines() const;

 private:
  // `lent`: null for Decode.
  bool DecodeLine(std::string_view line, const LinesAhead* lent, Row& row, std::string* reason);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The schema declared by `fields` (YAML type names). Throws InvalidArgument for an unknown type
/// name, a repeated name or an empty list.
Schema SchemaFromSpec(const std::vector<SchemaFieldSpec>& fields);

/// Slot of the first field of type timestamp, or -1: that field is the source's own timestamp.
int FirstTimestampSlot(const Schema& schema);

/// Resolves a source's `path` against the directory of the job file (`job_file`, may be
/// "<string>" or empty: then the path is used as written).
std::string ResolveAgainstJobFile(const std::string& path, const std::string& job_file);

/// The line-format keys the file and stdin sources share, checked once when the source is built:
/// `csv-delimiter` is one character and `max-line-bytes` at least 1. Throws
/// `KeyedInvalidArgument` naming the key.
void CheckLineFormatKeys(const FileSourceSpec& file);

}  // namespace tidemark
