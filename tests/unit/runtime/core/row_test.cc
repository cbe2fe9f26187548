#include "runtime/core/row.h"

#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "runtime/core/errors.h"

namespace tidemark {
namespace {

const RowLayout* Layout(std::vector<FieldType> types) {
  return RowLayout::Of(types);
}

TEST(RowLayoutTest, InternedPerTypeListAndSizedForSlotsAndNullBits) {
  const RowLayout* a = Layout({FieldType::kInt64, FieldType::kString});
  EXPECT_EQ(a, Layout({FieldType::kInt64, FieldType::kString}));
  EXPECT_NE(a, Layout({FieldType::kString, FieldType::kInt64}));
  EXPECT_EQ(a->fixed_words(), 3u);  // two slots, one word of null bits
  EXPECT_TRUE(a->has_strings());
  std::vector<FieldType> wide(65, FieldType::kDouble);
  EXPECT_EQ(Layout(wide)->fixed_words(), 65u + 2u);
  EXPECT_FALSE(Layout(wide)->has_strings());
  Row row(Layout(wide));
  for (size_t i = 0; i < 65; ++i) {
    EXPECT_TRUE(row.AnyNull());
    row.SetDouble(i, 1.0);
  }
  EXPECT_FALSE(row.AnyNull()) << "the 65th field's word";
  Schema s({{"x", FieldType::kInt64}, {"y", FieldType::kString}});
  EXPECT_EQ(s.layout(), a) << "names play no part";
  EXPECT_EQ(RowLayout::Extend(Layout({FieldType::kInt64}), {FieldType::kString}), a);
  EXPECT_TRUE(Layout({FieldType::kTimestamp})->StoresAs(*Layout({FieldType::kInt64})));
  EXPECT_FALSE(Layout({FieldType::kDouble})->StoresAs(*Layout({FieldType::kInt64})));
  EXPECT_FALSE(a->StoresAs(*Layout({FieldType::kInt64})));
}

TEST(RowTest, StartsNullAndStoresTypedCells) {
  Row row(Layout({FieldType::kInt64, FieldType::kDouble, FieldType::kBool, FieldType::kString,
                  FieldType::kTimestamp}));
  for (size_t i = 0; i < row.size(); ++i) {
    EXPECT_TRUE(row.IsNull(i)) << i;
  }
  row.SetInt64(0, std::numeric_limits<int64_t>::min());
  row.SetDouble(1, -0.5);
  row.SetBool(2, true);
  row.SetString(3, std::string("a\0b", 3));
  row.SetInt64(4, 1700000000000);
  EXPECT_EQ(row.GetInt64(0), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(row.GetDouble(1), -0.5);
  EXPECT_TRUE(row.GetBool(2));
  EXPECT_EQ(row.GetString(3), std::string_view("a\0b", 3));
  EXPECT_EQ(row.GetInt64(4), 1700000000000);
  for (size_t i = 0; i < row.size(); ++i) {
    EXPECT_FALSE(row.IsNull(i)) << i;
  }
  EXPECT_FALSE(row.AnyNull());
  row.SetNull(1);
  EXPECT_TRUE(row.AnyNull());
  EXPECT_TRUE(row.IsNull(1));
  EXPECT_EQ(row.Get(1), Value{});
  EXPECT_EQ(row.Get(4), Value(int64_t{1700000000000})) << "a timestamp boxes as its int64";
}

TEST(RowTest, StringsOverwriteInPlaceWhenTheyFitAndAppendOtherwise) {
  Row row(Layout({FieldType::kString, FieldType::kString}));
  row.SetString(0, "hello world");
  row.SetString(1, "x");
  const size_t cap = row.AllocatedBytes();
  row.SetString(0, "hi");  // fits where "hello world" was
  EXPECT_EQ(row.GetString(0), "hi");
  EXPECT_EQ(row.GetString(1), "x");
  EXPECT_EQ(row.AllocatedBytes(), cap);
  row.SetString(1, std::string(1000, 'y'));  // does not fit: appended, the buffer grows
  EXPECT_EQ(row.GetString(1), std::string(1000, 'y'));
  EXPECT_EQ(row.GetString(0), "hi");
  EXPECT_GT(row.AllocatedBytes(), cap);
  // A string taken from the row itself survives the buffer growing under it.
  row.SetString(0, row.GetString(1));
  EXPECT_EQ(row.GetString(0), std::string(1000, 'y'));
  row.SetString(1, "");
  EXPECT_FALSE(row.IsNull(1));
  EXPECT_EQ(row.GetString(1), "");
}

TEST(RowTest, StringsSetOverAndOverWithoutAResetStayBounded) {
  Row row(Layout({FieldType::kString, FieldType::kInt64, FieldType::kString}));
  row.SetString(2, "kept");
  for (int i = 1; i <= 20000; ++i) {
    row.SetString(0, std::string(static_cast<size_t>(i % 300 + 1), 'a'));  // often longer: appended
    row.SetInt64(1, i);
  }
  EXPECT_EQ(row.GetString(0), std::string(20000 % 300 + 1, 'a'));
  EXPECT_EQ(row.GetString(2), "kept");
  EXPECT_EQ(row.GetInt64(1), 20000);
  EXPECT_LT(row.AllocatedBytes(), 32u * 1024) << "replaced strings' bytes are compacted away";
}

TEST(RowTest, ResetAndCopiesReuseTheBuffer) {
  const RowLayout* layout = Layout({FieldType::kInt64, FieldType::kString});
  Row a(layout);
  a.SetInt64(0, 7);
  a.SetString(1, "some text that is long");
  Row b(layout);
  b.SetString(1, std::string(100, 'z'));
  const size_t cap = b.AllocatedBytes();
  b = a;
  EXPECT_EQ(b.AllocatedBytes(), cap) << "copied into the existing buffer";
  EXPECT_EQ(b, a);
  a.Reset(layout);
  EXPECT_TRUE(a.IsNull(0));
  EXPECT_TRUE(a.IsNull(1));
  EXPECT_EQ(b.GetString(1), "some text that is long") << "a copy owns its bytes";
  Row moved = std::move(b);
  EXPECT_EQ(moved.GetInt64(0), 7);
  EXPECT_EQ(b.size(), 0u) << "a moved-from row is empty";  // NOLINT(bugprone-use-after-move)
}

TEST(RowTest, BoxedAccessConvertsAsDocumentedAndRefusesStringsForNumbers) {
  Row row(Layout({FieldType::kDouble, FieldType::kInt64, FieldType::kString}));
  row.Set(0, Value(int64_t{3}));
  row.Set(1, Value(2.9));
  row.Set(2, Value(std::string("s")));
  EXPECT_EQ(row.GetDouble(0), 3.0);
  EXPECT_EQ(row.GetInt64(1), 2) << "truncated";
  EXPECT_THROW(row.Set(1, Value(std::string("x"))), InvalidArgument);
  EXPECT_THROW(row.Set(2, Value(int64_t{1})), InvalidArgument);
  row.Set(2, Value{});
  EXPECT_TRUE(row.IsNull(2));
}

TEST(RowTest, InferredRowsCompareByValueAcrossInt64AndTimestamp) {
  const Row inferred{Value(int64_t{5}), Value(1.5), Value(true), Value(std::string("k")), Value{}};
  EXPECT_EQ(inferred.type(0), FieldType::kInt64);
  EXPECT_EQ(inferred.type(3), FieldType::kString);
  Row typed(Layout({FieldType::kTimestamp, FieldType::kDouble, FieldType::kBool, FieldType::kString,
                    FieldType::kString}));
  typed.SetInt64(0, 5);
  typed.SetDouble(1, 1.5);
  typed.SetBool(2, true);
  typed.SetString(3, "k");
  EXPECT_EQ(inferred, typed) << "NULLs are equal whatever their slot's type";
  typed.SetString(3, "l");
  EXPECT_NE(inferred, typed);
  EXPECT_LT(inferred, typed);
  EXPECT_EQ(::testing::PrintToString(inferred), R"([5, 1.5, true, "k", null])");
}

TEST(RowTest, WidenKeepsTheCellsAndAddsNullFields) {
  Row row{Value(int64_t{1}), Value(std::string("abc"))};
  row.Widen(RowLayout::Extend(row.layout_ptr(), {FieldType::kTimestamp, FieldType::kString}));
  ASSERT_EQ(row.size(), 4u);
  EXPECT_EQ(row.GetInt64(0), 1);
  EXPECT_EQ(row.GetString(1), "abc");
  EXPECT_TRUE(row.IsNull(2));
  EXPECT_TRUE(row.IsNull(3));
  row.SetString(3, "d");
  EXPECT_EQ(row.GetString(1), "abc");
  EXPECT_EQ(row.GetString(3), "d");
}

TEST(RowTest, CopyCellCopiesAcrossRowsNullsIncluded) {
  Row from{Value(std::string("x")), Value{}, Value(2.5)};
  Row to(Layout({FieldType::kDouble, FieldType::kString, FieldType::kInt64}));
  to.CopyCell(0, from, 2);
  to.CopyCell(1, from, 0);
  to.SetInt64(2, 9);
  to.CopyCell(2, from, 1);
  EXPECT_EQ(to.GetDouble(0), 2.5);
  EXPECT_EQ(to.GetString(1), "x");
  EXPECT_TRUE(to.IsNull(2));
}

}  // namespace
}  // namespace tidemark
