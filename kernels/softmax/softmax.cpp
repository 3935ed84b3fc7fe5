// softmax: two-pass (std::exp or a polynomial exp) and online row kernels with 1-16
// partial-sum lanes, rows split over a
// thread pool; the reference in double; the op.
#include "softmax/softmax.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "common.hpp"
#include "exp_poly.hpp"
#include "work_models.hpp"

namespace tunekit::kernels {
namespace {

// The row maximum in 8 lanes (it vectorises). Exact whatever the order, so every variant
// shares it and it never changes the bits.
float row_max(const float* x, std::size_t n) {
  float lanes[8];
  for (float& lane : lanes) lane = x[0];
  std::size_t j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int l = 0; l < 8; ++l) lanes[l] = std::max(lanes[l], x[j + l]);
  }
  float mx = lanes[0];
  for (int l = 1; l < 8; ++l) mx = std::max(mx, lanes[l]);
  for (; j < n; ++j) mx = std::max(mx, x[j]);
  return mx;
}

// Sum of y in L interleaved lanes merged as a fixed tree, then the tail; L = 1 is the plain
// in-order sum.
template <int L>
float sum_lanes(const float* y, std::size_t n) {
  if constexpr (L == 1) {
    float sum = 0.0f;
    for (std::size_t j = 0; j < n; ++j) sum += y[j];
    return sum;
  } else {
    float lanes[L] = {};
    std::size_t j = 0;
    for (; j + L <= n; j += L) {
      for (int l = 0; l < L; ++l) lanes[l] += y[j + l];
    }
    float tail = 0.0f;
    for (; j < n; ++j) tail += y[j];
    return combine_lanes(lanes) + tail;
  }
}

// exp(x) for x <= 0 without a library call, so a loop of it vectorises: x = k·ln2 + r with
// |r| <= ln2/2 (ln2 split in two so k·ln2 is exact), e^r by Cephes' degree-6 polynomial, 2^k
// built in the exponent bits. Within 2 ulps of std::exp on [-87, 0]; from about -87.7 down,
// where k reaches -127 and 2^k's bits are zero, it returns 0 for a true value under 2^-125.
float exp_poly(float x) {
  // Clamp to -88 so k stays in [-127, 0] and the bit tricks cannot overflow. On the bit
  // patterns (sign-magnitude: larger means more negative for x <= 0) an integer min, which
  // vectorises; a float comparison would not, as it may raise an FP exception.
  const float xc = std::bit_cast<float>(
      std::min(std::bit_cast<std::uint32_t>(x), std::bit_cast<std::uint32_t>(exp_poly::kMin)));
  const float t = xc * exp_poly::kLog2e + exp_poly::kShifter;  // rounds k to nearest
  const float k = t - exp_poly::kShifter;
  const float r = (xc - k * exp_poly::kLn2Hi) - k * exp_poly::kLn2Lo;
  const float p = exp_poly::of_reduced(r);
  // t and 1.5·2^23 share a binade with a unit ulp: their bit patterns differ by k.
  const std::uint32_t k_bits =
      std::bit_cast<std::uint32_t>(t) - std::bit_cast<std::uint32_t>(exp_poly::kShifter);
  const float two_k = std::bit_cast<float>((k_bits + 127u) << 23);
  return p * two_k;
}

// Two passes over x: the max, then y = exp(x - max); the sum of y in L lanes; y /= sum.
template <int L, bool Poly>
void row_two_pass(const float* x, float* y, std::size_t n) {
  const float mx = row_max(x, n);
  for (std::size_t j = 0; j < n; ++j) y[j] = Poly ? exp_poly(x[j] - mx) : std::exp(x[j] - mx);
  const float inv = 1.0f / sum_lanes<L>(y, n);
  for (std::size_t j = 0; j < n; ++j) y[j] *= inv;
}

