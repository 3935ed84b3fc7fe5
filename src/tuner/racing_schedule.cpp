// racing (DESIGN §6): the points of a batch are measured in round-robin windows; after each
// round a point whose median confidence interval lies wholly above the leader's — or above the
// best of earlier batches — by more than the tie band is dropped, and from the first round a
// point as far behind as a full window's far-behind cuts allow; a batch of one (a strategy that
// proposes one point at a time) races the incumbent so. The race ends when one point survives, when
// the survivors are statistically tied, when the leader's upper bound reaches the short-circuit
// limit, when every survivor has a full window's worth of samples, or at max_samples. Every point
// is validated once, then re-prepared for each of its windows, so only one candidate's buffers are
// alive at a time.
//
// The final race (final_race.cpp) runs the same rounds over points the search validated and
// measured already, on fresh readings only: no admission, no incumbent (the search's readings
// are what it doubts), and what each finalist measured replaces its search reading
// (SearchContext::refresh) once at least two finalists had a window.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tunekit/stats.hpp"
#include "tuner/schedule.hpp"
#include "tuner/search_context.hpp"

namespace tunekit::detail {
namespace {

struct Runner {
  std::size_t index;
  TimingResult all;  // samples of every round so far
  bool alive = true;
  double accumulated = 0;  // seconds of timed batches so far
  bool full = false;       // alone: its full window is complete
  bool failed = false;     // its outcome is a failure now (finished by the race)
  bool unjudged = false;   // final race: left it without a verdict (its search reading stands)
};

// What a window's failure says of the kernel itself. Contention, a timeout against limits
// drawn from others' readings, a missing reading or a budget stop do not: in the final race
// such a point keeps its search reading (and leaves the decision to the others).
bool verdict_on_kernel(Status s) {
  return s == Status::validation_failed || s == Status::crashed || s == Status::launch_failed ||
         s == Status::out_of_memory || s == Status::device_lost;
}

double stat(const std::vector<double>& xs, Statistic s) {
  return s == Statistic::min ? stats::min(xs) : stats::median(xs);
}

class RacingSchedule final : public Schedule {
 public:
  RacingSchedule(int round, double z, int min_samples, int max_samples, int round_warmup,
                 bool fresh = false)
      : round_(round),
        z_(z),
        min_samples_(min_samples),
        max_samples_(max_samples),
        round_warmup_(round_warmup),
        fresh_(fresh) {}
  std::string_view name() const override { return fresh_ ? "final race" : "racing"; }

  std::vector<PointResult> run(std::span<const std::size_t> points, SearchContext& context,
                               const MayStart& may_start) override {
    if (fresh_) return run_again(points, context, may_start);
    std::vector<Runner> runners;
    std::vector<PointResult> out;
    bool out_of_time = false;
    // Each admission (prepare, validation) starts only while the budget admits it and the first
    // windows of the points admitted before it (`lead`): a round is not validated past the time
    // its windows need.
    double lead = 0;
    for (std::size_t k = 0; k < points.size(); ++k) {
      const std::size_t i = points[k];
      if (!may_start(i, lead)) {
        for (std::size_t rest = k; rest < points.size(); ++rest)
          finish_not_started(context, points[rest]);
        out_of_time = true;
        break;
      }
      if (context.admit(i)) {
        // Validated; re-prepared for each window unless it races alone (nothing else's
        // buffers are alive then, and each prepare costs the inputs' copy).
        if (points.size() > 1) context.drop_trial(i);
        runners.push_back({i, {}, true});
        lead += context.first_window_seconds(i, round_);
      } else {
        out.push_back(point_result(context, i));
      }
    }
    std::vector<std::size_t> raced;
    for (const Runner& r : runners) raced.push_back(r.index);
    context.raced_together(raced);
    race(runners, context, may_start, out_of_time);
    for (const Runner& r : runners) context.drop_trial(r.index);
    // Every runner that measured cleanly is ranked on all its samples.
    const TunerOptions& opt = context.options();
    for (Runner& r : runners) {
      const CandidateReport* c = context.find(r.index);
      const bool failed = c && c->outcome.status != Status::skipped;
      if (!failed && r.all.samples.empty()) {
        if (out_of_time) finish_not_started(context, r.index);
        continue;  // never measured: not evaluated
      }
      if (!failed) {
        TimingResult& t = r.all;
        t.outcome = Outcome::success();
        summarise(t, opt.measure.timing);
        t.contended = false;  // each round's window was judged (and retried) on its own
        context.finish(r.index, Outcome::success(), std::move(t));
      }
      out.push_back(point_result(context, r.index));
    }
    return out;
  }

