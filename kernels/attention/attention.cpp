// attention: shape checks, inputs, the double reference and its check, the plan's entry and
// the unfused composition over the existing kernels.
#include "attention/attention.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>

#include "attention/attention_workspace.hpp"
#include "attention/fused_norm_projection.hpp"
#include "attention/streaming_attention.hpp"
#include "common.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::kernels {
namespace {

// A caller's vector lent to a step's arguments for a scope: swapped in, swapped back on every
// exit (no copy, no allocation).
class Lent {
 public:
  Lent(std::vector<float>& owner, std::vector<float>& borrower) : a_(owner), b_(borrower) {
    a_.swap(b_);
  }
  ~Lent() { a_.swap(b_); }
  Lent(const Lent&) = delete;
  Lent& operator=(const Lent&) = delete;

 private:
  std::vector<float>& a_;
  std::vector<float>& b_;
};

// Resizes only when the size differs, so a workspace reused for one shape allocates once.
void fit(std::vector<float>& v, std::size_t n) {
  if (v.size() != n) v.assign(n, 0.0f);
}

void shape_gemm(SgemmArgs& g, std::size_t m, std::size_t n, std::size_t k, bool own_a, bool own_b) {
  g.m = m;
  g.n = n;
  g.k = k;
  if (own_a) fit(g.a, m * k);
  if (own_b) fit(g.b, k * n);
  fit(g.c, m * n);
}

template <class Fn>
const Fn& require(const Fn& fn, const char* step) {
  if (!fn) {
    throw UsageError(std::string("attention: OpChoices.") + step +
                     " is empty: set it to the kernel to run (default_op_choices(pool) gives "
                     "each op's default)");
  }
  return fn;
}

void check_size(const std::vector<float>& v, std::size_t expected, const char* name) {
  if (v.size() != expected) {
    throw UsageError(std::string("attention: args.") + name + " has " + std::to_string(v.size()) +
                     " elements, the shape needs " + std::to_string(expected) +
                     " (make_attention_args sizes every vector)");
  }
}

// h = rmsnorm(x) through the rmsnorm op, then QKV = h·Wqkv through the qkv op.
void unfused_projection(AttentionWorkspace::Impl& w, AttentionArgs& args, const OpChoices& ops) {
  const std::size_t t = args.tokens, d = args.d;
  RmsnormArgs& norm = w.norm;
  norm.rows = t;
  norm.cols = d;
  norm.eps = args.eps;
  fit(norm.y, t * d);
  shape_gemm(w.qkv, t, 3 * d, d, true, false);
  {
    const Lent x(args.x, norm.x), weight(args.norm_w, norm.w);
    require(ops.rmsnorm, "rmsnorm")(norm);
  }
  norm.y.swap(w.qkv.a);  // both t×d: h becomes the projection's A without a copy
  const Lent wqkv(args.wqkv, w.qkv.b);
  require(ops.qkv, "qkv")(w.qkv);
}

void shape_head(HeadSlot& s, std::size_t t, std::size_t hd) {
  shape_gemm(s.scores, t, t, hd, true, true);
  s.probs.rows = t;
  s.probs.cols = t;
  fit(s.probs.y, t * t);
  shape_gemm(s.context, t, hd, t, false, true);
}

// One head through the scores, softmax and context ops; its output into out's columns.
void unfused_head(const AttentionArgs& args, const OpChoices& ops, const float* qkv,
                  std::size_t head, HeadSlot& s, float* out) {
  const std::size_t t = args.tokens, d = args.d, hd = args.head_dim(), ld = 3 * d;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  float* q = s.scores.a.data();
  float* kt = s.scores.b.data();
  float* v = s.context.b.data();
  for (std::size_t i = 0; i < t; ++i) {
    const float* row = qkv + i * ld + head * hd;
    for (std::size_t p = 0; p < hd; ++p) {
      q[i * hd + p] = row[p] * scale;
      v[i * hd + p] = row[2 * d + p];
    }
  }
  // K_hᵀ in 16-token strips, so each write fills a cache line instead of striding by tokens.
  for (std::size_t i0 = 0; i0 < t; i0 += 16) {
    const std::size_t end = std::min(t, i0 + 16);
    for (std::size_t p = 0; p < hd; ++p) {
      for (std::size_t i = i0; i < end; ++i) kt[p * t + i] = qkv[i * ld + d + head * hd + p];
    }
  }
  require(ops.scores, "scores")(s.scores);
  {
    const Lent scores(s.scores.c, s.probs.x);
    require(ops.softmax, "softmax")(s.probs);
    const Lent probs(s.probs.y, s.context.a);
    require(ops.context, "context")(s.context);
  }
  const float* o = s.context.c.data();
  for (std::size_t i = 0; i < t; ++i) std::copy_n(o + i * hd, hd, out + i * d + head * hd);
}

void unfused_attention(const AttentionPlan& plan, cpu::ThreadPool& pool,
                       AttentionWorkspace::Impl& w, const AttentionArgs& args,
                       const OpChoices& ops) {
  const std::size_t slots =
      plan.heads_parallel ? std::min<std::size_t>(plan.threads, args.heads) : 1;
  if (w.heads.size() < slots) w.heads.resize(slots);
  for (std::size_t s = 0; s < slots; ++s) shape_head(w.heads[s], args.tokens, args.head_dim());
  const float* qkv = w.qkv.c.data();
  float* out = w.out.a.data();
  // Static split: task s takes every slots-th head, so it alone uses heads[s]; a step's own
  // parallel_for inside a task runs inline (each head on one thread).
  run_tasks(pool, slots, static_cast<int>(slots), [&](std::size_t s) {
    for (std::size_t h = s; h < args.heads; h += slots)
      unfused_head(args, ops, qkv, h, w.heads[s], out);
  });
}

void residual(cpu::ThreadPool& pool, int threads, AttentionArgs& args, const float* proj) {
  const std::size_t n = args.tokens * args.d, chunk = std::size_t{1} << 14;
  const float* x = args.x.data();
  float* y = args.y.data();
  run_tasks(pool, ceil_div(n, chunk), threads, [&](std::size_t c) {
    const std::size_t end = std::min(n, (c + 1) * chunk);
    for (std::size_t i = c * chunk; i < end; ++i) y[i] = x[i] + proj[i];
  });
}

}  // namespace

