// KeyRef / KeyPool / KeyProbe (runtime/state/key_ref.h): interned keys compare, hash and order
// as the `Key`s they stand for; entries are reused; the abbreviated sort of a window end's keys
// gives std::sort's order over `Key`s exactly.

#include "runtime/state/key_ref.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/state/keyed_state_backend.h"

namespace tidemark {
namespace {

TEST(KeyRefTest, EqualityHashAndOrderFollowTheKeyValues) {
  KeyPool pool;
  const KeyRef a = pool.Make(Key{Value(std::string("user_1")), Value(int64_t{7})});
  const KeyRef b = pool.Make(Key{Value(std::string("user_1")), Value(int64_t{7})});
  const KeyRef c = pool.Make(Key{Value(std::string("user_1")), Value(int64_t{8})});
  EXPECT_EQ(a, b);  // two entries, one content
  EXPECT_FALSE(a == c);
  EXPECT_TRUE(a < c);
  EXPECT_FALSE(c < a);
  EXPECT_FALSE(a < b);
  EXPECT_EQ(a.hash64(), KeyHash64(Key{Value(std::string("user_1")), Value(int64_t{7})}));
  EXPECT_EQ(KeyRef().key(), Key{});
  EXPECT_EQ(KeyRef().hash64(), KeyHash64(Key{}));
}

TEST(KeyRefTest, AProbeFindsTheKeyWithoutBuildingIt) {
  KeyedStateBackend<KeyRef, int64_t> backend(128, KeyGroupRange{0, 127});
  const Row row{Value(int64_t{1}), Value(std::string("customer-account-000042")), Value(2.5)};
  const std::vector<int> slots{1, 2};
  const KeyProbe probe = KeyProbe::Of(row, slots);
  EXPECT_EQ(probe.hash64, KeyHash64(Key{row.Get(1), row.Get(2)}));
  EXPECT_EQ(backend.Find(probe), nullptr);
  auto [key, value] = backend.Emplace(probe);
  *value = 5;
  EXPECT_EQ(key->key(), (Key{row.Get(1), row.Get(2)}));
  // The same key as a Key, and as a KeyRef, find the same value.
  EXPECT_EQ(*backend.Find(KeyProbe::Of(Key{row.Get(1), row.Get(2)})), 5);
  EXPECT_EQ(*backend.Find(*key), 5);
  EXPECT_EQ(backend.Emplace(probe).second, value);  // no second entry
  EXPECT_EQ(backend.size(), 1u);
  EXPECT_EQ(backend.arena().live(), 1u);
}

TEST(KeyRefTest, TouchingAKeyAheadFindsNothingChangesNothingAndSkipsUnownedGroups) {
  // A subtask owning half the key groups: Touch is a prefetch, so a key of another group is
  // skipped (Find would throw), and no stage inserts, erases or moves a value or a ref count.
  KeyedStateBackend<KeyRef, int64_t> backend(128, KeyGroupRange{0, 63});
  KeyedStateBackend<int64_t, int64_t> ints(128, KeyGroupRange{0, 63});
  const std::vector<int> slots{0};
  std::vector<Row> rows;
  for (int i = 0; i < 200; ++i) {
    rows.push_back(Row{Value(std::string("user_") + std::to_string(i))});
  }
  size_t owned = 0;
  size_t owned_ints = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const KeyProbe probe = KeyProbe::Of(rows[i], slots);
    if (i % 2 == 0 && backend.key_group_range().Contains(backend.KeyGroupOf(probe))) {
      *backend.Emplace(probe).second = static_cast<int64_t>(i);
      ++owned;
    }
    const auto k = static_cast<int64_t>(i);
    if (i % 2 == 0 && ints.key_group_range().Contains(ints.KeyGroupOf(k))) {
      *ints.GetOrCreate(k).first = k * 10;
      ++owned_ints;
    }
  }
  ASSERT_GT(owned, 10u);
  ASSERT_GT(owned_ints, 10u);
  size_t skipped = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const KeyProbe probe = KeyProbe::Of(rows[i], slots);
    skipped += backend.key_group_range().Contains(backend.KeyGroupOf(probe)) ? 0 : 1;
    for (auto stage : {SlotTouch::kSlot, SlotTouch::kEntry, SlotTouch::kValues}) {
      backend.Touch(probe, probe.hash64, stage);
      const auto k = static_cast<int64_t>(i);
      ints.Touch(k, KeyTraits<int64_t>::Hash64(k), stage);
    }
  }
  EXPECT_GT(skipped, 10u);  // unowned keys were touched and ignored
  EXPECT_EQ(backend.size(), owned);
  EXPECT_EQ(backend.arena().live(), owned);
  EXPECT_EQ(ints.size(), owned_ints);
  for (size_t i = 0; i < rows.size(); i += 2) {
    const KeyProbe probe = KeyProbe::Of(rows[i], slots);
    if (backend.key_group_range().Contains(backend.KeyGroupOf(probe))) {
      ASSERT_NE(backend.Find(probe), nullptr);
      EXPECT_EQ(*backend.Find(probe), static_cast<int64_t>(i));
    }
    const auto k = static_cast<int64_t>(i);
    if (ints.key_group_range().Contains(ints.KeyGroupOf(k))) {
      ASSERT_NE(ints.Find(k), nullptr);
      EXPECT_EQ(*ints.Find(k), k * 10);
    }
  }
}