// One pass over x keeps, per lane, a running max m and the sum s of exp(x - m), rescaling s
// when m grows; lanes merge into the row's max and sum; a second pass writes exp(x - max)/sum.
template <int L>
void row_online(const float* x, float* y, std::size_t n) {
  float m[L];
  float s[L];
  for (int l = 0; l < L; ++l) {
    m[l] = -std::numeric_limits<float>::infinity();
    s[l] = 0.0f;
  }
  const auto step = [&](int l, float v) {
    if (v > m[l]) {
      s[l] = s[l] * std::exp(m[l] - v) + 1.0f;  // exp(-inf) = 0 on a lane's first element
      m[l] = v;
    } else {
      s[l] += std::exp(v - m[l]);
    }
  };
  std::size_t j = 0;
  for (; j + L <= n; j += L) {
    for (int l = 0; l < L; ++l) step(l, x[j + l]);
  }
  for (; j < n; ++j) step(0, x[j]);
  float mx = m[0];
  for (int l = 1; l < L; ++l) mx = std::max(mx, m[l]);
  float sums[L];
  for (int l = 0; l < L; ++l) sums[l] = s[l] == 0.0f ? 0.0f : s[l] * std::exp(m[l] - mx);
  const float inv = 1.0f / combine_lanes(sums);
  for (std::size_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - mx) * inv;
}

using SoftmaxRowFn = void (*)(const float*, float*, std::size_t);

template <int L>
SoftmaxRowFn softmax_row_kernel(SoftmaxAlgo algo) {
  switch (algo) {
    case SoftmaxAlgo::two_pass:
      return row_two_pass<L, false>;
    case SoftmaxAlgo::two_pass_poly:
      return row_two_pass<L, true>;
    case SoftmaxAlgo::online:
      return row_online<L>;
  }
  throw std::invalid_argument("softmax: unknown algorithm");
}

SoftmaxRowFn softmax_row_kernel(SoftmaxAlgo algo, int vec) {
  switch (vec) {
    case 1:
      return softmax_row_kernel<1>(algo);
    case 4:
      return softmax_row_kernel<4>(algo);
    case 8:
      return softmax_row_kernel<8>(algo);
    case 16:
      return softmax_row_kernel<16>(algo);
    default:
      throw std::invalid_argument("softmax: vec must be 1, 4, 8 or 16, not " + std::to_string(vec));
  }
}

std::size_t softmax_dimension(const Key& key, std::string_view name) {
  return key_dimension(key, name, "softmax", kSoftmaxMaxDim);
}

}  // namespace

std::string_view to_string(SoftmaxAlgo algo) {
  switch (algo) {
    case SoftmaxAlgo::two_pass:
      return "two_pass";
    case SoftmaxAlgo::two_pass_poly:
      return "two_pass_poly";
    case SoftmaxAlgo::online:
      return "online";
  }
  return "?";
}

void softmax_run(const SoftmaxPlan& plan, cpu::ThreadPool& pool, SoftmaxArgs& args) {
  if (plan.rows_per_task == 0) throw std::invalid_argument("softmax: rows_per_task must be >= 1");
  const SoftmaxRowFn row = softmax_row_kernel(plan.algo, plan.vec);
  const std::size_t rows = args.rows, cols = args.cols, per = plan.rows_per_task;
  const float* x = args.x.data();
  float* y = args.y.data();
  run_row_tasks(pool, rows, per, plan.threads,
                [&](std::size_t r) { row(x + r * cols, y + r * cols, cols); });
}

void softmax_reference(SoftmaxArgs& args) {
  const std::size_t cols = args.cols;
  for (std::size_t r = 0; r < args.rows; ++r) {
    const float* x = args.x.data() + r * cols;
    float* y = args.y.data() + r * cols;
    const double mx = *std::max_element(x, x + cols);
    double sum = 0.0;
    for (std::size_t j = 0; j < cols; ++j) sum += std::exp(static_cast<double>(x[j]) - mx);
    for (std::size_t j = 0; j < cols; ++j) {
      y[j] = static_cast<float>(std::exp(static_cast<double>(x[j]) - mx) / sum);
    }
  }
}

SoftmaxArgs make_softmax_args(std::size_t rows, std::size_t cols, int input_set) {
  SoftmaxArgs args;
  args.rows = rows;
  args.cols = cols;
  args.x.resize(rows * cols);
  args.y.assign(rows * cols, 0.0f);
  std::mt19937 rng = input_rng(0x5eed0002u, input_set);
  fill_uniform(args.x, rng, -1.0f, 2.0f);  // uniform in [-1, 1)
  return args;
}

// dtype and the element budget: refused before anything is allocated.
static void check_softmax_key(const Key& key) {
  check_rows_cols_key(key, "softmax", kSoftmaxMaxDim, kSoftmaxMaxElements);
}