 private:
  // The final race: points validated and measured already, re-timed in rounds. A failure
  // (a window that crashed or read wrong) is the point's outcome; a window the budget stopped,
  // or one not started, leaves every point as the search measured it unless each had a window.
  std::vector<PointResult> run_again(std::span<const std::size_t> points, SearchContext& context,
                                     const MayStart& may_start) {
    std::vector<Runner> runners;
    for (std::size_t i : points) runners.push_back({i, {}, true});
    bool out_of_time = false;
    race(runners, context, may_start, out_of_time);
    for (const Runner& r : runners) context.drop_trial(r.index);
    // The finalists with fresh readings decide; when the budget stopped the race before two
    // had a window, nothing was compared side by side and the search's readings decide.
    const auto timed = [](const Runner& r) {
      return !r.failed && !r.unjudged && !r.all.samples.empty();
    };
    const auto fresh = std::count_if(runners.begin(), runners.end(), timed);
    const auto waiting = std::count_if(runners.begin(), runners.end(), [](const Runner& r) {
      return !r.failed && !r.unjudged && r.all.samples.empty();
    });
    std::string& note = context.report().final_race.note;
    if (waiting > 0 && fresh < 2)
      note =
          "the budget stopped it before two finalists had a window: the search's readings "
          "decide";
    else if (waiting > 0)
      note = "the budget stopped it before " + std::to_string(waiting) +
             " finalists had a window: they stay out of the decision";
    std::vector<PointResult> out;
    for (Runner& r : runners) {
      if (timed(r) && (fresh >= 2 || waiting == 0)) {
        summarise(r.all, context.options().measure.timing);
        r.all.outcome = Outcome::success();
        r.all.contended = false;
        context.refresh(r.index, std::move(r.all));
      }
      out.push_back(point_result(context, r.index));
    }
    return out;
  }

