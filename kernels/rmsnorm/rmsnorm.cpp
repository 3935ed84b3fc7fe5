// rmsnorm: row kernels with 1-16 partial-sum lanes for the sum of squares, rows split over a
// thread pool; the reference in double; the op.
#include "rmsnorm/rmsnorm.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "common.hpp"
#include "work_models.hpp"

namespace tunekit::kernels {
namespace {

template <int L>
float sum_squares(const float* x, std::size_t n) {
  if constexpr (L == 1) {
    float sum = 0.0f;
    for (std::size_t j = 0; j < n; ++j) sum += x[j] * x[j];
    return sum;
  } else {
    float lanes[L] = {};
    std::size_t j = 0;
    for (; j + L <= n; j += L) {
      for (int l = 0; l < L; ++l) lanes[l] += x[j + l] * x[j + l];
    }
    float tail = 0.0f;
    for (; j < n; ++j) tail += x[j] * x[j];
    return combine_lanes(lanes) + tail;
  }
}

// Only the sum of squares differs between variants; the scaling is element-wise and shared.
template <int L>
void row(const float* x, const float* w, float* y, std::size_t n, float eps) {
  const float mean = sum_squares<L>(x, n) / static_cast<float>(n);
  const float inv = 1.0f / std::sqrt(mean + eps);
  for (std::size_t j = 0; j < n; ++j) y[j] = x[j] * inv * w[j];
}

using RmsnormRowFn = void (*)(const float*, const float*, float*, std::size_t, float);

RmsnormRowFn rmsnorm_row_kernel(int vec) {
  switch (vec) {
    case 1:
      return row<1>;
    case 4:
      return row<4>;
    case 8:
      return row<8>;
    case 16:
      return row<16>;
    default:
      throw std::invalid_argument("rmsnorm: vec must be 1, 4, 8 or 16, not " + std::to_string(vec));
  }
}

std::size_t rmsnorm_dimension(const Key& key, std::string_view name) {
  return key_dimension(key, name, "rmsnorm", kRmsnormMaxDim);
}

}  // namespace

void rmsnorm_run(const RmsnormPlan& plan, cpu::ThreadPool& pool, RmsnormArgs& args) {
  if (plan.rows_per_task == 0) throw std::invalid_argument("rmsnorm: rows_per_task must be >= 1");
  const RmsnormRowFn kernel = rmsnorm_row_kernel(plan.vec);
  const std::size_t rows = args.rows, cols = args.cols, per = plan.rows_per_task;
  const float eps = args.eps;
  const float* x = args.x.data();
  const float* w = args.w.data();
  float* y = args.y.data();
  run_row_tasks(pool, rows, per, plan.threads,
                [&](std::size_t r) { kernel(x + r * cols, w, y + r * cols, cols, eps); });
}

void rmsnorm_reference(RmsnormArgs& args) {
  const std::size_t cols = args.cols;
  for (std::size_t r = 0; r < args.rows; ++r) {
    const float* x = args.x.data() + r * cols;
    float* y = args.y.data() + r * cols;
    double sum = 0.0;
    for (std::size_t j = 0; j < cols; ++j) sum += static_cast<double>(x[j]) * x[j];
    const double inv = 1.0 / std::sqrt(sum / static_cast<double>(cols) + args.eps);
    for (std::size_t j = 0; j < cols; ++j) y[j] = static_cast<float>(x[j] * inv * args.w[j]);
  }
}

RmsnormArgs make_rmsnorm_args(std::size_t rows, std::size_t cols, int input_set) {
  RmsnormArgs args;
  args.rows = rows;
  args.cols = cols;
  args.x.resize(rows * cols);
  args.w.resize(cols);
  args.y.assign(rows * cols, 0.0f);
  std::mt19937 rng = input_rng(0x5eed0003u, input_set);
  fill_uniform(args.x, rng, -1.0f, 2.0f);
  fill_uniform(args.w, rng, 0.5f, 1.0f);
  return args;
}

// dtype and the element budget: refused before anything is allocated.
static void check_rmsnorm_key(const Key& key) {
  check_rows_cols_key(key, "rmsnorm", kRmsnormMaxDim, kRmsnormMaxElements);
}

std::unique_ptr<Op<RmsnormArgs>> make_rmsnorm_op_typed(cpu::ThreadPool& pool) {
  auto op = std::make_unique<Op<RmsnormArgs>>("rmsnorm", 1);
  op->describe(
        "row-wise RMS normalisation y = x / sqrt(mean(x²) + 1e-6) · w of a row-major f32 "
        "matrix: 1-16 partial-sum lanes, rows split over threads")
      .key_field({"rows", Value::Type::integer, "rows (independent normalisations)", std::nullopt,
                  1, kRmsnormMaxDim})
      .key_field({"cols", Value::Type::integer, "length of each row and of the weight vector",
                  std::nullopt, 1, kRmsnormMaxDim})
      .key_field({"dtype", Value::Type::string, "element type (f32 only)", Value("f32"), 0, 0})
      .key({"rows", "cols", "dtype"},
           [](const RmsnormArgs& a) {
             return KeyValues{static_cast<std::int64_t>(a.rows), static_cast<std::int64_t>(a.cols),
                              "f32"};
           })
      .key_check([](const Key& key) { check_rmsnorm_key(key); })
      .inputs([](const Key& key, int input_set) {
        check_rmsnorm_key(key);
        return make_rmsnorm_args(rmsnorm_dimension(key, "rows"), rmsnorm_dimension(key, "cols"),
                                 input_set);
      })
      .outputs(
          [](RmsnormArgs& a) { return std::vector<OutputView>{OutputView::of(std::span(a.y))}; })
      // Every candidate overwrites all of it and reads none of it (validation poisons it first):
      // not copied back before each window, only the inputs are.
      .write_only(&RmsnormArgs::y)
      .reference([](RmsnormArgs& a) { rmsnorm_reference(a); })
      // The sum of cols squares carries a rounding error that grows like sqrt(cols) ulps for
      // inputs like the generator's (measured: under 0.5 sqrt(cols) ulps); the square root
      // halves it and the two products add an ulp each. Every output is relative to it.
      .tolerance([](const Key& key) {
        const double cols = static_cast<double>(key.integer("cols"));
        return Tolerance{0x1p-100, 0x1p-22 * (4.0 + std::sqrt(cols))};
      });

  CandidateList<RmsnormArgs> candidates(*op);
  for (int threads : thread_counts(pool)) {
    const std::vector<std::size_t> per_task = rows_per_task_choices(threads);
    for (int vec : {1, 4, 8, 16}) {
      for (std::size_t rows_per_task : per_task) {
        const RmsnormPlan plan{vec, rows_per_task, threads};
        // Appended piecewise: "v" + std::to_string(...) trips a false -Wrestrict in GCC 12.
        std::string name = "v";
        name += std::to_string(vec) + "_r" + std::to_string(rows_per_task) + "_t" +
                std::to_string(threads);
        Config config;
        config.set("vec", vec)
            .set("rows_per_task", static_cast<std::int64_t>(rows_per_task))
            .set("threads", threads);
        // Rows are independent: only the lanes of the sum of squares change the bits.
        const Numerics numerics = vec == 1 ? Numerics::bitwise : Numerics::reassociates;
        candidates.add(name, std::move(config), numerics,
                       [plan, &pool](RmsnormArgs& a) { rmsnorm_run(plan, pool, a); });
      }
    }
  }
  op->work(rmsnorm_work);  // the cost model's view of each candidate (work_models.cpp)
  op->default_candidate("v1_r16_t1");
  return op;
}

std::unique_ptr<OpBase> make_rmsnorm_op(cpu::ThreadPool& pool) {
  return make_rmsnorm_op_typed(pool);
}

}  // namespace tunekit::kernels
