#include "runtime/eventtime/make_watermark_strategy.h"

#include <limits>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"
#include "runtime/eventtime/watermarks_with_idleness.h"
#include "tests/unit/runtime/eventtime/recording_watermark_output.h"

namespace tidemark {
namespace {

using Calls = std::vector<std::string>;

Schema TestSchema() {
  return Schema({{"ts", FieldType::kInt64},
                 {"name", FieldType::kString},
                 {"secs", FieldType::kDouble},
                 {"wm", FieldType::kInt64},
                 {"flag", FieldType::kBool},
                 {"t", FieldType::kTimestamp}});
}

StreamRecord Rec(Value ts, Value name = std::string("x"), Value secs = 0.0,
                 Value wm = std::monostate{}) {
  return StreamRecord(
      Row{std::move(ts), std::move(name), std::move(secs), std::move(wm), false, int64_t{0}});
}

TEST(MakeWatermarkStrategyTest, BoundedOutOfOrdernessReadsTheTimestampField) {
  WatermarkStrategySpec spec;
  spec.strategy = "bounded-out-of-orderness";
  spec.max_out_of_orderness_ms = 3000;
  spec.timestamp_field = "ts";
  WatermarkStrategy s = MakeWatermarkStrategy(spec, TestSchema());
  EXPECT_EQ(s.ExtractTimestamp(Rec(int64_t{9149})), 9149);
  EXPECT_EQ(s.ExtractTimestamp(Rec(std::monostate{})), std::nullopt)
      << "NULL is no timestamp, never 0";
  auto g = s.CreateWatermarkGenerator(nullptr);
  testing::RecordingWatermarkOutput out;
  g->OnPeriodicEmit(out);
  StreamRecord r = Rec(int64_t{10000});
  g->OnEvent(r, 10000, out);
  g->OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:MIN", "wm:6999"}));
}

TEST(MakeWatermarkStrategyTest, ConvertsUnits) {
  WatermarkStrategySpec spec;
  spec.strategy = "monotonous";
  spec.timestamp_field = "ts";
  spec.timestamp_unit = "s";
  EXPECT_EQ(MakeWatermarkStrategy(spec, TestSchema()).ExtractTimestamp(Rec(int64_t{12})), 12000);
  spec.timestamp_unit = "us";
  EXPECT_EQ(MakeWatermarkStrategy(spec, TestSchema()).ExtractTimestamp(Rec(int64_t{-1})), -1);
  EXPECT_EQ(MakeWatermarkStrategy(spec, TestSchema()).ExtractTimestamp(Rec(int64_t{12999})), 12);
  spec.timestamp_unit = "ns";
  EXPECT_EQ(MakeWatermarkStrategy(spec, TestSchema()).ExtractTimestamp(Rec(int64_t{5'000'000})), 5);
  spec.timestamp_unit = "s";
  EXPECT_EQ(
      MakeWatermarkStrategy(spec, TestSchema()).ExtractTimestamp(Rec(int64_t{kMaxTimestamp / 10})),
      std::nullopt)
      << "overflow is no timestamp";
  spec.timestamp_unit = "ms";
  EXPECT_EQ(MakeWatermarkStrategy(spec, TestSchema()).ExtractTimestamp(Rec(kMinTimestamp)),
            std::nullopt)
      << "Long.MIN_VALUE is the no-timestamp marker, never an event time";
  EXPECT_EQ(MakeWatermarkStrategy(spec, TestSchema()).ExtractTimestamp(Rec(kMinTimestamp + 1)),
            kMinTimestamp + 1);
  spec.timestamp_unit = "s";
  spec.timestamp_field = "secs";
  EXPECT_EQ(MakeWatermarkStrategy(spec, TestSchema()).ExtractTimestamp(Rec(int64_t{0}, "x", 1.5)),
            1500);
}

TEST(MakeWatermarkStrategyTest, ParsesIso8601WithZones) {
  EXPECT_EQ(ParseIso8601Millis("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseIso8601Millis("1970-01-01T00:00:01.5Z"), 1500);
  EXPECT_EQ(ParseIso8601Millis("2024-02-29T12:34:56.789Z"), 1709210096789);
  EXPECT_EQ(ParseIso8601Millis("2024-02-29T14:34:56.789+02:00"), 1709210096789);
  EXPECT_EQ(ParseIso8601Millis("2024-02-29T07:04:56.789123-0530"), 1709210096789);
  EXPECT_EQ(ParseIso8601Millis("1969-12-31T23:59:59.999Z"), -1);
  EXPECT_EQ(ParseIso8601Millis("2024-02-29"), 1709164800000);
  EXPECT_EQ(ParseIso8601Millis("2023-02-29T00:00:00Z"), std::nullopt);
  EXPECT_EQ(ParseIso8601Millis("2024-01-01T24:00:00Z"), std::nullopt);
  EXPECT_EQ(ParseIso8601Millis("2024-01-01T00:00:00Q"), std::nullopt);
  EXPECT_EQ(ParseIso8601Millis("yesterday"), std::nullopt);

  WatermarkStrategySpec spec;
  spec.strategy = "none";
  spec.timestamp_field = "name";
  spec.timestamp_unit = "iso8601";
  WatermarkStrategy s = MakeWatermarkStrategy(spec, TestSchema());
  EXPECT_EQ(s.ExtractTimestamp(Rec(int64_t{0}, std::string("1970-01-01T00:00:02Z"))), 2000);
  EXPECT_EQ(s.ExtractTimestamp(Rec(int64_t{0}, std::string("garbage"))), std::nullopt);
}

TEST(MakeWatermarkStrategyTest, TimestampFormatParsesTheStringFieldWithThePattern) {
  WatermarkStrategySpec spec;
  spec.strategy = "none";
  spec.timestamp_field = "name";
  spec.timestamp_format = "dd/MM/yyyy HH:mm:ss";
  WatermarkStrategy s = MakeWatermarkStrategy(spec, TestSchema());
  // 2026-03-02 06:05:07 UTC
  EXPECT_EQ(s.ExtractTimestamp(Rec(int64_t{0}, std::string("02/03/2026 06:05:07"))), 1772431507000);
  EXPECT_EQ(s.ExtractTimestamp(Rec(int64_t{0}, std::string("2026-03-02 06:05:07"))), std::nullopt);
  EXPECT_EQ(s.ExtractTimestamp(Rec(int64_t{0}, std::monostate{})), std::nullopt);

  spec.timestamp_format = "yyyy-MM-dd'T'HH:mm:ss'Z'";
  EXPECT_EQ(MakeWatermarkStrategy(spec, TestSchema())
                .ExtractTimestamp(Rec(int64_t{0}, std::string("1970-01-01T00:00:02Z"))),
            2000);

  // A pattern parses strings only: keyed at timestamp-format.
  spec.timestamp_field = "ts";
  try {
    (void)MakeWatermarkStrategy(spec, TestSchema());
    FAIL() << "expected KeyedInvalidArgument";
  } catch (const KeyedInvalidArgument& e) {
    EXPECT_EQ(e.key_path(), "timestamp-format");
    EXPECT_EQ(e.reason(),
              "field 'ts' is of type int64: a pattern parses a string field (declare it string, "
              "or drop timestamp-format for a number of ms)");
  }
}

// The reason a source reports for each kind of record its assigner refuses (tryout 33: every
// kind used to get one general "missing, unparsable or Long.MIN_VALUE"), and that each of these
// records is refused.
TEST(MakeWatermarkStrategyTest, NoTimestampReasonNamesTheFieldAndWhyItsValueIsNoTime) {
  WatermarkStrategySpec spec;
  spec.strategy = "none";
  spec.timestamp_field = "ts";
  auto reason = [&](const StreamRecord& r) {
    EXPECT_EQ(MakeWatermarkStrategy(spec, TestSchema()).ExtractTimestamp(r), std::nullopt);
    return NoTimestampReason(spec, TestSchema(), r);
  };
  EXPECT_EQ(reason(Rec(std::monostate{})), "field 'ts' is missing or NULL");
  EXPECT_EQ(reason(Rec(kMinTimestamp)),
            "field 'ts' is Long.MIN_VALUE (-9223372036854775808), which means no timestamp");
  spec.timestamp_unit = "s";
  EXPECT_EQ(reason(Rec(int64_t{9223372036854776})),
            "field 'ts': 9223372036854776 s is outside the int64 range of ms since the epoch");
  spec.timestamp_field = "secs";
  EXPECT_EQ(reason(Rec(int64_t{0}, "x", std::numeric_limits<double>::quiet_NaN())),
            "field 'secs': nan s is not a finite number within the int64 range of ms since the "
            "epoch");
  EXPECT_EQ(reason(Rec(int64_t{0}, "x", 1e300)),
            "field 'secs': 1e+300 s is not a finite number within the int64 range of ms since the "
            "epoch");
  spec.timestamp_field = "name";
  spec.timestamp_unit = "iso8601";
  const std::string kForms =
      "' is not an ISO-8601 date-time (YYYY-MM-DD, optionally with T or a space and "
      "HH:MM[:SS[.fraction]], and Z or an offset such as +01:00; fields in range)";
  EXPECT_EQ(reason(Rec(int64_t{0}, std::string("2026-02-30T00:00:00Z"))),
            "field 'name': '2026-02-30T00:00:00Z" + kForms);
  // A long value is shown cut to 100 bytes, at a character boundary ("é" is 2 bytes).
  const std::string long_value = std::string(99, 'a') + "\xc3\xa9" + std::string(50, 'b');
  EXPECT_EQ(reason(Rec(int64_t{0}, long_value)),
            "field 'name': '" + std::string(99, 'a') + "..." + kForms);
  spec.timestamp_format = "dd/MM/yyyy";
  EXPECT_EQ(reason(Rec(int64_t{0}, std::string("2026-03-02"))),
            "field 'name': '2026-03-02' does not match timestamp-format \"dd/MM/yyyy\"");
  spec = WatermarkStrategySpec{};
  spec.strategy = "none";  // the record's own timestamp
  EXPECT_EQ(NoTimestampReason(spec, TestSchema(), Rec(int64_t{1})),
            "the record carries no timestamp");
}

TEST(MakeWatermarkStrategyTest, PunctuatedEmitsTheWatermarkFieldWhenPresent) {
  WatermarkStrategySpec spec;
  spec.strategy = "punctuated";
  spec.timestamp_field = "ts";
  spec.watermark_field = "wm";
  auto g = MakeWatermarkStrategy(spec, TestSchema()).CreateWatermarkGenerator(nullptr);
  testing::RecordingWatermarkOutput out;
  StreamRecord without = Rec(int64_t{5});
  StreamRecord with = Rec(int64_t{6}, "x", 0.0, int64_t{4});
  g->OnEvent(without, 5, out);
  g->OnEvent(with, 6, out);
  g->OnPeriodicEmit(out);
  EXPECT_EQ(out.Take(), (Calls{"wm:4"}));
}

// ExtractTimestamp reads an int64 ms field inline (SetInt64MillisField) and the punctuated
// generator reads an int64 / NULL ms watermark field inline: both must agree with the general
// conversion for every value, including the ones they hand back to it.
TEST(MakeWatermarkStrategyTest, InlineMillisFieldsAgreeWithTheGeneralConversion) {
  WatermarkStrategySpec spec;
  spec.strategy = "punctuated";
  spec.timestamp_field = "ts";
  spec.watermark_field = "wm";
  WatermarkStrategy s = MakeWatermarkStrategy(spec, TestSchema());
  // Long.MIN_VALUE is the "no timestamp" marker: no event time, no watermark.
  const std::vector<Value> values = {int64_t{9149},    int64_t{-3}, int64_t{kMinTimestamp},
                                     std::monostate{}, 2.5,         true,
                                     std::string("12")};
  for (const Value& v : values) {
    StreamRecord r = Rec(v);
    EXPECT_EQ(s.ExtractTimestamp(r), s.timestamp_assigner()(r)) << ValueToJson(v);
    EXPECT_EQ(s.ExtractTimestamp(r), ValueToEventTimeMillis(v, TimestampUnit::kMillis))
        << ValueToJson(v);
  }
  EXPECT_EQ(s.ExtractTimestamp(Rec(int64_t{kMinTimestamp})), std::nullopt);
  EXPECT_EQ(s.ExtractTimestamp(StreamRecord(Row{})), std::nullopt) << "a row without the field";

  auto g = s.CreateWatermarkGenerator(nullptr);
  testing::RecordingWatermarkOutput out;
  for (const Value& v : values) {
    StreamRecord r = Rec(int64_t{0}, "x", 0.0, v);
    g->OnEvent(r, 0, out);
  }
  StreamRecord short_row(Row{int64_t{0}});
  g->OnEvent(short_row, 0, out);
  EXPECT_EQ(out.Take(), (Calls{"wm:9149", "wm:-3", "wm:2"}))
      << "int64 as is (MIN none), NULL / bool / string none, 2.5 ms floors to 2";
}

TEST(MakeWatermarkStrategyTest, EmptyTimestampFieldKeepsTheRecordTimestamp) {
  WatermarkStrategySpec spec;
  spec.strategy = "monotonous";
  WatermarkStrategy s = MakeWatermarkStrategy(spec, TestSchema());
  StreamRecord stamped(Row{}, 77);
  StreamRecord bare(Row{});
  EXPECT_EQ(s.ExtractTimestamp(stamped), 77);
  EXPECT_EQ(s.ExtractTimestamp(bare), std::nullopt);
}

TEST(MakeWatermarkStrategyTest, IdlenessAndAlignmentAreCarried) {
  WatermarkStrategySpec spec;
  spec.timestamp_field = "ts";
  spec.idleness_ms = 2000;
  spec.alignment = WatermarkStrategySpec::Alignment{"g1", 500, 100};
  WatermarkStrategy s = MakeWatermarkStrategy(spec, TestSchema());
  ASSERT_TRUE(s.idle_timeout().has_value());
  EXPECT_EQ(s.idle_timeout()->count(), 2000);
  ASSERT_TRUE(s.alignment().has_value());
  EXPECT_EQ(*s.alignment(), (WatermarkAlignmentParams{"g1", 500, 100}));
  ManualRelativeClock clock(1);
  auto g = s.CreateWatermarkGenerator(&clock);
  EXPECT_NE(dynamic_cast<WatermarksWithIdleness*>(g.get()), nullptr);
}

TEST(MakeWatermarkStrategyTest, IdleAdvanceCarriesWhatEachStrategySubtracts) {
  const auto lag = [](const std::string& strategy, int64_t bound) {
    WatermarkStrategySpec spec;
    spec.strategy = strategy;
    spec.timestamp_field = "ts";
    spec.max_out_of_orderness_ms = bound;
    if (strategy == "adaptive-out-of-orderness") {
      spec.max_out_of_orderness_ms = 0;
      spec.adaptive = WatermarkStrategySpec::Adaptive{99.0, 60000, 0, bound, bound};
    }
    spec.idle_advance_ms = 30000;
    const WatermarkStrategy s = MakeWatermarkStrategy(spec, TestSchema());
    EXPECT_EQ(s.idle_advance()->after_ms, 30000);
    return s.idle_advance()->lag_ms;
  };
  EXPECT_EQ(lag("bounded-out-of-orderness", 500), 501);   // max - B - 1
  EXPECT_EQ(lag("adaptive-out-of-orderness", 700), 701);  // the largest bound, - 1
  EXPECT_EQ(lag("sql-interval", 500), 500);               // ts - INTERVAL
  EXPECT_EQ(lag("monotonous", 0), 1);
  WatermarkStrategySpec none;
  none.strategy = "none";
  none.idle_advance_ms = 1000;
  EXPECT_THROW(MakeWatermarkStrategy(none, TestSchema()), InvalidArgument);
}

TEST(MakeWatermarkStrategyTest, RejectsBadSpecsWithLocation) {
  WatermarkStrategySpec spec;
  spec.timestamp_field = "nope";
  spec.location = SourceLocation{"job.yaml", 7, 5};
  // A missing field is keyed: the compiler reports it at the key (WatermarksCompileError), at
  // the block when the key's position is not known.
  try {
    MakeWatermarkStrategy(spec, TestSchema());
    FAIL() << "expected KeyedInvalidArgument";
  } catch (const KeyedInvalidArgument& e) {
    EXPECT_EQ(e.key_path(), "timestamp-field");
    EXPECT_EQ(e.reason(), "no field 'nope' in the input schema");
    const CompileError c = WatermarksCompileError(spec, e);
    EXPECT_EQ(c.path(), "watermarks.timestamp-field");
    EXPECT_EQ(c.location().line, 7);
    EXPECT_EQ(c.location().column, 5);
    spec.key_locations.values["timestamp-field"] = SourceLocation{"job.yaml", 9, 24};
    EXPECT_EQ(WatermarksCompileError(spec, e).location().line, 9);
  }
  auto bad = [](auto mutate) {
    WatermarkStrategySpec s;
    s.timestamp_field = "ts";
    mutate(s);
    return s;
  };
  const Schema schema = TestSchema();
  EXPECT_THROW(MakeWatermarkStrategy(bad([](auto& s) { s.strategy = "sometimes"; }), schema),
               InvalidArgument);
  EXPECT_THROW(MakeWatermarkStrategy(bad([](auto& s) { s.timestamp_unit = "h"; }), schema),
               InvalidArgument);
  EXPECT_THROW(MakeWatermarkStrategy(bad([](auto& s) { s.max_out_of_orderness_ms = -1; }), schema),
               InvalidArgument);
  EXPECT_THROW(MakeWatermarkStrategy(bad([](auto& s) { s.idleness_ms = 0; }), schema),
               InvalidArgument);
  EXPECT_THROW(MakeWatermarkStrategy(bad([](auto& s) { s.strategy = "punctuated"; }), schema),
               InvalidArgument);
  EXPECT_THROW(MakeWatermarkStrategy(bad([](auto& s) { s.timestamp_field = "flag"; }), schema),
               InvalidArgument);
  EXPECT_THROW(MakeWatermarkStrategy(bad([](auto& s) { s.timestamp_field = "name"; }), schema),
               InvalidArgument)
      << "a string field needs unit iso8601";
  EXPECT_THROW(MakeWatermarkStrategy(bad([](auto& s) {
                                       s.timestamp_field = "t";
                                       s.timestamp_unit = "s";
                                     }),
                                     schema),
               InvalidArgument);
}

}  // namespace
}  // namespace tidemark
