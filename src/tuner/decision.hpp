// Deciding among measured candidates (DESIGN §6): a pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

#include "tunekit/report.hpp"

namespace tunekit::detail {

// Among candidates with status ok, those whose score is within tie_band of the best are
// tied; the default wins a tie, then the lower preference rank, then the name. nullopt when
// no candidate is ok.
std::optional<std::size_t> decide(std::span<const CandidateReport> candidates,
                                  std::size_t default_index, double tie_band);

}  // namespace tunekit::detail
