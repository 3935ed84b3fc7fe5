// A/B refinement of plan decisions under one shared call budget (seed 000 `call_budget`).
// A plan is a set of binary decisions (flips: fuse or not, place a buffer here or there,
// split a reduction or not). Refinement tries one flip at a time against the incumbent plan
// by a paired score and keeps it only when it surely wins; every comparison spends trial
// calls from a share of one budget that several searches draw from.
#pragma once

#include <atomic>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tunekit/stats.hpp"

namespace tunekit {

class CallShare;

// A number of trial calls shared by several searches. Thread-safe; it must outlive the
// shares taken from it.
class CallBudget {
 public:
  explicit CallBudget(std::size_t calls);
  CallBudget(const CallBudget&) = delete;
  CallBudget& operator=(const CallBudget&) = delete;

  std::size_t total() const { return total_; }
  std::size_t spent() const { return spent_.load(std::memory_order_relaxed); }
  std::size_t left() const { return total_ - spent(); }
  // One search's share: it may spend at most `calls` (and never more than the budget has
  // left, whatever the other shares spent).
  CallShare share(std::string name, std::size_t calls);
  // A share of `fraction` (in (0, 1]) of the total; anything else is a UsageError.
  CallShare share_fraction(std::string name, double fraction);

 private:
  friend class CallShare;
  bool try_spend(std::size_t calls);

  std::size_t total_;
  std::atomic<std::size_t> spent_{0};
};

class CallShare {
 public:
  CallShare(const CallShare&) = delete;
  CallShare& operator=(const CallShare&) = delete;
  CallShare(CallShare&& other) noexcept;

  // All or nothing: spends `calls` from this share and the budget, or nothing (false) when
  // either has fewer left.
  bool try_spend(std::size_t calls);
  std::size_t left() const;
  std::size_t spent() const { return spent_.load(std::memory_order_relaxed); }
  std::size_t cap() const { return cap_; }
  const std::string& name() const { return name_; }

 private:
  friend class CallBudget;
  CallShare(CallBudget& budget, std::string name, std::size_t cap);

  CallBudget* budget_;
  std::string name_;
  std::size_t cap_;
  std::atomic<std::size_t> spent_{0};
};

// One binary plan decision. `prior_profit`: the expected fractional gain of flipping it
// (0.1: 10 % faster), from a cost model or an earlier run; it orders the flips when asked to.
struct Flip {
  std::string name;
  double prior_profit = 0;
};

// A plan: one bit per flip, in the order of the flips given to refine_flips (true: flipped).
using PlanBits = std::vector<bool>;

// The measurement seam: a paired comparison of a contender plan against the incumbent
// (A B B A alternation of complete runs of each plan; stats::paired_score of contender /
// incumbent). A comparison costs calls_per_comparison() trial calls.
class PlanComparator {
 public:
  virtual ~PlanComparator() = default;
  virtual std::size_t calls_per_comparison() const = 0;
  virtual stats::PairedScore compare(const PlanBits& incumbent, const PlanBits& contender) = 0;
};

enum class FlipOrder {
  prior_profit,     // by Flip::prior_profit, highest first
  measured_profit,  // each flip screened once against the start plan, best measured first
};

struct RefineOptions {
  FlipOrder order = FlipOrder::prior_profit;
  // A flip is kept when its paired ratio's 95 % upper bound is under 1 / (1 + tie_band).
  double tie_band = 0.02;
};

struct FlipStep {
  std::string flip;
  bool screening = false;  // a measured-profit screen against the start plan
  bool accepted = false;
  stats::PairedScore score;
  std::string why;
};

struct RefineReport {
  PlanBits start;
  PlanBits plan;  // the incumbent when refinement ended
  std::vector<FlipStep> steps;
  // Flips never compared because the share or the budget ran out, in the order they would
  // have been tried.
  std::vector<std::string> unexplored;
  bool budget_spent = false;
  std::size_t calls_spent = 0;
  FlipOrder order = FlipOrder::prior_profit;
};

// Refines `start` (one bit per flip; empty: all false) one flip at a time. Every comparison
// is paid from `share` before it runs; when it cannot be paid, refinement stops and says so.
// A UsageError for a start of the wrong length, duplicate flip names, a NaN prior or a
// negative tie band; a comparison's UsageError or FatalError propagates (any other exception
// is that step's failure: the incumbent stands).
RefineReport refine_flips(std::span<const Flip> flips, PlanBits start, PlanComparator& comparator,
                          CallShare& share, const RefineOptions& options = {});

}  // namespace tunekit
