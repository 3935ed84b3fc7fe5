#include "tuner/decision.hpp"

#include <limits>
#include <tuple>

namespace tunekit::detail {

std::optional<std::size_t> decide(std::span<const CandidateReport> candidates,
                                  std::size_t default_index, double tie_band) {
  double best = std::numeric_limits<double>::infinity();
  for (const auto& c : candidates)
    if (c.outcome.ok() && c.score < best) best = c.score;
  if (best == std::numeric_limits<double>::infinity()) return std::nullopt;

  const double limit = best * (1 + tie_band);
  const CandidateReport* pick = nullptr;
  for (const auto& c : candidates) {
    if (!c.outcome.ok() || c.score > limit) continue;
    if (c.index == default_index) return c.index;
    if (!pick || std::tie(c.preference, c.name) < std::tie(pick->preference, pick->name)) pick = &c;
  }
  return pick->index;
}

}  // namespace tunekit::detail
