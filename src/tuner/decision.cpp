#include "tuner/decision.hpp"

#include <cmath>
#include <limits>
#include <tuple>

namespace tunekit::detail {

bool final_race_ran(std::span<const CandidateReport> candidates) {
  for (const CandidateReport& c : candidates)
    if (c.finalist && c.outcome.ok()) return true;
  return false;
}

std::optional<std::size_t> decide(std::span<const CandidateReport> candidates,
                                  std::size_t default_index, double tie_band) {
  double best = std::numeric_limits<double>::infinity();
  // A non-finite score (NaN compares false with everything) never takes part: it would pass
  // the tie-band test below. Measured scores are finite; a model score may not be.
  const bool finals = final_race_ran(candidates);
  const auto usable = [finals](const CandidateReport& c) {
    return c.outcome.ok() && std::isfinite(c.score) && (c.finalist || !finals);
  };
  for (const auto& c : candidates)
    if (usable(c) && c.score < best) best = c.score;
  if (best == std::numeric_limits<double>::infinity()) return std::nullopt;

  const double limit = best * (1 + tie_band);
  const CandidateReport* pick = nullptr;
  for (const auto& c : candidates) {
    if (!usable(c) || c.score > limit) continue;
    if (c.index == default_index) return c.index;
    if (!pick || std::tie(c.preference, c.name) < std::tie(pick->preference, pick->name)) pick = &c;
  }
  return pick->index;
}

PairedVerdict paired_verdict(const stats::PairedScore& s, double bar) {
  if (!(s.ratio > 0))
    return {true, "no ratio from the pairs (" + s.why + "): the measured winner stands"};
  const std::string noisy = s.scored ? "" : " (" + s.why + ")";
  if (s.ratio < bar)
    return {true, "the winner's paired ratio " + std::to_string(s.ratio) + " is under " +
                      std::to_string(bar) + noisy};
  return {false, "the winner's paired ratio " + std::to_string(s.ratio) + " is not under " +
                     std::to_string(bar) + noisy};
}

}  // namespace tunekit::detail
