#include "tuner/decision_confidence.hpp"

#include <algorithm>
#include <cmath>

namespace tunekit::detail {

namespace {

// The standard error of a window's median, from its MAD and sample count.
double median_error(const TimingResult& t) {
  const double n = std::max<double>(1, static_cast<double>(t.samples.size()));
  return 1.2533 * 1.4826 * t.mad / std::sqrt(n);
}

bool measured_cleanly(const CandidateReport& c) {
  return c.outcome.ok() && c.timing && c.score > 0 && std::isfinite(c.score);
}

double waited_share(const TuneReport& r) {
  long long waited = 0, readings = 0;
  for (const CandidateReport& c : r.candidates) {
    if (!c.timing) continue;
    waited += c.timing->waited;
    readings += static_cast<long long>(c.timing->samples.size());
  }
  return readings > 0 ? static_cast<double>(waited) / static_cast<double>(readings) : 0;
}

}  // namespace

std::optional<DecisionConfidence> decision_confidence(const TuneReport& r) {
  const CandidateReport* winner = r.find(r.winner);
  if (!winner || !measured_cleanly(*winner)) return std::nullopt;
  const CandidateReport* runner_up = nullptr;
  for (const CandidateReport& c : r.candidates) {
    if (c.index == r.winner || !measured_cleanly(c)) continue;
    if (!runner_up || c.score < runner_up->score) runner_up = &c;
  }
  DecisionConfidence d;
  d.waited_share = waited_share(r);
  if (!runner_up) {
    d.verdict = "no runner-up";
    return d;
  }
  d.runner_up = runner_up->name;
  d.advantage = runner_up->score / winner->score;
  const double low = runner_up->score - 1.96 * median_error(*runner_up->timing);
  const double high = winner->score + 1.96 * median_error(*winner->timing);
  d.advantage_low = std::max(0.0, low / high);
  // A winner slower than its runner-up was kept by the rules, not by speed: the default (or
  // a preferred candidate) within the tie band, or the paired confirmation against the default.
  d.verdict = d.advantage < 1                    ? "kept by the decision rules (runner-up faster)"
              : d.advantage_low > 1 + r.tie_band ? "clear"
              : d.advantage_low > 1              ? "in the tie band"
                                                 : "within noise";
  return d;
}

}  // namespace tunekit::detail
