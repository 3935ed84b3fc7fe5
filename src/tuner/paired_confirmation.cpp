// SearchContext's paired confirmations (src/tuner/search_context.hpp): the measured winner in
// A B B A windows against the fastest reading it was tied with, the op's best anchor (a library
// solution) and the default, each sized by the gap the main windows measured
// (confirmation_size.hpp).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "tunekit/errors.hpp"
#include "tunekit/stats.hpp"
#include "tuner/decision.hpp"
#include "tuner/search_context.hpp"

namespace tunekit::detail {
namespace {

// The anchors are compared on the search's own readings: a final race may have timed one of
// them again (its reading then of other minutes than the others').
double search_reading(const CandidateReport& c) {
  return c.finalist ? c.search_score : c.score;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// One side of a pair: the median of three or more launches, what a caller pays with two
// stalled launches ignored; the fastest of one or two, where a stall would be half the
// reading. Not the fastest of more: a kernel whose calls are not all alike (OpenBLAS at two
// threads, its helper's wake-ups) shows a fast call that is not its speed — sides of five read
// it at 44 µs where its windows and the sides' medians read 55 (docs/performance.md "Two
// threads, two machines"), and the anchor pairing kept it against a blocking 4 % faster.
// Under Statistic::min (the caller ranks by the fastest reading) the pairs do too.
double side_reading(const TimingResult& t, Statistic statistic) {
  return statistic == Statistic::min || t.samples.size() < 3 ? t.min : t.median;
}

// "launch_failed (message)", for the reasons the paired windows give.
std::string failure_text(const Outcome& o) {
  return std::string(to_string(o.status)) + " (" + o.message + ")";
}

// Why a paired score did not carry the winner under the bar, in words.
std::string not_surely_under(const stats::PairedScore& s, double bar) {
  if (!s.scored) return s.why;
  return "the winner's paired ratio " + std::to_string(s.ratio) + " (95 % bound " +
         std::to_string(s.ratio_high) + ") is not surely under " + std::to_string(bar);
}

}  // namespace

double SearchContext::pair_seconds(std::size_t a, std::size_t b, int launches) const {
  // One pair: `launches` launches (batches) of each side at the depth its window used, after
  // the single untimed call that restarts what a quiescing op stopped (trial_runner.cpp
  // window_phase).
  double pair = 0;
  for (std::size_t i : {a, b}) {
    const CandidateReport* c = find(i);
    if (!c || !c->timing) return 0;
    pair += (launches * std::max(1, c->timing->depth) + warmup_calls()) * c->score;
    pair += window_overhead_.value();
  }
  return pair;
}

double SearchContext::prepare_seconds() const {
  return acquisition_.count > 0 ? acquisition_.value() : admission_.value();
}

SearchContext::Floor SearchContext::floor_of(std::size_t a, std::size_t b) const {
  const double pair = pair_seconds(a, b, 1);
  if (pair <= 0) return {};
  const int least = options_.decide.paired.min_pairs;
  return {.whole = (least + 2) * pair + 2 * prepare_seconds(),
          .least = least * pair + 2 * prepare_seconds()};
}

double SearchContext::floor_seconds(std::size_t a, std::size_t b) const {
  return floor_of(a, b).whole;
}

bool SearchContext::is_anchor(std::size_t index) const {
  return std::find(anchors().begin(), anchors().end(), index) != anchors().end();
}

int SearchContext::affordable_pairs(std::size_t reference, int launches, double keep) const {
  const double pair = pair_seconds(reference, r_.winner, launches);
  if (!time_left_ || pair <= 0) return options_.decide.confirm_pairs;
  // Both sides are prepared again before the pairs.
  const double left = std::max(0.0, time_left_() - keep - 2 * prepare_seconds());
  return static_cast<int>(std::min<double>(options_.decide.confirm_pairs, std::floor(left / pair)));
}

ConfirmationSize SearchContext::sized_confirmation(std::size_t reference, double bar) const {
  const CandidateReport* ref = find(reference);
  const CandidateReport* win = find(r_.winner);
  if (!ref || !win) return {.pairs = options_.decide.confirm_pairs};
  ConfirmationSizing sizing;
  sizing.min_pairs = options_.decide.paired.min_pairs;
  sizing.max_pairs = options_.decide.confirm_pairs;
  sizing.tie_band = options_.decide.tie_band;
  sizing.bar = bar;
  sizing.pair_seconds = pair_seconds(reference, r_.winner, sizing.max_launches);
  // The search's time so far on the budget's clock (a replay's or a test's simulated one);
  // the pairings' own time is what the share is taken from, not what it is a share of.
  sizing.paired_seconds = paired_seconds_;
  sizing.search_seconds = budget_now() - started_ - paired_seconds_;
  sizing.share = options_.decide.confirm_share;
  const ConfirmationSize size = confirmation_pairs(*win, *ref, sizing);
  if (options_.hooks.log.enabled(LogLevel::debug))
    options_.hooks.log.debug("paired confirmation of " + win->name + " against " + ref->name +
                             ": " + size.why);
  return size;
}

std::optional<std::pair<std::size_t, Outcome>> SearchContext::paired_windows(
    std::size_t reference, int pairs, int launches, std::vector<double>& ref,
    std::vector<double>& cand) {
  const std::size_t def = r_.default_index;
  const std::size_t win = r_.winner;
  // Each side of a pair is one short window at the depth the main window used.
  auto window_for = [&](std::size_t i) {
    TimingOptions t = timing_options(def);  // the confirmation is not cut by the budget
    t.warmup = 0;
    t.repeats_floor = launches;  // each side of a pair: these launches (batches)
    t.max_runs = launches;
    t.sample_budget = 0;
    t.hopeless_against = 0;
    t.on_call = nullptr;
    if (const CandidateReport* c = find(i); c && c->timing) t.fixed_depth = c->timing->depth;
    return t;
  };
  std::optional<std::pair<std::size_t, Outcome>> failed;
  for (int p = 0; p < pairs && !failed; ++p) {
    // A B B A: the order alternates so drift hits both sides equally.
    double a = 0, b = 0;
    auto one = [&](std::size_t i) {
      if (failed) return 0.0;
      // The default's functions: no budget stop.
      TimingResult t = window(i, window_for(i), CheckWhen::never, def);
      // A side that crashed, hung or failed is a verdict, not a missing reading.
      if (!t.ok() && t.outcome.status != Status::stopped) failed.emplace(i, t.outcome);
      return t.ok() ? side_reading(t, options_.decide.statistic) : 0.0;
    };
    if (p % 2 == 0) {
      a = one(reference);
      b = one(win);
    } else {
      b = one(win);
      a = one(reference);
    }
    ref.push_back(a);
    cand.push_back(b);
  }
  return failed;
}

SearchContext::PairedRun SearchContext::run_pairs(std::size_t reference, double keep, double bar) {
  const std::size_t win = r_.winner;
  PairedRun run;
  // Under a budget the pairs must fit what is left of it; too few to judge: the caller keeps
  // the measured winner, unconfirmed, and the report says so.
  const ConfirmationSize size = sized_confirmation(reference, bar);
  auto too_few = [&] {
    return run.affordable < options_.decide.confirm_pairs &&
           run.affordable < options_.decide.paired.min_pairs;
  };
  // Short of time, fewer launches a side before fewer pairs: the launches a side only guard
  // against stalls, the pairs are the evidence (the budget holds one launch a side back).
  int launches = size.launches;
  run.affordable = affordable_pairs(reference, launches, keep);
  while (too_few() && launches > 1) run.affordable = affordable_pairs(reference, --launches, keep);
  if (too_few()) {
    run.end = PairedRun::End::unaffordable;
    return run;
  }
  const int pairs = std::min(run.affordable, size.pairs);
  // Both trials prepared again (the schedules release every trial after timing it); the
  // winner is rebuilt from its config, its build already in the backend's cache.
  for (std::size_t i : {reference, win}) {
    if (acquire(i)) continue;
    drop_trial(reference), drop_trial(win);
    run.end = PairedRun::End::not_prepared;  // cannot confirm: keep the decision
    return run;
  }
  const auto start = Wall::now();
  const double budget_start = budget_now();
  std::vector<double> ref, cand;
  std::optional<std::pair<std::size_t, Outcome>> failed;  // a side whose window failed
  try {
    failed = paired_windows(reference, pairs, launches, ref, cand);
  } catch (const FatalError&) {
    throw;
  } catch (...) {
    drop_trial(reference), drop_trial(win);
    run.end = PairedRun::End::threw;  // a failure here leaves the measured decision as it was
    return run;
  }
  drop_trial(reference), drop_trial(win);
  r_.seconds_measuring += seconds_since(start);
  paired_seconds_ += budget_now() - budget_start;
  if (failed) {
    run.end =
        failed->first == win ? PairedRun::End::winner_failed : PairedRun::End::reference_failed;
    run.failure = failed->second;
    return run;
  }
  stats::PairedPolicy policy = options_.decide.paired;
  // Spread that cannot carry the pairs across the bar does not void them.
  policy.bar = bar;
  run.score = stats::paired_score(ref, cand, policy);
  run.end = PairedRun::End::scored;
  return run;
}

SearchContext::PairedRun SearchContext::confirmation_pairs_once_more(PairedRun first,
                                                                     double needed) {
  // Pairs too noisy to score (a relative MAD over the limit, no sign-test agreement) are
  // pairs some disturbance crossed: the host moved a vCPU between them, a co-runner came and
  // went. Keeping the default on them lost a winner 2x faster (docs/performance.md "Near ties
  // on the softmax rows, and pairs too noisy taken once more"); pairs that scored stand.
  if (first.end != PairedRun::End::scored || first.score.scored || !(first.score.ratio > 0))
    return first;
  const std::string why = first.score.why;
  // Not in the decision's reserve: under a budget it fits only before the search's stop line
  // (the reserve, the winner's rebuild included, is kept).
  const double keep =
      time_left_ && seconds_to_stop_ ? std::max(0.0, time_left_() - seconds_to_stop_()) : 0.0;
  PairedRun again = run_pairs(r_.default_index, keep, needed);
  // No time left for them, or a side that could not be prepared: the first pairs stand.
  if (again.end == PairedRun::End::unaffordable || again.end == PairedRun::End::not_prepared ||
      again.end == PairedRun::End::threw)
    return first;
  paired_retake_ = why;
  if (options_.hooks.log.enabled(LogLevel::debug))
    options_.hooks.log.debug("paired confirmation taken once more: the first pairs' " + why);
  return again;
}

void SearchContext::confirm() {
  const std::size_t def = r_.default_index;
  const std::size_t win = r_.winner;
  const double needed = 1 / (1 + options_.decide.tie_band);
  const PairedRun run = confirmation_pairs_once_more(run_pairs(def, 0, needed), needed);
  // What the report says of a retake, after the verdict's own words.
  const std::string retaken =
      paired_retake_.empty() ? "" : " (taken once more: the first pairs' " + paired_retake_ + ")";
  switch (run.end) {
    case PairedRun::End::unaffordable:
      r_.reason = "the budget left no time for the paired confirmation (" +
                  std::to_string(run.affordable) + " of " +
                  std::to_string(options_.decide.paired.min_pairs) +
                  " pairs would fit): the measured winner stands unconfirmed";
      return;
    case PairedRun::End::not_prepared:
    case PairedRun::End::threw:
      return;
    case PairedRun::End::winner_failed:
      // The winner failed where it had passed: it is declined, recorded, and never stored.
      r_.reason = "paired confirmation: the winner's window ended " + failure_text(run.failure) +
                  ": the default stands" + retaken;
      entry(win).outcome = run.failure;
      r_.winner = def;
      return;
    case PairedRun::End::reference_failed:
      r_.reason = "paired confirmation: the default's window ended " + failure_text(run.failure) +
                  ": the measured winner stands unconfirmed" + retaken;
      return;
    case PairedRun::End::scored:
      break;
  }
  const stats::PairedScore& s = run.score;
  r_.paired_pairs = s.pairs;
  if (s.scored) paired_high_ = s.ratio_high;
  r_.paired_ratio = s.ratio;
  if (s.scored && s.ratio_high < needed) {
    r_.confirmed = true;
    if (!retaken.empty())
      r_.reason += std::string(r_.reason.empty() ? "" : "; ") + "paired confirmation" + retaken;
    return;
  }
  r_.reason = "paired confirmation kept the default: " + not_surely_under(s, needed) + retaken;
  r_.winner = def;
}

const std::vector<std::size_t>& SearchContext::anchors() const {
  if (!anchors_) anchors_ = op_.anchor_indices();
  return *anchors_;
}

double SearchContext::decision_cost(double cap) const {
  const DecisionFloors& f = decision_floors_;
  const Floor race = final_race_started_ ? Floor{} : f.final_race;
  return fitting({{f.check, f.check}, f.default_pairs, f.anchor_pairs, f.tie_pairs, race}, cap);
}

double SearchContext::kept_for(std::initializer_list<Floor> floors) const {
  const double room = time_left_ ? std::max(0.0, time_left_()) : HUGE_VAL;
  return fitting(floors, room);
}

void SearchContext::project_decision_cost() {
  DecisionFloors& f = decision_floors_;
  f = {};
  f.final_race = final_race_floor();
  const std::size_t def = r_.default_index;
  if (options_.decide.confirm_pairs <= 0) return;
  const std::optional<std::size_t> pick = decide(r_.candidates, def, options_.decide.tie_band);
  if (!pick || *pick == def) return;
  // Projected for the pick the decision would make now, as choose() pairs it.
  if (const CandidateReport* d = find(def); d && d->outcome.ok())
    f.default_pairs = floor_of(*pick, def);
  if (const std::optional<std::size_t> a = best_anchor(); a && !is_anchor(*pick))
    f.anchor_pairs = floor_of(*pick, *a);
  // A pick not yet checked is checked first (holds(): prepared again, a window of two samples
  // and its checked calls), which the budget does not cut.
  const auto checked = checked_.find(*pick);
  const bool unchecked = checked == checked_.end() || !checked->second;
  if (const CandidateReport* c = find(*pick);
      c && c->timing && unchecked && options_.measure.check_calls > 0) {
    f.check = (2 * std::max(1, c->timing->depth) + warmup_calls() + options_.measure.check_calls) *
                  c->score +
              more_sets_seconds(*pick, c->score) + window_overhead_.value() + prepare_seconds();
  }
  // The tie order picks another candidate than the incumbent: the two are paired first.
  if (const std::optional<std::size_t> rival = tied_rival(*pick))
    f.tie_pairs = floor_of(*pick, *rival);
}

std::optional<std::size_t> SearchContext::best_anchor() const {
  std::optional<std::size_t> best;
  for (std::size_t a : anchors()) {
    if (a == r_.default_index) continue;  // an anchor that is the default: step 6 pairs it
    const CandidateReport* c = find(a);
    if (!c || !c->outcome.ok() || !c->timing || !(c->score > 0)) continue;
    if (!best || search_reading(*c) < search_reading(*find(*best))) best = a;
  }
  return best;
}

void SearchContext::pair_with_anchor() {
  // The default is the safe side already (it wins its ties); an anchor winner is the library.
  if (r_.winner == r_.default_index) return;
  if (is_anchor(r_.winner)) return;
  const std::optional<std::size_t> anchor = best_anchor();
  if (!anchor || *anchor == r_.winner) return;
  // The default's confirmation comes next: its floor is kept out of this pairing's time.
  const double keep =
      kept_for({r_.default_score > 0 ? floor_of(r_.winner, r_.default_index) : Floor{}});
  const FinalPairing pairing{.rival = *anchor,
                             .bar = 1 / (1 + options_.decide.tie_band),
                             .keep = keep,
                             .what = "the library anchor"};
  pair_final(pairing, r_.anchor_pairing.emplace());
}

std::optional<std::size_t> SearchContext::tied_rival(std::size_t pick) const {
  // Ties with the default went to the default. An anchor on one side only is not paired here:
  // an own pick is paired with the best anchor next (where the library wins its ties), and an
  // anchor pick keeps its tie with a faster own kernel (the library wins its ties). Otherwise
  // the fastest reading of the pick's kind (own or anchor), when it is not the pick (decide()
  // tied them: the pick is within the band of the best): a library that raced and read fastest
  // leaves the own pick's tie with a faster own finalist to be paired still.
  if (pick == r_.default_index) return std::nullopt;
  const CandidateReport* best = nullptr;
  const bool finals = final_race_ran(r_.candidates);  // then the finalists' readings only
  const bool anchor_pick = is_anchor(pick);
  for (const CandidateReport& c : r_.candidates) {
    if (c.index == r_.default_index || !c.outcome.ok() || !c.timing) continue;
    if (finals && !c.finalist) continue;
    if (is_anchor(c.index) != anchor_pick) continue;
    if (!std::isfinite(c.score) || !(c.score > 0)) continue;
    if (!best || c.score < best->score) best = &c;
  }
  const CandidateReport* picked = find(pick);
  // An equal reading is no rival: the order decides between equals.
  if (!best || !picked || best->index == pick || !(best->score < picked->score))
    return std::nullopt;
  return best->index;
}

void SearchContext::pair_with_tied_rival() {
  const std::optional<std::size_t> rival = tied_rival(r_.winner);
  if (!rival) return;
  // The default's confirmation and the anchor pairing come next: their floors are kept out.
  const std::optional<std::size_t> a = best_anchor();
  const double keep =
      kept_for({r_.default_score > 0 ? floor_of(r_.winner, r_.default_index) : Floor{},
                a && !is_anchor(r_.winner) ? floor_of(r_.winner, *a) : Floor{}});
  const FinalPairing pairing{.rival = *rival,
                             .bar = 1 + options_.decide.tie_band / 2,
                             .keep = keep,
                             .what = "the tied rival"};
  pair_final(pairing, r_.tie_pairing.emplace());
}

void SearchContext::pair_final(const FinalPairing& f, PairedFinal& p) {
  const std::size_t win = r_.winner;
  p.rival = entry(f.rival).name;
  p.candidate = entry(win).name;
  const PairedRun run = run_pairs(f.rival, f.keep, f.bar);
  const std::string what(f.what);
  switch (run.end) {
    case PairedRun::End::unaffordable:
      p.kept_candidate = true;
      p.why = "the budget left no time for it (" + std::to_string(run.affordable) +
              " pairs would fit): the measured winner stands";
      return;
    case PairedRun::End::not_prepared:
    case PairedRun::End::threw:
      p.kept_candidate = true;
      p.why = "a side could not be prepared again: the measured winner stands";
      return;
    case PairedRun::End::reference_failed:
      p.kept_candidate = true;
      p.why =
          what + "'s window ended " + failure_text(run.failure) + ": the measured winner stands";
      entry(f.rival).outcome = run.failure;  // it failed where it had passed: never chosen
      return;
    case PairedRun::End::winner_failed:
      p.why = "the winner's window ended " + failure_text(run.failure) + ": " + what + " stands";
      entry(win).outcome = run.failure;
      break;
    case PairedRun::End::scored: {
      p.pairs = run.score.pairs;
      p.ratio = run.score.ratio;
      if (run.score.scored) p.ratio_high = run.score.ratio_high;
      const PairedVerdict verdict = paired_verdict(run.score, f.bar);
      p.why = verdict.why;
      p.kept_candidate = verdict.winner_stands;
      if (verdict.winner_stands) return;
      break;
    }
  }
  take_rival(f, win, p);
}

void SearchContext::take_rival(const FinalPairing& f, std::size_t win, PairedFinal& p) {
  // The rival takes the decision, once it holds (its checked calls pass); one that fails
  // them leaves the measured winner — unless that one just failed too: the decision again.
  const std::string reason = "paired with " + std::string(f.what) + " " + p.rival + ": ";
  if (!holds(f.rival)) {
    p.why += "; " + std::string(f.what) + " failed its checked calls";
    if (entry(win).outcome.ok()) {
      p.kept_candidate = true;
      return;
    }
    std::optional<std::size_t> w;
    do w = decide(r_.candidates, r_.default_index, options_.decide.tie_band);
    while (w && !holds(*w));
    r_.winner = w.value_or(r_.default_index);
    p.why += "; both failed: decided again without them";
    r_.reason = reason + p.why;
    return;
  }
  r_.winner = f.rival;
  r_.reason = reason + p.why;
}

}  // namespace tunekit::detail