void check_attention_shape(std::size_t tokens, std::size_t d, std::size_t heads) {
  const auto fail = [](const std::string& what) { throw UsageError("attention: " + what); };
  if (tokens == 0 || tokens > kAttentionMaxTokens)
    fail("tokens must be in 1.." + std::to_string(kAttentionMaxTokens) + ", not " +
         std::to_string(tokens));
  if (d == 0 || d > kAttentionMaxDim)
    fail("d must be in 1.." + std::to_string(kAttentionMaxDim) + ", not " + std::to_string(d));
  if (heads == 0 || heads > d)
    fail("heads must be in 1..d (" + std::to_string(d) + "), not " + std::to_string(heads));
  if (d % heads != 0)
    fail("d (" + std::to_string(d) + ") must be a multiple of heads (" + std::to_string(heads) +
         "): pick heads dividing d");
}

void check_attention_args(const AttentionArgs& args) {
  check_attention_shape(args.tokens, args.d, args.heads);
  const std::size_t t = args.tokens, d = args.d;
  check_size(args.x, t * d, "x");
  check_size(args.norm_w, d, "norm_w");
  check_size(args.wqkv, d * 3 * d, "wqkv");
  check_size(args.wo, d * d, "wo");
  check_size(args.y, t * d, "y");
  if (!(args.eps > 0.0f) || !std::isfinite(args.eps))
    throw UsageError("attention: eps must be positive and finite");
}

void check_attention_plan(const AttentionPlan& plan) {
  if (plan.q_block == 0 || plan.k_block == 0 || plan.q_block > kAttentionMaxTokens ||
      plan.k_block > kAttentionMaxTokens)
    throw UsageError("attention: q_block and k_block must be in 1.." +
                     std::to_string(kAttentionMaxTokens));
  if (plan.threads < 1) throw UsageError("attention: threads must be at least 1");
}

std::string to_string(const AttentionPlan& plan) {
  std::string text = plan.fuse_norm ? "fused_norm" : "norm";
  text += plan.streaming ? "+streaming" : "+materialised";
  text += plan.heads_parallel ? "/heads" : "/ops";
  if (plan.streaming)
    text += "_q" + std::to_string(plan.q_block) + "_k" + std::to_string(plan.k_block);
  text += "_t" + std::to_string(plan.threads);
  return text;
}

std::vector<AttentionPlan> attention_plans(int threads) {
  std::vector<AttentionPlan> plans{AttentionPlan{}};
  for (int bits = 0; bits < 8; ++bits) {
    AttentionPlan p;
    p.fuse_norm = bits & 1;
    p.streaming = bits & 2;
    p.heads_parallel = bits & 4;
    p.threads = threads;
    if (!p.streaming) {
      plans.push_back(p);
      continue;
    }
    for (std::size_t q : {32, 64, 128}) {
      for (std::size_t k : {128, 256, 512}) {
        p.q_block = q;
        p.k_block = k;
        plans.push_back(p);
      }
    }
  }
  return plans;
}

