#include "operators/checksum_sink_operator.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/checksum.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/collecting_output.h"

namespace tidemark {
namespace {

/// The checksum of `rows` by checksum.h's definition: per row the record hash of the field
/// hashes of every field (the schemas here have no `wm` / `emit_ns`).
uint64_t Reference(const std::vector<StreamRecord>& records) {
  uint64_t sum = 0;
  for (const StreamRecord& r : records) {
    uint64_t fields = 0;
    for (size_t i = 0; i < r.row.size(); ++i) {
      fields += FieldHash(i, r.row, i);
    }
    sum += RecordHash(fields);
  }
  return sum;
}

/// The (count, checksum) a sink over `schema` publishes for `records`, given as one batch or
/// record by record.
std::pair<int64_t, uint64_t> RunSink(const Schema& schema, std::vector<StreamRecord> records,
                                     bool batch) {
  auto result = std::make_shared<SinkResult>(schema, false);
  ChecksumSinkOperator sink(schema, result);
  testing::CollectingOutput output;
  ManualProcessingTimeService time{0};
  OperatorContext context;
  context.name = "sink";
  context.output = &output;
  context.processing_time = &time;
  sink.Open(context);
  if (batch) {
    std::vector<StreamRecord*> pointers;
    for (StreamRecord& r : records) {
      pointers.push_back(&r);
    }
    RecordBatch b{pointers.data(), pointers.size()};
    sink.ProcessBatch(b, 0);
  } else {
    for (StreamRecord& r : records) {
      sink.ProcessElement(r, 0);
    }
  }
  sink.Finish();
  return {result->count(), result->checksum()};
}

TEST(ChecksumSinkOperatorTest, BatchChecksumIsTheDefinitionForEveryWidthAndSpecialValue) {
  const FieldType kinds[] = {FieldType::kInt64, FieldType::kDouble, FieldType::kTimestamp,
                             FieldType::kBool};
  const double kMinusZero = -0.0;
  // 1 to 10 fixed-width fields (the unrolled widths and the general loop past them), then the
  // same with a string field.
  for (size_t width = 1; width <= 10; ++width) {
    for (bool with_string : {false, true}) {
      Schema schema;
      for (size_t f = 0; f < width; ++f) {
        // Appended piece by piece: `"f" + std::string&&` makes g++ 12 report a false -Wrestrict.
        std::string name = "f";
        name += std::to_string(f);
        schema.Add(std::move(name), kinds[f % 4]);
      }
      if (with_string) {
        schema.Add("s", FieldType::kString);
      }
      std::vector<StreamRecord> records;
      for (int k = 0; k < 40; ++k) {
        Row row(schema.layout());
        for (size_t f = 0; f < width; ++f) {
          switch (kinds[f % 4]) {
            case FieldType::kDouble:
              // -0.0 must hash as 0.0; NaN and ordinary values as their bits.
              row.SetDouble(f, k % 4 == 0   ? kMinusZero
                               : k % 4 == 1 ? 0.0
                               : k % 4 == 2 ? std::numeric_limits<double>::quiet_NaN()
                                            : 0.25 * k);
              break;
            case FieldType::kBool:
              row.SetBool(f, k % 2 == 0);
              break;
            default:
              // INT64_MIN has the bit pattern of -0.0 and must not be changed.
              row.SetInt64(f, k % 3 == 0 ? std::numeric_limits<int64_t>::min()
                                         : k * 1000 + static_cast<int64_t>(f));
          }
        }
        if (with_string) {
          row.SetString(width, std::string(static_cast<size_t>(k), 'x'));
        }
        if (k % 7 == 6) {
          row.SetNull(k % width);  // NULLs take the general path
        }
        records.emplace_back(std::move(row), k);
      }
      const uint64_t expected = Reference(records);
      EXPECT_EQ(RunSink(schema, records, true), (std::pair<int64_t, uint64_t>{40, expected}))
          << width << " fields, string " << with_string;
      EXPECT_EQ(RunSink(schema, records, false), (std::pair<int64_t, uint64_t>{40, expected}))
          << width << " fields, string " << with_string;
    }
  }
}

TEST(ChecksumSinkOperatorTest, InlineStringHashIsStdHash) {
  // Every length through several 8-byte words and every tail, bytes of all values (signed
  // chars above 0x7f included), at every alignment.
  std::string bytes;
  for (int i = 0; i < 200; ++i) {
    bytes.push_back(static_cast<char>((i * 151 + 7) & 0xff));
  }
  int compared = 0;
  for (size_t offset = 0; offset < 8; ++offset) {
    for (size_t size = 0; size <= 70; ++size) {
      const std::string_view s(bytes.data() + offset, size);
      ASSERT_EQ(StringHash(s), static_cast<uint64_t>(std::hash<std::string_view>{}(s)))
          << "offset " << offset << " size " << size;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 8 * 71);
}

// Rows with several strings and fixed fields (the events schema's shape and wider) sum to the
// definition in a batch and record by record.
TEST(ChecksumSinkOperatorTest, BatchChecksumWithSeveralStringsIsTheDefinition) {
  Schema schema;
  schema.Add("user", FieldType::kString);
  schema.Add("ts", FieldType::kTimestamp);
  schema.Add("amount", FieldType::kInt64);
  schema.Add("page", FieldType::kString);
  schema.Add("ratio", FieldType::kDouble);
  schema.Add("note", FieldType::kString);
  std::vector<StreamRecord> records;
  for (int k = 0; k < 50; ++k) {
    Row row(schema.layout());
    row.SetString(0, "user_" + std::to_string(k * 7919));
    row.SetInt64(1, 1767225600000 + k);
    row.SetInt64(2, k - 25);
    row.SetString(3, std::string(static_cast<size_t>(k % 19), static_cast<char>('a' + k % 26)));
    row.SetDouble(4, k % 5 == 0 ? -0.0 : 0.5 * k);
    row.SetString(5, std::string(static_cast<size_t>(k), '\xe9'));
    if (k % 11 == 10) {
      row.SetNull(static_cast<size_t>(k % 6));
    }
    records.emplace_back(std::move(row), k);
  }
  const uint64_t expected = Reference(records);
  EXPECT_EQ(RunSink(schema, records, true), (std::pair<int64_t, uint64_t>{50, expected}));
  EXPECT_EQ(RunSink(schema, records, false), (std::pair<int64_t, uint64_t>{50, expected}));
}

}  // namespace
}  // namespace tidemark
