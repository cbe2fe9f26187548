// A lookup join allocates nothing per record once warm (operators/lookup_join_operator.h): the
// key is encoded into a reused buffer, the flat_hash_map is probed with it, and the joined row is
// built in a reused row that trades buffers with the record (as a source's recycled record
// brings its buffers back).

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "operators/lookup_join_operator.h"
#include "runtime/time/manual_processing_time_service.h"
#include "tests/testing/counting_allocator.h"

namespace tidemark {
namespace {

using ::tidemark::testing::AllocationCount;

/// Counts records; keeps nothing (a chained operator that reads the row and hands it back).
class CountingOutput : public Output {
 public:
  void Collect(StreamRecord& record) override {
    ++records;
    bytes += record.row.IsNull(3) ? 0 : record.row.GetString(3).size();
  }
  void CollectSide(std::string_view /*tag*/, StreamRecord& /*record*/) override {}
  void EmitWatermark(Watermark /*watermark*/) override {}
  void EmitWatermarkStatus(WatermarkStatus /*status*/) override {}
  int64_t records = 0;
  int64_t bytes = 0;
};

TEST(LookupJoinAllocationTest, HitsAndMissesAllocateNothingOnceWarm) {
  const Schema input({{"origin", FieldType::kString}, {"n", FieldType::kInt64}});
  Schema joined = input;
  joined.Add("code", FieldType::kString);
  joined.Add("name", FieldType::kString);
  LookupJoinOperator::Options o;
  // Open reads the file's modification time and size; the reader below stands in for its rows.
  o.file.path = (std::filesystem::temp_directory_path() /
                 ("tm_lookup_alloc_" + std::to_string(::getpid()) + ".csv"))
                    .string();
  std::ofstream(o.file.path) << "FRA,Frankfurt am Main\nSFO,San Francisco International\n";
  o.table_schema = Schema({{"code", FieldType::kString}, {"name", FieldType::kString}});
  o.reader = [&](const FileSourceSpec&, const Schema& schema, const LookupRowCallback& emit) {
    emit(Row::Of(schema.layout(), {"FRA", "Frankfurt am Main"}), 1);
    emit(Row::Of(schema.layout(), {"SFO", "San Francisco International"}), 2);
  };
  o.left_key_slots = {0};
  o.table_key_slots = {0};
  o.inner = false;
  o.output_layout = joined.layout();
  LookupJoinOperator op(o);
  ManualProcessingTimeService clock;
  CountingOutput out;
  OperatorContext ctx;
  ctx.output = &out;
  ctx.processing_time = &clock;
  op.Open(ctx);

  const std::vector<std::string> origins = {"FRA", "VIE", "SFO", "FRA-LONGER-THAN-INLINE"};
  const RowLayout* input_layout = input.layout();  // Schema::layout() builds a key: once
  StreamRecord record;
  auto run = [&](int rounds) {
    for (int r = 0; r < rounds; ++r) {
      for (const std::string& origin : origins) {
        record.row.Reset(input_layout);
        record.row.SetString(0, origin);
        record.row.SetInt64(1, r);
        record.SetTimestamp(r);
        op.ProcessElement(record, 0);
      }
    }
  };
  run(3);  // warm: the buffers of the record, the joined row and the key grow to their size
  const int64_t before = AllocationCount();
  run(100);
  EXPECT_EQ(AllocationCount() - before, 0);
  EXPECT_EQ(out.records, 4 * 103);
  EXPECT_EQ(out.bytes, 103 * (17 + 27));
  op.Close();
  std::filesystem::remove(o.file.path);
}

}  // namespace
}  // namespace tidemark
