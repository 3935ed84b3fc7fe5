#include "tuner/decision_confidence.hpp"

#include <algorithm>
#include <cmath>

#include "tuner/decision.hpp"

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

// What the final pairings measured for the winner, where it was one of their sides.
void pairings(const TuneReport& r, DecisionConfidence& d) {
  if (const auto& p = r.anchor_pairing) {
    if (r.winner_name == p->rival) d.anchor = p->rival;
    // Only a pairing that measured a ratio speaks for a winner that stood.
    if (r.winner_name == p->candidate && p->kept_candidate && p->ratio > 0) {
      d.anchor = p->rival;
      d.anchor_paired_ratio = p->ratio;
      d.anchor_paired_high = p->ratio_high;
    }
  }
  if (const auto& p = r.tie_pairing; p && p->ratio > 0) {
    // candidate / rival in pairs; a rival that took the decision is the winner: rival / candidate.
    // A candidate kept by the pairs (not because its rival then failed its checked calls).
    if (r.winner_name == p->candidate && p->kept_candidate && p->ratio < 1 + r.tie_band / 2) {
      d.tie_rival = p->rival;
      d.tie_paired_ratio = p->ratio;
    } else if (r.winner_name == p->rival && !p->kept_candidate) {
      d.tie_rival = p->candidate;
      d.tie_paired_ratio = 1 / p->ratio;
    }
  }
}

// A winner whose runner-up read faster: which rule kept it.
const char* slower_winner_verdict(const TuneReport& r, const DecisionConfidence& d) {
  if (d.tie_rival == d.runner_up && d.tie_paired_ratio > 0)
    return "kept by the tie order (the pairs put the runner-up less than half the band ahead)";
  // The library anchor took the decision from the runner-up in pairs (step 7).
  if (const auto& p = r.anchor_pairing; p && !p->kept_candidate && r.winner_name == p->rival &&
                                        p->candidate == d.runner_up && p->ratio > 0)
    return "taken by the library anchor in pairs (the runner-up not surely faster than it)";
  return "kept by the decision rules (runner-up faster)";
}

}  // namespace

std::optional<DecisionConfidence> decision_confidence(const TuneReport& r) {
  const CandidateReport* winner = r.find(r.winner);
  if (!winner || !measured_cleanly(*winner)) return std::nullopt;
  const CandidateReport* runner_up = nullptr;
  // After a final race, the runner-up is a finalist (the others' readings are of other minutes).
  const bool finals = final_race_ran(r.candidates);
  for (const CandidateReport& c : r.candidates) {
    if (c.index == r.winner || !measured_cleanly(c) || (finals && !c.finalist)) continue;
    if (!runner_up || c.score < runner_up->score) runner_up = &c;
  }
  DecisionConfidence d;
  d.waited_share = waited_share(r);
  pairings(r, d);
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
  d.verdict = d.advantage < 1                    ? slower_winner_verdict(r, d)
              : d.advantage_low > 1 + r.tie_band ? "clear"
              : d.advantage_low > 1              ? "in the tie band"
                                                 : "within noise";
  return d;
}

}  // namespace tunekit::detail
