// Tests for kernels/attention/: every path (the unfused composition on the ops' defaults and
// on other kernels, streaming attention at several block sizes including ones that do not
// divide the tokens, the fused norm projection, heads in parallel or not) matches the double
// reference at small shapes; bad shapes, args and plans are clear errors; inputs are
// deterministic; the caller's vectors come back after a run, even when a step throws; a
// reused workspace does not grow; steps served through a tuner get its choice per key; each
// plan says what it does to the numbers.
#include "attention/attention.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "attention/streaming_attention.hpp"
#include "tunekit/errors.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::kernels {
namespace {

struct Shape {
  std::size_t tokens, d, heads;
};

std::vector<float> reference_output(cpu::ThreadPool& pool, const AttentionArgs& args) {
  AttentionArgs copy = args;
  attention_reference(pool, copy);
  return copy.y;
}

// Runs `plan` on fresh inputs of `shape` and checks the output against the reference.
void expect_matches_reference(const AttentionPlan& plan, const Shape& shape,
                              const OpChoices* ops = nullptr) {
  cpu::ThreadPool pool(2);
  AttentionArgs args = make_attention_args(shape.tokens, shape.d, shape.heads);
  const std::vector<float> expected = reference_output(pool, args);
  AttentionWorkspace ws;
  const OpChoices defaults = default_op_choices(pool);
  args.y.assign(args.y.size(), std::numeric_limits<float>::quiet_NaN());  // all overwritten
  attention_run(plan, pool, ws, args, ops ? *ops : defaults);
  const AttentionCheck check = check_attention_output(args, expected);
  EXPECT_TRUE(check.ok) << to_string(plan) << " at tokens=" << shape.tokens << " d=" << shape.d
                        << " heads=" << shape.heads << ": " << check.message;
}

const Shape kShapes[] = {{64, 64, 4}, {100, 96, 4}, {200, 128, 8}, {77, 64, 16}};

TEST(Attention, UnfusedOnTheOpsDefaultsMatchesTheReference) {
  for (const Shape& shape : kShapes) expect_matches_reference(AttentionPlan{}, shape);
}

TEST(Attention, UnfusedOnPackedAndTunedKernelsMatchesTheReference) {
  cpu::ThreadPool pool(2);
  OpChoices ops;
  ops.rmsnorm = [&pool](RmsnormArgs& a) { rmsnorm_run({16, 4, 2}, pool, a); };
  ops.qkv = ops.scores = ops.context = ops.out = [&pool](SgemmArgs& a) {
    sgemm_packed({8, 32, 48, 128, 512, SgemmOrder::jpi, 2}, pool, a);
  };
  ops.softmax = [&pool](SoftmaxArgs& a) {
    softmax_run({SoftmaxAlgo::two_pass_poly, 16, 8, 2}, pool, a);
  };
  for (const Shape& shape : kShapes) expect_matches_reference(AttentionPlan{}, shape, &ops);
}

TEST(Attention, UnfusedWithHeadsInParallelMatchesTheReference) {
  AttentionPlan plan;
  plan.heads_parallel = true;
  plan.threads = 2;
  for (const Shape& shape : kShapes) expect_matches_reference(plan, shape);
  plan.threads = 3;  // more slots than the pool: still one head per task
  expect_matches_reference(plan, {100, 96, 4});
}

TEST(Attention, StreamingMatchesTheReferenceAtEveryBlockSize) {
  // Blocks that divide the tokens, that do not (a partial last block), one block larger than
  // all tokens, single-row and single-key blocks, blocks off the register tile's multiples.
  const std::pair<std::size_t, std::size_t> blocks[] = {
      {64, 256}, {32, 32}, {13, 48}, {8, 7}, {1, 1}, {512, 512}, {24, 100}, {100, 24}, {9, 33}};
  for (auto [q, k] : blocks) {
    AttentionPlan plan;
    plan.streaming = true;
    plan.q_block = q;
    plan.k_block = k;
    for (const Shape& shape : kShapes) {
      for (int threads : {1, 2}) {
        plan.threads = threads;
        plan.heads_parallel = false;
        expect_matches_reference(plan, shape);
        plan.heads_parallel = true;
        expect_matches_reference(plan, shape);
      }
    }
  }
}

TEST(Attention, FusedNormProjectionMatchesTheReference) {
  AttentionPlan plan;
  plan.fuse_norm = true;
  for (int threads : {1, 2}) {
    plan.threads = threads;
    for (const Shape& shape : kShapes) expect_matches_reference(plan, shape);
  }
  // d past one kc step (256) and past one row block (96 rows); n = 3d not a multiple of 32.
  expect_matches_reference(plan, {150, 264, 4});
}

TEST(Attention, EveryCombinedPlanMatchesTheReference) {
  for (int bits = 0; bits < 8; ++bits) {
    AttentionPlan plan;
    plan.fuse_norm = bits & 1;
    plan.streaming = bits & 2;
    plan.heads_parallel = bits & 4;
    plan.q_block = 48;
    plan.k_block = 80;
    plan.threads = 2;
    expect_matches_reference(plan, {130, 128, 8});
  }
}

TEST(Attention, TheBoundCatchesAWrongAnswer) {
  cpu::ThreadPool pool(2);
  AttentionArgs args = make_attention_args(64, 64, 4);
  const std::vector<float> expected = reference_output(pool, args);
  args.y = expected;
  EXPECT_TRUE(check_attention_output(args, expected).ok);
  // A causal mask (or any other softmax) is a different answer: perturb one output by 1e-3.
  args.y[123] += 1e-3f;
  AttentionCheck check = check_attention_output(args, expected);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.worst, 123u);
  EXPECT_NE(check.message.find("element 123"), std::string::npos) << check.message;
  args.y[123] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(check_attention_output(args, expected).ok);
  args.y.pop_back();
  EXPECT_FALSE(check_attention_output(args, expected).ok);
}

