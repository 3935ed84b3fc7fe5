// The live tuner's evaluator (DESIGN §6): for a batch of proposed points, admission, the
// compile pass (parallel where the device allows), then the schedule's timing windows — all
// under the search's budget.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tunekit/strategy.hpp"
#include "tuner/schedule.hpp"
#include "tuner/search_budget.hpp"
#include "tuner/search_context.hpp"

namespace tunekit::detail {

class TuningEvaluator final : public Evaluator {
 public:
  // build_threads: at most this many builds at once (the device may say one).
  TuningEvaluator(SearchContext& context, Schedule& schedule, SearchBudget& budget,
                  int build_threads, std::function<double()> now);

  std::vector<PointResult> evaluate(std::span<const std::size_t> batch) override;
  double elapsed_seconds() const override { return budget_.elapsed(); }
  std::string stopped() const override { return stopped_; }

 private:
  // Builds what the budget admits of `points`; returns the built ones in order. Failures and
  // refusals go to `out`; points not started are finished as stopped.
  std::vector<std::size_t> compile_pass(std::span<const std::size_t> points,
                                        std::vector<PointResult>& out);
  void out_of_time(std::string what);
  // One round of a batch: build, then time.
  std::vector<PointResult> evaluate_round(std::span<const std::size_t> batch);

  SearchContext& context_;
  Schedule& schedule_;
  SearchBudget& budget_;
  int build_threads_;
  std::function<double()> now_;
  std::string stopped_;
};

}  // namespace tunekit::detail
