// Search strategies over an enumerated space (DESIGN §6 "Large spaces"): a small Strategy
// interface, a registry by name with an options string ("anneal:t0=2,alpha=0.99"), budgets in
// evaluations and in (simulated or real) seconds, and the driver that runs one search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/outcome.hpp"
#include "tunekit/registry.hpp"
#include "tunekit/space.hpp"

namespace tunekit {

// One evaluated configuration. Failed ones (status != ok) are data: strategies learn from them.
struct Evaluation {
  std::size_t index = 0;  // into the Enumeration
  Status status = Status::ok;
  // Objective, lower is better; inf when failed. A point cut as hopeless (or dropped by a
  // race) keeps its partial reading: slow, but known to be slow.
  double value = std::numeric_limits<double>::infinity();
  double clock_seconds = 0;  // the budget clock after this evaluation
  bool ok() const { return status == Status::ok; }
};

// What has been evaluated so far, in order.
class History {
 public:
  explicit History(std::size_t space_size);
  void add(const Evaluation& evaluation);  // an index evaluated twice is a UsageError

  const std::vector<Evaluation>& evaluations() const { return list_; }
  std::size_t size() const { return list_.size(); }
  std::size_t space_size() const { return evaluated_.size(); }
  bool evaluated(std::size_t index) const { return evaluated_.at(index); }
  // The objective of an evaluated index (inf when it failed); nullopt when not evaluated.
  std::optional<double> value(std::size_t index) const;
  // The best successful evaluation; nullptr when none succeeded.
  const Evaluation* best() const { return best_ ? &list_[*best_] : nullptr; }

 private:
  std::vector<Evaluation> list_;
  std::vector<bool> evaluated_;
  std::vector<double> value_;
  std::optional<std::size_t> best_;
};

// What is known before the first evaluation (DESIGN §6): the op's default point (the tuner
// evaluates it first, so it is in the history too), the cost model's view of every point
// where the op has one, and the budget, so an initial design can scale with it.
struct SearchPrior {
  std::optional<std::size_t> default_index;
  // Per index: the model's ranking seconds; NaN where the model cannot score a point. Empty
  // when there is no model.
  std::vector<double> model_seconds;
  // Per index: the model's decision rank (1: its pick; ties broken as the tuner breaks them),
  // 0 where unranked. Empty when there is no model.
  std::vector<int> model_rank;
  double floor_seconds = 0;  // the roofline floor (0: unknown)
  // Stop once a measured point is within this factor of floor_seconds (0: never).
  double floor_factor = 0;
  std::optional<std::size_t> budget_evaluations;  // excluding the points evaluated first
  // The caller bounds the search by wall-clock time: a strategy's own evaluation cap (auto's)
  // gives way to it.
  bool time_budget = false;
};

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;
  // Called once before the first proposal.
  virtual void start(const Enumeration& space, const SearchPrior& prior) {
    (void)space, (void)prior;
  }
  // Whether it leaves points of `space` unevaluated by design (the model strategy's pruning
  // and floor stop, auto's cap on a large space) when no budget is given: such a search is
  // partial, stored like a budget cut and replaced by a full one.
  virtual bool prunes(const Enumeration& space) const {
    (void)space;
    return false;
  }
  // Up to `max` (>= 1) distinct indices that `history` has not evaluated. Returning none says
  // the strategy has nothing more to propose. All randomness comes from `rng`.
  virtual std::vector<std::size_t> propose(const Enumeration& space, const History& history,
                                           std::size_t max, Rng& rng) = 0;
  // The results of this strategy's proposals, in order (a budget may cut a batch short; the
  // proposals not evaluated are simply absent). `history` already holds them.
  virtual void observe(const Enumeration& space, const History& history,
                       std::span<const Evaluation> results) {
    (void)space, (void)history, (void)results;
  }
};

// Strategies are plug-ins by name with an options string (registry.hpp): one parser and one
// entry shape, shared with the tuner's schedules.
using StrategyOptions = SpecOptions;
using StrategyEntry = RegistryEntry<Strategy>;

// Strategies by name: exhaustive, random, anneal, genetic, ils (alias greedy_ils), bayes
// (alias bo), bandit, model. add() registers more.
class StrategyRegistry : public Registry<Strategy> {
 public:
  StrategyRegistry() : Registry<Strategy>("strategy") {}
  static StrategyRegistry builtin();
};

// The strategy `tune` and `replay` use when none is named: `auto` measures a small space
// exhaustively and searches a large one with a robust strategy, capped (see strategies.md).
inline constexpr std::string_view kDefaultStrategy = "auto";

struct Budget {
  std::optional<std::size_t> evaluations;  // at most this many evaluations
  std::optional<double> seconds;           // at most this much (simulated or real) time
};

// What evaluating one configuration gave, and what it cost on the budget clock.
struct ObjectiveResult {
  Status status = Status::ok;
  double value = 0;  // lower is better; ignored when status != ok (but hopeless)
  double cost_seconds = 0;
  std::string message;
};
using Objective = std::function<ObjectiveResult(std::size_t index)>;

// One point of a batch as the evaluator judged it.
struct PointResult {
  std::size_t index = 0;
  Status status = Status::ok;
  double value = std::numeric_limits<double>::infinity();
};

// Evaluates batches of proposed points and keeps the budget clock (DESIGN §6: the tuner's
// evaluator builds, validates and measures them under a schedule; replay's reads a recording).
class Evaluator {
 public:
  virtual ~Evaluator() = default;
  // Evaluates distinct, unevaluated points. Returns the points it evaluated, in any order;
  // points it did not reach (the budget stopped it) are left out.
  virtual std::vector<PointResult> evaluate(std::span<const std::size_t> batch) = 0;
  // Seconds on the budget clock so far.
  virtual double elapsed_seconds() const = 0;
  // Why the evaluator stopped early (non-empty ends the search), e.g. "time budget".
  virtual std::string stopped() const { return {}; }
};

struct SearchResult {
  std::string strategy;
  std::uint64_t seed = 0;
  History history{0};
  double clock_seconds = 0;
  // Why the search ended: "evaluation budget", "time budget", "space exhausted",
  // "strategy has nothing more to propose".
  std::string stop_reason;
  std::size_t dropped_proposals = 0;  // repeats or out-of-range indices the driver filtered out
  std::size_t first_evaluations = 0;  // points evaluated before the strategy (the default)
};

struct SearchSettings {
  Budget budget;  // evaluations exclude `first`
  std::uint64_t seed = 0;
  SearchPrior prior;
  // Points evaluated before the strategy's first proposal (the default), exempt from the
  // evaluation budget.
  std::vector<std::size_t> first;
  std::size_t max_batch = 256;  // most points asked of the strategy at once
};

// The one search loop (DESIGN §6): asks the strategy for proposals, drops repeats, and has the
// evaluator evaluate them until the budget, the space or the strategy is spent.
SearchResult search(const Enumeration& space, Strategy& strategy, Evaluator& evaluator,
                    const SearchSettings& settings);

// The same loop over a per-point objective whose cost_seconds make the budget clock (replay
// research, tests). With a time budget, an evaluation whose cost would cross it is discarded
// (as a real budget would stop it) and the search ends.
SearchResult search(const Enumeration& space, Strategy& strategy, const Objective& objective,
                    const Budget& budget, std::uint64_t seed);

}  // namespace tunekit
