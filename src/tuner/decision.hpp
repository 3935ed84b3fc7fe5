// Deciding among measured candidates (DESIGN §6): a pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "tunekit/report.hpp"
#include "tunekit/stats.hpp"

namespace tunekit::detail {

// Among candidates with status ok, those whose score is within tie_band of the best are
// tied; the default wins a tie, then the lower preference rank, then the name. nullopt when
// no candidate is ok.
std::optional<std::size_t> decide(std::span<const CandidateReport> candidates,
                                  std::size_t default_index, double tie_band);

// Whether a measured winner stands against the library anchor it was paired with (A B B A,
// `pairs`: winner / anchor). Both are validated candidates, so the verdict is the better
// estimate, not the safe side: the pairs' median ratio (a drift hits both sides of a pair
// alike), even when the pairs are too noisy to bound it; the winner stands when that median
// is under 1 / (1 + tie_band) — within the band the library stands — and when too few pairs
// gave a ratio (nothing learned).
struct AnchorVerdict {
  bool winner_stands = false;
  std::string why;
};
AnchorVerdict anchor_verdict(const stats::PairedScore& pairs, double tie_band);

}  // namespace tunekit::detail
