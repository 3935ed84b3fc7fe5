// The final race (DecideOptions::finalists; docs/guide.md "How a search decides", step 4).
// The search's best readings are the luckiest of many windows (the winner's curse), each
// taken at its own minute on a machine whose speed drifts by more than the tie band over
// minutes (docs/performance.md "how far this host drifts"): the point a window read 1.2x slow
// during a slow spell loses to a lesser one read during a fast spell. Timing the few best again
// in interleaved rounds gives them the same minutes, and the decision reads those readings only.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tuner/decision.hpp"
#include "tuner/schedule.hpp"
#include "tuner/search_context.hpp"

namespace tunekit::detail {

std::vector<std::size_t> SearchContext::finalists() const {
  std::vector<const CandidateReport*> ok;
  for (const CandidateReport& c : r_.candidates)
    if (c.outcome.ok() && c.timing && std::isfinite(c.score) && c.score > 0) ok.push_back(&c);
  const auto most = static_cast<std::size_t>(std::max(0, options_.decide.finalists));
  if (ok.size() < 2 || most < 2) return {};
  // Called after every finish() (the budget's projection): only the best `most` are ordered.
  const auto faster = [](const CandidateReport* a, const CandidateReport* b) {
    return a->score < b->score || (a->score == b->score && a->index < b->index);
  };
  const auto top = ok.begin() + static_cast<std::ptrdiff_t>(std::min(most, ok.size()));
  std::partial_sort(ok.begin(), top, ok.end(), faster);
  const double line = ok.front()->score * (1 + options_.decide.finalist_band);
  std::vector<std::size_t> out;
  for (auto c = ok.begin(); c != top; ++c)
    if ((*c)->score <= line) out.push_back((*c)->index);
  // The default wins its ties (step 5): within the band it races too, past the count.
  const CandidateReport* def = find(r_.default_index);
  if (def && def->outcome.ok() && def->timing && def->score > 0 && def->score <= line &&
      std::find(out.begin(), out.end(), r_.default_index) == out.end())
    out.push_back(r_.default_index);
  // The library the pick must not be slower than (step 7) races too, past the count and
  // whatever its reading: the search read it once, first of all, and a slow spell then put it
  // outside the band (read 2x slow at sgemm 1024³ in two suite runs) though it was the fastest.
  // Second, after the best, so a budget that fits few finalists races it. Only in a race that
  // runs anyway: finalists raced together already are left to the pairing.
  if (const std::optional<std::size_t> anchor = best_anchor();
      anchor && out.size() >= 2 && std::find(out.begin(), out.end(), *anchor) == out.end() &&
      !raced_already(out))
    out.insert(out.begin() + 1, *anchor);
  if (out.size() < 2) out.clear();
  return out;
}

bool SearchContext::raced_already(const std::vector<std::size_t>& points) const {
  if (points.empty()) return false;
  const auto first = race_of_.find(points.front());
  if (first == race_of_.end()) return false;
  return std::all_of(points.begin(), points.end(), [&](std::size_t i) {
    const auto it = race_of_.find(i);
    return it != race_of_.end() && it->second == first->second;
  });
}

void SearchContext::raced_together(std::span<const std::size_t> points) {
  ++races_;
  for (std::size_t i : points) race_of_[i] = races_;
}

void SearchContext::refresh(std::size_t index, TimingResult fresh) {
  CandidateReport& c = entry(index);
  c.search_score = c.score;
  c.timing = std::move(fresh);
  c.score = score(*c.timing);
  c.finalist = true;
}

double SearchContext::first_rounds_seconds(std::size_t index) const {
  // Racing's first rounds: min_samples (8) samples in windows of `round` (4), each window
  // prepared again, the first after the op's warmup.
  constexpr int kSamples = 8, kWindows = 2;
  const CandidateReport* c = find(index);
  if (!c || !c->timing) return 0;
  const int depth = std::max(1, c->timing->depth);
  const int warmup = timing_options(index).warmup;  // an op's own protocol included
  // A finalist not yet checked is checked if it leads a round (a window of two samples and its
  // checked calls, once per candidate): counted as its calls for each, as which will lead is
  // not known (only the leaders are checked).
  const bool checked = checked_.count(index) && checked_.at(index);
  const int checks = checked ? 0 : options_.measure.check_calls;
  return (kSamples * depth + warmup + kWindows * warmup_calls() + checks) * c->score +
         (checked ? 0 : more_sets_seconds(index, c->score)) +
         kWindows * (prepare_seconds() + window_overhead_.value());
}

SearchContext::Floor SearchContext::final_race_floor() const {
  const std::vector<std::size_t> points = finalists();
  if (points.empty() || raced_already(points)) return {};
  Floor f;
  for (std::size_t i : points) f.whole += first_rounds_seconds(i);
  // The fewest it runs with: the best and the next that fits (an anchor that does not is
  // passed over: fitting_finalists).
  double second = first_rounds_seconds(points[1]);
  if (points.size() > 2 && is_anchor(points[1]))
    second = std::min(second, first_rounds_seconds(points[2]));
  f.least = first_rounds_seconds(points[0]) + second;
  return f;
}

std::vector<std::size_t> SearchContext::fitting_finalists(const std::vector<std::size_t>& points,
                                                          double seconds) const {
  std::vector<std::size_t> fit;
  double sum = 0;
  for (std::size_t i : points) {
    const double cost = first_rounds_seconds(i);
    if (sum + cost > seconds) {
      // A library slower than the others is passed over where it does not fit (the anchor
      // pairing still judges it); the others race best first.
      if (is_anchor(i)) continue;
      break;
    }
    sum += cost;
    fit.push_back(i);
  }
  return fit;
}

void SearchContext::final_race(const std::function<bool(std::size_t, double)>& may_start,
                               const std::function<double()>& room) {
  FinalRace& race = r_.final_race;
  if (options_.decide.finalists == 0) {
    race.note = "off (finalists 0)";
    return;
  }
  std::vector<std::size_t> points = finalists();
  if (points.empty()) {
    race.note = "no second reading within the finalist band";
    return;
  }
  if (raced_already(points)) {
    race.note = "the finalists were raced together already";
    return;
  }
  if (const std::optional<std::size_t> pick =
          decide(r_.candidates, r_.default_index, options_.decide.tie_band))
    race.search_pick = entry(*pick).name;
  // From here the race spends the time held for it (the pairings' floors stay held): as many
  // finalists, in finalists() order (the best, the anchor, the next best…), as their first
  // rounds fit in.
  final_race_started_ = true;
  const double seconds = room();
  const std::size_t proposed = points.size();
  points = fitting_finalists(points, seconds);
  double projected = 0;
  for (std::size_t i : points) projected += first_rounds_seconds(i);
  options_.hooks.log.debug(fmt::format(
      "final race of {} {}: {} of {} finalists fit in {:.3g} s (their first rounds: {:.3g} s)",
      op_.name(), key_.text(), points.size(), proposed, seconds, projected));
  if (points.size() < 2) {
    race.note = "the budget left no time for it: the search's readings decide";
    return;
  }
  const double start = budget_now();
  make_final_race()->run(points, *this, may_start);
  race.seconds = budget_now() - start;
  options_.hooks.log.debug(
      fmt::format("final race of {} {}: took {:.3g} s", op_.name(), key_.text(), race.seconds));
  for (std::size_t i : points) race.finalists += find(i)->finalist;
  if (race.finalists == 0 && race.note.empty())
    race.note =
        "no finalist finished it cleanly (each failed, or its windows were contended): "
        "the search's readings decide";
}

}  // namespace tunekit::detail
