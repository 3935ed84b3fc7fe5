// Checks a problem's metadata before anything runs. Private to src/stack.
#pragma once

#include "tunekit/stack.hpp"

namespace tunekit::detail {

// UsageError naming what is missing: no name, an empty signature, no make_workspace, no or an
// out-of-range reference, a candidate without a name or run function, duplicate names.
void check_stack_metadata(const stack::Problem& problem, const stack::CandidateSet& set);

}  // namespace tunekit::detail
