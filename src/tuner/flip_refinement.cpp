// refine_flips: A/B refinement of binary plan decisions (include/tunekit/refinement.hpp).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tunekit/errors.hpp"
#include "tunekit/refinement.hpp"

namespace tunekit {
namespace {

std::string ratio_text(const stats::PairedScore& s) {
  return "paired ratio " + std::to_string(s.ratio) + " (95 % bound " +
         std::to_string(s.ratio_high) + ", relative MAD " + std::to_string(s.relative_mad) + ", " +
         std::to_string(s.pairs) + " pairs)";
}

void check(std::span<const Flip> flips, const PlanBits& start, const RefineOptions& options) {
  if (!start.empty() && start.size() != flips.size())
    throw UsageError("refine_flips: the start plan has " + std::to_string(start.size()) +
                     " bits for " + std::to_string(flips.size()) +
                     " flips; give one bit per flip, or none for all unflipped");
  std::set<std::string> names;
  for (const Flip& f : flips) {
    if (!names.insert(f.name).second)
      throw UsageError("refine_flips: the flip '" + f.name +
                       "' is listed twice; names must be unique");
    if (!std::isfinite(f.prior_profit))
      throw UsageError("refine_flips: the flip '" + f.name +
                       "' has a prior profit that is not a finite number");
  }
  if (!(options.tie_band >= 0) || !std::isfinite(options.tie_band))
    throw UsageError("refine_flips: the tie band must be a finite number >= 0");
}

// One refinement: the plan, the share it pays from, the steps it took.
class Refinement {
 public:
  Refinement(std::span<const Flip> flips, PlanComparator& comparator, CallShare& share,
             const RefineOptions& options, RefineReport& report)
      : flips_(flips),
        comparator_(comparator),
        share_(share),
        needed_(1 / (1 + options.tie_band)),
        report_(report) {}

  // Compares the incumbent with flip i toggled; nullopt when the budget cannot pay for it.
  std::optional<FlipStep> compare(std::size_t i, bool screening) {
    const std::size_t cost = comparator_.calls_per_comparison();
    if (!share_.try_spend(cost)) {
      report_.budget_spent = true;
      return std::nullopt;
    }
    report_.calls_spent += cost;
    FlipStep step;
    step.flip = flips_[i].name;
    step.screening = screening;
    PlanBits contender = report_.plan;
    contender[i] = !contender[i];
    try {
      step.score = comparator_.compare(report_.plan, contender);
    } catch (const FatalError&) {
      throw;
    } catch (const UsageError&) {
      throw;  // misuse (e.g. two plans made with one name), not a plan that failed
    } catch (const std::exception& e) {
      step.why = std::string("the comparison failed: ") + e.what() + "; the incumbent stands";
      return step;
    }
    step.accepted = step.score.scored && step.score.ratio_high < needed_;
    if (!step.score.scored)
      step.why = "no score (" + step.score.why + "); the incumbent stands";
    else
      step.why = ratio_text(step.score) +
                 (step.accepted ? " is surely under " : " is not surely under ") +
                 std::to_string(needed_) + (step.accepted ? ": flipped" : ": the incumbent stands");
    return step;
  }

  // Walks `order`; a flip whose screen already decided it against the start plan (and the
  // plan is still the start) is not measured twice.
  void walk(const std::vector<std::size_t>& order, const std::vector<const FlipStep*>& screens) {
    for (std::size_t at = 0; at < order.size(); ++at) {
      const std::size_t i = order[at];
      const FlipStep* screen = screens.empty() ? nullptr : screens[i];
      if (screen && (!screen->accepted || report_.plan == report_.start)) {
        if (screen->accepted) report_.plan[i] = !report_.plan[i];
        continue;  // its screen is its verdict
      }
      std::optional<FlipStep> step = compare(i, false);
      if (!step) {
        for (std::size_t rest = at; rest < order.size(); ++rest)
          report_.unexplored.push_back(flips_[order[rest]].name);
        return;
      }
      if (step->accepted) report_.plan[i] = !report_.plan[i];
      report_.steps.push_back(std::move(*step));
    }
  }

 private:
  std::span<const Flip> flips_;
  PlanComparator& comparator_;
  CallShare& share_;
  double needed_;
  RefineReport& report_;
};

}  // namespace

RefineReport refine_flips(std::span<const Flip> flips, PlanBits start, PlanComparator& comparator,
                          CallShare& share, const RefineOptions& options) {
  check(flips, start, options);
  RefineReport report;
  report.order = options.order;
  report.start = start.empty() ? PlanBits(flips.size(), false) : std::move(start);
  report.plan = report.start;
  Refinement refinement(flips, comparator, share, options, report);

  std::vector<std::size_t> order(flips.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<const FlipStep*> screens;
  if (options.order == FlipOrder::prior_profit) {
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return flips[a].prior_profit > flips[b].prior_profit;
    });
  } else {
    // Screen every flip against the start plan, then walk them best measured first.
    std::vector<double> measured(flips.size(), 1.0);
    std::vector<std::size_t> screened;
    report.steps.reserve(2 * flips.size());  // screens stay put while the walk appends
    for (std::size_t i : order) {
      std::optional<FlipStep> step = refinement.compare(i, true);
      if (!step) {
        for (std::size_t rest = i; rest < flips.size(); ++rest)
          report.unexplored.push_back(flips[rest].name);
        break;
      }
      if (step->accepted) measured[i] = step->score.ratio;
      report.steps.push_back(std::move(*step));
      screened.push_back(i);
    }
    screens.assign(flips.size(), nullptr);
    for (std::size_t s = 0; s < screened.size(); ++s) screens[screened[s]] = &report.steps[s];
    std::stable_sort(screened.begin(), screened.end(),
                     [&](std::size_t a, std::size_t b) { return measured[a] < measured[b]; });
    order = std::move(screened);
  }
  refinement.walk(order, screens);
  return report;
}

}  // namespace tunekit
