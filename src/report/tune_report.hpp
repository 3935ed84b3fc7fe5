// What a replayed choice's report shows of the evidence it was decided on (private to
// src/report and src/tuner). The evidence itself is decoded by store/evidence_codec.hpp.
#pragma once

#include <vector>

#include "tunekit/report.hpp"

namespace tunekit::detail {

// Sets report.candidates from stored evidence, marks the winner and the default by name and,
// where both carry scores, sets winner_score, default_score and speedup.
void fill_from_evidence(TuneReport& report, std::vector<CandidateReport> evidence);

}  // namespace tunekit::detail
