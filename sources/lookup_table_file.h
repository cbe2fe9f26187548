#pragma once

#include <cstdint>
#include <functional>

#include "config/job_spec.h"
#include "runtime/core/row.h"

namespace tidemark {

/// Reads the whole table of a `lookup-join` (operators/lookup_join_operator.h, whose
/// `LookupTableReader` this is): every data line of `file.path` (one regular file, already
/// resolved; `format` csv or jsonl, `csv_header`, `csv_delimiter` as a file source's) decoded
/// into a row of `schema` with the file source's rules (LineDecoder) and passed to `emit` with
/// its 1-based line number, in file order. Empty lines are skipped; a CSV header (`csv_header`)
/// must name the schema's fields in order.
///
/// Errors: throws IoError for a file that cannot be read and for the first bad line, as
/// `path:line: reason` (`data/airports.csv:4: field 2 "lat": expected double, got "x"`): a table
/// is all or nothing, a bad line is never skipped. Blocking file I/O on the calling thread.
void ReadLookupTableFile(const FileSourceSpec& file, const Schema& schema,
                         const std::function<void(const Row& row, int64_t line_number)>& emit);

}  // namespace tidemark
