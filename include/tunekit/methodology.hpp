// How strategies are compared on recorded spaces (Willemsen et al. 2024, "autotuning
// methodology"): the best-so-far curve normalised so that 0 is the expected best of random
// search without replacement and 1 is the optimum, averaged over a budget that ends where
// random search is expected to reach the cutoff (0.96 of the way from the median to the optimum).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "tunekit/strategy.hpp"

namespace tunekit {

struct MethodologyBaseline {
  double optimum = 0;
  double median = 0;  // of the successful configurations
  double worst = 0;   // stands in for "nothing valid found yet" and for failed configurations
  // Evaluations random search needs, in expectation, to find a configuration at least as good
  // as median + cutoff * (optimum - median): (N + 1) / (M + 1) for M such configurations of N.
  std::size_t cutoff_budget = 0;
  // expected_best[k - 1]: expected best objective of random search without replacement after k
  // evaluations, k = 1 .. expected_best.size().
  std::vector<double> expected_best;
};

// values[i]: the objective of configuration i, +inf where it failed. A UsageError when no
// configuration succeeded.
MethodologyBaseline methodology_baseline(std::span<const double> values, std::size_t max_budget,
                                         double cutoff = 0.96);

// curve[k - 1]: the best objective after k evaluations (baseline.worst before any success).
std::vector<double> best_so_far(const History& history, std::size_t budget, double worst);

// Mean over k = 1 .. cutoff_budget of (expected_best[k] - curve[k]) / (expected_best[k] - optimum).
double methodology_score(std::span<const double> curve, const MethodologyBaseline& baseline);

}  // namespace tunekit
