// Admission before anything runs: the numerics policy, then the candidate's eligibility for
// the key. Shared by every search (SearchContext::admit) and by the cost model's decisions
// (model_default, explain), so both admit exactly the same candidates.
#pragma once

#include <optional>

#include "tunekit/candidate.hpp"
#include "tunekit/key.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::detail {

// nullopt when admitted; otherwise skipped (numerics), rejected (declined the key) or the
// classified failure of an eligibility check that threw.
std::optional<Outcome> precheck(const Candidate& candidate, const Key& key, Numerics policy);

}  // namespace tunekit::detail
