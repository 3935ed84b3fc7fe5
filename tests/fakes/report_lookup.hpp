// Looks a candidate up by name in a tuning report (the tuner tests read one candidate's outcome).
#pragma once

#include <stdexcept>
#include <string>

#include "tunekit/report.hpp"

namespace tunekit::testing {

inline const CandidateReport& candidate_named(const TuneReport& r, const std::string& name) {
  for (const auto& c : r.candidates)
    if (c.name == name) return c;
  throw std::runtime_error("no candidate " + name);
}

}  // namespace tunekit::testing
