// How many A B B A pairs the paired confirmation runs (issue #17 item 4): sized by the gap the
// main windows measured between the winner and the default, in units of their noise, and
// capped by a share of the search's time.
#pragma once

#include <string>

#include "tunekit/report.hpp"

namespace tunekit::detail {

struct ConfirmationSizing {
  int min_pairs = 8;       // a confirmation with fewer pairs is no confirmation
  int max_pairs = 16;      // DecideOptions::confirm_pairs
  double tie_band = 0.02;  // the winner must be surely under 1 / (1 + tie_band)
  double bar = 0;          // the ratio the pairs are judged against (0: 1 / (1 + tie_band))
  // One pair's projected cost at max_launches a side (0: unknown, no cap): pairs past the
  // floor are sized only where n is large enough to take every launch.
  double pair_seconds = 0;
  double search_seconds = 0;  // what the search has spent so far, earlier pairings excluded
  double paired_seconds = 0;  // what earlier pairings of this decision have spent
  double share = 0.25;        // pairs beyond min_pairs only within share x search_seconds
  int max_launches = 5;       // each side of a pair: at most this many launches
};

struct ConfirmationSize {
  int pairs = 0;
  int launches = 5;  // each side of a pair: this many launches (batches)
  std::string why;   // how the number was reached, for the debug log and the report
};

// The pairs that would put the winner's paired ratio surely on one side of the bar (under
// 1 / (1 + tie_band) for a confirmation; the tie pairing's 1 + tie_band / 2 either way): with r
// the main windows' winner / rival and s the relative noise of one pair's ratio (each side's
// sigma ~ 1.4826 MAD / median, combined), the paired interval r +- 1.96 x 1.2533 x s x r /
// sqrt(n) clears the bar once n >= (2 x 1.96 x 1.2533 x s x r / |bar - r|)^2 (a margin of 2: a
// pair's two sides are short windows, noisier than the main ones). Clamped to [min_pairs + 2,
// max_pairs] (two spare pairs: a dropped one must not leave the winner unscored); pairs past
// that floor only while they fit in what is left of share x search_seconds after the earlier
// pairings of the decision (all the pairings together stay within the share, their floors
// excepted), whatever sized them. A winner on the bar gets max_pairs (within that share); one
// without a clean reading max_pairs (nothing to cost them by: uncapped).
// Launches per side: n is already the pairs single launches need (s is one sample's noise),
// so the k launches of each side (their median from three, paired_confirmation.cpp) are a
// guard against stalls, worth their cost only as n nears the
// floor: k = ceil(max_launches x n / floor), clamped to [1, max_launches]. A gap of many noise
// units (a winner several times faster than a slow default) costs one launch a side.
ConfirmationSize confirmation_pairs(const CandidateReport& winner, const CandidateReport& fallback,
                                    const ConfirmationSizing& sizing);

}  // namespace tunekit::detail
