// Exhaustive: every admitted candidate gets one full window, plan group by plan group.
#include "tuner/search.hpp"
#include "tuner/search_context.hpp"

namespace tunekit::detail {

void exhaustive_search(SearchContext& context, const SearchOptions&) {
  const auto plan = context.plan();
  const std::size_t def = context.default_index();
  bool default_done = false;
  double incumbent = 0;  // the best ok score so far
  bool stopped = false;
  for (std::size_t g = 0; g < plan.size(); ++g) {
    bool any_ok = false;
    for (std::size_t i : plan[g]) {
      default_done |= i == def;
      if (!context.admit(i)) continue;
      TimingOptions timing = context.timing_options();
      // Cut a window that can no longer come close to the best so far (median ranking only;
      // the default is always measured in full).
      if (i != def && incumbent > 0 && context.options().statistic == Statistic::median)
        timing.hopeless_against = incumbent;
      TimingResult t = context.measure(i, timing);
      Outcome o = t.outcome;
      context.finish(i, o, std::move(t));
      context.drop_trial(i);
      if (o.ok()) {
        any_ok = true;
        double s = context.report().candidates[i].score;
        if (incumbent == 0 || s < incumbent) incumbent = s;
      }
      // Short-circuit: a reading within floor_factor of the roofline floor cannot be beaten
      // by enough to matter; the rest stay unmeasured.
      if (const double bound = context.floor_bound();
          bound > 0 && incumbent > 0 && incumbent <= bound && default_done) {
        stopped = true;
        context.mark_model_cut();
        break;
      }
    }
    if (stopped) {
      for (std::size_t h = 0; h < plan.size(); ++h)
        for (std::size_t i : plan[h])
          if (context.report().candidates[i].outcome.status == Status::skipped &&
              context.report().candidates[i].outcome.message == "not reached")
            context.report().candidates[i].outcome = {
                Status::skipped,
                "a measured candidate came within floor_factor of the roofline floor"};
      break;
    }
    if (any_ok) {
      context.mark_skipped_after(plan, g);
      break;
    }
  }
  if (!default_done && context.admit(def)) {
    TimingResult t = context.measure(def, context.timing_options());
    Outcome o = t.outcome;
    context.finish(def, o, std::move(t));
    context.drop_trial(def);
  }
}

}  // namespace tunekit::detail