  void race(std::vector<Runner>& runners, SearchContext& context, const MayStart& may_start,
            bool& out_of_time) {
    const TunerOptions& opt = context.options();
    const double band = 1 + opt.decide.tie_band;
    bool first_round = true;
    // A survivor stops being measured once it has what a full window would give it: racing
    // never spends more on a point than `full` does, and usually far less on the losers.
    auto satisfied = [&](const Runner& r) {
      const int n = static_cast<int>(r.all.samples.size());
      return n >= min_samples_ && more_samples_wanted(opt.measure.timing, n, r.accumulated) == 0;
    };
    while (true) {
      bool measured = false;
      for (Runner& r : runners) {
        if (!r.alive || r.full || satisfied(r)) continue;
        if (!may_start(r.index, 0)) {
          out_of_time = true;
          return;
        }
        if (!context.acquire(r.index)) {
          r.alive = false;
          if (fresh_) {
            r.unjudged = true;  // validated and measured before: not a verdict on the kernel
            continue;
          }
          r.failed = true;
          context.finish(r.index, {Status::launch_failed, "could not be prepared again"},
                         std::nullopt);
          continue;
        }
        measured = true;
        const bool alone = runners.size() == 1;
        // No checked calls after a round's window: the round's leader is checked after the round
        // (check_leader), unless every candidate is to be checked after its first window.
        const auto when = opt.measure.check_every_candidate ? SearchContext::CheckWhen::contender
                                                            : SearchContext::CheckWhen::never;
        TimingResult t =
            context.measure(r.index, round_options(r, context, first_round, alone), when);
        r.full = alone && !first_round;
        if (runners.size() > 1) context.drop_trial(r.index);
        if (!t.ok() && fresh_ && t.outcome.status == Status::stopped) {
          out_of_time = true;  // the budget stopped it: the search's readings stand
          return;
        }
        if (!t.ok() && fresh_ && !verdict_on_kernel(t.outcome.status)) {
          r.alive = false;
          r.unjudged = true;
          continue;
        }
        if (!t.ok()) {
          r.alive = false;
          r.failed = true;
          Outcome o = t.outcome;
          context.finish(r.index, std::move(o), std::move(t));
          continue;
        }
        r.all.samples.insert(r.all.samples.end(), t.samples.begin(), t.samples.end());
        for (double x : t.samples) r.accumulated += x * t.depth;
        r.all.depth = t.depth;
        r.all.dispatches += t.dispatches;
        r.all.retaken += t.retaken;
        r.all.waited += t.waited;
        r.all.clean += t.clean;
        r.all.wall_seconds += t.wall_seconds;
        r.all.mode = t.mode;
        r.all.clock = t.clock;
        r.all.probes.insert(r.all.probes.end(), t.probes.begin(), t.probes.end());
      }
      first_round = false;
      if (!measured) return;  // every survivor has its full window
      std::vector<Runner*> alive;
      for (Runner& r : runners)
        if (r.alive) alive.push_back(&r);
      if (alive.empty()) return;
      check_leader(runners, context);
      drop_far_behind(runners, context, fresh_ ? 0 : context.incumbent());
      std::erase_if(alive, [](const Runner* r) { return !r->alive; });
      if (alive.empty()) return;
      if (static_cast<int>(alive.front()->all.samples.size()) < min_samples_) continue;

      std::vector<stats::Interval> ci(alive.size());
      std::size_t lead = 0;
      for (std::size_t k = 0; k < alive.size(); ++k) {
        ci[k] = stats::median_interval(alive[k]->all.samples, z_);
        if (stat(alive[k]->all.samples, opt.decide.statistic) <
            stat(alive[lead]->all.samples, opt.decide.statistic))
          lead = k;
      }
      // Drop the clearly slower ones: slower than this batch's leader, or than the best of
      // the batches before (the incumbent; none in the final race).
      const double incumbent = fresh_ ? 0 : context.incumbent();
      for (std::size_t k = 0; k < alive.size(); ++k) {
        const bool behind_leader = k != lead && ci[k].low > ci[lead].high * band;
        const bool behind_incumbent = incumbent > 0 && ci[k].low > incumbent * band &&
                                      alive[k]->index != context.default_index();
        if (behind_leader || behind_incumbent) alive[k]->alive = false;
      }
      // A lone runner (a strategy that proposes one point at a time) races only the
      // incumbent: while it is not clearly behind, it earns its full window.
      if (runners.size() == 1) continue;
      std::size_t survivors = 0;
      bool tied = true;  // every survivor's interval sits within the band of the leader's
      for (std::size_t k = 0; k < alive.size(); ++k) {
        if (!alive[k]->alive) continue;
        ++survivors;
        tied &= ci[k].high <= ci[lead].low * band;
      }
      if (survivors <= 1 || tied) return;
      if (opt.decide.limit > 0 && ci[lead].high <= opt.decide.limit) return;
      if (static_cast<int>(alive[lead]->all.samples.size()) >= max_samples_) return;
    }
  }

  // The round's leader, checked (its checked calls after a short window of its own,
  // SearchContext::check) before any runner is dropped on its reading: a candidate right on
  // its validation run and wrong later must not push the others out of the race. Only the
  // leader, and only one that could win (within the tie band of the incumbent of earlier
  // batches): the others cannot be chosen unchecked (the decision checks its pick), and
  // checking every runner that led the round so far when its window ended cost five calls
  // each — on 16 MB rows more than their windows (docs/performance.md). One that fails leaves
  // the race with its failure (in the final race a failure that is no verdict on the kernel
  // leaves its search reading standing, as a window's does) and the next leader is checked.
  void check_leader(std::vector<Runner>& runners, SearchContext& context) const {
    const TunerOptions& opt = context.options();
    const double incumbent = fresh_ ? 0 : context.incumbent();
    while (true) {
      Runner* lead = nullptr;
      for (Runner& r : runners)
        if (r.alive && !r.all.samples.empty() &&
            (!lead || stat(r.all.samples, opt.decide.statistic) <
                          stat(lead->all.samples, opt.decide.statistic)))
          lead = &r;
      if (!lead) return;
      if (incumbent > 0 &&
          stat(lead->all.samples, opt.decide.statistic) > incumbent * (1 + opt.decide.tie_band))
        return;
      Outcome failure = context.check(lead->index);
      if (failure.ok()) return;
      lead->alive = false;
      if (fresh_ && !verdict_on_kernel(failure.status)) {
        lead->unjudged = true;  // not prepared again, timed out: its search reading stands
        continue;
      }
      lead->failed = true;
      context.finish(lead->index, std::move(failure), std::nullopt);
    }
  }

