// Tests for kernels/catalog.cpp: the built-in ops, found by name.
#include "tunekit/catalog.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

TEST(Catalog, ListsTheFourBuiltinOps) {
  std::vector<std::string> names;
  for (const CatalogEntry& entry : builtin_ops()) names.push_back(entry.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sgemm", "softmax", "rmsnorm", "sum"}));
}

TEST(Catalog, FindsByName) {
  EXPECT_EQ(find_builtin_op("softmax").name, "softmax");
  EXPECT_EQ(find_builtin_op("sum").example_shape, "n=16777216");
}

TEST(Catalog, UnknownNameIsAUsageErrorListingTheKnownOnes) {
  try {
    find_builtin_op("nope");
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("nope"), std::string::npos) << message;
    for (const char* known : {"sgemm", "softmax", "rmsnorm", "sum"}) {
      EXPECT_NE(message.find(known), std::string::npos) << message;
    }
  }
}

TEST(Catalog, EveryEntryBuildsAUsableOp) {
  cpu::ThreadPool pool(2);
  for (const CatalogEntry& entry : builtin_ops()) {
    SCOPED_TRACE(entry.name);
    EXPECT_FALSE(entry.description.empty());
    const std::unique_ptr<OpBase> op = entry.make(pool);
    ASSERT_NE(op, nullptr);
    EXPECT_EQ(op->name(), entry.name);
    EXPECT_FALSE(op->description().empty());
    EXPECT_TRUE(op->has_reference());
    EXPECT_TRUE(op->has_inputs());
    EXPECT_FALSE(op->key_schema().empty());
    // A choice matters: more than a handful of candidates, the default among them.
    EXPECT_GE(op->size(), 6u);
    const Key key = op->parse_shape(entry.example_shape);
    const std::size_t def = op->default_index(key);
    ASSERT_LT(def, op->size());
    EXPECT_EQ(op->candidate(def).numerics, Numerics::bitwise);
    EXPECT_EQ(key["dtype"], Value("f32")) << key.text();  // the schema's default
    std::set<std::string> names;
    for (std::size_t i = 0; i < op->size(); ++i) {
      const Candidate c = op->candidate(i);
      EXPECT_FALSE(c.config.empty()) << c.name;
      names.insert(c.name);
    }
    EXPECT_EQ(names.size(), op->size());
    const Tolerance tolerance = op->tolerance(key);
    EXPECT_GT(tolerance.abs + tolerance.rel, 0.0);
    EXPECT_LT(tolerance.rel, 1e-2);
  }
}

TEST(Catalog, ThreadCountsFollowThePool) {
  // 1 and the pool's size, and a middle value once the pool has more than two threads.
  for (int threads : {1, 2, 4}) {
    cpu::ThreadPool pool(threads);
    const std::unique_ptr<OpBase> op = find_builtin_op("rmsnorm").make(pool);
    std::set<std::int64_t> seen;
    for (std::size_t i = 0; i < op->size(); ++i)
      seen.insert(op->candidate(i).config["threads"].as_int());
    std::set<std::int64_t> want{1, threads};
    if (threads > 2) want.insert(threads / 2);
    EXPECT_EQ(seen, want) << "pool of " << threads;
  }
}

}  // namespace
}  // namespace tunekit
