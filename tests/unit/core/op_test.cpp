// Tests for src/core/op.cpp: key schema checks, shapes, the candidate-set checksum.
#include "tunekit/op.hpp"

#include <gtest/gtest.h>

#include "tunekit/errors.hpp"

namespace tunekit {
namespace {

struct Args {
  std::vector<float> x;
};

std::unique_ptr<Op<Args>> make(std::string second = "b", int version = 1) {
  auto made = std::make_unique<Op<Args>>("demo", 1);
  Op<Args>& op = *made;
  op.key_field({"n", Value::Type::integer, "length", std::nullopt, 1, 1000})
      .key_field({"dtype", Value::Type::string, "element type", Value("f32")});
  Candidate a;
  a.name = "a";
  Candidate b;
  b.name = std::move(second);
  b.version = version;
  b.config = Config{{"vec", 8}};
  op.candidate(a, [](Args&) {}).candidate(b, [](Args&) {}).default_candidate("a");
  return made;
}

TEST(Op, ParseShapeFillsDefaultsAndOrders) {
  auto op_ptr = make();
  auto& op = *op_ptr;
  Key k = op.parse_shape("n=10");
  EXPECT_EQ(k.text(), "n=10,dtype=f32");
  EXPECT_EQ(op.parse_shape("dtype=f64,n=3").text(), "n=3,dtype=f64");
}

TEST(Op, HostileAndWrongShapesAreClearErrors) {
  auto op_ptr = make();
  auto& op = *op_ptr;
  EXPECT_THROW(op.parse_shape("n=0"), UsageError);
  EXPECT_THROW(op.parse_shape("n=1000000000000"), UsageError);
  EXPECT_THROW(op.parse_shape("n=abc"), UsageError);
  EXPECT_THROW(op.parse_shape("n=1,zz=2"), UsageError);
  EXPECT_THROW(op.parse_shape("dtype=f32"), UsageError);  // n is required
  EXPECT_THROW(op.parse_shape("n=1,,"), ParseError);
  try {
    op.parse_shape("n=5000");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
}

TEST(Op, ChecksumDependsOnManifestAndSeals) {
  auto a = make();
  auto b = make("c");
  auto c = make("b", 2);
  auto d = make();
  EXPECT_NE(a->checksum(), b->checksum());
  EXPECT_NE(a->checksum(), c->checksum());
  EXPECT_EQ(a->checksum(), d->checksum());
  EXPECT_TRUE(a->sealed());
  EXPECT_THROW(a->candidate("late", [](Args&) {}), UsageError);
}

TEST(Op, DefaultsAndDuplicates) {
  auto op_ptr = make();
  auto& op = *op_ptr;
  EXPECT_EQ(op.default_index(Key{}), 0u);
  EXPECT_THROW(op.candidate("a", [](Args&) {}), UsageError);
  Op<Args> bad("bad", 1);
  bad.candidate("x", [](Args&) {}).default_candidate("missing");
  EXPECT_THROW(bad.default_index(Key{}), UsageError);
  Op<Args> by_key("by_key", 1);
  by_key.candidate("small", [](Args&) {}).candidate("large", [](Args&) {});
  by_key.default_candidate([](const Key& k) { return k.integer("n") > 10 ? "large" : "small"; });
  EXPECT_EQ(by_key.default_index(Key{{"n", 100}}), 1u);
  EXPECT_EQ(by_key.default_index(Key{{"n", 1}}), 0u);
  EXPECT_THROW(by_key.make_workload(Key{}), UsageError);  // no input generator
}

}  // namespace
}  // namespace tunekit
