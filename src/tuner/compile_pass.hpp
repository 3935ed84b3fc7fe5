// The compile pass (DESIGN §5, §6): every proposed candidate is built before any timing starts,
// on several threads for source backends, so no warmup or window carries a compile.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "tunekit/device.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::detail {

struct BuildVerdict {
  Outcome outcome;
  double seconds = 0;  // on the budget clock
};

// Calls build() of every trial, at most `threads` at once (1: in order on this thread).
// Exceptions are classified (compile_failed); a FatalError is rethrown once every build has
// ended. `now` reads the clock each build's seconds are measured on.
std::vector<BuildVerdict> build_all(std::vector<std::unique_ptr<Trial>>& trials, int threads,
                                    const std::function<double()>& now);

}  // namespace tunekit::detail
