// The search loop (DESIGN §6): asks a strategy for proposals, filters repeats, and has an
// evaluator evaluate them within budget. Live tuning and replay both run it.
#include <algorithm>

#include "tunekit/errors.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {
namespace {

void record(SearchResult& result, const std::vector<PointResult>& done, double clock,
            std::vector<Evaluation>* out) {
  for (const PointResult& p : done) {
    Evaluation e;
    e.index = p.index;
    e.status = p.status;
    e.value = p.value;
    e.clock_seconds = clock;
    result.history.add(e);
    if (out) out->push_back(result.history.evaluations().back());
  }
}

// Keeps what a strategy proposed that may be evaluated: in range, new, not repeated, at most
// `max` of them.
std::vector<std::size_t> admissible(const std::vector<std::size_t>& proposals,
                                    const History& history, std::size_t max,
                                    std::vector<bool>& in_batch, std::size_t& dropped) {
  std::vector<std::size_t> batch;
  for (std::size_t index : proposals) {
    if (index >= history.space_size() || history.evaluated(index) || in_batch[index] ||
        batch.size() == max) {
      ++dropped;
      continue;
    }
    in_batch[index] = true;
    batch.push_back(index);
  }
  for (std::size_t index : batch) in_batch[index] = false;
  return batch;
}

}  // namespace

SearchResult search(const Enumeration& space, Strategy& strategy, Evaluator& evaluator,
                    const SearchSettings& settings) {
  const Budget& budget = settings.budget;
  if (budget.seconds && !(*budget.seconds >= 0))
    throw UsageError("a time budget must be a non-negative number of seconds");
  if (settings.max_batch == 0) throw UsageError("search: max_batch must be at least 1");
  SearchResult result;
  result.strategy = std::string(strategy.name());
  result.seed = settings.seed;
  result.history = History(space.size());
  History& history = result.history;
  Rng rng(settings.seed);
  std::vector<bool> in_batch(space.size(), false);

  // The points evaluated first (the default): exempt from the evaluation budget.
  if (!settings.first.empty()) {
    const std::vector<std::size_t> first = admissible(
        settings.first, history, settings.first.size(), in_batch, result.dropped_proposals);
    record(result, evaluator.evaluate(first), evaluator.elapsed_seconds(), nullptr);
    result.first_evaluations = history.size();
  }
  SearchPrior prior = settings.prior;
  prior.budget_evaluations = budget.evaluations;
  strategy.start(space, prior);

  int empty_rounds = 0;
  while (true) {
    const std::size_t counted = history.size() - result.first_evaluations;
    if (history.size() == space.size()) {
      result.stop_reason = "space exhausted";
      break;
    }
    if (budget.evaluations && counted >= *budget.evaluations) {
      result.stop_reason = "evaluation budget";
      break;
    }
    if (budget.seconds && evaluator.elapsed_seconds() >= *budget.seconds) {
      result.stop_reason = "time budget";
      break;
    }
    if (std::string why = evaluator.stopped(); !why.empty()) {
      result.stop_reason = why;
      break;
    }
    std::size_t max = std::min(settings.max_batch, space.size() - history.size());
    if (budget.evaluations) max = std::min(max, *budget.evaluations - counted);
    const std::vector<std::size_t> batch =
        admissible(strategy.propose(space, history, max, rng), history, max, in_batch,
                   result.dropped_proposals);
    if (batch.empty()) {
      if (++empty_rounds >= 3) {
        result.stop_reason = "strategy has nothing more to propose";
        break;
      }
      continue;
    }
    empty_rounds = 0;
    std::vector<Evaluation> done;
    record(result, evaluator.evaluate(batch), evaluator.elapsed_seconds(), &done);
    if (!done.empty()) strategy.observe(space, history, done);
    if (done.size() < batch.size() && evaluator.stopped().empty()) {
      result.stop_reason = "time budget";  // the evaluator left points out: out of time
      break;
    }
  }
  result.clock_seconds = evaluator.elapsed_seconds();
  return result;
}

namespace {

// A per-point objective as an evaluator: its costs make the clock; with a time budget, an
// evaluation whose cost would cross it is discarded and the search ends.
class ObjectiveEvaluator final : public Evaluator {
 public:
  ObjectiveEvaluator(const Objective& objective, const Budget& budget)
      : objective_(objective), budget_(budget) {}
  std::vector<PointResult> evaluate(std::span<const std::size_t> batch) override {
    std::vector<PointResult> out;
    for (std::size_t index : batch) {
      const ObjectiveResult r = objective_(index);
      if (budget_.seconds && clock_ + r.cost_seconds > *budget_.seconds) {
        stopped_ = "time budget";  // the budget would stop it: it does not count
        break;
      }
      clock_ += r.cost_seconds;
      out.push_back({index, r.status,
                     r.status == Status::ok || r.status == Status::hopeless
                         ? r.value
                         : std::numeric_limits<double>::infinity()});
    }
    return out;
  }
  double elapsed_seconds() const override { return clock_; }
  std::string stopped() const override { return stopped_; }

 private:
  const Objective& objective_;
  const Budget& budget_;
  double clock_ = 0;
  std::string stopped_;
};

}  // namespace

SearchResult search(const Enumeration& space, Strategy& strategy, const Objective& objective,
                    const Budget& budget, std::uint64_t seed) {
  if (!objective) throw UsageError("search() needs an objective");
  ObjectiveEvaluator evaluator(objective, budget);
  SearchSettings settings;
  settings.budget = budget;
  settings.seed = seed;
  return search(space, strategy, evaluator, settings);
}

}  // namespace tunekit
