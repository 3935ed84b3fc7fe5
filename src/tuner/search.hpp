// The tuner's search (DESIGN §6): the one search loop of src/search over the op's candidate
// space, with the strategy and the schedule TunerOptions name, the compile pass and the budget.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/strategy.hpp"
#include "tunekit/tuner_options.hpp"
#include "tunekit/work_queue.hpp"

namespace tunekit::detail {

// Checks TunerOptions' search fields (strategy, schedule, budgets, threads): a UsageError
// that says what to write instead.
void check_search_options(const TunerOptions& options);

// Whether a search with these options may stop before its strategy is done (a budget, or a
// strategy that prunes the points that compute differently at `key`): such a search is stored
// as budget_cut.
bool search_is_restricted(const TunerOptions& options, const OpBase& op, const Key& key);

// Runs the search and returns the report with the winner set (the default when nothing
// validated and measured cleanly, or when the budget left the default unmeasured: source
// budget_floor_unmeasured). `prior` carries the cost model's view of the points when there is
// one. `banned`: candidates that failed live for this key (index -> why), rejected without a
// trial. Classified failures are in the report; UsageError and FatalError propagate.
// A search shared with the workers of a store (TunerOptions::decide.share).
struct SharedRun {
  WorkQueue* queue = nullptr;
  SharedSearch search;  // identity digest, op, key and coordinator: what workers check
};

TuneReport run_search(Device& device, const OpBase& op, const Key& key, const TunerOptions& options,
                      const SearchPrior& prior, const std::map<std::size_t, std::string>& banned,
                      const SharedRun* shared = nullptr);

}  // namespace tunekit::detail
