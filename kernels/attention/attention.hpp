// attention: one transformer attention sub-layer on the CPU (f32, row-major, non-causal), the
// built-in multi-op workload the stack controller tunes (issue 14 item 5):
//
//   h = rmsnorm(x)·w;  QKV = h·Wqkv;  per head: S = Q·Kᵀ/√hd, P = softmax(S), O_h = P·V;
//   y = x + concat(O_h)·Wo
//
// Three ways to run it, chosen by an AttentionPlan (one stack candidate each):
// - unfused: every step is one of the existing kernels (rmsnorm, sgemm, softmax), called
//   through OpChoices, so each op runs whatever kernel the tuner chose for its key;
// - streaming (graph scope): per head and query block, loop over key blocks with an online
//   softmax fused with both products; the tokens×tokens scores are never materialised;
// - fused norm (graph scope): rmsnorm applied while the QKV projection packs its A blocks,
//   so h is never written;
// and, across them, the application plan: heads in parallel (each head on one thread) or
// each op on all threads, and the query/key block sizes. The mask is non-causal (every query
// sees every key): simpler, and what an encoder block computes. Private to kernels/ and its
// tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "rmsnorm/rmsnorm.hpp"
#include "sgemm/sgemm.hpp"
#include "softmax/softmax.hpp"
#include "tunekit/candidate.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::kernels {

struct AttentionArgs {
  std::size_t tokens = 0;
  std::size_t d = 0;      // model width
  std::size_t heads = 0;  // d % heads == 0; head_dim = d / heads
  float eps = 1e-6f;
  std::vector<float> x;       // tokens×d
  std::vector<float> norm_w;  // d: the rmsnorm weight
  std::vector<float> wqkv;    // d×3d: columns [0, d) Q, [d, 2d) K, [2d, 3d) V; head h owns
                              // columns h·hd .. h·hd + hd - 1 of each
  std::vector<float> wo;      // d×d
  std::vector<float> y;       // tokens×d, every path overwrites all of it

  std::size_t head_dim() const { return heads == 0 ? 0 : d / heads; }
};

// Limits, checked before anything is allocated: tokens ≤ 16384 (the unfused path's scores are
// tokens² floats per head slot: 1 GiB at the limit), d ≤ 4096 (3d ≤ sgemm's 8192), heads ≤ d.
inline constexpr std::size_t kAttentionMaxTokens = 16384;
inline constexpr std::size_t kAttentionMaxDim = 4096;

// UsageError unless 1 ≤ tokens ≤ kAttentionMaxTokens, 1 ≤ d ≤ kAttentionMaxDim, 1 ≤ heads and
// d % heads == 0; the message says which and what to pass instead.
void check_attention_shape(std::size_t tokens, std::size_t d, std::size_t heads);
// check_attention_shape plus every vector's size matching the shape.
void check_attention_args(const AttentionArgs& args);

// Deterministic inputs: x uniform in [-1, 1), norm_w in [0.5, 1.5), Wqkv uniform scaled so the
// scores have a spread of a few units (a softmax that is neither uniform nor one-hot), Wo
// uniform scaled by 1/√d; y zero. Input set 1 has other values of the same distributions.
AttentionArgs make_attention_args(std::size_t tokens, std::size_t d, std::size_t heads,
                                  int input_set = 0);

// The exact block, accumulated in double with double intermediates (rows over the pool);
// writes y.
void attention_reference(cpu::ThreadPool& pool, AttentionArgs& args);

// Whether y matches the reference's output `expected`: |y - e| ≤ abs + rel·|e| everywhere, no
// NaN. The bound: each output is a residual plus a d-term dot product of values computed
// through three f32 products and a softmax; see attention.cpp for the derivation.
struct AttentionCheck {
  bool ok = false;
  double max_abs_error = 0;
  std::size_t worst = 0;  // index of the element furthest outside (or nearest to) the bound
  std::string message;    // when not ok: which element, its value and the bound
};
AttentionCheck check_attention_output(const AttentionArgs& args,
                                      const std::vector<float>& expected);