  // One round's window. A lone runner (a batch of one) has no other runner to interleave
  // with, and each window costs a prepare (in a worker, the inputs' copy): its first window
  // is min_samples, cut within against the incumbent as a full window is, and its second the
  // rest of its full window.
  TimingOptions round_options(const Runner& r, SearchContext& context, bool first_round,
                              bool alone) const {
    TimingOptions w = context.timing_options(r.index);
    const int taken = static_cast<int>(r.all.samples.size());
    if (alone && !first_round) {
      w.repeats_floor = std::max(1, w.repeats_floor - taken);
      w.max_runs = std::max(1, std::max(w.max_runs, w.repeats_floor) - taken);
      w.sample_budget = std::max(0.0, w.sample_budget - r.accumulated);
    } else {
      const int size = alone ? std::max(round_, min_samples_) : round_;
      w.repeats_floor = size;
      w.max_runs = size;
      w.sample_budget = 0;
    }
    // A batch's runner is re-prepared for every round: its first launch after another
    // candidate's round finds cold caches; round_warmup launches absorb that.
    w.warmup = first_round ? w.warmup : round_warmup_;
    if (!first_round && w.mode == TimingMode::queued) w.fixed_depth = r.all.depth;
    // A batch's rounds are short (round_ samples): the median rule within one would cut a
    // near-tied runner on one stalled round, so a batch's runners are judged after each round
    // on all their samples (drop_far_behind, the intervals); a loser far behind on its
    // validation runs never gets a round (SearchContext::cut_on_validation). The final race
    // races its finalists against each other only: no incumbent, the caller's included.
    w.hopeless_against = 0;
    if (alone && !fresh_ && r.index != context.default_index() && context.incumbent() > 0 &&
        context.options().decide.statistic == Statistic::median)
      w.hopeless_against = context.incumbent();
    // The final race's windows are short and each starts only when the host's budget admits
    // it (may_start); the budget's stop() is left out, as the pairings leave it: a window cut
    // short would leave its finalist with a partial reading beside the others' full ones.
    if (fresh_) w.stop = context.options().measure.timing.stop;
    return w;
  }

  // The far-behind cuts of a full window (far_behind_cut), after every round rather than after
  // min_samples: a runner whose fastest reading is that far behind the best median known (this
  // race's leader or an earlier batch's winner) leaves the race. The default never does (the
  // floor: it is measured in full).
  static void drop_far_behind(std::vector<Runner>& runners, SearchContext& context,
                              double incumbent) {
    const Statistic statistic = context.options().decide.statistic;
    double best = incumbent > 0 ? incumbent : std::numeric_limits<double>::infinity();
    for (const Runner& r : runners)
      if (r.alive && !r.all.samples.empty()) best = std::min(best, stat(r.all.samples, statistic));
    if (!std::isfinite(best)) return;
    for (Runner& r : runners) {
      if (!r.alive || r.index == context.default_index()) continue;
      TimingOptions cut = context.timing_options(r.index);  // its ratios and validation run
      cut.hopeless_against = best;
      if (!far_behind_cut(cut, r.all.samples, r.all.clean).empty()) r.alive = false;
    }
  }

  int round_;
  double z_;
  int min_samples_;
  int max_samples_;
  int round_warmup_;
  bool fresh_;
};

}  // namespace

namespace {
std::unique_ptr<Schedule> racing_from(SpecOptions& options, bool fresh) {
  const int round = static_cast<int>(options.count("round", 4, 1, 1024));
  const double z = options.number("z", 1.96, 0.1, 10);
  const int min_samples = static_cast<int>(options.count("min_samples", 8, 2, 100000));
  const int max_samples = static_cast<int>(options.count("max_samples", 64, 2, 1000000));
  const int round_warmup = static_cast<int>(options.count("round_warmup", 0, 0, 100));
  return std::make_unique<RacingSchedule>(round, z, min_samples, std::max(min_samples, max_samples),
                                          round_warmup, fresh);
}
}  // namespace

std::unique_ptr<Schedule> make_racing_schedule(SpecOptions& options) {
  return racing_from(options, false);
}

std::unique_ptr<Schedule> make_final_race() {
  SpecOptions defaults = SpecOptions::parse("schedule", "racing", "");
  return racing_from(defaults, true);
}

}  // namespace tunekit::detail
