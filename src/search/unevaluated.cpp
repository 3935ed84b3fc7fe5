// Helpers the strategies share: drawing unevaluated points.
#include "search/strategies.hpp"

namespace tunekit::detail {

std::optional<std::size_t> random_unevaluated(const History& history, Rng& rng) {
  const std::size_t n = history.space_size();
  if (history.size() >= n) return std::nullopt;
  std::uniform_int_distribution<std::size_t> pick(0, n - 1);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::size_t i = pick(rng);
    if (!history.evaluated(i)) return i;
  }
  // Mostly evaluated: the k-th unevaluated index, k uniform.
  std::uniform_int_distribution<std::size_t> kth(0, n - history.size() - 1);
  std::size_t k = kth(rng);
  for (std::size_t i = 0; i < n; ++i) {
    if (history.evaluated(i)) continue;
    if (k-- == 0) return i;
  }
  return std::nullopt;
}

std::vector<std::size_t> unevaluated_neighbours(const Enumeration& space, const History& history,
                                                std::size_t index, Neighbourhood kind) {
  std::vector<std::size_t> out;
  for (std::size_t j : space.neighbours(index, kind))
    if (!history.evaluated(j)) out.push_back(j);
  return out;
}

Neighbourhood neighbourhood_option(StrategyOptions& options) {
  return options.word("neighbour", "hamming", {"hamming", "adjacent"}) == "adjacent"
             ? Neighbourhood::adjacent
             : Neighbourhood::hamming;
}

}  // namespace tunekit::detail