// The kernel run for each step of the unfused composition, on that step's arguments (a
// function object per op, so a caller plugs in Tuner::run(op, args) or any fixed kernel).
// Keys: rmsnorm rows=tokens, cols=d; qkv sgemm m=tokens, n=3d, k=d; scores sgemm m=tokens,
// n=tokens, k=hd (A = Q_h already scaled by 1/√hd, B = K_hᵀ); softmax rows=cols=tokens;
// context sgemm m=tokens, n=hd, k=tokens (A = P, B = V_h); out sgemm m=tokens, n=d, k=d.
// Empty functions are a UsageError at the call.
struct OpChoices {
  std::function<void(RmsnormArgs&)> rmsnorm;
  std::function<void(SgemmArgs&)> qkv;
  std::function<void(SgemmArgs&)> scores;
  std::function<void(SoftmaxArgs&)> softmax;
  std::function<void(SgemmArgs&)> context;
  std::function<void(SgemmArgs&)> out;
};
// Each op's declared default (what the tuner serves untuned): rmsnorm v1_r16_t1, sgemm ikj,
// softmax two_pass_v1_r16_t1.
OpChoices default_op_choices(cpu::ThreadPool& pool);

// The built-in ops the steps run, and choices that serve every step through a tuner: each
// call is Tuner::run(op, step args), so each step's key gets the kernel tuner's decision (its
// mode, store, search). All four products share the one sgemm op (their keys differ). The
// choices refer to this object and to the tuner: both must outlive them.
struct AttentionOps {
  explicit AttentionOps(cpu::ThreadPool& pool);
  std::unique_ptr<Op<RmsnormArgs>> rmsnorm;
  std::unique_ptr<Op<SgemmArgs>> sgemm;
  std::unique_ptr<Op<SoftmaxArgs>> softmax;
  OpChoices served_by(Tuner& tuner) const;
};

// One application/graph plan: a stack candidate. The binary decisions are the A/B flips.
struct AttentionPlan {
  bool fuse_norm = false;       // rmsnorm inside the QKV projection's packing (else the ops)
  bool streaming = false;       // streaming attention per head (else scores/softmax/context)
  bool heads_parallel = false;  // heads over `threads`, each head on one thread (else each
                                // step of a head on all threads)
  std::size_t q_block = 64;     // streaming: queries per block (≥ 1)
  std::size_t k_block = 256;    // streaming: keys per block (≥ 1)
  int threads = 1;              // threads of the own kernels and of the head split (≥ 1)
};
// e.g. "norm+materialised/ops_t1" (the unfused block) or "fused_norm+streaming/heads_q64_k256_t2":
// norm or fused_norm, materialised or streaming, ops or heads in parallel, blocks, threads.
std::string to_string(const AttentionPlan& plan);
// UsageError for a zero block, a block over kAttentionMaxTokens or threads < 1.
void check_attention_plan(const AttentionPlan& plan);
// What the plan's own kernels do to the numbers, against the unfused composition on the same
// op choices: streaming changes values (a polynomial exp, an online softmax: approximate);
// fuse_norm reorders the norm's sum of squares and the projection's products (reassociates);
// otherwise the same ops run in the same order on every head (bitwise).
Numerics attention_plan_numerics(const AttentionPlan& plan);
// The plans a stack controller chooses among on `threads` threads: first the reference, the
// unfused composition (AttentionPlan{}: every op on its own choice and threads), then every
// fuse_norm × streaming × heads_parallel combination on `threads`, the streaming ones at
// q_block {32, 64, 128} × k_block {128, 256, 512}. Names (to_string) are distinct.
std::vector<AttentionPlan> attention_plans(int threads);

// The intermediates of one shape and plan, allocated on the first run and reused by every
// later run of the same (or a smaller) shape and plan: a run that fits allocates nothing.
// Not shared between concurrent runs.
class AttentionWorkspace {
 public:
  AttentionWorkspace();
  ~AttentionWorkspace();
  AttentionWorkspace(AttentionWorkspace&&) noexcept;
  AttentionWorkspace& operator=(AttentionWorkspace&&) noexcept;

  std::size_t bytes() const;  // what it holds now
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// Runs the block under `plan` and writes args.y. The caller's vectors are lent to the steps'
// arguments (swapped, never copied) for the call and always given back, on an exception too.
// UsageError for bad args or a bad plan; a step's exception propagates.
void attention_run(const AttentionPlan& plan, cpu::ThreadPool& pool, AttentionWorkspace& ws,
                   AttentionArgs& args, const OpChoices& ops);
// The unfused composition, every step on its op choice: attention_run with AttentionPlan{}.
void attention_unfused(cpu::ThreadPool& pool, AttentionWorkspace& ws, AttentionArgs& args,
                       const OpChoices& ops);

}  // namespace tunekit::kernels