std::unique_ptr<Op<SoftmaxArgs>> make_softmax_op_typed(cpu::ThreadPool& pool) {
  auto op = std::make_unique<Op<SoftmaxArgs>>("softmax", 1);
  op->describe(
        "row-wise softmax of a row-major f32 matrix: two-pass or online, std::exp or a "
        "vectorised polynomial exp (approximate), 1-16 partial-sum lanes, rows split over "
        "threads")
      .key_field({"rows", Value::Type::integer, "rows (independent softmaxes)", std::nullopt, 1,
                  kSoftmaxMaxDim})
      .key_field(
          {"cols", Value::Type::integer, "length of each row", std::nullopt, 1, kSoftmaxMaxDim})
      .key_field({"dtype", Value::Type::string, "element type (f32 only)", Value("f32"), 0, 0})
      .key({"rows", "cols", "dtype"},
           [](const SoftmaxArgs& a) {
             return KeyValues{static_cast<std::int64_t>(a.rows), static_cast<std::int64_t>(a.cols),
                              "f32"};
           })
      .key_check([](const Key& key) { check_softmax_key(key); })
      .inputs([](const Key& key, int input_set) {
        check_softmax_key(key);
        return make_softmax_args(softmax_dimension(key, "rows"), softmax_dimension(key, "cols"),
                                 input_set);
      })
      .outputs(
          [](SoftmaxArgs& a) { return std::vector<OutputView>{OutputView::of(std::span(a.y))}; })
      // Every candidate overwrites all of it and reads none of it (validation poisons it first):
      // not copied back before each window, only the inputs are.
      .write_only(&SoftmaxArgs::y)
      .reference([](SoftmaxArgs& a) { softmax_reference(a); })
      // The row sum of cols values in [e^-2, 1] carries a rounding error that grows like
      // sqrt(cols) ulps for inputs like the generator's (measured: under 0.5 sqrt(cols) ulps);
      // every output inherits it, plus a few ulps from exp and the scaling.
      .tolerance([](const Key& key) {
        const double cols = static_cast<double>(key.integer("cols"));
        return Tolerance{0x1p-100, 0x1p-22 * (4.0 + std::sqrt(cols))};
      });

  struct Variant {
    SoftmaxAlgo algo;
    int vec;
    Numerics numerics;  // rows are independent: only the per-row arithmetic changes the bits
  };
  const Variant variants[] = {
      {SoftmaxAlgo::two_pass, 1, Numerics::bitwise},
      {SoftmaxAlgo::two_pass, 4, Numerics::reassociates},
      {SoftmaxAlgo::two_pass, 8, Numerics::reassociates},
      {SoftmaxAlgo::two_pass, 16, Numerics::reassociates},
      {SoftmaxAlgo::online, 1, Numerics::reassociates},
      // A different exp: results move by up to 2 ulps beyond any reordering.
      {SoftmaxAlgo::two_pass_poly, 16, Numerics::approximate},
  };
  CandidateList<SoftmaxArgs> candidates(*op);
  for (int threads : thread_counts(pool)) {
    const std::vector<std::size_t> per_task = rows_per_task_choices(threads);
    for (const Variant& variant : variants) {
      for (std::size_t rows_per_task : per_task) {
        const SoftmaxPlan plan{variant.algo, variant.vec, rows_per_task, threads};
        const std::string name = std::string(to_string(variant.algo)) + "_v" +
                                 std::to_string(variant.vec) + "_r" +
                                 std::to_string(rows_per_task) + "_t" + std::to_string(threads);
        Config config;
        config.set("algo", std::string(to_string(variant.algo)))
            .set("vec", variant.vec)
            .set("rows_per_task", static_cast<std::int64_t>(rows_per_task))
            .set("threads", threads);
        candidates.add(name, std::move(config), variant.numerics,
                       [plan, &pool](SoftmaxArgs& a) { softmax_run(plan, pool, a); });
      }
    }
  }
  op->work(softmax_work);  // the cost model's view of each candidate (work_models.cpp)
  op->default_candidate("two_pass_v1_r16_t1");
  return op;
}

std::unique_ptr<OpBase> make_softmax_op(cpu::ThreadPool& pool) {
  return make_softmax_op_typed(pool);
}

}  // namespace tunekit::kernels
