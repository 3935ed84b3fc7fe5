// sum: serial, pairwise and blocked (4-16 accumulators, 1..N threads) reductions; the
// reference in double; the op.
#include "sum/sum.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

#include "common.hpp"
#include "work_models.hpp"

namespace tunekit::kernels {
namespace {

float serial(const float* x, std::size_t n) {
  float sum = 0.0f;
  for (std::size_t i = 0; i < n; ++i) sum += x[i];
  return sum;
}

float pairwise(const float* x, std::size_t n) {
  if (n <= 128) return serial(x, n);
  const std::size_t half = n / 2;
  return pairwise(x, half) + pairwise(x + half, n - half);
}

// A interleaved running sums (element i goes to sum i mod A: they vectorise), merged as a
// fixed tree, then the tail.
template <int A>
float blocked(const float* x, std::size_t n) {
  float acc[A] = {};
  std::size_t i = 0;
  for (; i + A <= n; i += A) {
    for (int a = 0; a < A; ++a) acc[a] += x[i + a];
  }
  float tail = 0.0f;
  for (; i < n; ++i) tail += x[i];
  return combine_lanes(acc) + tail;
}

using ChunkFn = float (*)(const float*, std::size_t);

ChunkFn blocked_kernel(int acc) {
  switch (acc) {
    case 4:
      return blocked<4>;
    case 8:
      return blocked<8>;
    case 16:
      return blocked<16>;
    default:
      throw std::invalid_argument("sum: acc must be 4, 8 or 16, not " + std::to_string(acc));
  }
}

// Splits x into at most `threads` chunks (multiples of 64 elements, fixed by n and threads),
// sums each with its own accumulators and adds the partials in chunk order: the result
// depends on n and threads only, never on scheduling.
float blocked_threaded(cpu::ThreadPool& pool, int acc, int threads, const float* x, std::size_t n) {
  const ChunkFn kernel = blocked_kernel(acc);
  const std::size_t parts = static_cast<std::size_t>(std::max(1, threads));
  const std::size_t chunk = round_up(ceil_div(n, parts), 64);
  const std::size_t tasks = ceil_div(n, chunk);
  std::vector<float> partial(tasks);
  run_tasks(pool, tasks, threads, [&](std::size_t t) {
    const std::size_t begin = t * chunk;
    partial[t] = kernel(x + begin, std::min(chunk, n - begin));
  });
  float sum = partial[0];
  for (std::size_t t = 1; t < tasks; ++t) sum += partial[t];
  return sum;
}

}  // namespace

std::string_view to_string(SumAlgo algo) {
  switch (algo) {
    case SumAlgo::serial:
      return "serial";
    case SumAlgo::pairwise:
      return "pairwise";
    case SumAlgo::blocked:
      return "blocked";
  }
  return "?";
}

void sum_run(const SumPlan& plan, cpu::ThreadPool& pool, SumArgs& args) {
  const float* x = args.x.data();
  switch (plan.algo) {
    case SumAlgo::serial:
      args.result = serial(x, args.n);
      return;
    case SumAlgo::pairwise:
      args.result = pairwise(x, args.n);
      return;
    case SumAlgo::blocked:
      args.result = blocked_threaded(pool, plan.acc, plan.threads, x, args.n);
      return;
  }
  throw std::invalid_argument("sum: unknown algorithm");
}

void sum_reference(SumArgs& args) {
  double sum = 0.0;
  for (std::size_t i = 0; i < args.n; ++i) sum += args.x[i];
  args.result = static_cast<float>(sum);
}

SumArgs make_sum_args(std::size_t n, int input_set) {
  SumArgs args;
  args.n = n;
  args.x.resize(n);
  std::mt19937 rng = input_rng(0x5eed0004u, input_set);
  fill_uniform(args.x, rng, -1.0f, 2.0f);  // uniform in [-1, 1)
  return args;
}

std::unique_ptr<Op<SumArgs>> make_sum_op_typed(cpu::ThreadPool& pool) {
  auto op = std::make_unique<Op<SumArgs>>("sum", 1);
  op->describe(
        "sum of n f32 values: serial, pairwise, or 4-16 interleaved accumulators over "
        "1..N threads with the partial sums combined in a fixed order")
      .key_field({"n", Value::Type::integer, "number of values", std::nullopt, 1, kSumMaxN})
      .key_field({"dtype", Value::Type::string, "element type (f32 only)", Value("f32"), 0, 0})
      .key({"n", "dtype"},
           [](const SumArgs& a) {
             return KeyValues{static_cast<std::int64_t>(a.n), "f32"};
           })
      .inputs([](const Key& key, int input_set) {
        require_f32(key, "sum");
        return make_sum_args(key_dimension(key, "n", "sum", kSumMaxN), input_set);
      })
      .outputs([](SumArgs& a) {
        return std::vector<OutputView>{OutputView::of(std::span<float>(&a.result, 1))};
      })
      .reference([](SumArgs& a) { sum_reference(a); })
      // The inputs are uniform in [-1, 1): the sum stays near sqrt(n/3) (no stagnation, unlike
      // values in [0, 1), where a float running sum stops growing at 2^24 and the serial
      // default would be 50-90% off from n = 2^26 on), and a float running sum's error grows
      // like n ulps of 1 (measured over six seeds and every prefix up to 2^28: at most
      // 1.2·n·2^-24). The tolerance, 4·n·2^-24 absolute, lets the serial default pass at
      // every n. It cannot catch a single skipped element once n·2^-22 exceeds that element
      // (n ≳ 10^5 for typical values): what it catches there is a lost chunk, a wrong sign,
      // garbage or NaN.
      .tolerance([](const Key& key) {
        const double n = static_cast<double>(key.integer("n"));
        return Tolerance{0x1p-22 * n, 0x1p-22};
      });

  CandidateList<SumArgs> candidates(*op);
  const auto add = [&](const SumPlan& plan, Numerics numerics) {
    std::string name(to_string(plan.algo));
    Config config;
    config.set("algo", name);
    if (plan.algo == SumAlgo::blocked) {
      name += "_a" + std::to_string(plan.acc) + "_t" + std::to_string(plan.threads);
      config.set("acc", plan.acc).set("threads", plan.threads);
    }
    candidates.add(std::move(name), std::move(config), numerics,
                   [plan, &pool](SumArgs& a) { sum_run(plan, pool, a); });
  };
  add({SumAlgo::serial, 1, 1}, Numerics::bitwise);
  add({SumAlgo::pairwise, 1, 1}, Numerics::reassociates);
  for (int acc : {4, 8, 16}) add({SumAlgo::blocked, acc, 1}, Numerics::reassociates);
  for (int threads : thread_counts(pool)) {
    if (threads == 1) continue;
    for (int acc : {8, 16}) add({SumAlgo::blocked, acc, threads}, Numerics::reassociates);
  }
  op->work(sum_work);  // the cost model's view of each candidate (work_models.cpp)
  op->default_candidate("serial");
  return op;
}

std::unique_ptr<OpBase> make_sum_op(cpu::ThreadPool& pool) {
  return make_sum_op_typed(pool);
}

}  // namespace tunekit::kernels