TEST(KeyRefTest, EntriesComeBackWhenTheLastRefGoesAndAreReused) {
  KeyPool pool;
  {
    KeyRef a = pool.Make(Key{Value(std::string("a"))});
    KeyRef copy = a;
    KeyRef moved = std::move(copy);
    EXPECT_EQ(pool.live(), 1u);
    a = KeyRef();
    EXPECT_EQ(pool.live(), 1u);  // `moved` still holds it
  }
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(pool.allocated(), 1u);
  const KeyRef b = pool.Make(Key{Value(int64_t{3}), Value(true)});
  EXPECT_EQ(pool.allocated(), 1u);  // the freed entry, reused
  EXPECT_EQ(b.key(), (Key{Value(int64_t{3}), Value(true)}));
}

TEST(KeyRefTest, ManyFreedEntriesAreAllReusedWithTheirNewValues) {
  // More entries than the free list's first capacity (64), freed in one order and taken in
  // another (a window end's keys, then the next window's): every entry is reused, none is
  // allocated again, and each new ref holds its own values.
  KeyPool pool;
  std::vector<KeyRef> refs;
  for (int i = 0; i < 1000; ++i) {
    refs.push_back(pool.Make(Key{Value(std::string("user_").append(std::to_string(i)))}));
  }
  EXPECT_EQ(pool.allocated(), 1000u);
  EXPECT_EQ(pool.live(), 1000u);
  for (size_t i = 0; i < refs.size(); i += 2) {
    refs[i] = KeyRef();  // the even ones first
  }
  EXPECT_EQ(pool.live(), 500u);
  refs.clear();
  EXPECT_EQ(pool.live(), 0u);
  for (int i = 0; i < 1000; ++i) {
    refs.push_back(
        pool.Make(Key{Value(int64_t{i}), Value(std::string("s").append(std::to_string(i)))}));
  }
  EXPECT_EQ(pool.allocated(), 1000u);
  EXPECT_EQ(pool.live(), 1000u);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(refs[static_cast<size_t>(i)].key(),
              (Key{Value(int64_t{i}), Value(std::string("s").append(std::to_string(i)))}));
  }
  refs.push_back(pool.Make(Key{Value(std::string("one more"))}));
  EXPECT_EQ(pool.allocated(), 1001u);
  EXPECT_EQ(pool.live(), 1001u);
}

