// Reads stored evidence (the "candidates" array of a JSON report) back into CandidateReports,
// so a replayed choice can show what it was decided on.
#pragma once

#include <string_view>
#include <vector>

#include "tunekit/report.hpp"

namespace tunekit::detail {

// Tolerant: a missing field keeps its default; text that is neither {"candidates": [...]} nor
// a JSON array gives nothing.
std::vector<CandidateReport> candidates_from_json(std::string_view evidence);

// Sets report.candidates from the evidence and, where the winner and the default carry
// scores, winner_score, default_score and speedup.
void fill_from_evidence(TuneReport& report, std::string_view evidence);

}  // namespace tunekit::detail
