// The final race (DecideOptions::finalists; docs/guide.md "How a search decides", step 4).
// The search's best readings are the luckiest of many windows (the winner's curse), each
// taken at its own minute on a machine whose speed drifts by more than the tie band over
// minutes (docs/performance.md "how far this host drifts"): the point a window read 1.2x slow
// during a slow spell loses to a lesser one read during a fast spell. Timing the few best again
// in interleaved rounds gives them the same minutes, and the decision reads those readings only.
#include <algorithm>
#include <cmath>

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
  std::stable_sort(ok.begin(), ok.end(), [](const CandidateReport* a, const CandidateReport* b) {
    return a->score < b->score;
  });
  const double line = ok.front()->score * (1 + options_.decide.finalist_band);
  std::vector<std::size_t> out;
  for (const CandidateReport* c : ok)
    if (c->score <= line && out.size() < most) out.push_back(c->index);
  if (out.size() < 2) out.clear();
  return out;
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

SearchContext::Floor SearchContext::final_race_floor() const {
  const std::vector<std::size_t> points = finalists();
  if (points.empty()) return {};
  // Racing's first rounds: min_samples (8) samples in windows of `round` (4), each window
  // prepared again, the first after the op's warmup.
  constexpr int kSamples = 8, kWindows = 2;
  const TimingOptions& timing = options_.measure.timing;
  Floor f;
  for (std::size_t k = 0; k < points.size(); ++k) {
    const CandidateReport* c = find(points[k]);
    const int depth = std::max(1, c->timing->depth);
    const double seconds =
        (kSamples * depth + timing.warmup + kWindows * warmup_calls()) * c->score +
        kWindows * (prepare_seconds() + window_overhead_.value());
    f.whole += seconds;
    if (k < 2) f.least += seconds;
  }
  return f;
}

void SearchContext::final_race(const std::function<bool(std::size_t)>& may_start) {
  FinalRace& race = r_.final_race;
  if (options_.decide.finalists == 0) {
    race.note = "off (finalists 0)";
    return;
  }
  const std::vector<std::size_t> points = finalists();
  if (points.empty()) {
    race.note = "no second reading within the finalist band";
    return;
  }
  const auto same_race = [&](std::size_t i) {
    const auto it = race_of_.find(i), first = race_of_.find(points.front());
    return it != race_of_.end() && first != race_of_.end() && it->second == first->second;
  };
  if (std::all_of(points.begin(), points.end(), same_race)) {
    race.note = "the finalists were raced together already";
    return;
  }
  if (const std::optional<std::size_t> pick =
          decide(r_.candidates, r_.default_index, options_.decide.tie_band))
    race.search_pick = entry(*pick).name;
  // From here the race spends the time held for it (the pairings' floors stay held).
  final_race_started_ = true;
  const double start = budget_now();
  const std::vector<PointResult> results = make_final_race()->run(points, *this, may_start);
  race.seconds = budget_now() - start;
  for (std::size_t i : points) race.finalists += find(i)->finalist;
  if (race.finalists == 0)
    race.note =
        "the budget stopped it before every finalist had a window: the search's readings "
        "decide";
}

}  // namespace tunekit::detail