AttentionArgs make_attention_args(std::size_t tokens, std::size_t d, std::size_t heads,
                                  int input_set) {
  check_attention_shape(tokens, d, heads);
  AttentionArgs args;
  args.tokens = tokens;
  args.d = d;
  args.heads = heads;
  args.x.resize(tokens * d);
  args.norm_w.resize(d);
  args.wqkv.resize(d * 3 * d);
  args.wo.resize(d * d);
  args.y.assign(tokens * d, 0.0f);
  std::mt19937 rng = input_rng(0x5eed0005u, input_set);
  fill_uniform(args.x, rng, -1.0f, 2.0f);
  fill_uniform(args.norm_w, rng, 0.5f, 1.0f);
  fill_uniform(args.wqkv, rng, -1.0f, 2.0f);
  fill_uniform(args.wo, rng, -1.0f, 2.0f);
  // Q and K entries of variance about 2 give scores of standard deviation about 2.
  const float qkv_scale = 2.5f / std::sqrt(static_cast<float>(d));
  for (float& v : args.wqkv) v *= qkv_scale;
  const float out_scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (float& v : args.wo) v *= out_scale;
  return args;
}

OpChoices default_op_choices(cpu::ThreadPool& pool) {
  OpChoices ops;
  ops.rmsnorm = [&pool](RmsnormArgs& a) { rmsnorm_run(RmsnormPlan{}, pool, a); };
  ops.qkv = ops.scores = ops.context = ops.out = [](SgemmArgs& a) { sgemm_ikj(a); };
  ops.softmax = [&pool](SoftmaxArgs& a) { softmax_run(SoftmaxPlan{}, pool, a); };
  return ops;
}

AttentionOps::AttentionOps(cpu::ThreadPool& pool)
    : rmsnorm(make_rmsnorm_op_typed(pool)),
      sgemm(make_sgemm_op_typed(pool)),
      softmax(make_softmax_op_typed(pool)) {}

OpChoices AttentionOps::served_by(Tuner& tuner) const {
  OpChoices ops;
  ops.rmsnorm = [&tuner, this](RmsnormArgs& a) { tuner.run(*rmsnorm, a); };
  ops.qkv = ops.scores = ops.context =
      ops.out = [&tuner, this](SgemmArgs& a) { tuner.run(*sgemm, a); };
  ops.softmax = [&tuner, this](SoftmaxArgs& a) { tuner.run(*softmax, a); };
  return ops;
}

Numerics attention_plan_numerics(const AttentionPlan& plan) {
  if (plan.streaming) return Numerics::approximate;
  return plan.fuse_norm ? Numerics::reassociates : Numerics::bitwise;
}

AttentionWorkspace::AttentionWorkspace() : impl_(std::make_unique<Impl>()) {}
AttentionWorkspace::~AttentionWorkspace() = default;
AttentionWorkspace::AttentionWorkspace(AttentionWorkspace&&) noexcept = default;
AttentionWorkspace& AttentionWorkspace::operator=(AttentionWorkspace&&) noexcept = default;

std::size_t AttentionWorkspace::bytes() const {
  std::size_t floats = 0;
  const auto add = [&floats](const auto&... v) { ((floats += v.size()), ...); };
  const Impl& w = *impl_;
  add(w.norm.x, w.norm.w, w.norm.y, w.qkv.a, w.qkv.b, w.qkv.c, w.out.a, w.out.b, w.out.c);
  for (const HeadSlot& s : w.heads)
    add(s.scores.a, s.scores.b, s.scores.c, s.probs.x, s.probs.y, s.context.a, s.context.b,
        s.context.c);
  for (const StreamSlot& s : w.stream) add(s.q, s.s, s.o, s.m, s.l, s.kt, s.v);
  add(w.fused.wpack);
  for (const auto& block : w.fused.ablocks) add(block);
  return floats * sizeof(float);
}

void attention_run(const AttentionPlan& plan, cpu::ThreadPool& pool, AttentionWorkspace& ws,
                   AttentionArgs& args, const OpChoices& ops) {
  check_attention_args(args);
  check_attention_plan(plan);
  require(ops.out, "out");
  AttentionWorkspace::Impl& w = ws.impl();
  const std::size_t t = args.tokens, d = args.d;
  if (plan.fuse_norm) {
    fit(w.qkv.c, t * 3 * d);
    fused_norm_projection(pool, plan.threads, t, d, 3 * d, args.eps, args.x.data(),
                          args.norm_w.data(), args.wqkv.data(), w.qkv.c.data(), w.fused);
  } else {
    unfused_projection(w, args, ops);
  }
  shape_gemm(w.out, t, d, d, true, false);
  if (plan.streaming) {
    const StreamingShape shape{
        t, d, args.heads, plan.q_block, plan.k_block, plan.threads, plan.heads_parallel};
    streaming_attention(shape, pool, w.qkv.c.data(), w.out.a.data(), w.stream);
  } else {
    unfused_attention(plan, pool, w, args, ops);
  }
  {
    const Lent wo(args.wo, w.out.b);
    ops.out(w.out);
  }
  residual(pool, plan.threads, args, w.out.c.data());
}

void attention_unfused(cpu::ThreadPool& pool, AttentionWorkspace& ws, AttentionArgs& args,
                       const OpChoices& ops) {
  attention_run(AttentionPlan{}, pool, ws, args, ops);
}

}  // namespace tunekit::kernels
