// Deciding among measured candidates (DESIGN §6): a pure function.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "tunekit/report.hpp"
#include "tunekit/stats.hpp"

namespace tunekit::detail {

// Whether a final race re-timed some of `candidates` (SearchContext::final_race): then only
// its finalists take part in the decision — the others' readings are of other minutes.
bool final_race_ran(std::span<const CandidateReport> candidates);

// Among candidates with status ok (once a final race ran, its finalists only), those whose
// score is within tie_band of the best are tied; the default wins a tie, then the lower
// preference rank, then the name. nullopt when no candidate is ok.
std::optional<std::size_t> decide(std::span<const CandidateReport> candidates,
                                  std::size_t default_index, double tie_band);

// Whether a measured winner stands against the rival it was paired with (A B B A, `pairs`:
// winner / rival). Both are validated candidates, so the verdict is the better estimate, not
// the safe side: the pairs' median ratio (a drift hits both sides of a pair alike), even when
// the pairs are too noisy to bound it. The winner stands when that median is under `bar`, and
// when too few pairs gave a ratio (nothing learned). Against a library anchor the bar is
// 1 / (1 + tie band) (within the band the library stands); against a tied rival of the same
// kind, 1 + tie band / 2 (the tie order stands unless the rival is measurably faster).
struct PairedVerdict {
  bool winner_stands = false;
  std::string why;
};
PairedVerdict paired_verdict(const stats::PairedScore& pairs, double bar);

}  // namespace tunekit::detail
