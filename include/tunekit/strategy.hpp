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
#include "tunekit/space.hpp"

namespace tunekit {

// One evaluated configuration. Failed ones (status != ok) are data: strategies learn from them.
struct Evaluation {
  std::size_t index = 0;  // into the Enumeration
  Status status = Status::ok;
  double value =
      std::numeric_limits<double>::infinity();  // objective, lower is better; inf when failed
  double clock_seconds = 0;                     // the budget clock after this evaluation
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

class Strategy {
 public:
  virtual ~Strategy() = default;
  virtual std::string_view name() const = 0;
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

// key=value options of a strategy. Every lookup records the key as known; check() then rejects
// any key the strategy did not ask for, listing what it accepts.
class StrategyOptions {
 public:
  // "t0=2,alpha=0.99" (the part after ':' in a strategy spec). Malformed: UsageError.
  static StrategyOptions parse(std::string_view strategy, std::string_view text);

  double number(const std::string& key, double fallback, double min, double max);
  std::size_t count(const std::string& key, std::size_t fallback, std::size_t min, std::size_t max);
  std::string word(const std::string& key, const std::string& fallback,
                   const std::vector<std::string>& allowed);
  // Throws UsageError naming unknown keys and the accepted ones.
  void check() const;

 private:
  std::string strategy_;
  std::vector<std::pair<std::string, std::string>> values_;
  std::vector<std::string> known_;
};

struct StrategyEntry {
  std::string name;
  std::string description;
  std::string options;  // "t0=0.5 (initial temperature), alpha=0.99 (...)"
  std::function<std::unique_ptr<Strategy>(StrategyOptions&)> make;
};

// Strategies by name. builtin() lists exhaustive, random, anneal, genetic, ils (alias
// greedy_ils), bayes (alias bo) and bandit; add() registers more.
class StrategyRegistry {
 public:
  static StrategyRegistry builtin();
  void add(StrategyEntry entry);
  // "name" or "name:key=value,key=value". An unknown name or option is a UsageError that says
  // what is accepted.
  std::unique_ptr<Strategy> make(std::string_view spec) const;
  const std::vector<StrategyEntry>& entries() const { return entries_; }

 private:
  std::vector<StrategyEntry> entries_;
};

struct Budget {
  std::optional<std::size_t> evaluations;  // at most this many evaluations
  std::optional<double> seconds;           // at most this much (simulated or real) time
};

// What evaluating one configuration gave, and what it cost on the budget clock.
struct ObjectiveResult {
  Status status = Status::ok;
  double value = 0;  // lower is better; ignored when status != ok
  double cost_seconds = 0;
  std::string message;
};
using Objective = std::function<ObjectiveResult(std::size_t index)>;

struct SearchResult {
  std::string strategy;
  std::uint64_t seed = 0;
  History history{0};
  double clock_seconds = 0;
  // Why the search ended: "evaluation budget", "time budget", "space exhausted",
  // "strategy has nothing more to propose".
  std::string stop_reason;
  std::size_t dropped_proposals = 0;  // repeats or out-of-range indices the driver filtered out
};

// Runs `strategy` on `space` until the budget (or the space) is spent. The driver never
// evaluates an index twice and never exceeds the budget: with a time budget, an evaluation
// whose cost would cross it is discarded (as a real budget would stop it) and the search ends.
SearchResult search(const Enumeration& space, Strategy& strategy, const Objective& objective,
                    const Budget& budget, std::uint64_t seed);

}  // namespace tunekit
