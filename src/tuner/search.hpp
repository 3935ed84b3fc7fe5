// The tuner's search strategies, found by name: "exhaustive" and "racing" (DESIGN §6).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/key.hpp"
#include "tunekit/op.hpp"
#include "tunekit/report.hpp"
#include "tunekit/tuner.hpp"

namespace tunekit::detail {

class SearchContext;

// Parsed "name:k=v,k=v" options of a search.
struct SearchOptions {
  std::string name;
  std::vector<std::pair<std::string, double>> values;
  double get(std::string_view key, double fallback) const;
};
SearchOptions parse_search_spec(std::string_view spec);

void exhaustive_search(SearchContext& context, const SearchOptions& options);
void racing_search(SearchContext& context, const SearchOptions& options);

// Runs the search TunerOptions::search names and returns the report with the winner set (the
// default when nothing validated and measured cleanly). Classified failures are in the
// report; UsageError (an unknown search, a malformed option) and FatalError propagate.
// `model` (may be null): the cost model's ranking for model-guided searches
// (TunerOptions::model_prune, floor_factor). `model_cut` (may be null) is set to whether the
// model left admitted candidates unmeasured (a partial search).
TuneReport run_search(Device& device, const OpBase& op, const Key& key, const TunerOptions& options,
                      const ModelReport* model = nullptr, bool* model_cut = nullptr);

// The known search names, for messages and the CLI.
std::vector<std::string> search_names();

}  // namespace tunekit::detail
