// The spread line of a tune report: how far apart the best and worst measured configurations
// are — the number that says whether tuning this key matters.
#pragma once

#include <optional>
#include <string>

#include "tunekit/report.hpp"

namespace tunekit::cli {

// "spread     best X (name) … worst Y (name): Z× over N measured configurations", or nullopt
// when fewer than two configurations have a reading. Candidates cut as hopeless count with
// the median of the samples they had (a lower bound on how slow they are).
std::optional<std::string> spread_line(const TuneReport& report);

}  // namespace tunekit::cli
