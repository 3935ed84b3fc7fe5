// The search driver: asks a strategy for proposals, filters repeats, evaluates within budget.
#include <algorithm>

#include "tunekit/errors.hpp"
#include "tunekit/strategy.hpp"

namespace tunekit {

SearchResult search(const Enumeration& space, Strategy& strategy, const Objective& objective,
                    const Budget& budget, std::uint64_t seed) {
  if (!objective) throw UsageError("search() needs an objective");
  if (budget.seconds && !(*budget.seconds >= 0))
    throw UsageError("a time budget must be a non-negative number of seconds");
  SearchResult result;
  result.strategy = std::string(strategy.name());
  result.seed = seed;
  result.history = History(space.size());
  History& history = result.history;
  Rng rng(seed);
  constexpr std::size_t max_batch = 256;
  int empty_rounds = 0;
  std::vector<bool> in_batch(space.size(), false);
  while (true) {
    if (history.size() == space.size()) {
      result.stop_reason = "space exhausted";
      break;
    }
    if (budget.evaluations && history.size() >= *budget.evaluations) {
      result.stop_reason = "evaluation budget";
      break;
    }
    if (budget.seconds && result.clock_seconds >= *budget.seconds) {
      result.stop_reason = "time budget";
      break;
    }
    std::size_t max = std::min(max_batch, space.size() - history.size());
    if (budget.evaluations) max = std::min(max, *budget.evaluations - history.size());
    std::vector<std::size_t> proposals = strategy.propose(space, history, max, rng);
    std::vector<std::size_t> batch;
    for (std::size_t index : proposals) {
      if (index >= space.size() || history.evaluated(index) || in_batch[index] ||
          batch.size() == max) {
        ++result.dropped_proposals;
        continue;
      }
      in_batch[index] = true;
      batch.push_back(index);
    }
    for (std::size_t index : batch) in_batch[index] = false;
    if (batch.empty()) {
      if (++empty_rounds >= 3) {
        result.stop_reason = "strategy has nothing more to propose";
        break;
      }
      continue;
    }
    empty_rounds = 0;
    std::vector<Evaluation> done;
    bool out_of_time = false;
    for (std::size_t index : batch) {
      const ObjectiveResult r = objective(index);
      if (budget.seconds && result.clock_seconds + r.cost_seconds > *budget.seconds) {
        out_of_time = true;  // the budget would stop it: it does not count
        break;
      }
      result.clock_seconds += r.cost_seconds;
      Evaluation e;
      e.index = index;
      e.status = r.status;
      e.value = r.value;
      e.clock_seconds = result.clock_seconds;
      history.add(e);
      done.push_back(history.evaluations().back());
    }
    if (!done.empty()) strategy.observe(space, history, done);
    if (out_of_time) {
      result.stop_reason = "time budget";
      break;
    }
  }
  return result;
}

}  // namespace tunekit