TEST(Attention, TheReferenceIsASoftmaxWeightedAverage) {
  // With Wo = identity-free checks: one token attends only to itself, so O = V and y = x +
  // V·Wo; here checked through a constant V: every head's output is that constant.
  cpu::ThreadPool pool(1);
  AttentionArgs args = make_attention_args(5, 8, 2);
  std::fill(args.wqkv.begin(), args.wqkv.end(), 0.0f);
  for (std::size_t p = 0; p < 8; ++p) args.wqkv[p * 24 + 16 + p] = 1.0f;  // V = h
  std::fill(args.x.begin(), args.x.end(), 0.5f);  // every row the same: h = w
  std::fill(args.wo.begin(), args.wo.end(), 0.0f);
  for (std::size_t p = 0; p < 8; ++p) args.wo[p * 8 + p] = 1.0f;
  attention_reference(pool, args);
  // h = x / rms(x) · w = w (rms of a constant row is the constant, eps aside).
  for (std::size_t i = 0; i < 5; ++i) {
    for (std::size_t j = 0; j < 8; ++j)
      EXPECT_NEAR(args.y[i * 8 + j], 0.5f + args.norm_w[j], 1e-5) << i << "," << j;
  }
}

TEST(Attention, InputsAreDeterministicAndSetsDiffer) {
  const AttentionArgs a = make_attention_args(32, 64, 4);
  const AttentionArgs b = make_attention_args(32, 64, 4);
  const AttentionArgs c = make_attention_args(32, 64, 4, 1);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.wqkv, b.wqkv);
  EXPECT_EQ(a.wo, b.wo);
  EXPECT_EQ(a.norm_w, b.norm_w);
  EXPECT_NE(a.x, c.x);
  EXPECT_NE(a.wqkv, c.wqkv);
  EXPECT_EQ(a.head_dim(), 16u);
}

TEST(Attention, BadShapesAreUsageErrorsThatSayWhy) {
  const auto message = [](std::size_t t, std::size_t d, std::size_t h) {
    try {
      make_attention_args(t, d, h);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(64, 100, 8).find("multiple of heads"), std::string::npos);
  EXPECT_NE(message(0, 64, 4).find("tokens"), std::string::npos);
  EXPECT_NE(message(64, 0, 4).find("d must be"), std::string::npos);
  EXPECT_NE(message(64, 64, 0).find("heads"), std::string::npos);
  EXPECT_NE(message(64, 64, 128).find("heads"), std::string::npos);
  // Sizes whose products would overflow or exhaust memory are refused before allocating.
  EXPECT_NE(message(std::size_t{1} << 40, 64, 4).find("tokens"), std::string::npos);
  EXPECT_NE(message(64, std::size_t{1} << 40, 4).find("d must be"), std::string::npos);
  EXPECT_NE(message(std::numeric_limits<std::size_t>::max(), 64, 4).find("tokens"),
            std::string::npos);
}

TEST(Attention, MismatchedArgsPlansAndMissingOpsAreUsageErrors) {
  cpu::ThreadPool pool(1);
  AttentionWorkspace ws;
  const OpChoices ops = default_op_choices(pool);
  AttentionArgs args = make_attention_args(16, 32, 4);
  args.wo.pop_back();
  EXPECT_THROW(attention_run({}, pool, ws, args, ops), UsageError);
  args = make_attention_args(16, 32, 4);
  args.heads = 3;  // no longer divides d
  EXPECT_THROW(attention_run({}, pool, ws, args, ops), UsageError);
  args = make_attention_args(16, 32, 4);
  AttentionPlan plan;
  plan.q_block = 0;
  EXPECT_THROW(attention_run(plan, pool, ws, args, ops), UsageError);
  plan = {};
  plan.threads = 0;
  EXPECT_THROW(attention_run(plan, pool, ws, args, ops), UsageError);
  OpChoices missing = ops;
  missing.softmax = nullptr;
  try {
    attention_run({}, pool, ws, args, missing);
    ADD_FAILURE() << "no error for an empty softmax";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("OpChoices.softmax"), std::string::npos);
  }
  // The streaming plan does not run the softmax op: an empty one is fine there.
  plan = {};
  plan.streaming = true;
  EXPECT_NO_THROW(attention_run(plan, pool, ws, args, missing));
}

