// How sure a measured decision is (issue #17, TuneReport::confidence).
#pragma once

#include <optional>

#include "tunekit/report.hpp"

namespace tunekit::detail {

// The winner of `report` against its runner-up: each median's standard error is taken from
// its window's MAD (sigma ~ 1.4826 MAD, the median's error ~ 1.2533 sigma / sqrt(samples)),
// and the ratio's lower bound sets the runner-up 1.96 errors faster and the winner 1.96
// slower; with what the anchor and tie pairings measured for the winner (the default's
// confirmation is SearchContext's to add). nullopt when the winner was not measured cleanly
// (nothing was decided by timing).
std::optional<DecisionConfidence> decision_confidence(const TuneReport& report);

}  // namespace tunekit::detail
