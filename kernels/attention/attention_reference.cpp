// attention: the reference (every step in double, double intermediates) and the check of an
// f32 path's output against it.
#include <cmath>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "common.hpp"

namespace tunekit::kernels {
namespace {

// QKV rows: h = x·inv_rms·w, then h·Wqkv, both in double.
std::vector<double> reference_qkv(cpu::ThreadPool& pool, const AttentionArgs& args) {
  const std::size_t t = args.tokens, d = args.d, n = 3 * d;
  std::vector<double> qkv(t * n, 0.0);
  run_tasks(pool, t, pool.size(), [&](std::size_t i) {
    const float* x = args.x.data() + i * d;
    double sum = 0.0;
    for (std::size_t p = 0; p < d; ++p) sum += static_cast<double>(x[p]) * x[p];
    const double inv = 1.0 / std::sqrt(sum / static_cast<double>(d) + args.eps);
    double* row = qkv.data() + i * n;
    for (std::size_t p = 0; p < d; ++p) {
      const double h = x[p] * inv * args.norm_w[p];
      const float* w = args.wqkv.data() + p * n;
      for (std::size_t j = 0; j < n; ++j) row[j] += h * w[j];
    }
  });
  return qkv;
}

// Head `head`'s softmax(Q·Kᵀ/√hd)·V into o's columns of that head.
void reference_head(cpu::ThreadPool& pool, const AttentionArgs& args,
                    const std::vector<double>& qkv, std::size_t head, std::vector<double>& o) {
  const std::size_t t = args.tokens, d = args.d, hd = args.head_dim(), n = 3 * d;
  std::vector<double> kt(hd * t);  // K_hᵀ, so each row's scores are an axpy per dimension
  for (std::size_t j = 0; j < t; ++j) {
    for (std::size_t p = 0; p < hd; ++p) kt[p * t + j] = qkv[j * n + d + head * hd + p];
  }
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  run_tasks(pool, t, pool.size(), [&](std::size_t i) {
    std::vector<double> s(t, 0.0);
    for (std::size_t p = 0; p < hd; ++p) {
      const double q = qkv[i * n + head * hd + p] * scale;
      for (std::size_t j = 0; j < t; ++j) s[j] += q * kt[p * t + j];
    }
    double mx = s[0];
    for (double v : s) mx = std::max(mx, v);
    double sum = 0.0;
    for (double& v : s) sum += v = std::exp(v - mx);
    double* out = o.data() + i * d + head * hd;
    for (std::size_t j = 0; j < t; ++j) {
      const double pj = s[j] / sum;
      const double* v = qkv.data() + j * n + 2 * d + head * hd;
      for (std::size_t p = 0; p < hd; ++p) out[p] += pj * v[p];
    }
  });
}

}  // namespace

void attention_reference(cpu::ThreadPool& pool, AttentionArgs& args) {
  check_attention_args(args);
  const std::size_t t = args.tokens, d = args.d;
  const std::vector<double> qkv = reference_qkv(pool, args);
  std::vector<double> o(t * d, 0.0);
  for (std::size_t h = 0; h < args.heads; ++h) reference_head(pool, args, qkv, h, o);
  run_tasks(pool, t, pool.size(), [&](std::size_t i) {
    std::vector<double> acc(d, 0.0);
    for (std::size_t p = 0; p < d; ++p) {
      const double op = o[i * d + p];
      const float* w = args.wo.data() + p * d;
      for (std::size_t j = 0; j < d; ++j) acc[j] += op * w[j];
    }
    for (std::size_t j = 0; j < d; ++j)
      args.y[i * d + j] = static_cast<float>(args.x[i * d + j] + acc[j]);
  });
}

AttentionCheck check_attention_output(const AttentionArgs& args,
                                      const std::vector<float>& expected) {
  AttentionCheck check;
  if (expected.size() != args.y.size()) {
    check.message = "the reference has " + std::to_string(expected.size()) +
                    " elements, the output " + std::to_string(args.y.size());
    return check;
  }
  // The bound: each output is x plus a d-term dot product of O (convex combinations of V)
  // with Wo, after three f32 products (of d, hd and tokens terms: rounding errors growing like
  // sqrt(terms) ulps) and an exp within 2 ulps. Measured worst error at tokens 64-1024, d
  // 64-1024 on every path: 1-4e-6 on outputs of magnitude up to 2.5 (4-16 ulps), about a
  // quarter of `abs` below at each shape; `rel` adds an ulp of the output itself.
  const double abs = 0x1p-21 * (4.0 + 0.5 * (std::sqrt(static_cast<double>(args.d)) +
                                             std::sqrt(static_cast<double>(args.tokens))));
  const double rel = 0x1p-22;
  double worst_excess = -1e300;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double e = expected[i], y = args.y[i];
    const double err = std::abs(y - e), bound = abs + rel * std::abs(e);
    if (!(err <= bound) && check.message.empty()) {
      check.message = "element " + std::to_string(i) + ": " + std::to_string(y) +
                      " against the reference's " + std::to_string(e) + " (bound " +
                      std::to_string(bound) + ")";
    }
    if (std::isnan(err) || err > check.max_abs_error) check.max_abs_error = err;
    if (std::isnan(err) || err - bound > worst_excess) {
      worst_excess = std::isnan(err) ? 1e300 : err - bound;
      check.worst = i;
    }
  }
  check.ok = check.message.empty();
  return check;
}

}  // namespace tunekit::kernels
