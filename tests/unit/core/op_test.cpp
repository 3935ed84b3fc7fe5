// Tests for src/core/op.cpp and include/tunekit/op.hpp: key schema checks, shapes, the
// candidate-set checksum, input sets, restored inputs, validation hooks, in-process opt-out.
#include "tunekit/op.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "tunekit/errors.hpp"
#include "tunekit/validate.hpp"

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

// An op whose candidate "clobber" overwrites its input, and whose generator makes two sets.
std::unique_ptr<Op<Args>> make_with_inputs() {
  auto op = std::make_unique<Op<Args>>("inputs", 1);
  op->candidate("copy", [](Args&) {})
      .candidate("clobber", [](Args& a) { std::fill(a.x.begin(), a.x.end(), -1.0f); })
      .inputs([](const Key& key, int input_set) {
        return Args{std::vector<float>(static_cast<std::size_t>(key.integer("n")),
                                       static_cast<float>(input_set + 1))};
      })
      .outputs([](Args& a) { return std::vector<OutputView>{OutputView::of(std::span(a.x))}; });
  return op;
}

TEST(Op, InputSetsComeFromTheTwoArgumentGenerator) {
  auto op = make_with_inputs();
  EXPECT_EQ(op->input_sets(), 2);
  const Key key{{"n", 3}};
  EXPECT_EQ(op->make_workload(key)->outputs()[0].count, 3u);
  const auto first = [](Workload& w) { return static_cast<const float*>(w.outputs()[0].data)[0]; };
  EXPECT_EQ(first(*op->make_workload(key)), 1.0f);  // the one-argument form is set 0
  EXPECT_EQ(first(*op->make_workload(key, 0)), 1.0f);
  EXPECT_EQ(first(*op->make_workload(key, 1)), 2.0f);
  EXPECT_THROW(op->make_workload(key, 2), UsageError);
  EXPECT_THROW(op->make_workload(key, -1), UsageError);

  Op<Args> one("one", 1);
  one.inputs([](const Key&) { return Args{{1.0f}}; }).outputs([](Args& a) {
    return std::vector<OutputView>{OutputView::of(std::span(a.x))};
  });
  EXPECT_EQ(one.input_sets(), 1);
  EXPECT_THROW(one.make_workload(Key{}, 1), UsageError);
}

TEST(Op, RestoreInputsCopiesThePristineArgsBackInPlace) {
  auto op = make_with_inputs();
  auto w = op->make_workload(Key{{"n", 4}});
  const void* before = w->outputs()[0].data;
  w->run_candidate(1);  // clobbers the input
  EXPECT_EQ(static_cast<const float*>(w->outputs()[0].data)[2], -1.0f);
  ASSERT_TRUE(w->restore_inputs());
  const OutputView after = w->outputs()[0];
  EXPECT_EQ(after.data, before);  // the same buffer: pointers a backend holds stay valid
  for (std::size_t i = 0; i < after.count; ++i)
    EXPECT_EQ(static_cast<const float*>(after.data)[i], 1.0f);
}

TEST(Op, RestoreFunctionReplacesTheCopyAndMoveOnlyArgsCannotRestore) {
  auto op = make_with_inputs();
  int restored = 0;
  op->restore([&](Args& a) {
    ++restored;
    std::fill(a.x.begin(), a.x.end(), 7.0f);
  });
  auto w = op->make_workload(Key{{"n", 2}});
  EXPECT_TRUE(w->restore_inputs());
  EXPECT_EQ(restored, 1);
  EXPECT_EQ(static_cast<const float*>(w->outputs()[0].data)[1], 7.0f);

  struct MoveOnly {
    std::unique_ptr<float> x = std::make_unique<float>(0.0f);
  };
  Op<MoveOnly> move_only("move_only", 1);
  move_only.inputs([](const Key&) { return MoveOnly{}; }).outputs([](MoveOnly& a) {
    return std::vector<OutputView>{OutputView::of(std::span(a.x.get(), 1))};
  });
  EXPECT_FALSE(move_only.make_workload(Key{})->restore_inputs());  // the caller makes a fresh one
}

TEST(Op, ValidatorHooksSeeTheArguments) {
  auto op = make_with_inputs();
  int poisoned = 0;
  op->validator([&](Args& a) { poisoned += static_cast<int>(a.x.size()); },
                [](const Args& a) -> std::optional<std::string> {
                  if (a.x[0] < 0) return "x[0] went negative";
                  return std::nullopt;
                });
  auto w = op->make_workload(Key{{"n", 3}});
  w->before_check();
  EXPECT_EQ(poisoned, 3);
  EXPECT_EQ(w->after_check(), std::nullopt);
  w->run_candidate(1);
  EXPECT_EQ(w->after_check(), std::optional<std::string>("x[0] went negative"));

  auto plain = make_with_inputs();  // no hooks: nothing happens, everything passes
  auto pw = plain->make_workload(Key{{"n", 1}});
  pw->before_check();
  EXPECT_EQ(pw->after_check(), std::nullopt);
  op->validator(nullptr, nullptr);  // either may be empty
  EXPECT_EQ(op->make_workload(Key{{"n", 1}})->after_check(), std::nullopt);
}

TEST(Op, InProcessNeedsAReasonAndLeavesTheChecksum) {
  auto a = make();
  auto b = make();
  EXPECT_EQ(a->in_process_reason(), std::nullopt);
  EXPECT_THROW(b->in_process(""), UsageError);
  b->in_process("uses the caller's OpenMP runtime");
  EXPECT_EQ(b->in_process_reason(), std::optional<std::string>("uses the caller's OpenMP runtime"));
  EXPECT_EQ(a->checksum(), b->checksum());
}

}  // namespace
}  // namespace tunekit
