// auto: the default strategy. A small space is measured exhaustively — in the cost model's
// order where the search has a model (the `model` strategy unpruned: the same points, the
// strongest first, so the far-behind and hopeless cuts judge the slow ones against a fast
// incumbent rather than the default; issue #17 item 3), else in enumeration order; a large one
// is searched by a robust strategy (`inner`: surrogate, the best measured on the recorded
// spaces, see docs/strategies.md), capped at `cap` evaluations when no budget is given, so
// `tunekit tune` on a 10^5-point space ends in minutes, not days. An evaluation budget
// replaces the cap; a time budget lifts it (the caller bounded the search already: the cap
// would only stop a 60 s budget after a few seconds of cheap kernels). A capped search is
// partial: stored as budget_cut, replaced by an unrestricted one.
#include <algorithm>

#include "search/strategies.hpp"

namespace tunekit::detail {
namespace {

class AutoStrategy final : public Strategy {
 public:
  AutoStrategy(std::size_t small, std::size_t cap, std::string inner)
      : small_(small), cap_(cap), inner_spec_(std::move(inner)) {}
  std::string_view name() const override { return "auto"; }
  bool prunes(const Enumeration& space) const override { return space.size() > small_; }

  void start(const Enumeration& space, const SearchPrior& prior) override {
    SearchPrior p = prior;
    if (space.size() <= small_) {
      StrategyOptions every = StrategyOptions::parse("strategy", "model", "");
      inner_ = make_model(every);
    } else {
      inner_ = StrategyRegistry::builtin().make(inner_spec_);
      if (!prior.budget_evaluations && !prior.time_budget) limit_ = cap_;
      p.budget_evaluations = prior.budget_evaluations.value_or(cap_);
    }
    inner_->start(space, p);
  }
  std::vector<std::size_t> propose(const Enumeration& space, const History& history,
                                   std::size_t max, Rng& rng) override {
    if (limit_) {
      if (history.size() >= *limit_) return {};
      max = std::min(max, *limit_ - history.size());
    }
    return inner_->propose(space, history, max, rng);
  }
  void observe(const Enumeration& space, const History& history,
               std::span<const Evaluation> results) override {
    inner_->observe(space, history, results);
  }

 private:
  std::size_t small_;
  std::size_t cap_;
  std::string inner_spec_;
  std::unique_ptr<Strategy> inner_;
  std::optional<std::size_t> limit_;
};

}  // namespace

std::unique_ptr<Strategy> make_auto(StrategyOptions& options) {
  const std::size_t small = options.count("small", 256, 1, std::size_t{1} << 40);
  const std::size_t cap = options.count("cap", 200, 1, std::size_t{1} << 40);
  std::string inner = options.word("inner", "surrogate", {});
  if (inner == "auto")
    throw UsageError("strategy 'auto': inner=auto would never end; name another");
  StrategyRegistry::builtin().make(inner);  // an unknown inner strategy fails here
  return std::make_unique<AutoStrategy>(small, cap, std::move(inner));
}

}  // namespace tunekit::detail
