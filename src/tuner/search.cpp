#include "tuner/search.hpp"

#include <chrono>
#include <cmath>
#include <thread>

#include "tunekit/errors.hpp"
#include "tuner/schedule.hpp"
#include "tuner/search_budget.hpp"
#include "tuner/search_context.hpp"
#include "tuner/tuning_evaluator.hpp"

namespace tunekit::detail {
namespace {

std::function<double()> budget_clock(const TunerOptions& options) {
  if (options.now) return options.now;
  return [] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
}

int build_threads(const TunerOptions& options, const Device& device) {
  if (!device.parallel_builds()) return 1;
  if (options.build_threads > 0) return options.build_threads;
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

void check_search_options(const TunerOptions& options) {
  StrategyRegistry::builtin().make(options.strategy);  // an unknown name or option throws
  builtin_schedules().make(options.schedule);
  if (!(options.budget_seconds >= 0) || !std::isfinite(options.budget_seconds))
    throw UsageError("TunerOptions: budget_seconds must be finite and >= 0 (0: no budget), e.g. 90");
  if (options.build_threads < 0)
    throw UsageError("TunerOptions: build_threads must be >= 0 (0: one per hardware thread)");
  if (!(options.limit >= 0) || !std::isfinite(options.limit))
    throw UsageError("TunerOptions: limit must be finite and >= 0 seconds (0: off)");
}

bool search_is_restricted(const TunerOptions& options) {
  return options.budget_seconds > 0 || options.budget_evaluations > 0 ||
         StrategyRegistry::builtin().make(options.strategy)->prunes();
}

TuneReport run_search(Device& device, const OpBase& op, const Key& key,
                      const TunerOptions& options, const SearchPrior& prior) {
  const std::function<double()> now = budget_clock(options);
  const auto start = std::chrono::steady_clock::now();
  std::unique_ptr<Strategy> strategy = StrategyRegistry::builtin().make(options.strategy);
  std::unique_ptr<Schedule> schedule = builtin_schedules().make(options.schedule);
  SearchBudget budget(options.budget_seconds, now);
  SearchContext context(device, op, key, options);
  TuneReport& r = context.report();
  r.strategy = options.strategy;
  r.schedule = options.schedule;
  r.seed = options.seed;
  r.budget.seconds = options.budget_seconds;
  r.budget.evaluations = options.budget_evaluations;
  if (options.budget_evaluations > 0)
    context.set_progress_total(std::min(op.size(), options.budget_evaluations + 1));
  if (context.prepare_inputs()) {
    if (budget.limited()) context.set_stop([&budget] { return !budget.admits_timing(); });
    TuningEvaluator evaluator(context, *schedule, budget, build_threads(options, device), now);
    SearchSettings settings;
    if (options.budget_evaluations > 0) settings.budget.evaluations = options.budget_evaluations;
    settings.seed = options.seed;
    settings.prior = prior;
    settings.prior.default_index = r.default_index;
    settings.first = {r.default_index};  // the floor: measured first, whatever the budget
    const SearchResult result = search(op.enumeration(), *strategy, evaluator, settings);
    r.stop_reason = result.stop_reason;
    r.budget.reserve_seconds = budget.reserve();
    const bool exhausted = result.history.size() == op.size();
    r.budget.cut = !exhausted && (result.stop_reason == "evaluation budget" ||
                                  result.stop_reason == "time budget" || strategy->prunes());
    if (r.budget.cut && r.budget.stopped.empty()) {
      r.budget.stopped = result.stop_reason == "evaluation budget"
                             ? "the evaluation budget: " + std::to_string(op.size() -
                                                                          result.history.size()) +
                                   " points never proposed"
                             : "the strategy pruned: " +
                                   std::to_string(op.size() - result.history.size()) +
                                   " points left unmeasured by design";
    }
    context.choose();
    const CandidateReport* def = context.find(r.default_index);
    if (def && def->outcome.status == Status::stopped) {
      // The budget was spent before the floor could be measured: the default ships, and
      // nothing is stored (no clean measurement).
      r.source = Source::budget_floor_unmeasured;
      r.winner = r.default_index;
      r.winner_name = r.default_name;
      r.winner_score = 0;
      r.speedup = 1;
      for (CandidateReport& c : r.candidates) c.winner = c.index == r.default_index;
      r.reason = "the budget was spent before the default could be measured: the default ships";
    }
  }
  r.seconds_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::move(r);
}

}  // namespace tunekit::detail