TEST(Attention, TheCallersVectorsComeBackEvenWhenAStepThrows) {
  cpu::ThreadPool pool(1);
  AttentionWorkspace ws;
  AttentionArgs args = make_attention_args(16, 32, 4);
  const AttentionArgs before = args;
  OpChoices ops = default_op_choices(pool);
  attention_run({}, pool, ws, args, ops);
  EXPECT_EQ(args.x, before.x);
  EXPECT_EQ(args.wqkv, before.wqkv);
  EXPECT_EQ(args.wo, before.wo);
  EXPECT_EQ(args.norm_w, before.norm_w);
  ops.context = [](SgemmArgs&) { throw std::runtime_error("context failed"); };
  EXPECT_THROW(attention_run({}, pool, ws, args, ops), std::runtime_error);
  EXPECT_EQ(args.x, before.x);
  EXPECT_EQ(args.wqkv, before.wqkv);
  EXPECT_EQ(args.norm_w, before.norm_w);
  // After a failed run the workspace still serves a correct one.
  ops = default_op_choices(pool);
  const std::vector<float> expected = reference_output(pool, args);
  attention_run({}, pool, ws, args, ops);
  EXPECT_TRUE(check_attention_output(args, expected).ok);
}

TEST(Attention, StepsSeeTheirDocumentedShapes) {
  cpu::ThreadPool pool(1);
  AttentionWorkspace ws;
  AttentionArgs args = make_attention_args(40, 64, 4);
  OpChoices ops = default_op_choices(pool);
  std::vector<std::string> seen;
  const auto gemm = [&seen](const char* name) {
    return [&seen, name](SgemmArgs& a) {
      seen.push_back(std::string(name) + " " + std::to_string(a.m) + "x" + std::to_string(a.n) +
                     "x" + std::to_string(a.k));
      sgemm_ikj(a);
    };
  };
  ops.qkv = gemm("qkv");
  ops.scores = gemm("scores");
  ops.context = gemm("context");
  ops.out = gemm("out");
  attention_run({}, pool, ws, args, ops);
  ASSERT_EQ(seen.size(), 1u + 2u * 4u + 1u);
  EXPECT_EQ(seen.front(), "qkv 40x192x64");
  EXPECT_EQ(seen[1], "scores 40x40x16");
  EXPECT_EQ(seen[2], "context 40x16x40");
  EXPECT_EQ(seen.back(), "out 40x64x64");
}

TEST(Attention, AReusedWorkspaceDoesNotGrow) {
  cpu::ThreadPool pool(2);
  const OpChoices ops = default_op_choices(pool);
  AttentionArgs args = make_attention_args(96, 64, 4);
  for (bool streaming : {false, true}) {
    AttentionWorkspace ws;
    AttentionPlan plan;
    plan.streaming = streaming;
    plan.heads_parallel = true;
    plan.threads = 2;
    attention_run(plan, pool, ws, args, ops);
    const std::size_t first = ws.bytes();
    EXPECT_GT(first, 0u);
    attention_run(plan, pool, ws, args, ops);
    EXPECT_EQ(ws.bytes(), first) << streaming;
  }
}

TEST(Attention, StreamingNeverHoldsTheScoresMatrix) {
  cpu::ThreadPool pool(1);
  const OpChoices ops = default_op_choices(pool);
  AttentionArgs args = make_attention_args(512, 64, 4);
  AttentionWorkspace unfused, streaming;
  attention_run({}, pool, unfused, args, ops);
  AttentionPlan plan;
  plan.streaming = true;
  plan.q_block = 32;
  plan.k_block = 64;
  attention_run(plan, pool, streaming, args, ops);
  const std::size_t scores = 512u * 512u * sizeof(float);
  EXPECT_GE(unfused.bytes(), 2 * scores);  // S and P
  EXPECT_LT(streaming.bytes(), scores);
}

