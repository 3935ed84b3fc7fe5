// Helpers shared by the built-in CPU kernels: seeded inputs, key checks, candidate lists.
#include "common.hpp"

#include "tunekit/errors.hpp"

namespace tunekit::kernels {

void fill_uniform(std::vector<float>& v, std::mt19937& rng, float lo, float width) {
  for (float& x : v) x = lo + static_cast<float>(rng() >> 8) * 0x1p-24f * width;
}

std::mt19937 input_rng(std::uint32_t seed, int input_set) {
  // A golden-ratio step per set: far from the other ops' seeds (0x5eed000N), never seed itself.
  return std::mt19937(seed + 0x9e3779b9u * static_cast<std::uint32_t>(input_set));
}

std::size_t key_dimension(const Key& key, std::string_view field, std::string_view op,
                          std::int64_t max) {
  const std::int64_t v = key.integer(field);
  if (v < 1 || v > max) {
    throw UsageError(std::string(op) + ": " + std::string(field) + "=" + std::to_string(v) +
                     " is outside 1.." + std::to_string(max));
  }
  return static_cast<std::size_t>(v);
}

void require_f32(const Key& key, std::string_view op) {
  if (const Value* dtype = key.find("dtype"); dtype && *dtype != Value("f32")) {
    throw UsageError(std::string(op) + ": only dtype=f32 is implemented");
  }
}

void check_rows_cols_key(const Key& key, std::string_view op, std::int64_t max_dim,
                         std::int64_t max_elements) {
  require_f32(key, op);
  const std::size_t rows = key_dimension(key, "rows", op, max_dim);
  const std::size_t cols = key_dimension(key, "cols", op, max_dim);
  if (rows * cols > static_cast<std::size_t>(max_elements)) {
    throw UsageError(std::string(op) + ": rows*cols=" + std::to_string(rows * cols) +
                     " exceeds the limit of " + std::to_string(max_elements) + " elements");
  }
}

std::vector<int> thread_counts(const cpu::ThreadPool& pool) {
  const int all = std::max(1, pool.size());
  std::vector<int> counts{1};
  if (all > 2) counts.push_back(all / 2);
  if (all > 1) counts.push_back(all);
  return counts;
}

std::vector<std::size_t> rows_per_task_choices(int threads) {
  return threads == 1 ? std::vector<std::size_t>{16} : std::vector<std::size_t>{1, 4, 16};
}

Candidate make_candidate(std::string name, Config config, Numerics numerics) {
  Candidate c;
  c.name = std::move(name);
  c.config = std::move(config);
  c.numerics = numerics;
  return c;
}

}  // namespace tunekit::kernels