// The keys as `Key`s through std::sort + std::unique: the order SortUniqueKeys must give.
std::vector<Key> Reference(std::vector<Key> keys) {
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

std::vector<Key> SortedThroughRefs(KeyPool& pool, const std::vector<Key>& keys) {
  std::vector<KeyRef> refs;
  for (const Key& k : keys) {
    refs.push_back(pool.Make(k));
  }
  KeySortScratch scratch;
  SortUniqueKeys(refs, scratch);
  std::vector<Key> out;
  for (const KeyRef& r : refs) {
    out.push_back(r.key());
  }
  return out;
}

TEST(KeyRefTest, AbbreviatedSortGivesTheKeyOrderExactly) {
  KeyPool pool;
  // Strings sharing a long prefix, differing past the 8 abbreviated bytes, prefixes of each
  // other, with NUL and high bytes, duplicates, and a second field breaking ties.
  const std::string p = "user_0000";
  std::vector<Key> keys = {
      {Value(p + "12345678901")},
      {Value(p + "12345678902")},
      {Value(p + "1")},
      {Value(p)},
      {Value(p + std::string("\0", 1))},
      {Value(p + "\xff")},
      {Value(p + "\x7f")},
      {Value(p + "12345678901")},
      {Value(p + "2")},
      {Value(p + "10")},
      {Value(p + "1")},
  };
  EXPECT_EQ(SortedThroughRefs(pool, keys), Reference(keys));

  std::vector<Key> two_fields;
  for (int i = 0; i < 200; ++i) {
    two_fields.push_back(
        {Value("region-" + std::to_string(i % 3)), Value(int64_t{(i * 37) % 11 - 5})});
  }
  EXPECT_EQ(SortedThroughRefs(pool, two_fields), Reference(two_fields));
  ASSERT_EQ(Reference(two_fields).size(), 33u);

  // A first field that is not always a string: the plain sort, still the Key order.
  std::vector<Key> mixed = {{Value(std::string("b"))}, {Value(int64_t{2})}, {Value()},
                            {Value(std::string("a"))}, {Value(1.5)},        {Value(false)},
                            {Value(int64_t{2})}};
  EXPECT_EQ(SortedThroughRefs(pool, mixed), Reference(mixed));
  EXPECT_EQ(pool.live(), 0u);
}

TEST(KeyRefTest, RadixSortOfManyKeysGivesTheKeyOrderExactly) {
  // Enough keys for the radix sort of the abbreviations (from 512 on): ids of several lengths,
  // ties within the abbreviated 8 bytes broken past them, duplicates, and a second field.
  KeyPool pool;
  std::vector<Key> keys;
  for (int i = 0; i < 5000; ++i) {
    const int id = (i * 7919) % 3001;
    keys.push_back({Value("user_" + std::to_string(id))});
    if (i % 5 == 0) {
      keys.push_back(
          {Value("user_" + std::to_string(id % 97) + "_long_suffix_" + std::to_string(i % 13))});
    }
  }
  EXPECT_EQ(SortedThroughRefs(pool, keys), Reference(keys));

  std::vector<Key> two_fields;
  for (int i = 0; i < 3000; ++i) {
    two_fields.push_back({Value("s-" + std::to_string(i % 700)), Value(int64_t{(i * 37) % 11})});
  }
  EXPECT_EQ(SortedThroughRefs(pool, two_fields), Reference(two_fields));
  EXPECT_EQ(pool.live(), 0u);
}

// SortUniqueKeys' `order`: each kept key's index before the sort, so that values kept in a
// parallel vector (a window table's accumulator words) follow their keys.
std::vector<uint32_t> OrderThroughRefs(KeyPool& pool, const std::vector<Key>& keys,
                                       std::vector<Key>& sorted) {
  std::vector<KeyRef> refs;
  for (const Key& k : keys) {
    refs.push_back(pool.Make(k));
  }
  KeySortScratch scratch;
  std::vector<uint32_t> order = {77};  // replaced, not appended to
  SortUniqueKeys(refs, scratch, &order);
  sorted.clear();
  for (const KeyRef& r : refs) {
    sorted.push_back(r.key());
  }
  return order;
}

TEST(KeyRefTest, SortingGivesThePermutationEachKeyCameFrom) {
  KeyPool pool;
  std::vector<Key> sorted;
  // Short one-string keys (read from their entries), a duplicate: the first of equal keys kept.
  const std::vector<Key> short_keys = {{Value(std::string("user_3"))},
                                       {Value(std::string("user_1"))},
                                       {Value(std::string("user_2"))},
                                       {Value(std::string("user_1"))},
                                       {Value(std::string("user_0"))}};
  EXPECT_EQ(OrderThroughRefs(pool, short_keys, sorted), (std::vector<uint32_t>{4, 1, 2, 0}));
  EXPECT_EQ(sorted, Reference(short_keys));
  // Strings longer than an entry holds (read from their values).
  const std::string p = "session-with-a-long-prefix-";
  const std::vector<Key> long_keys = {
      {Value(p + "b")}, {Value(p + "a")}, {Value(p + "c")}, {Value(p + "a")}};
  EXPECT_EQ(OrderThroughRefs(pool, long_keys, sorted), (std::vector<uint32_t>{1, 0, 2}));
  EXPECT_EQ(sorted, Reference(long_keys));
  // A first field that is not a string (the plain sort of the indices).
  const std::vector<Key> ints = {{Value(int64_t{5})},
                                 {Value(int64_t{-1})},
                                 {Value(int64_t{5})},
                                 {Value(int64_t{3})},
                                 {Value()}};
  EXPECT_EQ(OrderThroughRefs(pool, ints, sorted), (std::vector<uint32_t>{4, 1, 3, 0}));
  EXPECT_EQ(sorted, Reference(ints));
  // One key and none.
  EXPECT_EQ(OrderThroughRefs(pool, {{Value(int64_t{9})}}, sorted), (std::vector<uint32_t>{0}));
  EXPECT_EQ(OrderThroughRefs(pool, {}, sorted), (std::vector<uint32_t>{}));
  EXPECT_EQ(pool.live(), 0u);
}

TEST(KeyRefTest, AShortFirstStringIsHeldInTheEntryAndRewrittenWhenTheEntryIsReused) {
  KeyPool pool;
  {
    const KeyRef a = pool.Make(Key{Value(std::string("user_000123"))});
    EXPECT_TRUE(a.HasShortString());
    EXPECT_TRUE(a.IsShortString());
    EXPECT_EQ(a.ShortString(), "user_000123");
    const KeyRef b = pool.Make(Key{Value(std::string("sixteen-bytes-16")), Value(int64_t{4})});
    EXPECT_TRUE(b.HasShortString());
    EXPECT_FALSE(b.IsShortString());  // a second field
    EXPECT_EQ(b.ShortString(), "sixteen-bytes-16");
    const KeyRef c = pool.Make(Key{Value(std::string("seventeen-bytes-7"))});
    EXPECT_FALSE(c.HasShortString());
    EXPECT_FALSE(c.IsShortString());
    const KeyRef d = pool.Make(Key{Value(int64_t{5}), Value(std::string("x"))});
    EXPECT_FALSE(d.HasShortString());
    EXPECT_FALSE(KeyRef().HasShortString());
  }
  // The entries are reused: each new key's short string (or none) replaces the old one's.
  const KeyRef e = pool.Make(Key{Value(std::string("ab"))});
  const KeyRef f = pool.Make(Key{Value(std::string("a-much-longer-key-string"))});
  const KeyRef g = pool.Make(Key{Value()});
  const KeyRef h = pool.Make(Key{Value(std::string("cd\0e", 4))});
  EXPECT_EQ(pool.allocated(), 4u);
  EXPECT_EQ(e.ShortString(), "ab");
  EXPECT_EQ(std::string(e.ShortBytes(), KeyEntryShortBytes()),
            std::string("ab") + std::string(14, '\0'));
  EXPECT_FALSE(f.HasShortString());
  EXPECT_FALSE(g.HasShortString());
  EXPECT_EQ(h.ShortString(), std::string("cd\0e", 4));
}

TEST(KeyRefTest, AProbeComparesAShortStringKeyByItsEntry) {
  KeyedStateBackend<KeyRef, int64_t> backend(128, KeyGroupRange{0, 127});
  const std::vector<int> slot{0};
  const Row user{Value(std::string("user_000042")), Value(int64_t{1})};
  auto [key, value] = backend.Emplace(KeyProbe::Of(user, slot));
  *value = 7;
  ASSERT_TRUE(key->IsShortString());
  EXPECT_TRUE(KeyProbe::Of(user, slot).Equals(*key));
  const Row other{Value(std::string("user_000043")), Value(int64_t{1})};
  EXPECT_FALSE(KeyProbe::Of(other, slot).Equals(*key));
  const Row prefix{Value(std::string("user_00004")), Value(int64_t{1})};
  EXPECT_FALSE(KeyProbe::Of(prefix, slot).Equals(*key));
  const Row null_key{Value(), Value(int64_t{1})};
  EXPECT_FALSE(KeyProbe::Of(null_key, slot).Equals(*key));
  const Row int_key{Value(int64_t{42}), Value(int64_t{1})};
  EXPECT_FALSE(KeyProbe::Of(int_key, slot).Equals(*key));
  EXPECT_EQ(*backend.Find(KeyProbe::Of(user, slot)), 7);
  EXPECT_EQ(backend.Find(KeyProbe::Of(other, slot)), nullptr);
  EXPECT_EQ(backend.Find(KeyProbe::Of(prefix, slot)), nullptr);
  // The empty key: not a short string, compared by its values.
  const std::vector<int> none;
  auto [empty, empty_value] = backend.Emplace(KeyProbe::Of(user, none));
  *empty_value = 9;
  EXPECT_FALSE(empty->HasShortString());
  EXPECT_EQ(*backend.Find(KeyProbe::Of(other, none)), 9);
  EXPECT_EQ(backend.size(), 2u);
}

TEST(KeyRefTest, ShortStringKeysSortFromTheirEntriesInTheKeyOrderExactly) {
  // Every first string at most 16 bytes: the sort reads the entries only. Prefixes of each
  // other, NUL and high bytes, a shared prefix past 8 bytes (the abbreviation then reaches past
  // the 16 bytes held), duplicates, few keys (comparison sort) and many (radix sort).
  KeyPool pool;
  const std::string p = "user_00000";
  std::vector<Key> keys = {
      {Value(p + "123456")},
      {Value(p + "123457")},
      {Value(p + "1")},
      {Value(p)},
      {Value(p + std::string("\0", 1))},
      {Value(p + "\xff")},
      {Value(p + "\x7f")},
      {Value(p + "123456")},
      {Value(p + "2")},
      {Value(p + "10")},
      {Value(p + "1")},
  };
  EXPECT_EQ(SortedThroughRefs(pool, keys), Reference(keys));
  std::vector<Key> tied = {{Value(p + "12345")}, {Value(p + "12345" + std::string("\0", 1))}};
  EXPECT_EQ(SortedThroughRefs(pool, tied), Reference(tied));

  std::vector<Key> many;
  for (int i = 0; i < 5000; ++i) {
    const int id = (i * 7919) % 3001;
    many.push_back({Value("user_" + std::to_string(id))});
    if (i % 7 == 0) {
      many.push_back({Value("u" + std::to_string(id % 101))});
    }
  }
  EXPECT_EQ(SortedThroughRefs(pool, many), Reference(many));

  std::vector<Key> two_fields;
  for (int i = 0; i < 3000; ++i) {
    two_fields.push_back({Value("s-" + std::to_string(i % 700)), Value(int64_t{(i * 37) % 11})});
  }
  EXPECT_EQ(SortedThroughRefs(pool, two_fields), Reference(two_fields));

  // One long first string among short ones: the sort through the values, the same order.
  std::vector<Key> one_long = many;
  one_long.push_back({Value("user_" + std::string(20, '9'))});
  EXPECT_EQ(SortedThroughRefs(pool, one_long), Reference(one_long));
  EXPECT_EQ(pool.live(), 0u);
}

// The strings of `keys` in the order SortShortStringKeys gives them.
std::vector<std::string> SortedShort(const std::vector<std::string>& keys) {
  std::vector<ShortStringKey> ks;
  for (const std::string& k : keys) {
    ShortStringKey sk;
    EXPECT_TRUE(ShortStringKey::FromKey(Key{Value(k)}, &sk)) << k;
    ks.push_back(sk);
  }
  KeySortScratch scratch;
  std::vector<uint32_t> order;
  SortShortStringKeys(ks.data(), ks.size(), scratch, order);
  std::vector<std::string> out;
  for (uint32_t i : order) {
    out.emplace_back(ks[i].view());
  }
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> keys) {
  std::stable_sort(keys.begin(), keys.end());
  return keys;
}

// A one-string key held inline: its bytes zero-padded, its length and its KeyHash64; equal
// and ordered exactly as the `Key` of the string (NUL bytes, prefixes, unsigned bytes), up to
// 16 bytes; 17 bytes, NULL, another type or two fields do not fit.
TEST(KeyRefTest, AShortStringKeyOrdersAndHashesAsItsKey) {
  const std::vector<std::string> strings = {"",
                                            std::string("\0", 1),
                                            "ab",
                                            std::string("ab\0", 3),
                                            "abc",
                                            std::string("ab\0\0", 4),
                                            "\x7f",
                                            "\x80",
                                            "\xff",
                                            std::string(16, 'z'),
                                            std::string(15, 'z'),
                                            std::string("a\0b", 3)};
  for (const std::string& a : strings) {
    ShortStringKey ka;
    ASSERT_TRUE(ShortStringKey::FromKey(Key{Value(a)}, &ka));
    EXPECT_EQ(ka.view(), a);
    EXPECT_EQ(ka.hash64, KeyHash64(Key{Value(a)}));
    Row row{Value(a)};
    ShortStringKey kr;
    ASSERT_TRUE(ShortStringKey::FromRow(row, 0, {0}, &kr));
    EXPECT_TRUE(kr == ka);
    Key scratch;
    EXPECT_EQ(ka.ToKey(scratch), Key{Value(a)});
    for (const std::string& b : strings) {
      ShortStringKey kb;
      ASSERT_TRUE(ShortStringKey::FromKey(Key{Value(b)}, &kb));
      EXPECT_EQ(ka == kb, a == b) << a.size() << " " << b.size();
      EXPECT_EQ(ka < kb, Key{Value(a)} < Key{Value(b)}) << a.size() << " " << b.size();
    }
  }
  ShortStringKey k;
  EXPECT_FALSE(ShortStringKey::FromKey(Key{Value(std::string(17, 'z'))}, &k));
  EXPECT_FALSE(ShortStringKey::FromKey(Key{Value()}, &k));
  EXPECT_FALSE(ShortStringKey::FromKey(Key{Value(int64_t{1})}, &k));
  EXPECT_FALSE(ShortStringKey::FromKey(Key{Value("a"), Value("b")}, &k));
  EXPECT_FALSE(ShortStringKey::FromRow(Row{Value()}, 0, {0}, &k));
  EXPECT_FALSE(ShortStringKey::FromRow(Row{Value(std::string(17, 'z'))}, 0, {0}, &k));
  EXPECT_FALSE(ShortStringKey::FromRow(Row{Value(int64_t{1})}, 0, {0}, &k));
}

TEST(KeyRefTest, ShortStringKeysSortInTheKeyOrderExactly) {
  // Few keys (a comparison sort): NUL bytes, prefixes, high bytes, duplicates (kept, in input
  // order), a shared prefix longer than 8 bytes.
  const std::string p = "user_0000";
  const std::vector<std::string> few = {"abc",
                                        std::string("ab\0", 3),
                                        "ab",
                                        "",
                                        "b",
                                        std::string(16, '\xff'),
                                        std::string("ab\0\0", 4),
                                        "\x80",
                                        "a",
                                        "ab",
                                        p + "1234567",
                                        p + "1234568",
                                        p,
                                        p + "1"};
  EXPECT_EQ(SortedShort(few), Sorted(few));
  // Many keys (the radix sort of the abbreviations): ids of several lengths sharing a prefix,
  // ties within the abbreviated 8 bytes broken past them, NUL bytes.
  std::vector<std::string> many;
  for (int i = 0; i < 6000; ++i) {
    const int id = (i * 7919) % 4001;
    many.push_back("u" + std::to_string(id));
    if (i % 7 == 0) {
      many.push_back("u" + std::to_string(id % 50) + std::string("\0", 1) + std::to_string(i));
    }
    if (i % 11 == 0) {
      many.push_back("u12345678" + std::to_string(i % 1000));  // equal abbreviations past 8
    }
  }
  EXPECT_EQ(SortedShort(many), Sorted(many));
  EXPECT_TRUE(SortedShort({}).empty());
  EXPECT_EQ(SortedShort({"x"}), std::vector<std::string>{"x"});
}

}  // namespace
}  // namespace tidemark
