// The built-in strategies' factories (one file each) and helpers they share.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "tunekit/strategy.hpp"

namespace tunekit::detail {

std::unique_ptr<Strategy> make_exhaustive(StrategyOptions& options);
std::unique_ptr<Strategy> make_random(StrategyOptions& options);
std::unique_ptr<Strategy> make_anneal(StrategyOptions& options);
std::unique_ptr<Strategy> make_genetic(StrategyOptions& options);
std::unique_ptr<Strategy> make_ils(StrategyOptions& options);
std::unique_ptr<Strategy> make_bayes(StrategyOptions& options);
std::unique_ptr<Strategy> make_model(StrategyOptions& options);
std::unique_ptr<Strategy> make_auto(StrategyOptions& options);
// The bandit builds its arms through the registry.
std::unique_ptr<Strategy> make_bandit(StrategyOptions& options, const StrategyRegistry& registry);

// A uniformly drawn index that history has not evaluated; nullopt when none is left.
std::optional<std::size_t> random_unevaluated(const History& history, Rng& rng);
// The unevaluated neighbours of `index`.
std::vector<std::size_t> unevaluated_neighbours(const Enumeration& space, const History& history,
                                                std::size_t index, Neighbourhood kind);
Neighbourhood neighbourhood_option(StrategyOptions& options);

}  // namespace tunekit::detail
