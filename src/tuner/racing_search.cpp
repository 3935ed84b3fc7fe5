// Racing (DESIGN §6): candidates are measured in round-robin windows; after each round a
// candidate whose median confidence interval lies wholly above the leader's (by more than
// the tie band) is dropped. The race ends when one candidate survives, when the survivors
// are statistically tied, when the leader's upper bound reaches the short-circuit limit, when
// every survivor has an exhaustive window's worth of samples, or at max_samples.
#include <algorithm>
#include <limits>

#include "tunekit/stats.hpp"
#include "tuner/search.hpp"
#include "tuner/search_context.hpp"

namespace tunekit::detail {
namespace {

struct Runner {
  std::size_t index;
  TimingResult all;  // samples of every round so far
  bool alive = true;
  double accumulated = 0;  // seconds of timed batches so far
};

double stat(const std::vector<double>& xs, Statistic s) {
  return s == Statistic::min ? stats::min(xs) : stats::median(xs);
}

}  // namespace

void racing_search(SearchContext& context, const SearchOptions& spec) {
  const TunerOptions& opt = context.options();
  const int round = std::max(1, static_cast<int>(spec.get("round", 4)));
  const double z = spec.get("z", 1.96);
  const int min_samples = std::max(2, static_cast<int>(spec.get("min_samples", 8)));
  const int max_samples =
      std::max(min_samples, static_cast<int>(spec.get("max_samples", opt.timing.max_runs)));
  const double band = 1 + opt.tie_band;
  const auto plan = context.plan();
  const std::size_t def = context.default_index();
  bool default_done = false;

  auto race = [&](const std::vector<std::size_t>& members) {
    std::vector<Runner> runners;
    for (std::size_t i : members) {
      default_done |= i == def;
      if (context.admit(i)) runners.push_back({i, {}, true});
    }
    bool first_round = true;
    // A survivor stops being measured once it has what an exhaustive window would give it
    // (the floor and the sample budget): racing never spends more on a candidate than
    // exhaustive does, and usually far less on the losers.
    auto satisfied = [&](const Runner& r) {
      const int n = static_cast<int>(r.all.samples.size());
      return n >= min_samples && more_samples_wanted(opt.timing, n, r.accumulated) == 0;
    };
    while (true) {
      bool measured = false;
      for (Runner& r : runners) {
        if (!r.alive || satisfied(r)) continue;
        measured = true;
        TimingOptions w = context.timing_options();
        w.warmup = first_round ? w.warmup : 0;
        w.repeats_floor = round;
        w.max_runs = round;
        w.sample_budget = 0;
        if (!first_round && w.mode == TimingMode::queued) w.fixed_depth = r.all.depth;
        TimingResult t = context.measure(r.index, w);
        if (!t.ok()) {
          r.alive = false;
          context.finish(r.index, t.outcome, std::move(t));
          context.drop_trial(r.index);
          continue;
        }
        r.all.samples.insert(r.all.samples.end(), t.samples.begin(), t.samples.end());
        for (double x : t.samples) r.accumulated += x * t.depth;
        r.all.depth = t.depth;
        r.all.dispatches += t.dispatches;
        r.all.wall_seconds += t.wall_seconds;
        r.all.mode = t.mode;
        r.all.clock = t.clock;
        r.all.probes.insert(r.all.probes.end(), t.probes.begin(), t.probes.end());
      }
      first_round = false;
      if (!measured) break;  // every survivor has its full window
      std::vector<Runner*> alive;
      for (Runner& r : runners)
        if (r.alive) alive.push_back(&r);
      if (alive.size() <= 1) break;
      if (static_cast<int>(alive.front()->all.samples.size()) < min_samples) continue;

      // Intervals and the leader.
      std::vector<stats::Interval> ci(alive.size());
      std::size_t lead = 0;
      for (std::size_t k = 0; k < alive.size(); ++k) {
        ci[k] = stats::median_interval(alive[k]->all.samples, z);
        if (stat(alive[k]->all.samples, opt.statistic) <
            stat(alive[lead]->all.samples, opt.statistic))
          lead = k;
      }
      // Drop the clearly slower ones.
      for (std::size_t k = 0; k < alive.size(); ++k) {
        if (k != lead && ci[k].low > ci[lead].high * band) alive[k]->alive = false;
      }
      std::size_t survivors = 0;
      bool tied = true;  // every survivor's interval sits within the band of the leader's
      for (std::size_t k = 0; k < alive.size(); ++k) {
        if (!alive[k]->alive) continue;
        ++survivors;
        tied &= ci[k].high <= ci[lead].low * band;
      }
      if (survivors <= 1 || tied) break;
      if (const double bound = context.short_circuit(); bound > 0 && ci[lead].high <= bound) {
        // Stopped with rivals alive: partial when the model's floor is what stopped it.
        if (const double f = context.floor_bound(); f > 0 && ci[lead].high <= f)
          context.mark_model_cut();
        break;
      }
      if (static_cast<int>(alive[lead]->all.samples.size()) >= max_samples) break;
    }
    // Every runner that measured cleanly is ranked on all its samples.
    bool any_ok = false;
    for (Runner& r : runners) {
      if (r.all.samples.empty() ||
          context.report().candidates[r.index].outcome.status != Status::skipped)
        continue;  // failed (already finished) or never measured
      TimingResult& t = r.all;
      t.outcome = Outcome::success();
      t.min = stats::min(t.samples);
      t.median = stats::median(t.samples);
      t.mean = stats::mean(t.samples);
      t.mad = stats::mad(t.samples);
      t.p10 = stats::quantile(t.samples, 0.1);
      t.p90 = stats::quantile(t.samples, 0.9);
      t.stalled_fraction = stats::stalled_fraction(t.samples, opt.timing.stall_ratio);
      context.finish(r.index, Outcome::success(), std::move(t));
      context.drop_trial(r.index);
      any_ok = true;
    }
    return any_ok;
  };

  for (std::size_t g = 0; g < plan.size(); ++g) {
    if (race(plan[g])) {
      context.mark_skipped_after(plan, g);
      break;
    }
  }
  if (!default_done) race({def});
}

}  // namespace tunekit::detail
