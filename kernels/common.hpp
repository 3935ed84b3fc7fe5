// Helpers shared by the built-in CPU kernels (sgemm, softmax, rmsnorm, sum): task splitting
// over the thread pool, lane sums, seeded inputs, key checks and candidate registration.
// Private to kernels/.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/candidate.hpp"
#include "tunekit/cpu.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/value.hpp"

namespace tunekit::kernels {

inline std::size_t ceil_div(std::size_t x, std::size_t by) {
  return (x + by - 1) / by;
}
inline std::size_t round_up(std::size_t x, std::size_t to) {
  return ceil_div(x, to) * to;
}

// Runs fn(task) for every task; inline when one thread is asked for or there is one task.
template <class Fn>
void run_tasks(cpu::ThreadPool& pool, std::size_t tasks, int threads, const Fn& fn) {
  if (threads <= 1 || tasks <= 1) {
    for (std::size_t t = 0; t < tasks; ++t) fn(t);
    return;
  }
  pool.parallel_for(tasks, static_cast<int>(std::min<std::size_t>(tasks, threads)), fn);
}

// Runs fn(row) for every row in [0, rows), `per` consecutive rows to a task, over `threads`
// threads (see run_tasks). per must be >= 1.
template <class Fn>
void run_row_tasks(cpu::ThreadPool& pool, std::size_t rows, std::size_t per, int threads,
                   const Fn& fn) {
  run_tasks(pool, ceil_div(rows, per), threads, [&](std::size_t t) {
    const std::size_t end = std::min(rows, (t + 1) * per);
    for (std::size_t r = t * per; r < end; ++r) fn(r);
  });
}

// Sums L lanes as a fixed tree (lane l += lane l + width, halving), independent of the data.
template <int L>
float combine_lanes(float (&lanes)[L]) {
  for (int width = L / 2; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) lanes[l] += lanes[l + width];
  }
  return lanes[0];
}

// Uniform in [lo, lo + width): 24 random bits scaled, independent of the standard library's
// distributions, so the same seed gives the same values everywhere. Exact in float for
// [-1, 1) (lo -1, width 2) and [0.5, 1.5) (lo 0.5, width 1).
void fill_uniform(std::vector<float>& v, std::mt19937& rng, float lo, float width);
// The generator of an op's input set: set 0 is seeded with `seed` itself (the values tuning
// has always timed on, so stored choices and tests keep them), set 1 with a seed derived from
// it (other values of the same distribution, for a second validation).
std::mt19937 input_rng(std::uint32_t seed, int input_set);

// The integer key field `field`, checked to lie in 1..max; a UsageError naming `op` otherwise.
std::size_t key_dimension(const Key& key, std::string_view field, std::string_view op,
                          std::int64_t max);
// A UsageError naming `op` when the key's dtype is present and not f32.
void require_f32(const Key& key, std::string_view op);
// A rows × cols f32 key: the dtype, both dimensions (1..max_dim) and the element budget
// (rows·cols <= max_elements), refused before anything is allocated.
void check_rows_cols_key(const Key& key, std::string_view op, std::int64_t max_dim,
                         std::int64_t max_elements);

// The thread counts candidates are built for: 1, half the pool (above 2 threads), the pool.
std::vector<int> thread_counts(const cpu::ThreadPool& pool);
// The rows_per_task values a row-parallel candidate is built for at `threads`: one thread
// runs its rows in order, so rows_per_task changes nothing there and only 16 is tried.
std::vector<std::size_t> rows_per_task_choices(int threads);

Candidate make_candidate(std::string name, Config config, Numerics numerics);

// Adds an op's candidates, each with the next preference (0, 1, 2, ...): the order they are
// added in is the order ties are broken in.
template <class Args>
class CandidateList {
 public:
  explicit CandidateList(Op<Args>& op) : op_(op) {}

  void add(Candidate c, typename Op<Args>::Fn fn) {
    c.preference = next_preference_++;
    op_.candidate(std::move(c), std::move(fn));
  }
  void add(std::string name, Config config, Numerics numerics, typename Op<Args>::Fn fn) {
    add(make_candidate(std::move(name), std::move(config), numerics), std::move(fn));
  }

 private:
  Op<Args>& op_;
  int next_preference_ = 0;
};

}  // namespace tunekit::kernels
