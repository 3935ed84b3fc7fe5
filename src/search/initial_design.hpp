// What the strategies share about their first points (issue #11 item 8): an initial design
// whose size scales with the evaluation budget, built from what is known before the first
// evaluation (the op's default, the cost model's ranking) and then from points that cover
// parameter values not yet seen. Also the factory of the `surrogate` strategy.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "tunekit/strategy.hpp"

namespace tunekit::detail {

// The size of an initial design for a budget of `budget` evaluations: ceil(sqrt(B) / 2) + 1,
// at least 2 and at most `most` (`most` when unbudgeted). 11 -> 3, 54 -> 5, 336 -> 11,
// 1455 -> 20 (with most = 20).
std::size_t design_size(const std::optional<std::size_t>& budget, std::size_t most);

// The cost model's best-ranked points (finite model_seconds, ascending, ties by index), at most
// `count` of them; none when the prior has no model.
std::vector<std::size_t> model_ranked(const SearchPrior& prior, std::size_t count);

// `count` distinct unevaluated points, in this order: the prior's default (when not yet
// evaluated), up to `count / 2` of the cost model's best-ranked points, then points chosen
// greedily to cover (parameter, value) pairs that neither the history nor the points already
// chosen hold: each is the best of 32 random unevaluated candidates by the number of new pairs
// (ties: the first drawn). Fewer when the space runs out. All randomness from `rng`.
std::vector<std::size_t> initial_design(const Enumeration& space, const History& history,
                                        const SearchPrior& prior, std::size_t count, Rng& rng);

// The evaluated point with the lowest finite value (hopeless readings count: they are
// readings); nullopt when none has one.
std::optional<std::size_t> best_known(const History& history);

// surrogate: Thompson sampling over an additive model of the objective (docs/strategies.md).
std::unique_ptr<Strategy> make_surrogate(StrategyOptions& options);

}  // namespace tunekit::detail
