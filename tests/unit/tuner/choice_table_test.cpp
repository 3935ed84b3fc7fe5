// Tests for src/tuner/choice_table.cpp: lookups while the table grows.
#include "tuner/choice_table.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace tunekit::detail {
namespace {

Digest d(std::uint64_t n) {
  return Digest{n * 31 + 7, n};
}

TEST(ChoiceTable, InsertFindReplaceGrow) {
  ChoiceTable t;
  EXPECT_FALSE(t.find(d(1), d(2)).has_value());
  for (std::uint64_t i = 0; i < 1000; ++i) t.publish(d(1), d(i), i % 7);
  for (std::uint64_t i = 0; i < 1000; ++i) ASSERT_EQ(t.find(d(1), d(i)), i % 7);
  EXPECT_FALSE(t.find(d(2), d(5)).has_value());  // another op
  t.publish(d(1), d(5), 42);
  EXPECT_EQ(t.find(d(1), d(5)), 42u);
  EXPECT_EQ(t.size(), 1000u);
}

TEST(ChoiceTable, ReadersNeverSeeTornEntries) {
  ChoiceTable t;
  std::atomic<bool> done{false};
  std::vector<std::thread> readers;
  std::atomic<long> bad{0};
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        for (std::uint64_t i = 0; i < 64; ++i)
          if (auto c = t.find(d(3), d(i)); c && *c != i + 1) ++bad;
      }
    });
  }
  for (std::uint64_t i = 0; i < 5000; ++i) t.publish(d(3), d(i), i + 1);
  done = true;
  for (auto& th : readers) th.join();
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace tunekit::detail
