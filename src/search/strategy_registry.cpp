// The strategy registry: name -> factory, configured by an options string.
#include "search/initial_design.hpp"
#include "search/strategies.hpp"
#include "tunekit/errors.hpp"

namespace tunekit {

StrategyRegistry StrategyRegistry::builtin() {
  StrategyRegistry r;
  r.add({"auto",
         "the default: every point of a space of at most `small` points (the cost model's best "
         "first where there is a model), else `inner` capped at "
         "`cap` evaluations unless a budget is given (an evaluation budget replaces the cap, a "
         "time budget lifts it)",
         "small=256, cap=200, inner=surrogate (a strategy, with at most one option: "
         "inner=surrogate:batch=2)",
         detail::make_auto});
  r.add(
      {"exhaustive", "every configuration in enumeration order", "none", detail::make_exhaustive});
  r.add({"random", "uniform sampling without replacement", "none", detail::make_random});
  r.add({"anneal", "simulated annealing over neighbours (free moves onto known points)",
         "t0=0.5, alpha=0.98, tmin=0.001, neighbour=hamming|adjacent", detail::make_anneal});
  r.add({"genetic", "elitist genetic algorithm: tournament, uniform crossover, mutation",
         "pop=20, mutation=0.1, tournament=2", detail::make_genetic});
  r.add({"ils", "greedy iterated local search: first-improvement descent, random-walk kicks",
         "perturb=3, restart=0.1, neighbour=hamming|adjacent", detail::make_ils});
  r.add({"greedy_ils", "alias of ils", "as ils", detail::make_ils});
  r.add({"bayes", "Bayesian optimisation: Gaussian process (Matern 5/2) + expected improvement",
         "init=20 (0: by the budget), train=64, pool=150, xi=0.01", detail::make_bayes});
  r.add({"bo", "alias of bayes", "as bayes", detail::make_bayes});
  r.add({"surrogate",
         "Thompson sampling over an additive model of the objective, neighbour residuals, local "
         "steps after 50 evaluations",
         "init=0 (by the budget), local=0.8, delay=50, horizon=300, rho=0.5, clip=0.3, tau2=1, "
         "sigma2=0.25, top=3, shape=1, batch=1",
         detail::make_surrogate});
  r.add({"model",
         "cost-model order: the best-ranked points first, unscored ones after; stops once a "
         "reading is within floor of the roofline floor, or after top / fraction of the scored "
         "points",
         "top=K (integer), fraction=F (in (0, 1]), floor=X (factor over the floor, 0: off)",
         detail::make_model});
  r.add({"bandit", "AUC bandit ensemble over other strategies (OpenTuner)",
         "arms=ils+anneal+genetic+random, window=50, c=0.05",
         [](StrategyOptions& o) { return detail::make_bandit(o, StrategyRegistry::builtin()); }});
  return r;
}

}  // namespace tunekit
