// ils (greedy iterated local search): first-improvement descent over the neighbourhood; at a
// local optimum (every neighbour evaluated, none better) a random walk of `perturb` steps
// from the best point found starts the next descent; with probability `restart` it starts from
// a random point instead. The first descent starts from the best point of the shared initial
// design (initial_design.hpp: the default, the cost model's best-ranked points, value coverage;
// design_size(budget, 10) points), not from a random one.
#include <algorithm>
#include <cmath>

#include "search/initial_design.hpp"
#include "search/strategies.hpp"

namespace tunekit::detail {
namespace {

class IlsStrategy final : public Strategy {
 public:
  IlsStrategy(std::size_t perturb, double restart, Neighbourhood kind)
      : perturb_(perturb), restart_(restart), kind_(kind) {}

  std::string_view name() const override { return "ils"; }

  void start(const Enumeration&, const SearchPrior& prior) override {
    prior_ = prior;
    designed_ = false;
  }

  std::vector<std::size_t> propose(const Enumeration& space, const History& history,
                                   std::size_t max, Rng& rng) override {
    if (!designed_) {
      designed_ = true;
      const std::size_t want = design_size(prior_.budget_evaluations, 10);
      if (want > history.size())
        design_ = initial_design(space, history, prior_, want - history.size(), rng);
      std::reverse(design_.begin(), design_.end());
      current_ = best_known(history);  // the default, when it was evaluated first
    }
    std::vector<std::size_t> out;
    while (!design_.empty() && out.size() < max) {
      if (!history.evaluated(design_.back())) out.push_back(design_.back());
      design_.pop_back();
    }
    if (!out.empty()) return out;
    for (int step = 0; step < 64; ++step) {
      if (!current_) return start_anew(history, rng);
      std::vector<std::size_t> fresh = unevaluated_neighbours(space, history, *current_, kind_);
      if (!fresh.empty()) {
        std::uniform_int_distribution<std::size_t> pick(0, fresh.size() - 1);
        return {fresh[pick(rng)]};
      }
      // Every neighbour is known: move to the best one if it is better, else perturb.
      const double here = *history.value(*current_);
      std::optional<std::size_t> better;
      for (std::size_t j : space.neighbours(*current_, kind_))
        if (*history.value(j) < (better ? *history.value(*better) : here)) better = j;
      if (better) {
        current_ = *better;
        continue;
      }
      std::uniform_real_distribution<double> u(0.0, 1.0);
      const Evaluation* best = history.best();
      if (!best || u(rng) < restart_) return start_anew(history, rng);
      std::size_t walk = best->index;
      for (std::size_t k = 0; k < perturb_; ++k) {
        const std::vector<std::size_t> around = space.neighbours(walk, kind_);
        if (around.empty()) break;
        std::uniform_int_distribution<std::size_t> pick(0, around.size() - 1);
        walk = around[pick(rng)];
      }
      if (!history.evaluated(walk)) {
        jump_ = walk;
        return {walk};
      }
      current_ = walk;  // known already: descend from there
    }
    return start_anew(history, rng);
  }

  void observe(const Enumeration&, const History& history,
               std::span<const Evaluation> results) override {
    for (const Evaluation& e : results) {
      if (jump_ && e.index == *jump_) {
        current_ = e.index;  // a new descent starts here, whatever it gave
        jump_.reset();
      } else if (!current_ || e.value < *history.value(*current_)) {
        current_ = e.index;  // first improvement
      }
    }
  }

 private:
  std::vector<std::size_t> start_anew(const History& history, Rng& rng) {
    current_.reset();
    if (const std::optional<std::size_t> i = random_unevaluated(history, rng)) {
      jump_ = *i;
      return {*i};
    }
    return {};
  }

  std::size_t perturb_;
  double restart_;
  Neighbourhood kind_;
  std::optional<std::size_t> current_;
  std::optional<std::size_t> jump_;
  SearchPrior prior_;
  bool designed_ = false;
  std::vector<std::size_t> design_;  // still to propose, last first
};

}  // namespace

std::unique_ptr<Strategy> make_ils(StrategyOptions& options) {
  const std::size_t perturb = options.count("perturb", 3, 1, 1000);
  const double restart = options.number("restart", 0.1, 0.0, 1.0);
  const Neighbourhood kind = neighbourhood_option(options);
  return std::make_unique<IlsStrategy>(perturb, restart, kind);
}

}  // namespace tunekit::detail
