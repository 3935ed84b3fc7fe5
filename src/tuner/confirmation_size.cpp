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

// Pairs past the floor only while they fit in what the earlier pairings left of the share.
int within_share(int pairs, int floor_pairs, const ConfirmationSizing& s, std::string& why) {
  const double pair = s.pair_seconds;
  if (pairs <= floor_pairs || !(s.share > 0) || !(pair > 0) || !(s.search_seconds > 0))
    return pairs;
  const double room = std::max(0.0, s.share * s.search_seconds - s.paired_seconds);
  const double fit = std::floor(room / pair);
  const int capped = std::max(floor_pairs, static_cast<int>(std::min<double>(pairs, fit)));
  if (capped < pairs)
    why += ", capped to " + std::to_string(capped) + " (" + number(s.share) + " of the search's " +
           number(s.search_seconds) + " s, less " + number(s.paired_seconds) +
           " s of earlier pairs)";
  return capped;
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
  const double bar = s.bar > 0 ? s.bar : 1 / (1 + s.tie_band);
  const double distance = std::abs(bar - ratio);
  int pairs = s.max_pairs;
  if (!(distance > 0) || !std::isfinite(ratio)) {
    out.why = "the measured ratio " + number(ratio) + " is on the bar " + number(bar) +
              ": the most pairs";
  } else {
    const double noise =
        std::hypot(relative_sigma(*winner.timing), relative_sigma(*fallback.timing));
    const double needed = std::pow(2 * 1.96 * 1.2533 * noise * ratio / distance, 2);
    pairs = static_cast<int>(std::min<double>(s.max_pairs, std::ceil(needed)));
    pairs = std::clamp(pairs, floor_pairs, s.max_pairs);
    if (floor_pairs > 0)
      out.launches = static_cast<int>(std::clamp(std::ceil(out.launches * needed / floor_pairs),
                                                 1.0, static_cast<double>(out.launches)));
    out.why = "ratio " + number(ratio) + " against the bar " + number(bar) + ", pair noise " +
              number(noise) + ": " + std::to_string(pairs) + " pairs, each side " +
              std::to_string(out.launches) + " launch" + (out.launches == 1 ? "" : "es");
  }
  out.pairs = within_share(pairs, floor_pairs, s, out.why);
  return out;
}

}  // namespace tunekit::detail
