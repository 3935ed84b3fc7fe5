#include "tuner/confirmation_size.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tunekit::detail {
namespace {

constexpr int kSlackPairs = 2;

// One sample's relative sigma in a window (sigma ~ 1.4826 MAD).
double relative_sigma(const TimingResult& t) {
  return t.median > 0 ? 1.4826 * t.mad / t.median : 0.0;
}

std::string number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3g", x);
  return buffer;
}

}  // namespace

ConfirmationSize confirmation_pairs(const CandidateReport& winner, const CandidateReport& fallback,
                                    const ConfirmationSizing& s) {
  ConfirmationSize out;
  // Two pairs over the scoring minimum: one dropped pair (a zero or non-finite ratio) must not
  // leave a clear winner unscored.
  const int floor_pairs = std::min(s.min_pairs + kSlackPairs, s.max_pairs);
  out.launches = std::max(1, s.max_launches);
  if (!winner.timing || !fallback.timing || !(winner.score > 0) || !(fallback.score > 0)) {
    out.pairs = s.max_pairs;
    out.why = "no clean readings to size it by: the most pairs";
    return out;
  }
  const double ratio = winner.score / fallback.score;
  const double bar = 1 / (1 + s.tie_band);
  if (!(ratio < bar)) {
    out.pairs = s.max_pairs;
    out.why =
        "the measured ratio " + number(ratio) + " is not under " + number(bar) + ": the most pairs";
    return out;
  }
  const double noise = std::hypot(relative_sigma(*winner.timing), relative_sigma(*fallback.timing));
  const double needed = std::pow(2 * 1.96 * 1.2533 * noise * ratio / (bar - ratio), 2);
  int pairs = static_cast<int>(std::min<double>(s.max_pairs, std::ceil(needed)));
  pairs = std::clamp(pairs, floor_pairs, s.max_pairs);
  if (floor_pairs > 0)
    out.launches = static_cast<int>(std::clamp(std::ceil(out.launches * needed / floor_pairs), 1.0,
                                               static_cast<double>(out.launches)));
  out.why = "ratio " + number(ratio) + " against the bar " + number(bar) + ", pair noise " +
            number(noise) + ": " + std::to_string(pairs) + " pairs, each side the best of " +
            std::to_string(out.launches) + " launch" + (out.launches == 1 ? "" : "es");
  if (pairs > floor_pairs && s.share > 0 && s.pair_seconds > 0 && s.search_seconds > 0) {
    const double fit = std::floor(s.share * s.search_seconds / s.pair_seconds);
    const int capped = std::max(floor_pairs, static_cast<int>(std::min<double>(pairs, fit)));
    if (capped < pairs) {
      out.why += ", capped to " + std::to_string(capped) + " (" + number(s.share) +
                 " of the search's " + number(s.search_seconds) + " s)";
      pairs = capped;
    }
  }
  out.pairs = pairs;
  return out;
}

}  // namespace tunekit::detail
