// anneal: simulated annealing over the neighbourhood graph. Moves onto already-evaluated
// neighbours cost nothing (their value is known), so only new points spend budget. A move to a
// worse point is accepted with probability exp(-relative_loss / T); T cools geometrically and
// the walk restarts from a random point when it is frozen. The first walk starts from the best
// point of the shared initial design (initial_design.hpp; design_size(budget, 10) points).
#include <algorithm>
#include <cmath>

#include "search/initial_design.hpp"
#include "search/strategies.hpp"

namespace tunekit::detail {
namespace {

class AnnealStrategy final : public Strategy {
 public:
  AnnealStrategy(double t0, double alpha, double t_min, Neighbourhood kind)
      : t0_(t0), alpha_(alpha), t_min_(t_min), kind_(kind), t_(t0) {}

  std::string_view name() const override { return "anneal"; }

  void start(const Enumeration&, const SearchPrior& prior) override {
    prior_ = prior;
    designed_ = walking_ = false;
  }

  std::vector<std::size_t> propose(const Enumeration& space, const History& history,
                                   std::size_t max, Rng& rng) override {
    if (!designed_) {
      designed_ = true;
      const std::size_t want = design_size(prior_.budget_evaluations, 10);
      if (want > history.size())
        design_ = initial_design(space, history, prior_, want - history.size(), rng);
      std::reverse(design_.begin(), design_.end());
    }
    if (!design_.empty()) {
      std::vector<std::size_t> out;
      while (!design_.empty() && out.size() < max) {
        if (!history.evaluated(design_.back())) out.push_back(design_.back());
        design_.pop_back();
      }
      if (!out.empty()) return out;
    }
    if (!walking_) {  // the walk starts at the design's best point
      walking_ = true;
      pending_.clear();
      current_ = best_known(history);
    }
    // The acceptance of last round's results draws from rng here, so observe() needs none.
    for (const Evaluation& e : pending_) {
      if (!current_ || !std::isfinite(*history.value(*current_))) {
        current_ = e.index;  // the (re)start point, whatever it gave
        continue;
      }
      consider(e.index, e.value, *history.value(*current_), rng);
    }
    pending_.clear();
    for (int step = 0; step < 256; ++step) {
      if (!current_ || t_ < t_min_) return restart(history, rng);
      const std::vector<std::size_t> around = space.neighbours(*current_, kind_);
      if (around.empty()) return restart(history, rng);
      std::uniform_int_distribution<std::size_t> pick(0, around.size() - 1);
      const std::size_t next = around[pick(rng)];
      const std::optional<double> known = history.value(next);
      if (!known) return {next};
      consider(next, *known, *history.value(*current_), rng);  // a free move
    }
    return restart(history, rng);
  }

  void observe(const Enumeration&, const History&, std::span<const Evaluation> results) override {
    pending_.assign(results.begin(), results.end());
  }

 private:
  std::vector<std::size_t> restart(const History& history, Rng& rng) {
    t_ = t0_;
    current_.reset();
    if (const std::optional<std::size_t> i = random_unevaluated(history, rng)) return {*i};
    return {};
  }

  void consider(std::size_t next, double value, double current, Rng& rng) {
    t_ *= alpha_;
    if (!std::isfinite(value)) return;  // a failed point is never the current one
    if (value <= current) {
      current_ = next;
      return;
    }
    const double loss = (value - current) / current;
    std::uniform_real_distribution<double> u(0.0, 1.0);
    if (u(rng) < std::exp(-loss / std::max(t_, 1e-12))) current_ = next;
  }

  double t0_, alpha_, t_min_;
  Neighbourhood kind_;
  double t_;
  std::optional<std::size_t> current_;
  std::vector<Evaluation> pending_;
  SearchPrior prior_;
  bool designed_ = false, walking_ = false;
  std::vector<std::size_t> design_;  // still to propose, last first
};

}  // namespace

std::unique_ptr<Strategy> make_anneal(StrategyOptions& options) {
  const double t0 = options.number("t0", 0.5, 1e-6, 1e6);
  const double alpha = options.number("alpha", 0.98, 0.5, 1.0);
  const double t_min = options.number("tmin", 1e-3, 0.0, 1e6);
  const Neighbourhood kind = neighbourhood_option(options);
  return std::make_unique<AnnealStrategy>(t0, alpha, t_min, kind);
}

}  // namespace tunekit::detail
