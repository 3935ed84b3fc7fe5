// Initial designs shared by the strategies: sized by the budget, prior knowledge first.
#include "search/initial_design.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "search/strategies.hpp"

namespace tunekit::detail {

std::size_t design_size(const std::optional<std::size_t>& budget, std::size_t most) {
  if (!budget) return most;
  const auto n = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(*budget)) / 2));
  return std::clamp<std::size_t>(n + 1, std::min<std::size_t>(2, most), most);
}

std::vector<std::size_t> model_ranked(const SearchPrior& prior, std::size_t count) {
  std::vector<std::size_t> scored;
  for (std::size_t i = 0; i < prior.model_seconds.size(); ++i)
    if (std::isfinite(prior.model_seconds[i])) scored.push_back(i);
  const std::size_t keep = std::min(count, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(keep),
                    scored.end(), [&](std::size_t a, std::size_t b) {
                      const double sa = prior.model_seconds[a], sb = prior.model_seconds[b];
                      return sa != sb ? sa < sb : a < b;
                    });
  scored.resize(keep);
  return scored;
}

std::vector<std::size_t> initial_design(const Enumeration& space, const History& history,
                                        const SearchPrior& prior, std::size_t count, Rng& rng) {
  std::vector<std::size_t> out;
  std::vector<bool> taken(space.size(), false);
  auto take = [&](std::size_t i) {
    if (out.size() >= count || i >= space.size() || history.evaluated(i) || taken[i]) return;
    taken[i] = true;
    out.push_back(i);
  };
  if (prior.default_index) take(*prior.default_index);
  for (std::size_t i : model_ranked(prior, count / 2)) take(i);

  // (parameter, value) pairs already seen, in the history or in the design.
  const std::vector<Parameter>& params = space.parameters();
  std::vector<std::size_t> offset(params.size() + 1, 0);
  for (std::size_t g = 0; g < params.size(); ++g)
    offset[g + 1] = offset[g] + params[g].values.size();
  std::vector<bool> covered(offset.back(), false);
  auto cover = [&](std::size_t i) {
    const std::span<const std::uint32_t> p = space.point(i);
    for (std::size_t g = 0; g < p.size(); ++g) covered[offset[g] + p[g]] = true;
  };
  for (const Evaluation& e : history.evaluations()) cover(e.index);
  for (std::size_t i : out) cover(i);

  while (out.size() < count && history.size() + out.size() < space.size()) {
    std::optional<std::size_t> pick;
    std::size_t pick_gain = 0;
    for (int c = 0; c < 32; ++c) {
      const std::optional<std::size_t> i = random_unevaluated(history, rng);
      if (!i || taken[*i]) continue;
      const std::span<const std::uint32_t> p = space.point(*i);
      std::size_t gain = 0;
      for (std::size_t g = 0; g < p.size(); ++g) gain += covered[offset[g] + p[g]] ? 0 : 1;
      if (!pick || gain > pick_gain) {
        pick = *i;
        pick_gain = gain;
      }
    }
    if (!pick) {  // the draws kept hitting the design: take the first free point
      for (std::size_t i = 0; i < space.size() && !pick; ++i)
        if (!history.evaluated(i) && !taken[i]) pick = i;
      if (!pick) break;
    }
    take(*pick);
    cover(*pick);
  }
  return out;
}

std::optional<std::size_t> best_known(const History& history) {
  std::optional<std::size_t> best;
  double value = std::numeric_limits<double>::infinity();
  for (const Evaluation& e : history.evaluations())
    if (std::isfinite(e.value) && e.value < value) {
      value = e.value;
      best = e.index;
    }
  return best;
}

}  // namespace tunekit::detail
