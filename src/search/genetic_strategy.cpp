// genetic: a steady elitist genetic algorithm on value-index genes. Each generation breeds
// `pop` children by tournament selection, uniform crossover and per-gene mutation; a child
// that is not a valid point (or already evaluated) is bred again, then replaced by an
// unevaluated neighbour of a parent, then by a random point. The next population is the best
// `pop` of parents and children (failed points rank last). The first population is the shared
// initial design (initial_design.hpp): the default, the cost model's best-ranked points, value
// coverage. (A population scaled down with the budget, as the other strategies' designs are,
// measured worse on the recorded spaces: a GA needs its 20 parents; docs/strategies.md.)
#include <algorithm>
#include <cmath>
#include <deque>

#include "search/initial_design.hpp"
#include "search/strategies.hpp"

namespace tunekit::detail {
namespace {

class GeneticStrategy final : public Strategy {
 public:
  GeneticStrategy(std::size_t pop, double mutation, std::size_t tournament)
      : pop_(pop), mutation_(mutation), tournament_(tournament) {}

  std::string_view name() const override { return "genetic"; }

  void start(const Enumeration&, const SearchPrior& prior) override { prior_ = prior; }

  std::vector<std::size_t> propose(const Enumeration& space, const History& history,
                                   std::size_t max, Rng& rng) override {
    if (queue_.empty()) breed(space, history, rng);
    std::vector<std::size_t> out;
    while (!queue_.empty() && out.size() < max) {
      if (!history.evaluated(queue_.front())) out.push_back(queue_.front());
      queue_.pop_front();
    }
    return out;
  }

  void observe(const Enumeration&, const History& history,
               std::span<const Evaluation> results) override {
    for (const Evaluation& e : results) population_.push_back(e.index);
    // The points evaluated before this strategy (the default) belong to it too.
    for (const Evaluation& e : history.evaluations())
      if (!seeded_ && std::isfinite(e.value)) population_.push_back(e.index);
    seeded_ = true;
    std::sort(population_.begin(), population_.end(), [&](std::size_t a, std::size_t b) {
      const double va = *history.value(a);
      const double vb = *history.value(b);
      return va != vb ? va < vb : a < b;
    });
    population_.erase(std::unique(population_.begin(), population_.end()), population_.end());
    if (population_.size() > pop_) population_.resize(pop_);
  }

 private:
  void breed(const Enumeration& space, const History& history, Rng& rng) {
    std::vector<bool> queued(space.size(), false);
    auto enqueue = [&](std::size_t i) {
      if (history.evaluated(i) || queued[i]) return false;
      queued[i] = true;
      queue_.push_back(i);
      return true;
    };
    if (population_.size() < 2) {  // initial population: the initial design
      const std::size_t have = population_.empty() ? history.size() : 0;
      const std::size_t want = std::max(pop_, have + 2) - have;
      for (std::size_t i : initial_design(space, history, prior_, want, rng)) enqueue(i);
      if (queue_.empty())
        if (const std::optional<std::size_t> i = random_unevaluated(history, rng)) enqueue(*i);
      return;
    }
    std::uniform_real_distribution<double> u(0.0, 1.0);
    std::vector<std::uint32_t> child(space.width());
    for (std::size_t k = 0; k < pop_; ++k) {
      const std::size_t a = select(history, rng);
      const std::size_t b = select(history, rng);
      bool placed = false;
      for (int attempt = 0; attempt < 10 && !placed; ++attempt) {
        const std::span<const std::uint32_t> pa = space.point(a);
        const std::span<const std::uint32_t> pb = space.point(b);
        for (std::size_t g = 0; g < child.size(); ++g) {
          child[g] = u(rng) < 0.5 ? pa[g] : pb[g];
          if (u(rng) < mutation_) {
            const std::size_t count = space.parameters()[g].values.size();
            std::uniform_int_distribution<std::uint32_t> v(0,
                                                           static_cast<std::uint32_t>(count - 1));
            child[g] = v(rng);
          }
        }
        if (const std::optional<std::size_t> i = space.index_of_point(child)) placed = enqueue(*i);
      }
      if (!placed) {
        std::vector<std::size_t> near =
            unevaluated_neighbours(space, history, a, Neighbourhood::hamming);
        std::shuffle(near.begin(), near.end(), rng);
        for (std::size_t i : near)
          if ((placed = enqueue(i))) break;
      }
      if (!placed)
        if (const std::optional<std::size_t> i = random_unevaluated(history, rng)) enqueue(*i);
    }
  }

  std::size_t select(const History& history, Rng& rng) const {
    std::uniform_int_distribution<std::size_t> pick(0, population_.size() - 1);
    std::size_t winner = population_[pick(rng)];
    for (std::size_t k = 1; k < tournament_; ++k) {
      const std::size_t other = population_[pick(rng)];
      if (*history.value(other) < *history.value(winner)) winner = other;
    }
    return winner;
  }

  std::size_t pop_;
  SearchPrior prior_;
  bool seeded_ = false;
  double mutation_;
  std::size_t tournament_;
  std::vector<std::size_t> population_;
  std::deque<std::size_t> queue_;
};

}  // namespace

std::unique_ptr<Strategy> make_genetic(StrategyOptions& options) {
  const std::size_t pop = options.count("pop", 20, 2, 10000);
  const double mutation = options.number("mutation", 0.1, 0.0, 1.0);
  const std::size_t tournament = options.count("tournament", 2, 1, 100);
  return std::make_unique<GeneticStrategy>(pop, mutation, tournament);
}

}  // namespace tunekit::detail
