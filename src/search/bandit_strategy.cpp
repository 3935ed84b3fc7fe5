// bandit: an ensemble over other strategies, choosing which one proposes next with
// OpenTuner's AUC bandit: an arm's credit is the area under its recent "improved the best"
// curve (later uses weigh more), plus an exploration bonus c * sqrt(2 ln t / uses).
// Every arm proposes from the shared history and observes only its own results.
#include <cmath>
#include <deque>

#include "search/strategies.hpp"
#include "tunekit/errors.hpp"

namespace tunekit::detail {
namespace {

struct Arm {
  std::unique_ptr<Strategy> strategy;
  std::deque<bool> recent;  // improved the best, for the last `window` uses
  std::size_t uses = 0;
};

class BanditStrategy final : public Strategy {
 public:
  BanditStrategy(std::vector<Arm> arms, std::size_t window, double c)
      : arms_(std::move(arms)), window_(window), c_(c) {}

  std::string_view name() const override { return "bandit"; }

  // Every arm learns the prior (the budget, the default, the cost model) too.
  void start(const Enumeration& space, const SearchPrior& prior) override {
    for (Arm& arm : arms_) arm.strategy->start(space, prior);
  }

  std::vector<std::size_t> propose(const Enumeration& space, const History& history,
                                   std::size_t max, Rng& rng) override {
    std::vector<bool> tried(arms_.size(), false);
    for (std::size_t round = 0; round < arms_.size(); ++round) {
      const std::size_t a = choose(tried);
      tried[a] = true;
      std::vector<std::size_t> out =
          arms_[a].strategy->propose(space, history, std::min<std::size_t>(max, 1), rng);
      if (!out.empty()) {
        last_arm_ = a;
        best_before_ =
            history.best() ? history.best()->value : std::numeric_limits<double>::infinity();
        return out;
      }
    }
    return {};
  }

  void observe(const Enumeration& space, const History& history,
               std::span<const Evaluation> results) override {
    if (!last_arm_) return;
    Arm& arm = arms_[*last_arm_];
    arm.strategy->observe(space, history, results);
    for (const Evaluation& e : results) {
      const bool improved = e.ok() && e.value < best_before_;
      best_before_ = std::min(best_before_, e.value);
      arm.recent.push_back(improved);
      if (arm.recent.size() > window_) arm.recent.pop_front();
      ++arm.uses;
      ++total_;
    }
    last_arm_.reset();
  }

 private:
  std::size_t choose(const std::vector<bool>& tried) const {
    std::optional<std::size_t> pick;
    double best_score = -1;
    for (std::size_t a = 0; a < arms_.size(); ++a) {
      if (tried[a]) continue;
      const Arm& arm = arms_[a];
      if (arm.uses == 0) return a;  // every arm once first
      double auc = 0;
      double weight = 0;
      std::size_t pos = 0;
      for (bool improved : arm.recent) {
        ++pos;
        weight += static_cast<double>(pos);
        auc += improved ? static_cast<double>(pos) : 0.0;
      }
      const double credit = weight > 0 ? auc / weight : 0.0;
      const double score = credit + c_ * std::sqrt(2.0 * std::log(static_cast<double>(total_)) /
                                                   static_cast<double>(arm.uses));
      if (!pick || score > best_score) {
        best_score = score;
        pick = a;
      }
    }
    return *pick;
  }

  std::vector<Arm> arms_;
  std::size_t window_;
  double c_;
  std::size_t total_ = 0;
  std::optional<std::size_t> last_arm_;
  double best_before_ = std::numeric_limits<double>::infinity();
};

}  // namespace

std::unique_ptr<Strategy> make_bandit(StrategyOptions& options, const StrategyRegistry& registry) {
  const std::string arms_text = options.word("arms", "ils+anneal+genetic+random", {});
  const std::size_t window = options.count("window", 50, 1, 100000);
  const double c = options.number("c", 0.05, 0.0, 100.0);
  std::vector<Arm> arms;
  std::size_t start = 0;
  while (start <= arms_text.size()) {
    const std::size_t plus = std::min(arms_text.find('+', start), arms_text.size());
    const std::string name = arms_text.substr(start, plus - start);
    if (name == "bandit") throw UsageError("strategy 'bandit': an arm cannot be another bandit");
    arms.push_back({registry.make(name), {}, 0});
    start = plus + 1;
  }
  if (arms.empty()) throw UsageError("strategy 'bandit': arms=a+b+... needs at least one strategy");
  return std::make_unique<BanditStrategy>(std::move(arms), window, c);
}

}  // namespace tunekit::detail
