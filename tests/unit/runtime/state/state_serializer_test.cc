#include "runtime/state/state_serializer.h"

#include <limits>
#include <string>

#include <gtest/gtest.h>

namespace tidemark {
namespace {

TEST(StateSerializer, RoundTripsEveryValueKindInSections) {
  StateWriter w;
  w.BeginSection("window", 2);
  w.WriteI64(std::numeric_limits<int64_t>::min());
  w.WriteU32(7);
  w.WriteF64(-0.5);
  w.WriteBool(true);
  const std::string with_nuls("k\0ey\0", 5);
  w.WriteString(with_nuls);
  w.WriteRow(Row{Value{}, Value(int64_t{42}), Value(1.25), Value(false), Value(std::string("s"))});
  w.BeginSection("timers", 1);
  w.WriteI64(9999);
  w.EndSection();
  w.EndSection();

  StateReader r(w.bytes());
  EXPECT_EQ(r.BeginSection("window", 3), 2u);
  EXPECT_EQ(r.ReadI64(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(r.ReadU32(), 7u);
  EXPECT_EQ(r.ReadF64(), -0.5);
  EXPECT_TRUE(r.ReadBool());
  EXPECT_EQ(r.ReadString(), with_nuls);
  const RowLayout* layout =
      RowLayout::Of({FieldType::kTimestamp, FieldType::kInt64, FieldType::kDouble, FieldType::kBool,
                     FieldType::kString});
  const Row back = r.ReadRow(layout);
  EXPECT_EQ(back,
            (Row{Value{}, Value(int64_t{42}), Value(1.25), Value(false), Value(std::string("s"))}));
  EXPECT_EQ(back.layout_ptr(), layout) << "read into the reader's layout, not the writer's";
  EXPECT_EQ(r.BeginSection("timers", 1), 1u);
  EXPECT_EQ(r.ReadI64(), 9999);
  r.EndSection();
  r.EndSection();
  EXPECT_TRUE(r.AtEnd());
}

TEST(StateSerializer, EndSectionSkipsWhatWasNotRead) {
  StateWriter w;
  w.BeginSection("a", 1);
  w.WriteI64(1);
  w.WriteI64(2);
  w.EndSection();
  w.WriteI64(3);
  StateReader r(w.bytes());
  r.BeginSection("a", 1);
  EXPECT_EQ(r.ReadI64(), 1);
  r.EndSection();
  EXPECT_EQ(r.ReadI64(), 3);
  EXPECT_TRUE(r.AtEnd());
}

TEST(StateSerializer, ReadingPastASectionThrowsInsteadOfReadingTheNext) {
  StateWriter w;
  w.BeginSection("a", 1);
  w.WriteU32(1);
  w.EndSection();
  w.WriteI64(5);
  StateReader r(w.bytes());
  r.BeginSection("a", 1);
  EXPECT_EQ(r.ReadU32(), 1u);
  EXPECT_THROW(r.ReadU32(), StateCorrupt);
}

TEST(StateSerializer, WrongSectionNewerVersionAndEveryTruncationAreStateCorrupt) {
  StateWriter w;
  w.BeginSection("window", 2);
  w.WriteRow(Row{Value(std::string("abc")), Value(int64_t{1})});
  w.EndSection();
  {
    StateReader r(w.bytes());
    EXPECT_THROW(r.BeginSection("join", 2), StateCorrupt);
  }
  {
    StateReader r(w.bytes());
    EXPECT_THROW(r.BeginSection("window", 1), StateCorrupt);
  }
  const std::string& full = w.bytes();
  for (size_t n = 0; n < full.size(); ++n) {
    StateReader r(std::string_view(full).substr(0, n));
    EXPECT_THROW(
        {
          r.BeginSection("window", 2);
          r.ReadRow(RowLayout::Of({FieldType::kString, FieldType::kInt64}));
          r.EndSection();
        },
        StateCorrupt)
        << "prefix of " << n << " bytes";
  }
}

TEST(StateSerializer, HostileLengthsAndTagsThrow) {
  {
    StateWriter w;
    w.WriteU32(0xFFFFFFFFu);  // a string claiming 4 GiB
    StateReader r(w.bytes());
    EXPECT_THROW(r.ReadString(), StateCorrupt);
  }
  {
    StateWriter w;
    w.WriteU32(0x7FFFFFFFu);  // a row claiming 2^31 values
    StateReader r(w.bytes());
    EXPECT_THROW(r.ReadRow(RowLayout::Of({FieldType::kInt64})), StateCorrupt);
    StateReader k(w.bytes());
    EXPECT_THROW(k.ReadKey(), StateCorrupt);
  }
  {
    StateWriter w;
    w.WriteRow(Row{Value(1.5)});  // a double where the reader's schema has an int64
    StateReader r(w.bytes());
    EXPECT_THROW(r.ReadRow(RowLayout::Of({FieldType::kInt64})), StateCorrupt);
  }
  {
    StateWriter w;
    w.WriteU8(9);
    StateReader r(w.bytes());
    EXPECT_THROW(r.ReadValue(), StateCorrupt);
  }
  {
    StateWriter w;
    w.WriteU8(2);
    StateReader r(w.bytes());
    EXPECT_THROW(r.ReadBool(), StateCorrupt);
  }
}

}  // namespace
}  // namespace tidemark