TEST(Attention, PolynomialExpIsCloseToStdExpAndZeroFarBelow) {
  float x[16], y[16];
  for (int i = 0; i < 16; ++i) x[i] = -87.0f + 87.0f * static_cast<float>(i) / 15.0f;
  exp16(x, y);
  for (int i = 0; i < 16; ++i) EXPECT_NEAR(y[i], std::exp(x[i]), 4e-7f * std::exp(x[i])) << x[i];
  for (int i = 0; i < 16; ++i) x[i] = i % 2 ? -std::numeric_limits<float>::infinity() : -90.0f;
  exp16(x, y);
  for (float v : y) EXPECT_EQ(v, 0.0f);
}

TEST(Attention, PlanNamesAreDistinct) {
  AttentionPlan plan;
  EXPECT_EQ(to_string(plan), "norm+materialised/ops_t1");
  plan.fuse_norm = plan.streaming = plan.heads_parallel = true;
  plan.threads = 2;
  EXPECT_EQ(to_string(plan), "fused_norm+streaming/heads_q64_k256_t2");
}

TEST(Attention, StepsServedByATunerRunTheTunersChoiceForEachKey) {
  cpu::ThreadPool pool(2);
  cpu::CpuDevice device;
  TunerOptions options;
  options.decide.mode = Mode::off;  // every key served its op's default: no search, no store
  Tuner tuner(device, options);
  const AttentionOps built(pool);
  const OpChoices served = built.served_by(tuner);
  AttentionArgs args = make_attention_args(72, 64, 4);
  const std::vector<float> expected = reference_output(pool, args);
  AttentionWorkspace ws;
  attention_run({}, pool, ws, args, served);
  EXPECT_TRUE(check_attention_output(args, expected).ok);
  // Off serves the defaults, so the outputs equal the defaults' composition bit for bit.
  AttentionArgs direct = args;
  AttentionWorkspace ws2;
  attention_run({}, pool, ws2, direct, default_op_choices(pool));
  EXPECT_EQ(args.y, direct.y);
  // The sgemm op was asked for each product's key (m=72: qkv n=192 k=64; scores n=72 k=16).
  for (const char* shape : {"m=72,n=192,k=64", "m=72,n=72,k=16", "m=72,n=16,k=72"}) {
    const Choice choice = tuner.select(*built.sgemm, built.sgemm->parse_shape(shape));
    EXPECT_EQ(choice.index, built.sgemm->default_index(built.sgemm->parse_shape(shape))) << shape;
  }
}

TEST(Attention, PlanNumericsSayWhatThePlanChanges) {
  AttentionPlan plan;
  EXPECT_EQ(attention_plan_numerics(plan), Numerics::bitwise);
  plan.heads_parallel = true;
  EXPECT_EQ(attention_plan_numerics(plan), Numerics::bitwise);
  plan.fuse_norm = true;
  EXPECT_EQ(attention_plan_numerics(plan), Numerics::reassociates);
  plan.streaming = true;
  EXPECT_EQ(attention_plan_numerics(plan), Numerics::approximate);
  // And heads in parallel is bitwise indeed: the same ops on the same inputs per head.
  cpu::ThreadPool pool(2);
  AttentionArgs a = make_attention_args(90, 64, 4), b = a;
  AttentionWorkspace wa, wb;
  AttentionPlan heads;
  heads.heads_parallel = true;
  heads.threads = 2;
  attention_run({}, pool, wa, a, default_op_choices(pool));
  attention_run(heads, pool, wb, b, default_op_choices(pool));
  EXPECT_EQ(a.y, b.y);
}

TEST(Attention, ThePlanListStartsWithTheReferenceAndNamesEachPlanOnce) {
  const std::vector<AttentionPlan> plans = attention_plans(2);
  ASSERT_FALSE(plans.empty());
  EXPECT_EQ(to_string(plans.front()), to_string(AttentionPlan{}));
  std::set<std::string> names;
  int streaming = 0;
  for (const AttentionPlan& plan : plans) {
    EXPECT_NO_THROW(check_attention_plan(plan));
    EXPECT_TRUE(names.insert(to_string(plan)).second) << to_string(plan);
    streaming += plan.streaming;
  }
  EXPECT_EQ(plans.size(), 1u + 4u + 4u * 9u);  // reference, 4 materialised, 4 × 9 streaming
  EXPECT_EQ(streaming, 36);
}

}  // namespace
}  // namespace tunekit::kernels
